"""-objtype=vol on the cpu engine (the gpu engine's twin): move gains against volumes
recomputed here from scratch, refinement that never raises the volume nor breaks a limit, and
the command's reported volume against the part file it wrote."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, check_partition, limits_balance, load_fixture, random_graph

from cli.main import main
from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.graph import Graph
from gpmetis.refinement import volume

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

CPU = get_backend("cpu")


def recomputed_volume(graph: Graph, part: np.ndarray, nparts: int, vsize=None) -> int:
    """METIS's communication volume from its definition: per vertex, its size times the
    number of other parts among its neighbours."""
    src = np.repeat(np.arange(graph.nvtxs), np.diff(graph.xadj))
    other = part[src] != part[graph.adjncy]
    pairs = np.unique(src[other] * nparts + part[graph.adjncy[other]])
    sizes = np.ones(graph.nvtxs, np.int64) if vsize is None else vsize
    return int(sizes[pairs // nparts].sum())


def recomputed_cut(graph: Graph, part: np.ndarray) -> int:
    src = np.repeat(np.arange(graph.nvtxs), np.diff(graph.xadj))
    return int(graph.adjwgt[part[src] != part[graph.adjncy]].sum()) // 2


def _random_boundary(n: int, degree: int, seed: int, rng, nparts: int, max_vsize: int):
    """(graph, part, vsize, its DeviceGraph, sources, boundary table): random parts and vertex
    sizes below ``max_vsize`` drawn from ``rng`` on a random weighted graph."""
    graph = random_graph(n, degree, seed=seed, weighted=True)
    part = rng.integers(0, nparts, graph.nvtxs).astype(np.int32)
    vsize = rng.integers(1, max_vsize, graph.nvtxs).astype(np.int64)
    g = DeviceGraph.upload(CPU, graph)
    src = CPU.sources(g.xadj, g.nnz)
    return graph, part, vsize, g, src, volume.BoundaryTable(CPU, g, part, nparts, src, vsize)


def test_move_gains_are_the_volume_and_cut_changes():
    rng = np.random.default_rng(5)
    nparts = 6
    graph, part, vsize, g, src, table = _random_boundary(400, 5, 3, rng, nparts, 5)
    unlimited = limits_balance(np.full(nparts, graph.nvtxs * 10))
    gain, cut_gain = volume.VolumeRefinement(CPU, g, unlimited, RC, vsize).move_gains(part, table)
    before = recomputed_volume(graph, part, nparts, vsize)
    cut = recomputed_cut(graph, part)
    assert volume.communication_volume(CPU, g, part, nparts, vsize) == before
    for i in rng.choice(len(table.keys), 150, replace=False):
        moved = part.copy()
        moved[table.owner[i]] = table.dest[i]
        assert gain[i] == before - recomputed_volume(graph, moved, nparts, vsize)
        assert cut_gain[i] == cut - recomputed_cut(graph, moved)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_round_lowers_the_volume_by_at_least_its_gain(seed):
    # random parts: many candidates next to each other, entering parts others leave
    nparts = 5
    graph, part, vsize, g, src, table = _random_boundary(2000, 6, seed, np.random.default_rng(seed),
                                                         nparts, 4)
    limits = np.full(nparts, graph.nvtxs * 10, dtype=np.int64)
    out, gained = volume.VolumeRefinement(CPU, g, limits_balance(limits), RC, vsize).move_round(
        part, table)
    moved = np.flatnonzero(out != part)
    assert len(moved) > 20 and gained > 0
    assert (recomputed_volume(graph, part, nparts, vsize)
            - recomputed_volume(graph, out, nparts, vsize)) >= gained
    # the rule lets neighbours move at once where they do not clash
    assert (out[g.adjncy[np.isin(src, moved)]] != part[g.adjncy[np.isin(src, moved)]]).any()


def test_fitting_keeps_every_part_within_its_room():
    # parts 0 and 1 full, 2 with room 1 (vertex: part -> dest): 3: 1 -> 2 fits; 0: 0 -> 1
    # fits on the credit of 3's move, into a part that needs no credit; 5: 0 -> 1 and 6: 1 -> 0
    # fit only on credits of moves that need credit themselves; 7: 1 -> 2 is past 2's room
    part = np.array([0, 0, 0, 1, 2, 0, 1, 1], np.int32)
    movers = np.array([3, 0, 5, 6, 7], np.int64)  # in rank order
    dest = np.array([2, 1, 1, 0, 2], np.int32)
    room = np.array([0, 0, 1], np.int64)
    pick = np.arange(5)
    kept = volume._fitting(CPU, part, room[None], movers, dest, np.ones((1, 8), np.int32), pick)
    assert kept.tolist() == [0, 1]
    moved = part.copy()
    moved[movers[kept]] = dest[kept]
    assert (np.bincount(moved, minlength=3) - np.bincount(part, minlength=3) <= room).all()


def test_fitting_checks_every_constraint():
    # as above in constraint 0; in constraint 1 vertex 3 weighs 2 against part 2's room 1, so
    # its move goes, and with it the credit that 0's move into part 1 needed: nothing is kept
    part = np.array([0, 0, 0, 1, 2, 0, 1, 1], np.int32)
    movers = np.array([3, 0, 5, 6, 7], np.int64)
    dest = np.array([2, 1, 1, 0, 2], np.int32)
    room = np.array([[0, 0, 1], [0, 0, 1]], np.int64)
    weights = np.ones((2, 8), np.int32)
    assert volume._fitting(CPU, part, room, movers, dest, weights,
                           np.arange(5)).tolist() == [0, 1]
    weights[1, 3] = 2
    assert volume._fitting(CPU, part, room, movers, dest, weights,
                           np.arange(5)).tolist() == []


@pytest.mark.parametrize("sizes", [False, True])
def test_refinement_lowers_the_volume_within_the_limits(sizes):
    graph = random_graph(3000, 6, seed=11, weighted=True)
    nparts = 8
    part = (np.arange(graph.nvtxs) * 7 // graph.nvtxs).astype(np.int32)  # 7 stripes, 1 empty
    vsize = (np.arange(graph.nvtxs) % 3 + 1 if sizes else np.ones(graph.nvtxs)).astype(np.int64)
    weights = np.bincount(part, weights=graph.vwgt[:, 0], minlength=nparts).astype(np.int64)
    limits = np.full(nparts, int(weights.max()) + 5)
    g = DeviceGraph.upload(CPU, graph)
    out, rounds = volume.refine_volume(CPU, g, part, limits_balance(limits), vsize,
                                       context=RC)
    assert rounds > 0
    assert recomputed_volume(graph, out, nparts, vsize) < recomputed_volume(
        graph, part, nparts, vsize)
    assert (np.bincount(out, weights=graph.vwgt[:, 0], minlength=nparts) <= limits).all()
    assert part.max() == 6  # the input is not changed


def test_overweight_parts_do_not_grow():
    graph = load_fixture("add20")
    part = (np.arange(graph.nvtxs) % 4).astype(np.int32)
    part[: graph.nvtxs // 2] = 0  # part 0 far over the limits below
    weights = np.bincount(part, minlength=4)
    limits = np.full(4, graph.nvtxs // 4 + 10)
    out, _ = volume.refine_volume(CPU, DeviceGraph.upload(CPU, graph), part, limits_balance(limits),
                                  np.ones(graph.nvtxs, np.int64), context=RC)
    after = np.bincount(out, minlength=4)
    assert (after <= np.maximum(weights, limits)).all()
    assert recomputed_volume(graph, out, 4) < recomputed_volume(graph, part, 4)


@pytest.mark.parametrize("name,k", [("add20", 8), ("PGPgiantcompo", 8), ("hep-th", 64)])
def test_vol_is_balanced_and_no_worse_than_cut(name, k):
    graph = load_fixture(name)
    vol = partition(graph, k, engine="cpu", objtype="vol")
    cut = partition(graph, k, engine="cpu")
    check_partition(graph, vol.part, k)
    assert vol.volume == recomputed_volume(graph, vol.part, k)
    assert vol.volume <= cut.volume
    assert vol.stats["volume_rounds"] >= 0


def test_command_reports_the_volume_of_its_part_file(tmp_path):
    # add20 with vertex sizes (fmt 100): each line starts with the vertex's size
    graph = load_fixture("add20")
    vsize = np.arange(graph.nvtxs) % 5 + 1
    lines = [f"{graph.nvtxs} {graph.nedges} 100"]
    for v in range(graph.nvtxs):
        nbrs = graph.adjncy[graph.xadj[v]:graph.xadj[v + 1]] + 1
        lines.append(" ".join(map(str, [vsize[v], *nbrs])))
    path = tmp_path / "sized.graph"
    path.write_text("\n".join(lines) + "\n")
    report = tmp_path / "r.json"
    result = CliRunner().invoke(main, [str(path), "8", "-objtype=vol", "-engine=cpu",
                                       f"-json={report}"])
    assert result.exit_code == 0, result.output
    part = np.loadtxt(path.with_name("sized.graph.part.8"), dtype=np.int64)
    expected = recomputed_volume(graph, part, 8, vsize)
    assert f"communication volume: {expected}." in result.output
    assert "objtype=vol" in result.output and "rtype=jet+volume" in result.output
    data = json.loads(report.read_text())
    assert data["metrics"]["volume"] == expected and data["engine"] == "cpu"
    check_partition(graph, part, 8)


def test_auto_keeps_metis_for_small_graphs(tmp_path):
    path = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", path)
    result = CliRunner().invoke(main, [str(path), "4", "-objtype=vol", "-nooutput"])
    assert result.exit_code == 0, result.output
    assert "objtype=vol" in result.output and "Engine: metis (-engine=auto)" in result.output
