"""Multi-constraint graphs (ncon >= 2) through the cpu engine, the twin of the gpu engine."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import FIXTURES, cuda_usable, load_fixture, random_graph, requires_cuda

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.balance import Balance, max_part_weights, uniform_tpwgts
from gpmetis.coarsening.weights import guide_weights, upload
from gpmetis.context import DEFAULT
from gpmetis.errors import OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.partitioning import metis_ncon
from gpmetis.refinement.ncon import (
    _relief,
    cap_inflow,
    order_key,
    rebalance_step,
    score_state,
    swap_step,
)
from gpmetis.refinement.ncon_refiner import refine

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

CPU = get_backend("cpu")


def with_weights(graph: Graph, ncon: int, seed: int = 1) -> Graph:
    """``graph`` with ncon weights per vertex: 1, the degree, a seeded random 1-5."""
    rng = np.random.default_rng(seed)
    columns = [np.ones(graph.nvtxs, np.int64), np.maximum(graph.degrees(), 1),
               rng.integers(1, 6, graph.nvtxs)]
    return Graph.from_csr(graph.xadj, graph.adjncy, np.stack(columns[:ncon], axis=1),
                          graph.adjwgt if graph.has_adjwgt else None)


def part_weights(graph: Graph, part: np.ndarray, nparts: int) -> np.ndarray:
    """(nparts, ncon) int64, recomputed here from the part array."""
    return np.stack([np.bincount(part, weights=graph.vwgt[:, c], minlength=nparts)
                     for c in range(graph.ncon)], axis=1).astype(np.int64)


def assert_balanced(graph: Graph, part: np.ndarray, nparts: int, ubvec, tpwgts=None) -> None:
    """Every constraint of every part within METIS's limit (ubvec x target, at least the
    target rounded up), valid ids, no empty part."""
    assert part.min() >= 0 and part.max() < nparts
    assert (np.bincount(part, minlength=nparts) > 0).all()
    tpwgts = uniform_tpwgts(nparts, graph.ncon) if tpwgts is None else tpwgts
    limits = max_part_weights(graph.vwgt.sum(axis=0), tpwgts, ubvec)
    pw = part_weights(graph, part, nparts)
    assert (pw <= limits).all(), (pw - limits).max(axis=0)


@pytest.mark.parametrize("ncon", [2, 3])
@pytest.mark.parametrize("name,nparts", [("4elt", 8), ("4elt", 64), ("crack", 16)])
def test_every_constraint_is_balanced(name, nparts, ncon):
    graph = with_weights(load_fixture(name), ncon)
    result = partition(graph, nparts, engine="cpu")
    assert_balanced(graph, result.part, nparts, [1.03] * ncon)
    assert result.warnings == []
    # the reported metrics are the part file's
    pw = part_weights(graph, result.part, nparts)
    assert result.metrics.pwgts == pw.tolist()
    cut = int(graph.adjwgt[result.part[graph.sources()] != result.part[graph.adjncy]].sum()) // 2
    assert result.edgecut == cut
    assert len(result.metrics.imbalance) == ncon


def test_ubvec_per_constraint():
    graph = with_weights(load_fixture("crack"), 2)
    result = partition(graph, 8, engine="cpu", ubvec=(1.01, 1.2))
    assert_balanced(graph, result.part, 8, [1.01, 1.2])


def test_tpwgts_per_part_and_constraint(tmp_path):
    graph = with_weights(load_fixture("crack"), 2)
    path = tmp_path / "tpwgts"
    path.write_text("0:0-1 = 0.4\n1:0 = 0.2\n1:1 = 0.2\n")  # the rest share what is left
    result = partition(graph, 4, engine="cpu", tpwgts=str(path))
    targets = np.array([[0.4, 0.4], [0.2, 0.2], [0.2, 0.2], [0.2, 0.2]])
    assert_balanced(graph, result.part, 4, [1.03, 1.03], targets)


def test_same_seed_same_partition_and_seeds_differ():
    graph = with_weights(random_graph(3000, 6, seed=5), 3)
    a, b = (partition(graph, 16, engine="cpu", seed=7).part for _ in range(2))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, partition(graph, 16, engine="cpu", seed=8).part)


def test_a_constraint_of_zero_weights_is_balanced_trivially():
    base = load_fixture("3elt")
    vwgt = np.stack([np.ones(base.nvtxs, np.int64), np.zeros(base.nvtxs, np.int64)], axis=1)
    graph = Graph.from_csr(base.xadj, base.adjncy, vwgt)
    result = partition(graph, 8, engine="cpu")
    assert_balanced(graph, result.part, 8, [1.03, 1.03])


def test_a_vertex_heavier_than_a_part_is_reported():
    base = load_fixture("3elt")
    vwgt = np.ones((base.nvtxs, 2), np.int64)
    vwgt[0, 1] = base.nvtxs  # half of constraint 1's total: no 8-part split can hold it
    graph = Graph.from_csr(base.xadj, base.adjncy, vwgt)
    result = partition(graph, 8, engine="cpu")
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith("constraint 1: part ")
    assert f"the heaviest vertex weighs {base.nvtxs}" in result.warnings[0]


def test_the_metis_engine_runs_metis_multi_constraint_scheme():
    # pymetis's part_graph would give METIS one weight per vertex; the metis engine calls
    # METIS's own multi-constraint entry point instead, so every constraint is balanced
    graph = with_weights(load_fixture("3elt"), 2)
    metis = partition(graph, 4, engine="metis", ubvec=[1.05, 1.2])
    assert metis.engine == "metis" and metis.warnings == []
    assert_balanced(graph, metis.part, 4, [1.05, 1.2])
    assert (part_weights(graph, metis.part, 4)[:, 1] > 1.05 * graph.vwgt[:, 1].sum() / 4).any()


def test_auto_chooses_for_multi_constraint_graphs_as_for_one(monkeypatch):
    from gpmetis.options import Options
    from gpmetis.partitioning import driver

    graph = with_weights(load_fixture("3elt"), 2)
    small = partition(graph, 4)  # below AUTO_GPU_MIN_SIZE: METIS, as for one constraint
    assert small.engine == "metis"
    assert np.array_equal(small.part, partition(graph, 4, engine="metis").part)
    monkeypatch.setattr(driver, "AUTO_GPU_MIN_SIZE", 0)
    expected = "gpu" if cuda_usable() else "metis"  # a large graph without CUDA: METIS
    assert driver.choose_engine(graph, Options()) == expected
    # a pymetis without METIS's multi-constraint entry points: ours
    monkeypatch.setattr(metis_ncon, "available", lambda: False)
    monkeypatch.setattr(driver, "AUTO_GPU_MIN_SIZE", 10**12)
    result = partition(graph, 4)
    assert result.engine == ("gpu" if cuda_usable() else "cpu")
    assert_balanced(graph, result.part, 4, [1.03, 1.03])


def test_auto_runs_ours_where_metis_ends_over_a_limit():
    graph = with_weights(load_fixture("crack"), 2)
    metis = partition(graph, 8, engine="metis")  # a unit over in constraint 1
    assert [line.split(":")[0] for line in metis.warnings] == ["constraint 1"]
    result = partition(graph, 8)
    assert result.engine == ("gpu" if cuda_usable() else "cpu") and result.warnings == []
    assert result.stats["metis_overweight"] > 0
    assert_balanced(graph, result.part, 8, [1.03, 1.03])
    assert np.array_equal(result.part, partition(graph, 8, engine=result.engine).part)
    from gpmetis.options import Options
    from gpmetis.report import Timing, format_summary

    note = (f"  Note: METIS's partition was {100 * result.stats['metis_overweight']:.3f}% over "
            f"a limit; the {result.engine} engine's is kept")
    assert note in format_summary(graph, result, Options(), Timing(0.0, 0.0)).splitlines()
    # where METIS is within its limits, its partition stands
    within = with_weights(load_fixture("crack"), 3)
    assert partition(within, 8).engine == "metis"
    assert partition(within, 8, engine="metis").warnings == []


def test_the_metis_engine_passes_vertex_sizes_to_metis():
    # pymetis has no vsize: the metis engine calls METIS's entry point with them, so
    # -objtype=vol weighs each boundary vertex by its size, as METIS's gpmetis does
    import dataclasses

    graph = load_fixture("4elt")
    sizes = np.random.default_rng(0).integers(1, 50, graph.nvtxs).astype(np.int64)
    sized = dataclasses.replace(graph, vsize=sizes)
    blind = partition(graph, 8, engine="metis", objtype="vol").part
    result = partition(sized, 8, engine="metis", objtype="vol")
    assert not np.array_equal(result.part, blind)
    src = np.repeat(np.arange(graph.nvtxs), graph.degrees())

    def volume(part):
        pairs = np.unique(src[part[src] != part[graph.adjncy]].astype(np.int64) * 8
                          + part[graph.adjncy][part[src] != part[graph.adjncy]])
        return int(sizes[pairs // 8].sum())

    assert result.metrics.volume == volume(result.part) < volume(blind)


def _volume(graph: Graph, part: np.ndarray, nparts: int, sizes: np.ndarray) -> int:
    """METIS's total communication volume, recomputed here."""
    src = np.repeat(np.arange(graph.nvtxs), graph.degrees())
    cut = part[src] != part[graph.adjncy]
    pairs = np.unique(src[cut].astype(np.int64) * nparts + part[graph.adjncy][cut])
    return int(sizes[pairs // nparts].sum())


@pytest.mark.parametrize("ncon,nparts", [(2, 8), (3, 16)])
def test_volume_of_a_multi_constraint_graph_on_the_cpu_engine(ncon, nparts):
    # -objtype=vol with several constraints: the volume refinement keeps every constraint
    # within its limit, weighs boundary vertices by their sizes, and never raises the volume
    import dataclasses

    graph = with_weights(load_fixture("4elt"), ncon)
    sizes = np.random.default_rng(ncon).integers(1, 9, graph.nvtxs).astype(np.int64)
    graph = dataclasses.replace(graph, vsize=sizes)
    cut_run = partition(graph, nparts, engine="cpu")
    result = partition(graph, nparts, engine="cpu", objtype="vol")
    assert result.engine == "cpu" and result.warnings == []
    assert_balanced(graph, result.part, nparts, [1.03] * ncon)
    assert result.metrics.volume == _volume(graph, result.part, nparts, sizes)
    assert result.metrics.volume <= _volume(graph, cut_run.part, nparts, sizes)
    assert result.stats["volume_rounds"] >= 1


@pytest.mark.parametrize("mode", [{"ptype": "rb"}, {"contig": True}, {"minconn": True}])
def test_modes_of_a_multi_constraint_graph_run_on_metis_under_auto(mode):
    # a small graph: auto runs METIS's own (test_multiconstraint_modes.py: the cpu engine's)
    graph = with_weights(load_fixture("4elt"), 2)
    result = partition(graph, 8, **mode)
    # (where METIS's partition ends over a limit, auto keeps ours if it is less over)
    assert result.engine == "metis" or ("ptype" not in mode and result.engine == "cpu")
    ubvec = [1.001 ** 3, 1.001 ** 3] if "ptype" in mode else [1.03, 1.03]
    slack = graph.vwgt.max(axis=0) / (graph.vwgt.sum(axis=0) / 8)  # a vertex, as METIS's
    pw = part_weights(graph, result.part, 8) / (graph.vwgt.sum(axis=0) / 8)
    assert (pw <= np.array(ubvec) + slack).all(), pw.max(axis=0)
    if "ptype" in mode:  # limits per bisection, as METIS's, not the k-way ones
        assert all("bisection" in line for line in result.warnings)
    if "contig" in mode:  # one component per part
        from gpmetis.metrics import connected_components

        labels = connected_components(get_backend("cpu"), graph.xadj, graph.adjncy,
                                      result.part)
        assert len(np.unique(result.part.astype(np.int64) << 32 | labels)) == 8


@pytest.mark.parametrize("ubvec,message", [((1.03,), "constraints"),
                                           ((1.03, 1.03, 1.03), "constraints"),
                                           ((1.03, 0.9), "greater than 1")])
def test_bad_ubvec(ubvec, message):
    graph = with_weights(load_fixture("3elt"), 2)
    with pytest.raises(OptionError, match=message):
        partition(graph, 4, engine="cpu", ubvec=ubvec)


def test_cli_multi_constraint_runs_and_refusals(tmp_path):
    graph_path = tmp_path / "two.graph"
    graph_path.write_text("4 4 010 2\n1 2 2 4\n1 1 1 3\n2 1 2 4\n1 2 1 3\n")
    run = [sys.executable, "-m", "cli.main"]
    ok = subprocess.run([*run, str(graph_path), "2", "-engine=cpu"], capture_output=True,
                        text=True, cwd=FIXTURES.parent)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("constraint #") == 2
    assert (tmp_path / "two.graph.part.2").exists()
    metis = subprocess.run([*run, str(graph_path), "2", "-engine=metis", "-nooutput"],
                           capture_output=True, text=True, cwd=FIXTURES.parent)
    assert metis.returncode == 0, metis.stderr
    assert metis.stdout.count("constraint #") == 2
    tpw = tmp_path / "t"
    tpw.write_text("0:2 = 0.5\n")  # constraint 2 does not exist
    bad = subprocess.run([*run, str(graph_path), "2", "-engine=cpu", f"-tpwgts={tpw}"],
                         capture_output=True, text=True, cwd=FIXTURES.parent)
    assert bad.returncode in (1, 2) and "Traceback" not in bad.stderr
    assert str(tpw) in bad.stderr


def test_guide_weights_keep_every_constraint_within_its_cluster_limit():
    rng = np.random.default_rng(3)
    vwgt = rng.integers(0, 50, (1000, 3))
    limits = np.array([100.0, 70.0, 300.0])
    guide, scale = guide_weights(get_backend("cpu"), np.ascontiguousarray(vwgt.T),
                                 vwgt.sum(axis=0), limits)
    # any set of vertices whose guide weights fit the scale fits every limit
    order = rng.permutation(1000)
    fits = np.cumsum(guide[order]) <= scale
    members = order[fits]
    assert (vwgt[members].sum(axis=0) <= limits).all()
    assert guide.sum() < 2**31


def test_cap_inflow_keeps_the_best_moves_that_fit_per_destination():
    weights = np.array([[1, 1, 1, 1, 5], [3, 1, 1, 1, 0]], dtype=np.int32)
    cand = np.arange(5)
    to = np.array([0, 0, 0, 1, 1])
    gain = np.array([5, 9, 7, 1, 2])
    room = np.array([[2, 5], [10, 0]], dtype=np.int64)
    keep = cap_inflow(weights, cand, to, order_key(-gain), room, 5)
    # part 0 takes 1 (gain 9) then 2 (gain 7), then its constraint-0 room of 2 is full;
    # part 1 takes 4 (weight 5, 0), not 3 (constraint 1 has no room)
    assert keep.tolist() == [False, True, True, False, True]


def test_order_key_is_monotone_and_exact_for_small_integers():
    costs = np.array([-1e300, -40.0, -31.0, -1.0, -1e-300, 0.0, 1e-300, 1.0, 2.0, 31.0, 1e9,
                      np.inf])
    keys = order_key(costs)
    assert (np.diff(keys) >= 0).all() and keys.max() < 1 << 16
    small = order_key(np.arange(-31, 32, dtype=np.float64))
    assert (np.diff(small) > 0).all()


def test_select_by_sort_equals_the_kernels_digit_by_digit_select():
    # the NumPy twin ranks by one sort; the kernels select digit by digit (rebalance.py's
    # ordered_select is that select's twin): same items, ties at the coarse id digits of
    # > 65536 vertices, zero weights and negative rooms included
    from gpmetis.refinement.ncon import _select
    from gpmetis.refinement.rebalance import id_shifts, ordered_select

    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.choice([60, 300, 200_000]))
        m, ncon, nparts = int(rng.integers(0, 60)), int(rng.integers(1, 4)), int(rng.integers(1, 6))
        v = np.sort(rng.choice(n, m, replace=False))
        key = rng.integers(0, int(rng.choice([3, 50, 65536])), m)
        w = rng.integers(0, int(rng.choice([2, 5, 1000])), (ncon, m))
        groups = np.where(rng.random((ncon, m)) < 0.8, np.arange(ncon)[:, None] * nparts
                          + rng.integers(0, nparts, (ncon, m)), -1)
        limit = rng.integers(-5, int(rng.choice([3, 50, 3000])), ncon * nparts)
        hi, lo = id_shifts(n)
        digits = [np.tile(d, ncon) for d in (key >> 8, key & 255, (v >> hi) & 255, (v >> lo) & 255)]
        for source in (True, False):
            lim = np.maximum(limit, 1) if source else limit
            by_digit = ordered_select(groups.ravel(), digits, w.ravel(), lim, source)
            assert np.array_equal(_select(groups, w, key, v, n, lim, source).ravel(), by_digit)


def test_rebalancing_lowers_the_excess():
    graph = with_weights(load_fixture("crack"), 2)
    wg = upload(CPU, graph, 8, DEFAULT.coarsening)
    balance = Balance.of(wg.totals, uniform_tpwgts(8, 2), [1.03, 1.03])
    part = (np.arange(graph.nvtxs) * 8 // graph.nvtxs).astype(np.int32)
    part[: graph.nvtxs // 4] = 0  # part 0 far over in both constraints
    (excess, _), pw = score_state(CPU, wg.graph, wg.weights, part, balance)
    moved = rebalance_step(CPU, wg.graph, wg.weights, part, balance, pw)
    (after, _), _ = score_state(CPU, wg.graph, wg.weights, moved, balance)
    assert excess > 0 and after < excess


def power_law_graph(n: int, avg_degree: int, seed: int) -> Graph:
    """A connected graph whose degrees follow a power law (Chung-Lu: endpoints drawn with
    probability ~ (id + 1)^-0.7, a path for connectivity), as R-MAT's are."""
    rng = np.random.default_rng(seed)
    share = (np.arange(n) + 1.0) ** -0.7
    u, v = (rng.choice(n, n * avg_degree // 2, p=share / share.sum()) for _ in range(2))
    u, v = np.concatenate([u, np.arange(n - 1)]), np.concatenate([v, np.arange(1, n)])
    keep = u != v
    key = np.unique(np.concatenate([u[keep] * n + v[keep], v[keep] * n + u[keep]]))
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key // n, minlength=n), out=xadj[1:])
    return Graph.from_csr(xadj, key % n)


@pytest.mark.parametrize("ncon", [2, 3])
def test_power_law_rebalancing_converges_in_few_steps(ncon):
    # blocks of ids: every part holds its share of the vertices but part 0 holds the hubs, so
    # it is far over in the degree constraint while every other part is near full in the
    # others; moves into those parts must pay for what they add there (issue 37: ~1% of the
    # excess went per step)
    graph = with_weights(power_law_graph(4096, 16, seed=1), ncon)
    wg = upload(CPU, graph, 8, DEFAULT.coarsening)
    balance = Balance.of(wg.totals, uniform_tpwgts(8, ncon), [1.03] * ncon)
    part = (np.arange(graph.nvtxs) * 8 // graph.nvtxs).astype(np.int32)
    (excess, _), pw = score_state(CPU, wg.graph, wg.weights, part, balance)
    assert excess > 0.1
    for _ in range(40):
        moved = rebalance_step(CPU, wg.graph, wg.weights, part, balance, pw)
        if moved is part:
            moved = swap_step(CPU, wg.graph, wg.weights, part, balance, pw)
        part = moved
        (excess, _), pw = score_state(CPU, wg.graph, wg.weights, part, balance)
        if excess == 0:
            break
    assert excess == 0
    assert_balanced(graph, part, 8, [1.03] * ncon)


def test_power_law_partition_is_balanced():
    graph = with_weights(power_law_graph(4096, 16, seed=2), 2)
    result = partition(graph, 8, engine="cpu")
    assert_balanced(graph, result.part, 8, [1.03, 1.03])
    assert result.warnings == []


def test_relief_is_each_groups_excess_walked_in_rank_order():
    # _relief (the twin of the take kernel's credit) against a walk of each group in rank
    # order: an item gets what the items of lower rank left of the excess, at most its
    # weight; items of one rank (ids sharing their top bits) all get that same share
    from gpmetis.refinement.rebalance import id_shifts

    rng = np.random.default_rng(4)
    n, m, ncon, nparts = 70_000, 300, 2, 4
    v = np.sort(rng.choice(n, m, replace=False))
    key = rng.integers(0, 3, m)
    w = rng.integers(0, 6, (ncon, m))
    groups = np.where(rng.random((ncon, m)) < 0.7,
                      np.arange(ncon)[:, None] * nparts + rng.integers(0, nparts, (ncon, m)), -1)
    excess = rng.integers(1, 60, ncon * nparts)
    scale = np.array([7.0, 3.0])
    hi, lo = id_shifts(n)
    rank = key * 65536 + ((v >> hi) & 255) * 256 + ((v >> lo) & 255)
    expected = np.zeros(m)
    for c in range(ncon):
        share = np.zeros(m)
        for g in np.unique(groups[c][groups[c] >= 0]):
            members = np.flatnonzero(groups[c] == g)
            for i in members:
                before = w[c][members[rank[members] < rank[i]]].sum()
                share[i] = min(max(excess[g] - before, 0), w[c][i])
        expected += share / scale[c]
    assert np.allclose(_relief(groups, w, key, v, n, excess, scale), expected)
    assert (expected > 0).any() and (expected == 0).any()


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("ncon,nparts", [(2, 8), (3, 64)])
def test_gpu_engine_equals_cpu_engine(ncon, nparts):
    for graph in (with_weights(load_fixture("4elt"), ncon),
                  with_weights(random_graph(20000, 8, seed=2, hubs=2), ncon),
                  with_weights(power_law_graph(16384, 16, seed=4), ncon)):
        gpu = partition(graph, nparts, engine="gpu", seed=3)
        cpu = partition(graph, nparts, engine="cpu", seed=3)
        assert np.array_equal(gpu.part, cpu.part)
        assert gpu.edgecut == cpu.edgecut and gpu.metrics.pwgts == cpu.metrics.pwgts


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("ncon,nparts", [(2, 8), (3, 64)])
def test_gpu_engine_equals_cpu_engine_for_volume(ncon, nparts):
    import dataclasses

    base = with_weights(random_graph(20000, 8, seed=5, hubs=2), ncon)
    sizes = np.random.default_rng(1).integers(1, 5, base.nvtxs).astype(np.int64)
    for graph in (with_weights(load_fixture("4elt"), ncon),
                  dataclasses.replace(base, vsize=sizes)):
        gpu = partition(graph, nparts, engine="gpu", seed=3, objtype="vol")
        cpu = partition(graph, nparts, engine="cpu", seed=3, objtype="vol")
        assert np.array_equal(gpu.part, cpu.part)
        assert gpu.metrics.volume == cpu.metrics.volume
        assert gpu.stats["volume_rounds"] == cpu.stats["volume_rounds"]


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("ncon,nparts", [(5, 2), (8, 7), (4, 33)])
def test_gpu_engine_equals_cpu_engine_with_targets_and_ubvec(tmp_path, ncon, nparts):
    # up to 8 constraints (one of them all zero), odd k, a limit per constraint and targets per
    # part and constraint: the device loop's books against the host loop's
    rng = np.random.default_rng(ncon)
    base = random_graph(3000, 6, seed=ncon, hubs=3)
    vwgt = rng.integers(1, 9, (base.nvtxs, ncon))
    vwgt[:, ncon - 1] = 0
    vwgt[:, 0] = np.maximum(base.degrees(), 1)
    graph = Graph.from_csr(base.xadj, base.adjncy, vwgt)
    ubvec = tuple(1.05 + 0.05 * (c % 3) for c in range(ncon))
    path = tmp_path / "tpwgts"
    path.write_text(f"0:0 = {0.5 / nparts:.6f}\n{nparts - 1}:1-{ncon - 1} = {1.5 / nparts:.6f}\n")
    runs = [partition(graph, nparts, engine=engine, seed=5, ubvec=ubvec, tpwgts=str(path))
            for engine in ("gpu", "cpu")]
    assert np.array_equal(runs[0].part, runs[1].part)
    assert runs[0].edgecut == runs[1].edgecut and runs[0].metrics.pwgts == runs[1].metrics.pwgts


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("ncon,nparts", [(2, 8), (3, 64), (2, 3000)])
@pytest.mark.parametrize("name", ["4elt", "random-hubs", "random-big", "power-law"])
def test_gpu_refinement_loop_equals_cpu_loop(name, ncon, nparts):
    # the device loop against its host twin from the same partitions: blocks of ids and skewed
    # ones (over parts to rebalance), finest and coarse filters, short and long patience, a
    # tolerance; with hub rows, coarse id digits (> 65536 vertices) and more (constraint,
    # part) pairs than the part weights' shared-memory sums take
    base = {"4elt": lambda: load_fixture("4elt"),
            "random-hubs": lambda: random_graph(6000, 6, seed=5, hubs=12, weighted=True),
            "random-big": lambda: random_graph(70_000, 5, seed=21, weighted=True),
            "power-law": lambda: power_law_graph(8192, 16, seed=3)}[name]()
    graph = with_weights(base, ncon)
    gpu = get_backend("gpu")
    wc, wg = (upload(be, graph, nparts, DEFAULT.coarsening) for be in (CPU, gpu))
    balance = Balance.of(wc.totals, uniform_tpwgts(nparts, ncon), [1.03] * ncon)
    rng = np.random.default_rng(7)
    start = np.arange(graph.nvtxs) * nparts // graph.nvtxs  # blocks of ids
    skews = (np.where(rng.random(graph.nvtxs) < 0.5, 0, start),
             np.where(rng.random(graph.nvtxs) < 0.3, start % max(nparts // 2, 1), start))
    runs = [(1, True, 0.0), (3, False, 0.0), (12, True, 0.0), (6, False, 0.02)]
    for part, (patience, finest, tolerance) in zip((p.astype(np.int32) for p in
                                                    (start, *skews, start)), runs):
        kw = dict(context=RC, finest=finest, patience=patience, tolerance=tolerance)
        part_c, its_c = refine(CPU, wc.graph, wc.weights, part, balance, **kw)
        part_g, its_g = refine(gpu, wg.graph, wg.weights, gpu.xp.asarray(part),
                               balance, **kw)
        assert its_c == its_g
        assert np.array_equal(part_c, part_g.get())


@pytest.mark.gpu
@requires_cuda
def test_gpu_refinement_loop_swaps_as_the_cpu_loop_does():
    # parts full in different constraints: the device loop stops for the host's swap step
    # and resumes from the swapped partition (test_a_swap_repairs_parts_... below)
    xadj = np.array([0, 2, 4, 6, 8])
    adjncy = np.array([1, 3, 0, 2, 1, 3, 0, 2])
    vwgt = np.array([[1, 1], [2, 0], [0, 2], [1, 1]])
    graph = Graph.from_csr(xadj, adjncy, vwgt)
    gpu = get_backend("gpu")
    wc, wg = (upload(be, graph, 2, DEFAULT.coarsening) for be in (CPU, gpu))
    balance = Balance.of(wc.totals, uniform_tpwgts(2, 2), [1.03, 1.03])
    part = np.array([0, 0, 1, 1], dtype=np.int32)
    part_c, its_c = refine(CPU, wc.graph, wc.weights, part, balance, context=RC, finest=True,
                           patience=4)
    part_g, its_g = refine(gpu, wg.graph, wg.weights, gpu.xp.asarray(part), balance,
                           context=RC, finest=True, patience=4)
    assert part_c.tolist() == part_g.get().tolist() == [1, 0, 0, 1]
    assert its_c == its_g


def test_cli_says_when_a_constraint_is_over_its_limit(tmp_path):
    path = tmp_path / "heavy.graph"
    # a path of 4 vertices; vertex 0 holds most of constraint 1: no 2-way split balances it
    path.write_text("4 3 010 2\n1 9 2\n1 1 1 3\n1 1 2 4\n1 1 3\n")
    proc = subprocess.run([sys.executable, "-m", "cli.main", str(path), "2", "-engine=cpu",
                           f"-json={tmp_path / 'r.json'}"], capture_output=True, text=True,
                          cwd=FIXTURES.parent)
    assert proc.returncode == 0, proc.stderr
    assert "warning: constraint 1: part" in proc.stderr
    assert "heaviest vertex weighs 9" in proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert any(w.startswith("constraint 1") for w in report["warnings"])


def test_a_swap_repairs_parts_full_in_different_constraints():
    # a 4-cycle, parts {0, 1} and {2, 3}: part 0 is over in constraint 0, part 1 in
    # constraint 1, and no single move lowers the excess; swapping 0 and 2 balances both
    xadj = np.array([0, 2, 4, 6, 8])
    adjncy = np.array([1, 3, 0, 2, 1, 3, 0, 2])
    vwgt = np.array([[1, 1], [2, 0], [0, 2], [1, 1]])
    wg = upload(CPU, Graph.from_csr(xadj, adjncy, vwgt), 2, DEFAULT.coarsening)
    balance = Balance.of(wg.totals, uniform_tpwgts(2, 2), [1.03, 1.03])
    part = np.array([0, 0, 1, 1], dtype=np.int32)
    (excess, _), pw = score_state(CPU, wg.graph, wg.weights, part, balance)
    assert excess > 0
    assert rebalance_step(CPU, wg.graph, wg.weights, part, balance, pw) is part
    swapped = swap_step(CPU, wg.graph, wg.weights, part, balance, pw)
    assert swapped.tolist() == [1, 0, 0, 1]
    assert score_state(CPU, wg.graph, wg.weights, swapped, balance)[0][0] == 0


def test_part_graph_takes_weight_vectors():
    from gpmetis import part_graph

    graph = with_weights(load_fixture("crack"), 2)
    cuts, parts = part_graph(8, xadj=graph.xadj, adjncy=graph.adjncy, vweights=graph.vwgt,
                             options={"engine": "cpu"})
    assert_balanced(graph, np.asarray(parts), 8, [1.03, 1.03])
    assert cuts == partition(graph, 8, engine="cpu").edgecut
    cuts, parts = part_graph(8, xadj=graph.xadj, adjncy=graph.adjncy, vweights=graph.vwgt)
    auto = partition(graph, 8)
    assert cuts == auto.edgecut and parts.tolist() == auto.part.tolist()


def test_summary_prints_ubvec_as_metis_does(tmp_path):
    path = tmp_path / "two.graph"
    path.write_text("4 4 010 2\n1 2 2 4\n1 1 1 3\n2 1 2 4\n1 2 1 3\n")
    proc = subprocess.run([sys.executable, "-m", "cli.main", str(path), "2", "-engine=cpu",
                           "-ubvec=1.05 1.2", "-nooutput"], capture_output=True, text=True,
                          cwd=FIXTURES.parent)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # METIS 5.1 prints it on the line after seed/niter/ncuts
    seed = next(i for i, line in enumerate(lines) if line.startswith(" seed="))
    assert lines[seed + 1] == " ubvec=(1.05e+00 1.20e+00)"


@pytest.mark.parametrize("name,nparts", [("add20", 3), ("data", 8), ("1138_bus", 64)])
def test_metis_multi_constraint_kway_balances_every_constraint(name, nparts):
    # METIS's own k-way scheme with the weight vectors, called in pymetis's METIS: its cut is
    # the one of the partition it returns, and every constraint is within ubvec but for about
    # a vertex of slack (METIS's own limit), where METIS on the scalarised weights leaves
    # these parts 8-17% over
    graph = with_weights(load_fixture(name), 3)
    weights = graph.vwgt.T
    part, cut = metis_ncon.part_graph(graph.xadj, graph.adjncy, graph.adjwgt, weights, nparts,
                                      None, np.full(3, 1.03), options={"seed": 3, "niter": 10})
    assert part.dtype == np.int32 and len(part) == graph.nvtxs
    src = np.repeat(np.arange(graph.nvtxs), graph.degrees())
    assert cut == int(graph.adjwgt[part[src] != part[graph.adjncy]].sum()) // 2
    pw = part_weights(graph, part, nparts)
    slack = weights.max(axis=1) / (weights.sum(axis=1) / nparts)
    assert (pw / (weights.sum(axis=1) / nparts) <= 1.03 + slack).all()
    again, _ = metis_ncon.part_graph(graph.xadj, graph.adjncy, graph.adjwgt, weights, nparts,
                                     None, np.full(3, 1.03), options={"seed": 3, "niter": 10})
    assert np.array_equal(part, again)


def test_metis_multi_constraint_kway_takes_targets_and_strict_limits_quietly(capfd):
    # a part of target 0 and ubvec 1.0 are made arguments METIS accepts (it would print an
    # input error on stdout); the targets steer the parts' weights (1 and a random 1-5 each)
    graph = with_weights(load_fixture("4elt"), 3)
    graph = Graph.from_csr(graph.xadj, graph.adjncy, graph.vwgt[:, [0, 2]])
    tpwgts = np.array([[0.0, 0.0], [0.25, 0.3], [0.75, 0.7]])
    part, _ = metis_ncon.part_graph(graph.xadj, graph.adjncy, graph.adjwgt, graph.vwgt.T, 3,
                                    tpwgts, np.ones(2), options={"seed": 1, "niter": 10})
    assert capfd.readouterr().out == ""
    share = part_weights(graph, part, 3) / graph.vwgt.sum(axis=0)
    assert np.allclose(share, tpwgts, atol=0.03), share  # (equal halves: 0.5)


def test_without_metis_multi_constraint_entry_point_the_run_says_so(monkeypatch):
    monkeypatch.setattr(metis_ncon, "_load", lambda: None)
    graph = with_weights(load_fixture("4elt"), 2)
    with pytest.raises(PartitionError, match="METIS_PartGraphKway and"):
        partition(graph, 8, engine="cpu")


def test_a_run_over_a_limit_is_followed_by_runs_with_other_seeds(monkeypatch):
    # the first run's partition is made one far over its limits: a run with another seed is
    # within every limit, and it is the one kept
    import gpmetis.partitioning.schemes as schemes

    seeds = []
    run = schemes.multilevel_partition

    def first_over(wg, balance, options, tpwgts, seed, **kwargs):
        seeds.append(seed)
        part, stats = run(wg, balance, options, tpwgts, seed, **kwargs)
        return (part * 0 if len(seeds) == 1 else part), stats

    monkeypatch.setattr(schemes, "multilevel_partition", first_over)
    graph = with_weights(load_fixture("power"), 2)
    result = partition(graph, 64, engine="cpu")
    assert len(seeds) == 2 and seeds[0] != seeds[1]
    assert_balanced(graph, result.part, 64, [1.03, 1.03])
    assert result.warnings == []


@pytest.mark.parametrize("nparts,direct", [(2, True), (64, False)])
def test_a_small_input_into_few_parts_also_gets_the_direct_candidate(monkeypatch, nparts,
                                                                     direct):
    # as the single-constraint pipeline does: the trials on the input itself, then its
    # refinement, kept where it is better (commanche_dual at k=2: 31 edges cut, as METIS's,
    # where the multilevel run alone cuts 36)
    import gpmetis.partitioning.schemes as schemes

    runs = []
    run = schemes.multilevel_partition

    def recorded(wg, balance, options, tpwgts, seed, **kwargs):
        part, stats = run(wg, balance, options, tpwgts, seed, **kwargs)
        runs.append((kwargs.get("direct", False), part.copy()))
        return part, stats

    monkeypatch.setattr(schemes, "multilevel_partition", recorded)
    graph = with_weights(load_fixture("commanche_dual"), 2)
    result = partition(graph, nparts, engine="cpu")
    assert [kind for kind, _ in runs] == ([False, True] if direct else [False])
    assert_balanced(graph, result.part, nparts, [1.03, 1.03])
    src = np.repeat(np.arange(graph.nvtxs), graph.degrees())
    cuts = [int((p[src] != p[graph.adjncy]).sum()) // 2 for _, p in runs]
    assert result.edgecut == min(cuts)
    if direct:
        assert cuts[1] < cuts[0]


def test_iptype_random_starts_the_trials_from_random_bisections():
    # METIS's k-way scheme takes no random starts: -iptype=random runs the scalarised trials,
    # whose bisections start from random ones
    graph = with_weights(load_fixture("4elt"), 2)
    grown, random = (partition(graph, 8, engine="cpu", iptype=iptype).part
                     for iptype in ("grow", "random"))
    assert not np.array_equal(grown, random)
    assert_balanced(graph, random, 8, [1.03, 1.03])


@pytest.mark.parametrize("flags,iptype", [([], "mckway"), (["-iptype=random"], "mcrb-random")])
def test_summary_names_the_multi_constraint_initial_partitioning(tmp_path, flags, iptype):
    path = tmp_path / "two.graph"
    path.write_text("4 4 010 2\n1 2 2 4\n1 1 1 3\n2 1 2 4\n1 2 1 3\n")
    proc = subprocess.run([sys.executable, "-m", "cli.main", str(path), "2", "-engine=cpu",
                           "-nooutput", *flags], capture_output=True, text=True,
                          cwd=FIXTURES.parent)
    assert proc.returncode == 0, proc.stderr
    assert f"iptype={iptype}\n" in proc.stdout
