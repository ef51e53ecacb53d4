"""-preset=strong's runs at once (issue 41), on the cpu engine: the copies of a disjoint union
coarsen differently, group rebalancing never moves a vertex out of its copy's parts, and the
batched strong run is balanced and cuts no more than the default preset."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import check_partition, limits_balance, load_fixture, random_graph

from gpmetis import context, partition
from gpmetis.backend import get_backend
from gpmetis.balance import max_part_weights, uniform_tpwgts
from gpmetis.coarsening.coarsen import coarsen
from gpmetis.context import DEFAULT, STRONG
from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.metis_trials import initial_copies, initial_partition
from gpmetis.metrics import part_weights
from gpmetis.options import Options
from gpmetis.partitioning.modes import strong as strong_mode
from gpmetis.partitioning.multilevel import copy_scores, disjoint_copies, multilevel_copies
from gpmetis.refinement.jet_refiner import refine, refiner, score_state
from gpmetis.refinement.rebalance import fallback_parts, rebalance_step, roomiest_parts

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

CPU = get_backend("cpu")
STRONG_RUNS = STRONG.runs.min_runs


def test_disjoint_copies_number_each_copy_apart():
    graph = random_graph(500, 5, seed=2, weighted=True)
    g = DeviceGraph.upload(CPU, graph)
    union, labels = disjoint_copies(g, 3)
    n = g.nvtxs
    assert union.nvtxs == 3 * n and union.nnz == 3 * g.nnz
    assert np.array_equal(labels, np.repeat(np.arange(3), n))
    src = union.src
    assert np.array_equal(labels[src], labels[union.adjncy])  # no edge between copies
    for c in range(3):
        rows = slice(union.xadj[c * n], union.xadj[(c + 1) * n])
        assert np.array_equal(union.adjncy[rows] - c * n, g.adjncy)
        assert np.array_equal(union.adjwgt[rows], g.adjwgt)
        assert np.array_equal(union.vwgt[c * n:(c + 1) * n], g.vwgt)


def test_copies_coarsen_differently():
    g = DeviceGraph.upload(CPU, load_fixture("4elt"))
    union, labels = disjoint_copies(g, 4)
    levels = coarsen(CPU, union, 4 * 1000, 5, "lp", True, within=labels, closed=True,
                     context=DEFAULT.coarsening)
    n = g.nvtxs
    clusterings = []
    for c in range(4):  # each copy's first-level clusters, numbered by first member
        _, first, inverse = np.unique(levels[0].cmap[c * n:(c + 1) * n], return_index=True,
                                      return_inverse=True)
        clusterings.append(np.argsort(np.argsort(first))[inverse])
    for a in range(4):
        for b in range(a + 1, 4):
            assert not np.array_equal(clusterings[a], clusterings[b])


@pytest.mark.parametrize("stalled", [False, True])
def test_initial_copies_split_each_copy_as_its_own_run(stalled):
    # bisection trees (coarsening reached its target) or k-way trials (it stalled): copy c's
    # parts are those of the initial partition of the graph alone with the copy's seeds
    g = DeviceGraph.upload(CPU, random_graph(1200, 5, seed=8, weighted=True))
    k, seeds = 8, [11, 40, 77]
    union, labels = disjoint_copies(g, len(seeds))
    tpwgts = uniform_tpwgts(k, 1).reshape(-1)
    maxpwgt = max_part_weights(np.array([g.total_vwgt]), tpwgts[:, None], [1.03])[:, 0]
    target = g.nvtxs // 4 if stalled else g.nvtxs
    part = initial_copies(union, labels, maxpwgt, tpwgts, target=len(seeds) * target,
                          seeds=seeds, ntrials=3, ufactor=30, niter=10, context=DEFAULT.initial)
    for c, seed in enumerate(seeds):
        alone = initial_partition(g, maxpwgt, tpwgts, target=target, seed=seed, ntrials=3,
                                  ufactor=30, niter=10, context=DEFAULT.initial)
        assert np.array_equal(part[c * g.nvtxs:(c + 1) * g.nvtxs], c * k + alone)


def test_group_roomiest_parts_and_fallbacks():
    room = np.array([-5, 3, 3, -1, 7, -2, 0, 7], dtype=np.int64)
    assert roomiest_parts(room, 0).tolist() == [4]
    # groups of 4: (1, 2) of the first (equal room: the lower id first), (4, 7) of the second
    assert roomiest_parts(room, 4).tolist() == [1, 2, 4, 7]
    part = np.arange(8, dtype=np.int32)
    assert fallback_parts(part, roomiest_parts(room, 4), 4).tolist() == [1, 2, 1, 1,
                                                                         7, 4, 4, 4]
    # groups of 2 are pairs: the fallback is always the partner part
    assert np.array_equal(fallback_parts(part, roomiest_parts(room, 2), 2), part ^ 1)


def _skewed_copies(ncopies: int, nparts: int, seed: int):
    """(union, labels, part, limits, pw): copies of a random graph, each split at random among
    its nparts parts, copy 0's part 0 holding 70% of copy 0 (far over its limit) and the last
    copy's last part by far the roomiest part of all (a large limit)."""
    g = DeviceGraph.upload(CPU, random_graph(3000, 6, seed=seed, weighted=True))
    union, labels = disjoint_copies(g, ncopies)
    rng = np.random.default_rng(seed)
    part = (labels * nparts + rng.integers(0, nparts, union.nvtxs)).astype(np.int32)
    copy0 = np.flatnonzero(labels == 0)
    part[copy0] = np.where(rng.random(len(copy0)) < 0.7, 0, part[copy0])
    total = ncopies * nparts
    limits = np.full(total, int(1.03 * g.total_vwgt / nparts), np.int64)
    limits[-1] = union.total_vwgt
    pw = part_weights(CPU, union.vwgt[:, None], part, total)[:, 0]
    return union, labels, part, limits, pw


@pytest.mark.parametrize("ncopies,nparts", [(3, 4), (4, 8)])
def test_group_rebalancing_keeps_every_vertex_in_its_copy(ncopies, nparts):
    union, labels, part, limits, pw = _skewed_copies(ncopies, nparts, 5)
    # without groups, stranded vertices of copy 0 head for the roomiest part, in another copy
    loose = rebalance_step(CPU, union, part, limits_balance(limits), pw)
    assert np.any(loose[labels == 0] // nparts != 0)
    grouped = rebalance_step(CPU, union, part, limits_balance(limits, group_size=nparts), pw)
    assert np.array_equal(grouped // nparts, labels)
    after = part_weights(CPU, union.vwgt[:, None], grouped, ncopies * nparts)[:, 0]
    assert after[0] < pw[0]
    assert not np.array_equal(grouped, part)
    best, _ = refiner(CPU, union, limits_balance(limits, group_size=nparts), context=RC,
                      finest=True, patience=4)(part)
    assert np.array_equal(best // nparts, labels)
    after = part_weights(CPU, union.vwgt[:, None], best, ncopies * nparts)[:, 0]
    assert np.all(after <= limits)
    ungrouped, _ = refine(CPU, union, part, limits_balance(limits), context=RC, finest=True,
                          patience=4)
    assert not np.array_equal(ungrouped // nparts, labels)


@pytest.mark.parametrize("name,k", [("crack", 8), ("add20", 64)])
def test_multilevel_copies_returns_the_copies_best_first(name, k):
    graph = load_fixture(name)
    g = DeviceGraph.upload(CPU, graph)
    tpwgts = uniform_tpwgts(k, 1)
    maxpwgt = max_part_weights(np.array([g.total_vwgt]), tpwgts, [1.03])[:, 0]
    parts, stats = multilevel_copies(g, limits_balance(maxpwgt), Options(engine="cpu"), tpwgts,
                                     [7, 8, 9, 10])
    assert len(parts) == 4
    for part in parts:
        check_partition(graph, part, k)
    scores = [score_state(CPU, g, part, limits_balance(maxpwgt)) for part in parts]
    assert scores == sorted(scores)
    best, second = parts[:2]
    assert not np.array_equal(best, second)
    assert stats.levels[0]["nvtxs"] == 4 * g.nvtxs  # one hierarchy for the four copies
    # each copy's score as copy_scores reads it from the union's partition
    union, _ = disjoint_copies(g, 2)
    both = np.concatenate([best, second + k]).astype(np.int32)
    excess, cuts = copy_scores(CPU, union, both, 2, maxpwgt)
    assert [(int(e), int(c)) for e, c in zip(excess, cuts)] == [
        score_state(CPU, g, p, limits_balance(maxpwgt)) for p in (best, second)]


@pytest.mark.parametrize("name,k", [("data", 8), ("uk", 2), ("3elt", 64), ("power", 8),
                                    ("add20", 64)])
def test_batched_strong_is_balanced_and_no_worse_than_default(name, k):
    graph = load_fixture(name)
    default = partition(graph, k, engine="cpu")
    strong = partition(graph, k, engine="cpu", preset="strong")
    check_partition(graph, strong.part, k)
    assert strong.stats["batched_runs"] == STRONG_RUNS
    assert strong.edgecut <= default.edgecut


def test_large_graphs_keep_sequential_runs(monkeypatch):
    graph = load_fixture("add20")
    assert strong_mode.batches(graph, STRONG_RUNS, STRONG.runs)
    runs = replace(STRONG.runs, batch_max_vertices=STRONG_RUNS * graph.nvtxs - 1)
    assert not strong_mode.batches(graph, STRONG_RUNS, runs)
    monkeypatch.setitem(context.PRESETS, "strong", replace(STRONG, runs=runs))
    calls = []
    copies = strong_mode.multilevel_copies
    monkeypatch.setattr(strong_mode, "multilevel_copies",
                        lambda *a, **kw: calls.append(1) or copies(*a, **kw))
    strong = partition(graph, 8, engine="cpu", preset="strong")
    check_partition(graph, strong.part, 8)
    assert "batched_runs" not in strong.stats and not calls
