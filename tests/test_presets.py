"""Quality presets (issue 41): parsing, the strong preset's guarantee, V-cycles and combines,
whole-component placement on disconnected graphs, and the direct candidate of small inputs
(cpu engine)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    METIS_CUTS,
    check_partition,
    graph_from_edges,
    grid_components,
    limits_balance,
    load_fixture,
)

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.balance import Balance, max_part_weights, uniform_tpwgts
from gpmetis.coarsening.coarsen import coarsen
from gpmetis.coarsening.weights import WeightedGraph
from gpmetis.context import DEFAULT, STRONG
from gpmetis.device_graph import DeviceGraph
from gpmetis.errors import OptionError
from gpmetis.metrics import connected_components
from gpmetis.options import Options
from gpmetis.partitioning.components import packed_start
from gpmetis.partitioning.modes.direct import direct_candidate
from gpmetis.partitioning.multilevel import multilevel_partition, vcycle
from gpmetis.refinement.jet_refiner import score_state

CPU = get_backend("cpu")
STRONG_RUNS = STRONG.runs.min_runs


def test_preset_option_parses_and_refuses_unknown_values():
    assert Options().preset == "default"
    assert Options.from_kwargs(preset="strong").runs == STRONG_RUNS
    assert Options.from_kwargs(preset="strong", ncuts=STRONG_RUNS + 2).runs == STRONG_RUNS + 2
    assert Options.from_kwargs(ncuts=3).runs == 3
    for bad in ("Strong", "fast", "", None):
        with pytest.raises(OptionError, match="preset"):
            Options.from_kwargs(preset=bad)
    with pytest.raises(OptionError, match="preset"):
        partition(load_fixture("uk"), 2, engine="cpu", preset="best")


@pytest.mark.parametrize("name,k", [("data", 8), ("uk", 2), ("3elt", 64), ("power", 8)])
def test_strong_cut_is_at_most_default(name, k):
    graph = load_fixture(name)
    default = partition(graph, k, engine="cpu")
    strong = partition(graph, k, engine="cpu", preset="strong")
    check_partition(graph, strong.part, k)
    assert strong.edgecut <= default.edgecut
    assert strong.stats["ncuts"] == STRONG_RUNS and strong.stats["preset"] == "strong"


def test_strong_is_deterministic():
    graph = load_fixture("add20")
    runs = [partition(graph, 8, engine="cpu", preset="strong").part for _ in range(2)]
    assert np.array_equal(*runs)


def _setup(name: str, k: int):
    g = DeviceGraph.upload(CPU, load_fixture(name))
    tpwgts = uniform_tpwgts(k, 1)
    maxpwgt = max_part_weights(np.array([g.total_vwgt]), tpwgts, [1.03])[:, 0]
    return g, tpwgts, maxpwgt


def test_coarsening_within_labels_keeps_each_coarse_vertex_in_one_label():
    g, _, _ = _setup("4elt", 8)
    labels = (np.arange(g.nvtxs) * 7 // g.nvtxs).astype(np.int32)  # 7 bands of ids
    levels = coarsen(CPU, g, DEFAULT.coarsening.target(8), 5, "lp", True, within=labels,
                     context=DEFAULT.coarsening)
    assert len(levels) > 2
    projected = labels
    for level in levels[:-1]:
        coarse = np.full(level.cmap.max() + 1, -1)
        coarse[level.cmap] = projected
        assert np.array_equal(coarse[level.cmap], projected)  # no coarse vertex is mixed
        projected = coarse
    assert np.array_equal(levels[-1].part, projected)


@pytest.mark.parametrize("name,k", [("crack", 8), ("add20", 2)])
def test_vcycle_and_combine_never_worsen(name, k):
    g, tpwgts, maxpwgt = _setup(name, k)
    options = Options(engine="cpu")
    wg, balance = WeightedGraph.single(g), Balance.of([g.total_vwgt], tpwgts, [1.03])
    a, _ = multilevel_partition(wg, balance, options, tpwgts, 11)
    b, _ = multilevel_partition(wg, balance, options, tpwgts, 12)
    c, _ = multilevel_partition(wg, balance, options, tpwgts, 14)
    scores = [score_state(CPU, g, p, limits_balance(maxpwgt)) for p in (a, b, c)]
    again, _ = vcycle(g, balance, options, 13, a)
    assert score_state(CPU, g, again, limits_balance(maxpwgt)) <= scores[0]
    child, _ = vcycle(g, balance, options, 13, a, b)
    assert score_state(CPU, g, child, limits_balance(maxpwgt)) <= min(scores[:2])
    child, _ = vcycle(g, balance, options, 13, c, a, b)  # the overlay of three
    assert score_state(CPU, g, child, limits_balance(maxpwgt)) <= min(scores)


def test_direct_candidate_only_for_small_inputs_and_few_parts():
    direct = DEFAULT.direct
    assert direct_candidate(direct.max_vertices, direct.max_parts, direct)
    assert not direct_candidate(direct.max_vertices + 1, 2, direct)
    assert not direct_candidate(1000, direct.max_parts + 1, direct)


@pytest.mark.parametrize("name,k", [("uk", 2), ("data", 8)])
def test_direct_split_is_one_level_and_kept_where_it_cuts_less(name, k):
    g, tpwgts, maxpwgt = _setup(name, k)
    options = Options(engine="cpu")
    seed = 4321  # the driver's default seed
    wg, balance = WeightedGraph.single(g), Balance.of([g.total_vwgt], tpwgts, [1.03])
    coarsened, stats = multilevel_partition(wg, balance, options, tpwgts, seed)
    direct, direct_stats = multilevel_partition(wg, balance, options, tpwgts, seed, direct=True)
    assert len(stats.levels) > 1 and len(direct_stats.levels) == 1  # the input, not coarsened
    check_partition(load_fixture(name), direct, k)
    scores = [score_state(CPU, g, p, limits_balance(maxpwgt)) for p in (coarsened, direct)]
    result = partition(load_fixture(name), k, engine="cpu", seed=seed)
    assert (0, result.edgecut) == min(scores)


@pytest.mark.parametrize("k", [2, 8])
def test_default_preset_within_5_percent_of_metis_at_few_parts(k):
    """Issue 41's target at k = 2 and 8 (METIS 5.1's cuts of the shared graphs; k = 64 is
    guarded with three seeds in test_engine_cpu)."""
    column = {2: 0, 8: 1}[k]
    over = {}
    for name, cuts in METIS_CUTS.items():
        cut = partition(load_fixture(name), k, engine="cpu").edgecut
        if cut > 1.05 * cuts[column]:
            over[name] = (cut, cuts[column])
    assert not over, over


def test_packed_start_places_components_whole():
    graph = grid_components((2, 255), (3, 3), 54)  # a 510-vertex strip and 54 3x3 grids
    g = DeviceGraph.upload(CPU, graph)
    tpwgts = uniform_tpwgts(2, 1)
    maxpwgt = max_part_weights(np.array([g.total_vwgt]), tpwgts, [1.03])[:, 0]
    start = packed_start(g, maxpwgt, tpwgts, connected_components(CPU, g.xadj, g.adjncy),
                         DEFAULT.packing)
    assert np.all(start[:510] == 0) and np.all(start[510:] == 1)
    connected = DeviceGraph.upload(CPU, load_fixture("3elt"))
    labels = connected_components(CPU, connected.xadj, connected.adjncy)
    assert packed_start(connected, maxpwgt, tpwgts, labels, DEFAULT.packing) is None


def test_disconnected_graph_uses_the_allowed_imbalance():
    # the strip (510) fits whole in a part (limit 1.03 * 498 = 512) and the 54 small grids
    # (486) in the other: the component-placement optimum cuts nothing
    graph = grid_components((2, 255), (3, 3), 54)
    result = partition(graph, 2, engine="cpu")
    check_partition(graph, result.part, 2)
    assert result.edgecut == 0
    assert sorted(np.bincount(result.part)) == [486, 510]


def test_component_too_large_for_a_part_is_cut_least():
    # a 1x530 path and 94 paths of 5: the path sheds 16 vertices to fit 1.03 * 500 = 515, one
    # cut edge at its end, the optimum
    edges = [(i, i + 1) for i in range(529)]
    for c in range(94):
        first = 530 + 5 * c
        edges += [(first + i, first + i + 1) for i in range(4)]
    graph = graph_from_edges(edges, 1000)
    result = partition(graph, 2, engine="cpu")
    check_partition(graph, result.part, 2)
    assert result.edgecut == 1


def test_cli_preset_option(tmp_path):
    import json
    import shutil

    from click.testing import CliRunner
    from conftest import FIXTURES

    from cli.main import main

    path = tmp_path / "uk.graph"
    shutil.copy(FIXTURES / "uk.graph", path)
    report = tmp_path / "r.json"
    ok = CliRunner().invoke(main, [str(path), "2", "-engine=cpu", "-preset=strong", "-nooutput",
                                   f"-json={report}"])
    assert ok.exit_code == 0, ok.output
    assert " preset=strong" in ok.output.splitlines()
    assert json.loads(report.read_text())["options"]["preset"] == "strong"
    plain = CliRunner().invoke(main, [str(path), "2", "-engine=cpu", "-nooutput"])
    assert plain.exit_code == 0 and "preset=" not in plain.output  # METIS's options block
    bad = CliRunner().invoke(main, [str(path), "2", "-preset=fastest"])
    assert bad.exit_code == 2 and "-preset" in bad.output
    assert not path.with_name("uk.graph.part.2").exists()
