"""-ptype=rb, -contig and -minconn on the cpu engine (issue 38), checked by independent means:
the bisection tree's balance recomputed from the part weights, every part's connectivity by
scipy's connected_components, the subdomain degrees from the cut edges."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import check_partition, limits_balance, load_fixture, random_graph
from scipy.sparse.csgraph import connected_components

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.errors import OptionError
from gpmetis.graph import Graph
from gpmetis.refinement import minconn
from gpmetis.refinement.contiguity import (
    Contiguity,
    fill_empty_parts_connected,
    make_contiguous,
    plan_chunks,
    rebalance_connected,
)
from gpmetis.refinement.minconn import MinConn, minimize_connectivity
from gpmetis.refinement.rebalance import fill_empty_parts

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them


def part_components(graph: Graph, part: np.ndarray, nparts: int) -> np.ndarray:
    """Number of connected components of each part (scipy, on the edges inside parts)."""
    src = np.repeat(np.arange(graph.nvtxs), np.diff(graph.xadj))
    inside = part[src] == part[graph.adjncy]
    a = sp.csr_matrix((np.ones(int(inside.sum())), (src[inside], graph.adjncy[inside])),
                      shape=(graph.nvtxs, graph.nvtxs))
    _, label = connected_components(a, directed=False)
    first = np.unique(label, return_index=True)[1]
    return np.bincount(part[first], minlength=nparts)


def check_bisections(pw: np.ndarray, tpwgts: np.ndarray, ub: float) -> None:
    """Every node of the bisection tree (first half c // 2 parts, as METIS): each half within
    ub x its share of the node's weight (or the share rounded up)."""
    def walk(first: int, count: int) -> None:
        if count < 2:
            return
        half = count // 2
        total = pw[first:first + count].sum()
        share = tpwgts[first:first + half].sum() / tpwgts[first:first + count].sum()
        for (f, c), s in (((first, half), share), ((first + half, count - half), 1 - share)):
            target = s * total
            limit = max(np.floor(ub * target + 1e-9), np.ceil(target - 1e-9))
            assert pw[f:f + c].sum() <= limit, (first, count, f, c, pw[f:f + c].sum(), limit)
            walk(f, c)
    walk(0, len(pw))


@pytest.mark.parametrize("name,k", [("4elt", 8), ("3elt", 5), ("add20", 16)])
def test_rb_balance_per_bisection(name, k):
    graph = load_fixture(name)
    result = partition(graph, k, engine="cpu", ptype="rb")
    pw = np.bincount(result.part, weights=graph.vwgt[:, 0], minlength=k)
    check_bisections(pw, np.full(k, 1.0 / k), 1.001)
    assert (np.bincount(result.part, minlength=k) > 0).all()
    assert result.warnings == []


def test_rb_ufactor_applies_per_bisection():
    graph = load_fixture("4elt")
    loose = partition(graph, 8, engine="cpu", ptype="rb", ufactor=50)
    pw = np.bincount(loose.part, minlength=8)
    check_bisections(pw, np.full(8, 1 / 8), 1.05)
    # the default per-bisection 1.001 does not hold for this run, or the option did nothing
    tight = partition(graph, 8, engine="cpu", ptype="rb")
    assert loose.part.tolist() != tight.part.tolist()


def test_rb_tpwgts_split_targets_by_halves():
    graph = load_fixture("3elt")
    tpwgts = (0.1, 0.2, 0.3, 0.4)
    result = partition(graph, 4, engine="cpu", ptype="rb", tpwgts=tpwgts, ufactor=10)
    pw = np.bincount(result.part, minlength=4)
    check_bisections(pw, np.array(tpwgts), 1.01)
    assert np.allclose(pw / pw.sum(), tpwgts, atol=0.02)


def test_rb_cut_close_to_kway():
    graph = load_fixture("4elt")
    rb = partition(graph, 8, engine="cpu", ptype="rb")
    kway = partition(graph, 8, engine="cpu")
    assert rb.edgecut <= 1.25 * kway.edgecut


def test_rb_summary_says_what_ran():
    from gpmetis.options import Options
    from gpmetis.report import Timing, format_summary

    graph = load_fixture("3elt")
    options = Options(ptype="rb", engine="cpu")
    text = format_summary(graph, partition(graph, 4, options), options, Timing(0.0, 0.0))
    assert "ptype=rb" in text and "rtype=jet, iptype=grow" in text
    assert "ufactor=1.001" in text and "Recursive Partitioning" in text


@pytest.mark.parametrize("name,k", [("add20", 8), ("3elt", 16), ("4elt", 64)])
def test_contig_every_part_connected(name, k):
    graph = load_fixture(name)
    plain = partition(graph, k, engine="cpu")
    result = partition(graph, k, engine="cpu", contig=True)
    assert (part_components(graph, result.part, k) == 1).all()
    assert result.metrics.part_components == k
    assert result.edgecut <= 1.3 * plain.edgecut
    assert "contig" not in result.stats  # honoured, not ignored
    # (add20 at k=8: the first run's merging overfills a part that rebalancing cannot empty
    # without splitting it; a run with another seed is balanced)
    check_partition(graph, result.part, k)


@pytest.mark.parametrize("name,k", [("data", 8), ("commanche_dual", 8), ("uk", 64),
                                    ("airfoil1", 64)])
def test_contig_balanced_where_the_merging_overfilled(name, k):
    # these runs ended 1.14x-1.67x over the limit when only vertices whose own-part neighbours
    # met within two edges could leave an overweight part
    graph = load_fixture(name)
    result = partition(graph, k, engine="cpu", contig=True)
    assert (part_components(graph, result.part, k) == 1).all()
    check_partition(graph, result.part, k)
    assert result.warnings == []
    assert result.stats["contig_rounds"]["rebalancing"] >= 1


def test_contig_changes_a_split_partition():
    graph = load_fixture("add20")
    plain = partition(graph, 8, engine="cpu")
    assert (part_components(graph, plain.part, 8) > 1).any()  # the case under test
    result = partition(graph, 8, engine="cpu", contig=True)
    assert (part_components(graph, result.part, 8) == 1).all()


@pytest.mark.parametrize("engine", ["cpu", "metis", "auto"])
def test_contig_ignored_on_a_disconnected_graph(engine):
    # METIS's library refuses it; METIS 5.1's gpmetis warns and partitions without it
    from gpmetis.options import Options
    from gpmetis.report import Timing, format_summary

    graph = random_graph(400, 4, seed=3, components=2)
    options = Options(contig=True, engine=engine)
    result = partition(graph, 4, options)
    plain = partition(graph, 4, engine=engine)
    assert result.part.tolist() == plain.part.tolist()
    assert [w for w in result.warnings if "not connected" in w and "ignored" in w]
    assert "contig=NO" in format_summary(graph, result, options, Timing(0.0, 0.0))


def grid(side: int) -> Graph:
    """A side x side 4-neighbour grid."""
    ids = np.arange(side * side).reshape(side, side)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    a, b = np.concatenate([u, v]), np.concatenate([v, u])
    order = np.lexsort((b, a))
    xadj = np.zeros(side * side + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=side * side), out=xadj[1:])
    return Graph.from_csr(xadj, b[order], None, None, name=f"grid{side}")


def test_make_contiguous_merges_pieces_and_rebalances():
    graph = grid(20)
    be = get_backend("cpu")
    g = DeviceGraph.upload(be, graph)
    part = (np.arange(400) % 20 >= 10).astype(np.int32)  # left and right halves
    part[[0, 1, 20, 21]] = 1  # a piece of part 1 inside part 0
    part[[399, 398]] = 0  # and one of part 0 inside part 1
    limits = np.array([206, 206])
    out, rounds = make_contiguous(be, g, part, limits_balance(limits), context=RC)
    assert (part_components(graph, out, 2) == 1).all()
    assert np.bincount(out, minlength=2).max() <= 206
    assert rounds[0] >= 1


def test_filling_an_empty_part_keeps_the_donor_connected():
    # a path 0-1-2-3-4 whose middle vertex is the lightest: the plain fill takes it and splits
    # the part; -contig's takes an end
    xadj = np.array([0, 1, 3, 5, 7, 8])
    adjncy = np.array([1, 0, 2, 1, 3, 2, 4, 3])
    graph = Graph.from_csr(xadj, adjncy, np.array([3, 3, 1, 3, 3]), None)
    part = np.zeros(5, dtype=np.int32)
    plain = fill_empty_parts(get_backend("cpu"), DeviceGraph.upload(get_backend("cpu"), graph),
                             part, 2)
    assert part_components(graph, plain, 2)[0] == 2  # what -contig must not do
    out = fill_empty_parts_connected(get_backend("cpu"),
                                     DeviceGraph.upload(get_backend("cpu"), graph), part, 2,
                                     RC.contig_fill_tries)
    assert np.bincount(out, minlength=2).tolist() == [4, 1]
    assert (part_components(graph, out, 2) == 1).all()


def test_metis_engine_contig_fills_empty_parts_without_splitting(tmp_path):
    # a 6x6 triangle mesh's nodal graph at k=16 with uneven targets: METIS leaves parts
    # empty; the vertices that fill them leave every part connected
    idx = [j * 7 + i for j in range(7) for i in range(7)]
    edges = {(a, b) for a in idx for b in idx
             if a < b and (b - a in (1, 7, 8)) and (b - a == 7 or b % 7)}
    src = np.array([a for a, b in edges] + [b for a, b in edges])
    dst = np.array([b for a, b in edges] + [a for a, b in edges])
    a = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(49, 49))
    graph = Graph.from_csr(a.indptr, a.indices, None, None)
    tpwgts = [0.0744, 0.0607, 0.0729, 0.0364, 0.0604, 0.068, 0.0754, 0.0365, 0.0766, 0.0787,
              0.064, 0.0874, 0.0858, 0.0502, 0.0511, 0.0216]
    result = partition(graph, 16, engine="metis", contig=True, tpwgts=tpwgts)
    assert np.bincount(result.part, minlength=16).min() >= 1
    assert (part_components(graph, result.part, 16) == 1).all()


def test_rebalance_connected_keeps_parts_connected():
    graph = grid(16)
    be = get_backend("cpu")
    g = DeviceGraph.upload(be, graph)
    part = np.where(np.arange(256) % 16 < 12, 0, np.where(np.arange(256) < 128, 1, 2))
    part = part.astype(np.int32)
    limits = np.array([100, 100, 100])
    before = np.bincount(part, minlength=3)
    moved = rebalance_connected(be, g, part, limits_balance(limits), context=RC)
    assert moved is not None
    after = np.bincount(moved, minlength=3)
    assert after[0] < before[0]
    assert (part_components(graph, moved, 3) == 1).all()
    out, _ = make_contiguous(be, g, part, limits_balance(limits), context=RC)
    assert np.bincount(out, minlength=3).max() <= 100
    assert (part_components(graph, out, 3) == 1).all()


def test_rebalance_moves_the_excess_in_one_chunk_nearest_the_destination():
    graph = grid(16)
    be = get_backend("cpu")
    g = DeviceGraph.upload(be, graph)
    col = np.arange(256) % 16
    part = (col >= 9).astype(np.int32)  # 144 | 112 vertices
    limits = np.array([130, 130])
    moved = rebalance_connected(be, g, part, limits_balance(limits), context=RC)
    assert np.bincount(moved, minlength=2).tolist() == [130, 126]
    changed = np.flatnonzero(moved != part)
    assert (col[changed] == 8).all()  # the column next to part 1: distance 0
    assert (part_components(graph, moved, 2) == 1).all()


def test_plan_chunks_one_sender_per_receiver_and_whole_excess_only():
    # parts 0 and 1 over (by 5 and 3), both adjacent to part 2 (room 6); part 3 over by 4 and
    # adjacent only to part 4 (room 2)
    pairs = [(0, 2), (1, 2), (3, 4), (0, 1)]
    keys = np.unique([p * 5 + q for a, b in pairs for p, q in ((a, b), (b, a))])
    conn = np.ones(len(keys), dtype=np.int64)
    limits = np.full(5, 100)
    pw = np.array([105, 103, 94, 104, 98])
    to, amount = plan_chunks(keys, conn, (limits - pw)[None])
    assert to.tolist() == [2, -1, -1, -1, -1]
    assert amount.tolist() == [[5, 0, 0, 0, 0]]


def star_path(leaves: int) -> Graph:
    """Path 0-1-...-9 plus ``leaves`` vertices 10, 11, ... hanging off vertex 6."""
    edges = [(i, i + 1) for i in range(9)] + [(6, 10 + i) for i in range(leaves)]
    a = np.array([u for u, v in edges] + [v for u, v in edges])
    b = np.array([v for u, v in edges] + [u for u, v in edges])
    order = np.lexsort((b, a))
    xadj = np.zeros(11 + leaves, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=10 + leaves), out=xadj[1:])
    return Graph.from_csr(xadj, b[order], None, None, name="star_path")


@pytest.mark.parametrize("leaves,room,follows", [(1, 2, True), (1, 1, False), (2, 5, False)])
def test_pieces_cut_off_follow_their_chunk_where_they_fit(leaves, room, follows):
    graph = star_path(leaves)
    be = get_backend("cpu")
    g = DeviceGraph.upload(be, graph)
    part = np.array([0] * 7 + [1] * 3 + [0] * leaves, dtype=np.int32)  # 0 over by 1: vertex 6
    to, amount = np.array([1, -1]), np.array([[1, 0]])
    rooms = np.array([[-1, room]])
    limits = np.bincount(part, minlength=2) + rooms[0]
    moved = Contiguity(be, g, limits_balance(limits), RC).move_chunks(part, to, amount, rooms)
    if not follows:  # vertex 6 and the leaves it cut off overfill part 1, or outweigh it
        assert moved is None
        return
    assert np.flatnonzero(moved != part).tolist() == [6, 10]
    assert (part_components(graph, moved, 2) == 1).all()


@pytest.mark.parametrize("option,value,needle", [
    ("rtype", "fm", "Jet"),
    ("iptype", "node", "separator"),
])
def test_unimplemented_modes_refused_with_reason(option, value, needle):
    with pytest.raises(OptionError, match=needle):
        partition(load_fixture("3elt"), 4, engine="cpu", **{option: value})


def part_adjacency(graph: Graph, part: np.ndarray, nparts: int) -> set[tuple[int, int]]:
    """The pairs of distinct parts joined by an edge (both orders)."""
    src = np.repeat(np.arange(graph.nvtxs), np.diff(graph.xadj))
    a, b = part[src], part[graph.adjncy]
    return set(zip(a[a != b].tolist(), b[a != b].tolist()))


def max_degree(graph: Graph, part: np.ndarray, nparts: int) -> int:
    """The most parts one part is adjacent to."""
    pairs = part_adjacency(graph, part, nparts)
    return int(np.bincount([p for p, _ in pairs], minlength=nparts).max())


def test_minconn_runs_on_the_middle_and_the_finest_level(monkeypatch):
    from gpmetis.partitioning import multilevel

    sizes = []
    inner = multilevel.minimize_connectivity

    def recording(be, g, *args, **kwargs):
        sizes.append(g.nvtxs)
        return inner(be, g, *args, **kwargs)

    monkeypatch.setattr(multilevel, "minimize_connectivity", recording)
    graph = load_fixture("delaunay_n15")
    result = partition(graph, 16, engine="cpu", minconn=True)  # k > 8: no direct candidate
    levels = [level["nvtxs"] for level in result.stats["levels"]]
    assert len(levels) >= 4  # a level between the middle and the finest one is skipped
    assert sizes == [levels[len(levels) // 2], levels[0]]


@pytest.mark.parametrize("name,k", [("add20", 64), ("rgg_n_2_15_s0", 64), ("data", 64),
                                    ("4elt", 64), ("power", 8)])
def test_minconn_lowers_the_largest_subdomain_degree(name, k):
    graph = load_fixture(name)
    plain = partition(graph, k, engine="cpu")
    result = partition(graph, k, engine="cpu", minconn=True)
    check_partition(graph, result.part, k)
    assert result.warnings == []
    before, after = max_degree(graph, plain.part, k), max_degree(graph, result.part, k)
    assert after <= before
    assert result.metrics.maxndom == after
    assert result.edgecut <= 1.25 * plain.edgecut
    assert result.stats["minconn_rounds"]["elimination"] >= 1


def test_minconn_on_a_high_degree_part():
    # a 4 x 4 grid of 8 x 8 blocks, plus one part made of a small block in every other part's
    # corner: that part touches all 16 others
    graph = grid(32)
    ids = np.arange(32 * 32)
    row, col = ids // 32, ids % 32
    part = ((row // 8) * 4 + col // 8).astype(np.int32)
    part[(row % 8 < 2) & (col % 8 < 2)] = 16
    be = get_backend("cpu")
    g = DeviceGraph.upload(be, graph)
    limits = np.full(17, 64)
    before = max_degree(graph, part, 17)
    out, _ = minimize_connectivity(be, g, part, limits_balance(limits), RC.minconn_refine_rounds,
                                   context=RC)
    assert max_degree(graph, out, 17) < before
    assert np.bincount(out, minlength=17).max() <= 64


def test_minconn_dense_and_sorted_tables_agree(monkeypatch):
    # a 4 x 4 grid of 8 x 8 blocks and a comb-shaped part 16: the top row and four fingers
    # down through the blocks of rows 0 and 1, with weak interfaces to the blocks of row 2
    graph = grid(32)
    ids = np.arange(32 * 32)
    row, col = ids // 32, ids % 32
    part = ((row // 8) * 4 + col // 8).astype(np.int32)
    part[(row == 0) | ((col % 8 == 3) & (row < 12))] = 16
    be = get_backend("cpu")
    g = DeviceGraph.upload(be, graph)
    limits = np.full(17, 80)
    dense, rounds = minimize_connectivity(be, g, part, limits_balance(limits),
                                          RC.minconn_refine_rounds, context=RC)
    assert rounds[0] >= 1 and (dense != part).any()
    monkeypatch.setattr(minconn, "DENSE_PARTS", 4)
    sorted_part, sorted_rounds = minimize_connectivity(be, g, part, limits_balance(limits),
                                                       RC.minconn_refine_rounds, context=RC)
    assert np.array_equal(sorted_part, dense) and sorted_rounds == rounds


def test_constrained_moves_add_no_part_adjacency():
    graph = random_graph(2000, 6, seed=7, weighted=True)
    be = get_backend("cpu")
    g = DeviceGraph.upload(be, graph)
    part = (np.arange(2000) * 7919 % 9).astype(np.int32)
    part[:600] = np.arange(600) // 75  # some structure, so that moves have gains
    total = int(graph.vwgt.sum())
    before = part_adjacency(graph, part, 9)
    for rebalance, limit in ((False, total // 9 + total // 20), (True, total // 9 - 5)):
        rounds = MinConn(be, g, limits_balance(np.full(9, limit)), RC)
        moved = rounds.constrained_round(part, rebalance=rebalance)
        assert moved is not None and (moved != part).any()
        assert part_adjacency(graph, moved, 9) <= before


def test_minconn_ignored_with_recursive_bisection():
    from gpmetis.options import Options
    from gpmetis.report import Timing, format_summary

    graph = load_fixture("3elt")
    options = Options(minconn=True, ptype="rb", engine="cpu")
    result = partition(graph, 8, options)
    assert result.part.tolist() == partition(graph, 8, engine="cpu", ptype="rb").part.tolist()
    assert any("-minconn" in w and "ignored" in w for w in result.warnings)
    assert "minconn=NO" in format_summary(graph, result, options, Timing(0.0, 0.0))
    kway = Options(minconn=True, engine="cpu")
    summary = format_summary(graph, partition(graph, 8, kway), kway, Timing(0.0, 0.0))
    assert "minconn=YES" in summary



# connected 13-vertex weighted graphs (xadj, adjncy, vwgt, adjwgt) on which METIS (pymetis's
# METIS 5.2) with -contig at k=5 leaves a part split: its k-way scheme (and a part empty, whose
# fill happens to join the split part), its recursive bisection (which ignores -contig)
CONTIG_SPLIT = {
    "kway": ([0, 3, 6, 9, 13, 14, 15, 19, 21, 26, 28, 30, 31, 32],
             [7, 8, 12, 3, 7, 9, 3, 6, 9, 1, 2, 6, 10, 8, 8, 2, 3, 8, 11, 0, 1, 0, 4, 5, 6, 10,
              1, 2, 3, 8, 6, 0],
             [5, 1, 3, 2, 4, 3, 3, 4, 4, 5, 3, 4, 5],
             [1, 2, 2, 4, 2, 4, 3, 4, 5, 4, 3, 3, 5, 1, 1, 4, 3, 2, 1, 1, 2, 2, 1, 1, 2, 4, 4, 5,
              5, 4, 1, 2]),
    "rb": ([0, 3, 7, 12, 17, 20, 23, 25, 28, 32, 33, 37, 43, 44],
           [1, 3, 5, 0, 3, 5, 7, 4, 5, 9, 10, 11, 0, 1, 4, 10, 11, 2, 3, 10, 0, 1, 2, 8, 11, 1,
            8, 11, 6, 7, 10, 11, 2, 2, 3, 4, 8, 2, 3, 6, 7, 8, 12, 11],
           [1, 2, 2, 4, 4, 4, 5, 2, 2, 2, 3, 1, 5],
           [2, 5, 3, 2, 5, 4, 4, 2, 2, 2, 3, 4, 5, 5, 1, 5, 3, 2, 1, 2, 3, 4, 2, 2, 2, 4, 1, 3,
            2, 1, 3, 1, 2, 3, 5, 2, 3, 4, 3, 2, 3, 1, 5, 5]),
}


@pytest.mark.parametrize("engine", ["metis", "auto"])
@pytest.mark.parametrize("ptype", ["kway", "rb"])
def test_metis_engine_contig_gives_connected_parts(engine, ptype):
    import pymetis

    xadj, adjncy, vwgt, adjwgt = (np.array(a) for a in CONTIG_SPLIT[ptype])
    graph = Graph.from_csr(xadj, adjncy, vwgt, adjwgt)
    metis = pymetis.part_graph(5, pymetis.CSRAdjacency(xadj, adjncy), vweights=vwgt,
                               eweights=adjwgt, recursive=ptype == "rb",
                               options=pymetis.Options(contig=1))
    assert part_components(graph, np.asarray(metis.vertex_part), 5).max() > 1  # the premise
    result = partition(graph, 5, engine=engine, ptype=ptype, contig=True)
    assert (part_components(graph, result.part, 5) == 1).all()
    assert (np.bincount(result.part, minlength=5) > 0).all()


@pytest.mark.parametrize("engine", ["cpu", "metis"])
@pytest.mark.parametrize("mode", [{}, {"objtype": "vol"}, {"contig": True}, {"minconn": True},
                                  {"preset": "strong"}])
def test_every_engine_and_mode_warns_of_a_part_over_its_limit(engine, mode):
    # a 40-vertex cycle whose vertex 0 weighs 100 of the 139: its part is over any limit at
    # k = 4; the one check of every part against its limit says so, naming the part
    n = 40
    xadj = np.arange(0, 2 * n + 1, 2)
    adjncy = np.stack([(np.arange(n) - 1) % n, (np.arange(n) + 1) % n], axis=1).reshape(-1)
    vwgt = np.ones(n, dtype=np.int64)
    vwgt[0] = 100
    graph = Graph.from_csr(xadj, adjncy, vwgt)
    result = partition(graph, 4, engine=engine, **mode)
    heavy = int(result.part[0])
    weight = int(vwgt[result.part == heavy].sum())
    limit = int(np.floor(1.03 * 139 / 4))
    assert weight > limit
    [line] = [w for w in result.warnings if "above its limit" in w]
    assert f"part {heavy} weighs {weight}, {weight - limit} above its limit {limit}" in line
