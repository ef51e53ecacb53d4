"""SPAC edge partitioning on the cpu and metis engines: the split graph, the edge order, one part
per edge, balance, determinism, the reported costs, and the ``-edgepart`` command's refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, limits_balance, load_fixture, random_graph

import gpmetis
from cli.main import main
from gpmetis.backend import get_backend
from gpmetis.edge_partitioning import partition_edges
from gpmetis.edge_partitioning.assign import EdgeSlots, balance_edges, fill_empty_parts
from gpmetis.edge_partitioning.split_graph import (
    DOMINANT_WEIGHT,
    build_split_graph,
)
from gpmetis.errors import OptionError
from gpmetis.graph import Graph

CPU = get_backend("cpu")


def shuffled_rows(graph: Graph, seed: int) -> Graph:
    """The same graph with every row's entries in a random order (weights kept with them)."""
    rng = np.random.default_rng(seed)
    src = graph.sources()
    order = np.lexsort((rng.random(len(src)), src))
    adjwgt = graph.adjwgt[order] if graph.has_adjwgt else None
    return Graph.from_csr(graph.xadj, graph.adjncy[order], None, adjwgt, name="shuffled")


def file_order_edges(graph: Graph) -> np.ndarray:
    """(m, 2) edges as a METIS file lists them: for each vertex u, its neighbours v > u in
    line order."""
    edges = []
    for u in range(graph.nvtxs):
        for v in graph.adjncy[graph.xadj[u]:graph.xadj[u + 1]]:
            if v > u:
                edges.append((u, int(v)))
    return np.array(edges, dtype=np.int64).reshape(-1, 2)


def replication(graph: Graph, edges: np.ndarray, part: np.ndarray) -> tuple[float, int]:
    """(replication factor, copies beyond one) of an edge partition, from the edge list."""
    pairs = {(int(u), int(p)) for (u, v), p in zip(edges, part) for u in (u, v)}
    vertices = int((graph.degrees() > 0).sum())
    return len(pairs) / vertices, len(pairs) - vertices


def edge_loads(graph: Graph, edges: np.ndarray, part: np.ndarray, nparts: int) -> np.ndarray:
    weight = {}
    for u in range(graph.nvtxs):
        for j in range(graph.xadj[u], graph.xadj[u + 1]):
            weight[(u, int(graph.adjncy[j]))] = int(graph.adjwgt[j])
    loads = np.array([weight[(int(u), int(v))] for u, v in edges])
    return np.bincount(part, weights=loads, minlength=nparts).astype(np.int64)


def test_split_graph_matches_its_definition():
    graph = shuffled_rows(random_graph(300, 5, seed=3, isolated=7, weighted=True), seed=1)
    xadj, adjncy = graph.xadj, graph.adjncy
    split = build_split_graph(CPU, xadj, adjncy, graph.adjwgt.astype(np.int32))
    g = split.graph
    assert g.nvtxs == len(adjncy) and split.dominant == DOMINANT_WEIGHT
    np.testing.assert_array_equal(g.vwgt, graph.adjwgt)
    for u in range(graph.nvtxs):
        start, end = int(xadj[u]), int(xadj[u + 1])
        for i in range(start, end):
            v = int(adjncy[i])
            partner = int(split.partner[i])
            assert split.src[i] == u and split.src[partner] == v and adjncy[partner] == u
            row = list(zip(g.adjncy[g.xadj[i]:g.xadj[i + 1]], g.adjwgt[g.xadj[i]:g.xadj[i + 1]]))
            expected = [(partner, DOMINANT_WEIGHT)]
            expected += [(i - 1, 1)] if i > start else []
            expected += [(i + 1, 1)] if i + 1 < end else []
            assert row == expected


def test_edges_in_file_order_with_unsorted_rows():
    graph = shuffled_rows(random_graph(200, 6, seed=5), seed=2)
    split = build_split_graph(CPU, graph.xadj, graph.adjncy)
    edges = EdgeSlots.of(CPU, split.src, graph.adjncy, split.partner, None)
    got = np.stack([split.src[edges.slot], graph.adjncy[edges.slot]], axis=1)
    np.testing.assert_array_equal(got, file_order_edges(graph))
    np.testing.assert_array_equal(graph.adjncy[edges.other], got[:, 0])
    # every slot names its own edge
    np.testing.assert_array_equal(edges.edge_of_slot[edges.slot], np.arange(len(edges.slot)))
    np.testing.assert_array_equal(edges.edge_of_slot[edges.other], np.arange(len(edges.slot)))


@pytest.mark.parametrize("name,nparts", [("4elt", 8), ("PGPgiantcompo", 32), ("power", 5)])
def test_every_edge_once_balanced_and_costs_as_reported(name, nparts):
    graph = load_fixture(name)
    result = partition_edges(graph, nparts, engine="cpu")
    edges = file_order_edges(graph)
    assert result.part.shape == (graph.nedges,) and result.part.dtype == np.int32
    assert result.part.min() >= 0 and result.part.max() < nparts
    loads = np.bincount(result.part, minlength=nparts)
    assert (loads > 0).all()
    limit = int(np.floor(1.03 * graph.nedges / nparts + 1e-9))
    assert loads.max() <= max(limit, -(-graph.nedges // nparts)) == result.limit
    np.testing.assert_array_equal(loads, result.part_loads)
    factor, beyond = replication(graph, edges, result.part)
    assert beyond == result.copies_beyond_one
    assert factor == pytest.approx(result.replication_factor, rel=1e-12)
    assert result.edge_balance == pytest.approx(loads.max() * nparts / graph.nedges)
    # SPAC is far better than a random assignment
    random_part = np.random.default_rng(0).integers(0, nparts, graph.nedges)
    assert result.replication_factor < replication(graph, edges, random_part)[0] - 0.3


def test_weighted_edges_balance_loads():
    graph = random_graph(3000, 6, seed=11, weighted=True)
    result = partition_edges(graph, 12, engine="cpu")
    loads = edge_loads(graph, file_order_edges(graph), result.part, 12)
    np.testing.assert_array_equal(loads, result.part_loads)
    assert loads.max() <= result.limit
    assert result.limit == int(np.floor(1.03 * graph.adjwgt.sum() / 2 / 12 + 1e-9))


def test_deterministic_and_seeded():
    graph = load_fixture("3elt")
    a = partition_edges(graph, 16, engine="cpu")
    b = partition_edges(graph, 16, engine="cpu")
    np.testing.assert_array_equal(a.part, b.part)
    c = partition_edges(graph, 16, engine="cpu", seed=99)
    assert not np.array_equal(a.part, c.part)


def test_ncuts_keeps_the_fewest_copies():
    graph = load_fixture("add20")
    one = partition_edges(graph, 8, engine="cpu")
    best = partition_edges(graph, 8, engine="cpu", ncuts=3)
    assert best.copies_beyond_one <= one.copies_beyond_one


def test_metis_engine_runs_the_same_model():
    graph = load_fixture("4elt")
    result = partition_edges(graph, 8, engine="metis")
    assert result.engine == "metis"
    factor, beyond = replication(graph, file_order_edges(graph), result.part)
    assert beyond == result.copies_beyond_one
    assert np.bincount(result.part, minlength=8).max() <= result.limit


def test_package_exports_partition_edges():
    assert gpmetis.partition_edges is partition_edges


def test_balance_moves_cut_edges_first_then_forces():
    part = np.array([0, 0, 0, 0, 0, 0, 1, 2], dtype=np.int32)
    other = np.array([0, 1, 0, 2, 0, 0, 1, 2], dtype=np.int32)
    load = np.ones(8, dtype=np.int64)
    # limit 4: two edges leave part 0; edges 1 and 3 (other slot in 1 and 2) move free
    got = balance_edges(CPU, part, other, load, limits_balance(np.full(3, 4)))
    np.testing.assert_array_equal(got, [0, 1, 0, 2, 0, 0, 1, 2])
    # limit 3 on 8 unit edges in 3 parts: a forced move follows
    got = balance_edges(CPU, part, other, load, limits_balance(np.full(3, 3)))
    assert np.bincount(got, minlength=3).max() <= 3
    assert got[1] == 1 and got[3] == 2


def test_balance_heavy_edges_fit_whole_then_lower_the_largest_load():
    # part 0 carries 23 of 33 (limit 12): its light edges (1, 2) fit part 1's room whole; no
    # edge of 10 fits a room, so one moves where it lowers the larger load, ending within 12
    part = np.array([0, 0, 0, 0, 1, 2], dtype=np.int32)
    load = np.array([10, 1, 2, 10, 5, 5], dtype=np.int64)
    got = balance_edges(CPU, part, part.copy(), load, limits_balance(np.full(3, 12)))
    assert np.bincount(got, weights=load, minlength=3).max() <= 12


def test_fill_empty_parts_takes_spare_edges_from_the_heaviest():
    part = np.array([0, 0, 0, 1, 1, 0], dtype=np.int32)
    got = fill_empty_parts(CPU, part, np.ones(6, dtype=np.int64), 4)
    counts = np.bincount(got, minlength=4)
    assert (counts > 0).all() and counts[1] == 2
    np.testing.assert_array_equal(got, [0, 2, 3, 1, 1, 0])


def test_refused_options_and_inputs():
    graph = load_fixture("4elt")
    for option, value in (("ptype", "rb"), ("objtype", "vol"), ("contig", True),
                          ("minconn", True), ("tpwgts", (0.5, 0.5))):
        with pytest.raises(OptionError, match=f"-{option}: cannot be used with -edgepart"):
            partition_edges(graph, 2, engine="cpu", **{option: value})
    with pytest.raises(OptionError, match="edge parts for a graph of 45878 edges"):
        partition_edges(graph, graph.nedges + 1, engine="cpu")
    empty = Graph.from_csr(np.zeros(4, dtype=np.int64), np.zeros(0, dtype=np.int32))
    with pytest.raises(OptionError, match="has no edges"):
        partition_edges(empty, 1, engine="cpu")



def test_networkx_graph_with_weights_gives_parts_keyed_by_edge():
    nx = pytest.importorskip("networkx")
    graph = nx.grid_2d_graph(12, 10)  # nodes are (i, j) tuples
    rng = np.random.default_rng(5)
    for u, v in graph.edges:
        graph[u][v]["w"] = int(rng.integers(1, 5))
    result = partition_edges(graph, 4, engine="cpu", weight="w")
    assert isinstance(result, gpmetis.NodeEdgeResult) and set(result.edge_part) == set(graph.edges)
    loads = np.zeros(4, np.int64)
    copies = set()
    for (u, v), p in result.edge_part.items():
        loads[p] += graph[u][v]["w"]
        copies |= {(u, p), (v, p)}
    np.testing.assert_array_equal(loads, result.part_loads)
    assert len(copies) / graph.number_of_nodes() == result.replication_factor
    same, _ = gpmetis.from_networkx(graph, weight="w")
    np.testing.assert_array_equal(result.part, partition_edges(same, 4, engine="cpu").part)


def test_scipy_matrix_and_metis_style_options_as_partition_takes_them():
    sp = pytest.importorskip("scipy.sparse")
    graph = load_fixture("add20")
    n = graph.nvtxs
    weights = 1 + graph.sources() % 3 + graph.adjncy % 3  # symmetric: i%3 + j%3
    matrix = sp.csr_array((weights.astype(float), graph.adjncy, graph.xadj), shape=(n, n))
    expected = partition_edges(gpmetis.from_scipy(matrix, weights=True), 6, engine="cpu",
                               seed=3)
    got = partition_edges(matrix, 6, gpmetis.Options(seed=3), engine="cpu", mtx_weights=True)
    assert int(got.part_loads.sum()) == int(weights.sum()) // 2
    np.testing.assert_array_equal(got.part, expected.part)
    unweighted = partition_edges(matrix, 6, {"engine": "cpu", "seed": 3})
    assert int(unweighted.part_loads.sum()) == graph.nedges

@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "add20.graph"
    shutil.copy(FIXTURES / "add20.graph", path)
    return path


def test_command_writes_edge_file_summary_and_report(graph_file):
    report_path = graph_file.with_suffix(".json")
    result = CliRunner().invoke(main, [str(graph_file), "6", "-edgepart", "-engine=cpu",
                                       f"-json={report_path}"])
    assert result.exit_code == 0, result.output
    part = np.loadtxt(graph_file.with_name("add20.graph.edgepart.6"), dtype=np.int64)
    graph = load_fixture("add20")
    factor, beyond = replication(graph, file_order_edges(graph), part)
    report = json.loads(report_path.read_text())
    assert report["replication_factor"] == pytest.approx(factor, rel=1e-12)
    assert report["vertex_copies_beyond_one"] == beyond
    assert report["edge_balance"] == pytest.approx(np.bincount(part).max() * 6 / graph.nedges)
    assert report["engine"] == "cpu" and report["nedges"] == graph.nedges
    assert report["format_version"] == 1
    assert f"Replication factor: {factor:.4f}, vertex copies beyond one: {beyond}." in result.output
    assert "Edge balance:" in result.output and "Edge partitioning:" in result.output
    assert not graph_file.with_name("add20.graph.part.6").exists()


@pytest.mark.parametrize("args,message", [
    (["-ptype=rb"], "-ptype: cannot be used with -edgepart"),
    (["-objtype=vol"], "-objtype: cannot be used with -edgepart"),
    (["-contig"], "-contig: cannot be used with -edgepart"),
    (["-minconn"], "-minconn: cannot be used with -edgepart"),
])
def test_command_refuses_options(graph_file, args, message):
    result = CliRunner().invoke(main, [str(graph_file), "4", "-edgepart", *args])
    assert result.exit_code == 2 and message in result.output
    assert not graph_file.with_name("add20.graph.edgepart.4").exists()


def test_command_refuses_more_parts_than_edges_and_no_edges(tmp_path):
    path = tmp_path / "tiny.graph"
    path.write_text("3 1\n2\n1\n\n")
    result = CliRunner().invoke(main, [str(path), "2", "-edgepart"])
    assert result.exit_code == 2 and "2 edge parts for a graph of 1 edge" in result.output
    path.write_text("3 0\n\n\n\n")
    result = CliRunner().invoke(main, [str(path), "1", "-edgepart"])
    assert result.exit_code == 2 and "has no edges" in result.output
    assert not list(tmp_path.glob("*.edgepart.*"))
