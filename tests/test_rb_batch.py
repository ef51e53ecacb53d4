"""-ptype=rb's bisections of one depth as one multilevel job (issue 38), on the cpu engine: no
vertex leaves its piece's pair of parts, every bisection meets its own targets and limits, and
a run of k parts takes one multilevel job per depth of the bisection tree."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from conftest import limits_balance, load_fixture, random_graph
from test_modes import check_bisections

from gpmetis import context, partition
from gpmetis.backend import get_backend
from gpmetis.balance import max_part_weights
from gpmetis.coarsening.coarsen import within_parts
from gpmetis.coarsening.weights import WeightedGraph
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.metis_trials import initial_bisections
from gpmetis.metrics import part_weights
from gpmetis.options import Options
from gpmetis.partitioning import multilevel, recursive, schemes
from gpmetis.partitioning.multilevel import fill_empty_halves, multilevel_bisections
from gpmetis.refinement.jet_refiner import refine, refiner
from gpmetis.refinement.rebalance import rebalance_step

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

CPU = get_backend("cpu")


def disjoint_union(graph, npieces: int):
    """(union, labels): ``graph`` without the edges between its ``npieces`` blocks of
    consecutive ids, and each vertex's block."""
    labels = (np.arange(graph.nvtxs) * npieces // graph.nvtxs).astype(np.int32)
    return within_parts(CPU, DeviceGraph.upload(CPU, graph), labels), labels


def skewed_pairs(g: DeviceGraph, labels: np.ndarray, npieces: int):
    """(part, limits): piece i split at random between parts 2i and 2i+1, part 0 holding 80% of
    piece 0 (far over its limit) and part 3 the roomiest part of all (a large limit)."""
    rng = np.random.default_rng(7)
    part = (2 * labels + (rng.random(g.nvtxs) < 0.5)).astype(np.int32)
    piece0 = labels == 0
    part[piece0] = np.where(rng.random(int(piece0.sum())) < 0.8, 0, 1)
    pw = part_weights(CPU, g.vwgt[:, None], part, 2 * npieces)[:, 0]
    limits = np.full(2 * npieces, int(1.03 * g.vwgt.sum() / (2 * npieces)), np.int64)
    limits[3] = int(g.vwgt.sum())
    return part, limits, pw


def test_paired_rebalancing_keeps_every_vertex_in_its_pair():
    g, labels = disjoint_union(random_graph(4000, 6, seed=3, weighted=True), 4)
    part, limits, pw = skewed_pairs(g, labels, 4)
    # unpaired, the vertices with no neighbour in part 1 head for the roomiest part, 3
    loose = rebalance_step(CPU, g, part, limits_balance(limits), pw)
    assert np.any(loose[labels == 0] == 3)
    paired = rebalance_step(CPU, g, part, limits_balance(limits, group_size=2), pw)
    assert np.array_equal(paired >> 1, labels)
    after = part_weights(CPU, g.vwgt[:, None], paired, 8)[:, 0]
    assert after[0] < pw[0] and after[1] > pw[1]
    within = (pw <= limits)[part]  # only overweight parts' vertices move
    assert np.array_equal(paired[within], part[within])


def test_paired_jet_refinement_keeps_every_vertex_in_its_pair():
    g, labels = disjoint_union(random_graph(4000, 6, seed=4, weighted=True), 4)
    part, limits, _ = skewed_pairs(g, labels, 4)
    best, _ = refiner(CPU, g, limits_balance(limits, group_size=2), context=RC, finest=True,
                      patience=4)(part)
    assert np.array_equal(best >> 1, labels)
    after = part_weights(CPU, g.vwgt[:, None], best, 8)[:, 0]
    assert np.all(after <= limits)
    unpaired, _ = refine(CPU, g, part, limits_balance(limits), context=RC, finest=True, patience=4)
    assert not np.array_equal(unpaired >> 1, labels)


@pytest.mark.parametrize("name,npieces", [("4elt", 5), ("add20", 16), ("power", 3)])
def test_multilevel_bisections_meet_each_pieces_targets(name, npieces):
    g, labels = disjoint_union(load_fixture(name), npieces)
    rng = np.random.default_rng(npieces)
    left = rng.uniform(0.2, 0.8, npieces)
    targets = np.stack([left, 1 - left], axis=1)
    options = Options(ptype="rb", engine="cpu")
    part, _ = multilevel_bisections(WeightedGraph.single(g), labels, targets[:, :, None], options,
                                    seed=5)
    assert np.array_equal(part >> 1, labels)
    pw = part_weights(CPU, g.vwgt[:, None], part, 2 * npieces)[:, 0].reshape(-1, 2)
    assert np.all(pw > 0)
    for i in range(npieces):
        limits = max_part_weights(np.array([pw[i].sum()]), targets[i][:, None],
                                  options.ubfactors(1))[:, 0]
        assert np.all(pw[i] <= limits), (i, pw[i], limits)


def test_fill_empty_halves_moves_the_lightest_vertex_inside_its_pair():
    g, labels = disjoint_union(random_graph(600, 5, seed=8, weighted=True), 3)
    part = (2 * labels).astype(np.int32)  # every second half empty
    lone = np.flatnonzero(labels == 2)
    part[lone[1:]] = 5  # pair 2: one vertex in part 4, the rest in part 5
    filled = fill_empty_halves(CPU, g, part, 6)
    moved = np.flatnonzero(filled != part)
    assert len(moved) == 2 and np.array_equal(labels[moved], [0, 1])
    for v in moved:
        piece = np.flatnonzero(labels == labels[v])
        lightest = piece[g.vwgt[piece] == g.vwgt[piece].min()][0]
        assert v == lightest and filled[v] == part[v] + 1
    assert np.array_equal(fill_empty_halves(CPU, g, filled, 6), filled)


@pytest.mark.parametrize("k", [2, 13, 64])
def test_one_multilevel_job_per_depth(monkeypatch, k):
    runs, coarsenings = [], []
    bisect, coarsen = recursive.multilevel_bisections, multilevel.coarsen

    def counted_bisections(g, labels, targets, *args, **kwargs):
        runs.append(len(targets))
        return bisect(g, labels, targets, *args, **kwargs)

    def counted_coarsen(*args, **kwargs):
        coarsenings.append(1)
        return coarsen(*args, **kwargs)

    def forbidden(*args, **kwargs):
        raise AssertionError("a bisection ran on its own")

    monkeypatch.setattr(recursive, "multilevel_bisections", counted_bisections)
    monkeypatch.setattr(multilevel, "coarsen", counted_coarsen)
    monkeypatch.setattr(schemes, "multilevel_partition", forbidden)
    graph = load_fixture("4elt")
    result = partition(graph, k, engine="cpu", ptype="rb")
    assert np.all(np.bincount(result.part, minlength=k) > 0) and result.part.max() < k
    pw = np.bincount(result.part, weights=graph.vwgt[:, 0], minlength=k)
    check_bisections(pw, np.full(k, 1 / k), Options(ptype="rb").ubfactors(1)[0])
    depths = math.ceil(math.log2(k))
    assert len(runs) == depths and len(coarsenings) == depths
    # depth d bisects every piece of more than one part: 1, 2, 4, ... pieces
    assert runs == [sum(1 for c in _counts(k, d) if c > 1) for d in range(depths)]


def _counts(k: int, depth: int) -> list[int]:
    """The part counts of the bisection tree's pieces at ``depth`` (METIS's split: c // 2 and
    the rest)."""
    counts = [k]
    for _ in range(depth):
        counts = [h for c in counts if c > 1 for h in (c // 2, c - c // 2)]
    return counts


def test_many_pieces_share_the_coarsest_graphs_size(monkeypatch):
    # beyond full_size_pieces pieces a depth's METIS trials see as many vertices in all as
    # that many pieces would (each piece at least piece_min_vertices), not a target each
    coarsening = replace(DEFAULT.coarsening, full_size_pieces=2)
    monkeypatch.setitem(context.PRESETS, "default", replace(DEFAULT, coarsening=coarsening))
    seen = {}  # pieces -> the coarsest union's vertices
    bisections = multilevel.initial_bisections

    def recording(graph, labels, tpwgts, *args, **kwargs):
        seen[len(tpwgts)] = graph.nvtxs
        return bisections(graph, labels, tpwgts, *args, **kwargs)

    monkeypatch.setattr(multilevel, "initial_bisections", recording)
    graph = load_fixture("4elt")  # 15606 vertices: pieces of ~1950 at 8 pieces
    result = partition(graph, 16, engine="cpu", ptype="rb")
    full = coarsening.target(2)
    assert seen[2] > 1.5 * full  # two pieces: a bisection's target each
    for npieces in (4, 8):
        share = max(coarsening.piece_min_vertices, 2 * full // npieces)
        assert seen[npieces] <= 1.1 * npieces * share
    pw = np.bincount(result.part, weights=graph.vwgt[:, 0], minlength=16)
    check_bisections(pw, np.full(16, 1 / 16), Options(ptype="rb").ubfactors(1)[0])


def test_more_parts_than_vertices_in_a_piece_stays_valid():
    graph = random_graph(40, 3, seed=2)
    result = partition(graph, 32, engine="cpu", ptype="rb")
    assert result.part.min() == 0 and result.part.max() == 31
    assert len(np.unique(result.part)) == 32


# bisection trials; k-way ones (coarsening stalled); k-way ones of a thinned dense graph
@pytest.mark.parametrize("name,target", [("add20", 10_000), ("add20", 50), ("dense", 50)])
def test_initial_bisections_split_each_piece_on_its_own(name, target):
    graph = random_graph(2000, 300, seed=13, weighted=True) if name == "dense" else (
        load_fixture(name))
    g, labels = disjoint_union(graph, 4)
    labels = labels.copy()
    labels[labels == 3] = 5  # pieces 3 and 4 empty, 5 the last block
    labels[0], labels[1:3] = 3, 4  # and pieces of one and of two vertices
    g = within_parts(CPU, DeviceGraph.upload(CPU, graph), labels)
    assert (g.nnz > DEFAULT.initial.dense_degree * g.nvtxs) == (name == "dense")
    tpwgts = np.tile([0.4, 0.6], (6, 1))
    weights = np.bincount(labels, weights=graph.vwgt[:, 0], minlength=6)
    maxpwgt = np.floor(1.01 * tpwgts * weights[:, None]).astype(np.int64) + 1
    side = initial_bisections(g, labels, tpwgts, maxpwgt, target=target, seed=3, ntrials=3,
                              ufactor=10, niter=10, context=DEFAULT.initial)
    assert side.dtype == np.int32 and set(np.unique(side)) == {0, 1}
    assert side[0] == 0 and sorted(side[1:3]) == [0, 1]
    for i in (0, 1, 2, 5):
        halves = np.bincount(side[labels == i], weights=graph.vwgt[labels == i, 0], minlength=2)
        assert np.all(halves > 0)
        assert halves[0] < halves[1]  # 40 / 60 targets
