"""Label-propagation clustering (``-ctype=lp``) and the contraction of clusters, on NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_fixture, random_graph

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.coarsening.clustering import (
    Schedule,
    active,
    approve,
    best_cluster,
    lp_clustering,
)
from gpmetis.coarsening.coarsen import coarsen
from gpmetis.coarsening.contraction import (
    SMALL_CONTRACT,
    WARP_CAP,
    by_loop,
    coarse_map,
    contract,
    members_of,
    pair_members,
)
from gpmetis.coarsening.matching import heavy_edge_matching
from gpmetis.context import DEFAULT, CoarseningContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.errors import OptionError
from gpmetis.graph import Graph

CPU = get_backend("cpu")
COARSENING = DEFAULT.coarsening
SUBROUNDS = COARSENING.lp_subrounds


def _star_graph(vwgt=None) -> DeviceGraph:
    """Vertex 0 tied to 1 (weight 5), 2 (3), 3 (3); 1-2 and 2-3 weigh 1."""
    edges = {(0, 1): 5, (0, 2): 3, (0, 3): 3, (1, 2): 1, (2, 3): 1}
    n = 4
    rows = [[] for _ in range(n)]
    for (a, b), w in edges.items():
        rows[a].append((b, w))
        rows[b].append((a, w))
    xadj = np.cumsum([0] + [len(r) for r in rows])
    adjncy = np.array([b for r in rows for b, _ in sorted(r)], dtype=np.int32)
    adjwgt = np.array([w for r in rows for _, w in sorted(r)], dtype=np.int32)
    vwgt = None if vwgt is None else np.array(vwgt, dtype=np.int32)
    return DeviceGraph.upload(CPU, Graph.from_csr(xadj, adjncy, vwgt=vwgt, adjwgt=adjwgt))


def _subround_of(v: int, rseed: int) -> int:
    return next(s for s in range(SUBROUNDS) if active(v + 1, rseed, s, SUBROUNDS)[v])


def test_a_vertex_proposes_to_its_heaviest_adjacent_cluster_that_fits():
    g = _star_graph()
    rseed = 1
    sub = _subround_of(0, rseed)
    cluster = np.arange(4, dtype=np.int32)
    cluster[2] = 3  # 2 and 3 form one cluster: vertex 0 has 6 into it, 5 into vertex 1
    cw = np.bincount(cluster, weights=g.vwgt, minlength=4).astype(np.int32)
    dest, rating = np.empty(4, np.int32), np.empty(4, np.int32)
    best_cluster(CPU, g, cluster, cw, 3, 9, Schedule(CPU, [(rseed, sub)], SUBROUNDS), dest, rating)
    assert (dest[0], rating[0]) == (3, 6)
    # the cluster {2, 3} is full at maxvwgt 2: the next best is vertex 1's
    best_cluster(CPU, g, cluster, cw, 2, 9, Schedule(CPU, [(rseed, sub)], SUBROUNDS), dest, rating)
    assert (dest[0], rating[0]) == (1, 5)
    # only the vertices of the sub-round propose
    proposing = np.flatnonzero(dest >= 0)
    assert active(4, rseed, sub, SUBROUNDS)[proposing].all()


@pytest.mark.parametrize("vwgt,lighter", [([1, 9, 3, 2], 3), ([1, 9, 2, 3], 2)])
def test_equal_ratings_go_to_the_lighter_cluster(vwgt, lighter):
    g = _star_graph(vwgt)
    rseed = 2
    sub = _subround_of(0, rseed)
    cluster = np.arange(4, dtype=np.int32)
    dest, rating = np.empty(4, np.int32), np.empty(4, np.int32)
    # vertex 1 (weight 9) does not fit in 6; 2 and 3 both get rating 3
    for seed in range(5):
        best_cluster(CPU, g, cluster, g.vwgt.copy(), 6, seed,
                     Schedule(CPU, [(rseed, sub)], SUBROUNDS), dest, rating)
        assert (dest[0], rating[0]) == (lighter, 3)


def test_rows_with_their_ids_and_local_labels_choose_as_the_whole_graph():
    # a rank holding rows a..b-1 numbers the clusters it sees locally and passes the rows'
    # first id and the labels, and must make the whole graph's choices for its rows
    # unit weights and clusters of two labelled by even ids: the seeded hash of the global ids
    # breaks most ties
    g = DeviceGraph.upload(CPU, random_graph(300, 6, 4))
    cluster = (np.arange(300) // 2 * 2).astype(np.int32)
    cw = np.bincount(cluster, weights=g.vwgt, minlength=300).astype(np.int32)
    maxvwgt = int(cw.max()) + 4
    a, b = 120, 210
    # the rank's numbering: its rows' vertices first, then the others
    order = np.r_[a:b, 0:a, b:300]
    at = np.argsort(order).astype(np.int32)
    rows = DeviceGraph(CPU, g.xadj[a:b + 1] - g.xadj[a], at[g.adjncy[g.xadj[a]:g.xadj[b]]],
                       g.adjwgt[g.xadj[a]:g.xadj[b]], g.vwgt[a:b])
    labels, local = np.unique(cluster[order], return_inverse=True)
    for step in range(SUBROUNDS):
        schedule = Schedule(CPU, [(77, step)], SUBROUNDS)
        dest, rating = np.empty(300, np.int32), np.empty(300, np.int32)
        best_cluster(CPU, g, cluster, cw, maxvwgt, 9, schedule, dest, rating)
        mine, mine_rating = np.empty(b - a, np.int32), np.empty(b - a, np.int32)
        best_cluster(CPU, rows, local.astype(np.int32), cw[labels], maxvwgt, 9, schedule, mine,
                     mine_rating, id_base=a, labels=labels.astype(np.uint32))
        moves = mine >= 0
        assert np.array_equal(moves, dest[a:b] >= 0) and moves.any()
        assert np.array_equal(labels[mine[moves]], dest[a:b][moves])
        assert np.array_equal(mine_rating[moves], rating[a:b][moves])


def test_approval_keeps_the_best_rated_proposals_that_fit():
    vwgt = np.array([1, 2, 2, 1, 3, 1], dtype=np.int32)
    cw = vwgt.copy()
    dest = np.array([-1, 0, 0, 0, 5, -1], dtype=np.int32)
    rating = np.array([0, 4, 9, 4, 1, 0], dtype=np.int32)
    accepted = approve(CPU, dest, rating, vwgt, cw, maxvwgt=4)
    # target 0 (weight 1) takes 2 (rating 9, weight 2), then 1 (rating 4, smaller id than 3):
    # 1 + 2 + 2 > 4, so the rest of target 0's list is refused; target 5 (weight 1) takes 4
    assert accepted.tolist() == [0, 0, 1, 0, 1, 0]


@pytest.mark.parametrize("maxvwgt", [6, 15, 50])
def test_clusters_stay_within_the_weight_limit_and_are_numbered_densely(maxvwgt):
    graph = random_graph(3000, 6, seed=3, weighted=True)
    g = DeviceGraph.upload(CPU, graph)
    cmap, nc = lp_clustering(CPU, g, maxvwgt, seed=4, context=COARSENING)
    assert cmap.dtype == np.int32 and sorted(np.unique(cmap)) == list(range(nc))
    weights = np.bincount(cmap, weights=g.vwgt, minlength=nc)
    sizes = np.bincount(cmap, minlength=nc)
    assert ((weights <= maxvwgt) | (sizes == 1)).all()
    assert nc < 0.9 * g.nvtxs
    again, _ = lp_clustering(CPU, g, maxvwgt, seed=4, context=COARSENING)
    assert np.array_equal(cmap, again)


@pytest.mark.parametrize("maxvwgt", [1, 7, 40])
def test_isolated_vertices_cluster_with_each_other_in_id_order(maxvwgt):
    graph = random_graph(2000, 5, seed=6, weighted=True, isolated=500)
    g = DeviceGraph.upload(CPU, graph)
    cmap, nc = lp_clustering(CPU, g, maxvwgt, seed=2, context=COARSENING)
    islands = np.flatnonzero(np.diff(g.xadj) == 0)
    assert len(islands) >= 500
    # clusters hold islands only or none; an island cluster is a run of consecutive islands
    # as long as fits at the heaviest island's weight
    assert not np.isin(cmap[islands], np.delete(cmap, islands)).any()
    per = max(1, maxvwgt // int(g.vwgt[islands].max()))
    runs = np.unique(cmap[islands], return_counts=True)[1]
    assert (runs[:-1] == per).all() and 0 < runs[-1] <= per
    assert (np.diff(cmap[islands]) >= 0).all()
    weights = np.bincount(cmap, weights=g.vwgt, minlength=nc)
    sizes = np.bincount(cmap, minlength=nc)
    assert ((weights <= maxvwgt) | (sizes == 1)).all()


def test_a_graph_of_mostly_isolated_vertices_coarsens_by_clusters():
    graph = random_graph(6000, 8, seed=8, isolated=3500)
    levels = coarsen(CPU, DeviceGraph.upload(CPU, graph), COARSENING.target(8),
                     seed=1, ctype="lp", two_hop=True, context=COARSENING)
    pairs = coarsen(CPU, DeviceGraph.upload(CPU, graph), COARSENING.target(8),
                    seed=1, ctype="shem", two_hop=True, context=COARSENING)
    # without the islands grouped, the first level keeps > half the vertices and pairs take over
    assert levels[1].nvtxs < 0.25 * levels[0].nvtxs
    assert len(levels) < len(pairs)


def test_cluster_contraction_preserves_weights_and_cut_edges():
    g = DeviceGraph.upload(CPU, random_graph(2000, 5, seed=2, weighted=True))
    cmap, nc = lp_clustering(CPU, g, 30, seed=1, context=COARSENING)
    coarse = contract(CPU, g, cmap, nc)
    assert coarse.nvtxs == nc
    assert np.array_equal(coarse.vwgt, np.bincount(cmap, weights=g.vwgt).astype(np.int32))
    crossing = cmap[g.src] != cmap[g.adjncy]
    assert coarse.adjwgt.sum() == g.adjwgt[crossing].sum()
    assert (coarse.src != coarse.adjncy).all()
    members, mstart = members_of(CPU, cmap, nc)
    assert np.array_equal(np.sort(members), np.arange(g.nvtxs))
    assert all((cmap[members[mstart[c]:mstart[c + 1]]] == c).all() for c in range(0, nc, 97))


def test_clusters_coarsen_in_fewer_levels_than_pairs():
    g = DeviceGraph.upload(CPU, load_fixture("delaunay_n15"))
    target = COARSENING.target(8)
    clusters = coarsen(CPU, g, target, seed=1, ctype="lp", two_hop=True, context=COARSENING)
    pairs = coarsen(CPU, DeviceGraph.upload(CPU, load_fixture("delaunay_n15")), target, seed=1,
                    ctype="shem", two_hop=True, context=COARSENING)
    assert len(clusters) < len(pairs)
    sizes = [lvl.nvtxs for lvl in clusters]
    assert all(b < 0.9 * a for a, b in zip(sizes, sizes[1:]))
    enough = int(COARSENING.target_slack * COARSENING.target(8))
    assert sizes[-1] <= enough < sizes[-2]


def test_ctype_lp_is_the_default_of_our_engines_not_of_metis():
    graph = load_fixture("delaunay_n15")

    def sizes(result):
        return [lvl["nvtxs"] for lvl in result.stats["levels"]]

    default = partition(graph, 8, engine="cpu", seed=1)
    assert sizes(default) == sizes(partition(graph, 8, engine="cpu", seed=1, ctype="lp"))
    assert sizes(default) != sizes(partition(graph, 8, engine="cpu", seed=1, ctype="shem"))
    with pytest.raises(OptionError, match="ctype"):
        partition(graph, 8, engine="metis", ctype="lp")
    assert partition(graph, 8, engine="metis").edgecut > 0


@pytest.mark.parametrize("ratio", [1.0, 0.6])
def test_a_level_where_clusters_do_not_halve_the_graph_falls_back_to_pairs(monkeypatch, ratio):
    import gpmetis.coarsening.coarsen as coarsen_module

    def stalled(be, g, maxvwgt, seed, context):
        cmap = (np.arange(g.nvtxs) * ratio).astype(np.int32)  # consecutive ids merged
        return cmap, int(cmap[-1]) + 1

    monkeypatch.setattr(coarsen_module, "lp_clustering", stalled)
    graph = load_fixture("delaunay_n15")
    fallback = coarsen(CPU, DeviceGraph.upload(CPU, graph), COARSENING.target(8),
                       seed=1, ctype="lp", two_hop=True, context=COARSENING)
    pairs = coarsen(CPU, DeviceGraph.upload(CPU, graph), COARSENING.target(8),
                    seed=1, ctype="shem", two_hop=True, context=COARSENING)
    assert [lvl.nvtxs for lvl in fallback] == [lvl.nvtxs for lvl in pairs]
    assert len(pairs) > 2


@pytest.mark.parametrize("ratio", [0.54, 0.6])
def test_clusters_that_do_not_halve_the_graph_are_kept_when_they_end_coarsening(
        monkeypatch, ratio):
    import gpmetis.coarsening.coarsen as coarsen_module

    def stalled(be, g, maxvwgt, seed, context):
        cmap = (np.arange(g.nvtxs) * ratio).astype(np.int32)
        return cmap, int(cmap[-1]) + 1

    monkeypatch.setattr(coarsen_module, "lp_clustering", stalled)
    graph = random_graph(2000, 6, seed=3)
    enough = int(COARSENING.target_slack * COARSENING.target(8))
    levels = coarsen(CPU, DeviceGraph.upload(CPU, graph), COARSENING.target(8),
                     seed=1, ctype="lp", two_hop=True, context=COARSENING)
    sizes = [lvl.nvtxs for lvl in levels]
    clustered = int(1999 * ratio) + 1
    assert clustered > 1000  # the clusters do not halve the graph
    if clustered <= enough:  # 1080: this level ends coarsening, so it stays
        assert sizes == [2000, clustered]
    else:  # 1200: pairs instead, as far as they go
        assert sizes[1] != clustered and sizes[-1] <= enough


def test_pair_members_are_the_member_lists_of_a_matching():
    g = DeviceGraph.upload(CPU, random_graph(3000, 6, seed=8, weighted=True))
    match = heavy_edge_matching(CPU, g, maxvwgt=50, seed=2, use_weights=True, two_hop=True,
                                context=COARSENING)
    cmap, nc = coarse_map(CPU, match)
    assert (match != np.arange(g.nvtxs)).any()
    for a, b in zip(pair_members(CPU, match, cmap, nc), members_of(CPU, cmap, nc)):
        assert np.array_equal(a, b)


def test_large_levels_are_contracted_by_the_loop_unless_they_have_hub_rows():
    plain = DeviceGraph.upload(CPU, random_graph(3000, 6, seed=8))
    hubbed = DeviceGraph.upload(CPU, random_graph(3000, 6, seed=8, hubs=2))
    assert plain.max_degree <= WARP_CAP < hubbed.max_degree
    large = SMALL_CONTRACT + 1
    assert by_loop(plain, large) and not by_loop(hubbed, large)
    assert by_loop(hubbed, SMALL_CONTRACT)


class _Device:
    """A backend whose device reports ``free`` bytes (None: the cpu backend's answer)."""

    def __init__(self, free):
        self.free = free

    def free_memory(self):
        return self.free


@pytest.mark.parametrize("free, expected", [
    (None, 2.0 * 100),  # the cpu backend: the floor
    (10_000, 10_000 - 3.0 * 100),  # room on the device: what is free beyond the headroom
    (400, 2.0 * 100),  # little free: at least the floor
])
def test_intermediate_levels_may_stay_on_the_device_while_it_has_room(free, expected):
    import gpmetis.coarsening.coarsen as coarsen_module

    context = CoarseningContext(level_memory_budget=2.0, free_memory_headroom=3.0)
    assert coarsen_module.level_budget(_Device(free), 100, context) == expected


def test_the_cpu_backend_reports_no_device_memory_limit():
    assert get_backend("cpu").free_memory() is None
