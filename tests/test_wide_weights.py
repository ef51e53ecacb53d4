"""Graphs whose weight totals pass 2^31 on the multilevel engines: every mode partitions them,
and the cut, volume and part weights reported are the exact ones of the part."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_fixture
from test_hostile_options import grid_file, reported_cut, run

from gpmetis import partition
from gpmetis.edge_partitioning import partition_edges
from gpmetis.errors import PartitionError
from gpmetis.graph import Graph
from gpmetis.io import read_graph

INT32_MAX = 2**31 - 1


def wide_graph(name: str = "4elt", ncon: int = 1, vsize: bool = False,
               edge_scale: int = 1_000_000) -> Graph:
    """The fixture ``name`` with edge weights around ``edge_scale`` (symmetric), vertex weights
    up to 2e6 per constraint and, with ``vsize``, sizes up to 1e8: totals far past 2^31."""
    g = load_fixture(name)
    src = g.sources().astype(np.int64)
    lo, hi = np.minimum(src, g.adjncy), np.maximum(src, g.adjncy)
    adjwgt = edge_scale // 2 + (lo * 7919 + hi * 104729) % (edge_scale + 1)
    rng = np.random.default_rng(7)
    vwgt = rng.integers(1, 2_000_000, size=(g.nvtxs, ncon))
    sizes = rng.integers(10_000_000, 100_000_000, size=g.nvtxs) if vsize else None
    return Graph.from_csr(g.xadj, g.adjncy, vwgt, adjwgt, vsize=sizes, name=f"wide {name}")


def exact_cut(graph: Graph, part: np.ndarray) -> int:
    cut = part[graph.sources()] != part[graph.adjncy]
    return int(graph.adjwgt[cut].astype(object).sum()) // 2


def exact_volume(graph: Graph, part: np.ndarray) -> int:
    """METIS's communication volume: each vertex's size times the parts other than its own
    among its neighbours'."""
    src = graph.sources()
    pairs = np.unique(src.astype(np.int64) * (part.max() + 1) + part[graph.adjncy])
    v, p = np.divmod(pairs, part.max() + 1)
    other = p != part[v]
    return int(graph.vsize[v[other]].astype(object).sum())


def check_exact(graph: Graph, result, nparts: int) -> None:
    part = result.part
    assert part.min() >= 0 and part.max() < nparts and len(np.unique(part)) == nparts
    assert result.edgecut == exact_cut(graph, part)
    for c in range(graph.ncon):
        pwgts = [int(graph.vwgt[part == q, c].sum()) for q in range(nparts)]
        assert [row[c] for row in result.metrics.pwgts] == pwgts
        assert sum(pwgts) > INT32_MAX


# (fixture, nparts, ncon, mode): every mode of the multilevel engines
WIDE_CASES = [
    ("4elt", 8, 1, {}),
    ("4elt", 8, 1, {"ptype": "rb"}),
    ("4elt", 16, 1, {"contig": True}),
    ("4elt", 16, 1, {"minconn": True}),
    ("4elt", 8, 1, {"objtype": "vol"}),
    ("add20", 4, 1, {"preset": "strong"}),
    ("4elt", 6, 1, {"tpwgts": (0.3, 0.1, 0.1, 0.2, 0.2, 0.1), "ufactor": 50}),
    ("4elt", 8, 2, {}),
    ("4elt", 4, 3, {"ptype": "rb"}),
]


@pytest.mark.parametrize("name,nparts,ncon,mode", WIDE_CASES)
def test_every_mode_partitions_totals_past_int32_exactly(name, nparts, ncon, mode):
    graph = wide_graph(name, ncon, vsize=mode.get("objtype") == "vol")
    assert int(graph.adjwgt.sum()) > INT32_MAX
    result = partition(graph, nparts, engine="cpu", **mode)
    check_exact(graph, result, nparts)
    assert result.imbalance <= 1.0 + (mode.get("ufactor", 30) + 20) / 1000
    if graph.vsize is not None:
        assert result.volume == exact_volume(graph, result.part) > INT32_MAX
    # as good as METIS on the same weights, give or take
    metis = partition(graph, nparts, engine="metis", **mode)
    assert result.edgecut <= 1.3 * metis.edgecut


def test_coarsening_stops_before_a_vertex_would_pass_int32():
    # edges of 0.7e8 to 2.1e8: each vertex's (at most 10) within 2^31, a few together not
    graph = wide_graph("4elt", edge_scale=140_000_000)
    assert int(np.diff(np.r_[0, np.cumsum(graph.adjwgt)][graph.xadj]).max()) <= INT32_MAX
    result = partition(graph, 4, engine="cpu")
    check_exact(graph, result, 4)
    assert result.imbalance <= 1.05


def test_edge_partitioning_of_heavy_loads():
    graph = wide_graph("4elt")
    result = partition_edges(graph, 8, engine="cpu")
    assert int(result.part_loads.sum()) == int(graph.adjwgt.sum()) // 2 > INT32_MAX
    assert result.part_loads.max() <= result.limit


def test_cli_reports_the_exact_cut_past_int32(tmp_path):
    path = grid_file(tmp_path / "g.graph", side=30, ew=10**8, vw=lambda v: 10**7 + v)
    result = run(path, 7, "-engine=cpu")
    assert result.exit_code == 0, result.output
    part = np.loadtxt(tmp_path / "g.graph.part.7", dtype=np.int32)
    graph = read_graph(path)
    assert reported_cut(result.output) == exact_cut(graph, part) > INT32_MAX


def test_a_vertex_past_int32_is_refused_naming_it(tmp_path):
    path = grid_file(tmp_path / "g.graph", side=10, ew=10**9)  # degree 4: 4e9 per vertex
    result = run(path, 7, "-engine=cpu")
    assert result.exit_code == 1, result.output
    assert "the edges of vertex 12 weigh 4000000000 together" in result.output
    assert "2^31-1" in result.output and "-engine=metis" in result.output
    assert not list(tmp_path.glob("g.graph.part.*"))
    assert run(path, 7, "-engine=auto").exit_code == 0  # taken by METIS


def test_volume_bound_past_2_61_is_refused_by_the_multilevel_engines():
    graph = load_fixture("add20")
    sizes = np.full(graph.nvtxs, 2**48, np.int64)  # times its 14924 entries: 2^61.9
    heavy = Graph.from_csr(graph.xadj, graph.adjncy, vsize=sizes, name="sized")
    with pytest.raises(PartitionError, match=r"sized: the vertex sizes times the degrees .* 2\^61"):
        partition(heavy, 4, engine="cpu", objtype="vol")
    assert partition(heavy, 4, engine="auto", objtype="vol").engine == "metis"
