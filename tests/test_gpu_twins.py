"""GPU kernels against their NumPy twins, and the gpu engine against the cpu engine.

Run on the device with ``make gpu-test``; skipped (with the reason) where CUDA is not usable.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from conftest import SMALL_GRAPHS, limits_balance, load_fixture, random_graph, requires_cuda

from gpmetis import context, partition
from gpmetis.backend import SHARED_BINS, get_backend
from gpmetis.coarsening import clustering, contraction
from gpmetis.coarsening.clustering import (
    LARGE_BUCKET,
    SMALL_BUCKET,
    Approval,
    Schedule,
    apply_moves,
    approve,
    best_cluster,
    lp_clustering,
)
from gpmetis.coarsening.contraction import coarse_map, contract
from gpmetis.coarsening.matching import accept, heavy_edge_matching, propose, two_hop_match
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.graph import Graph
from gpmetis.initial_partitioning.thinning import heaviest_edges
from gpmetis.metrics import part_weights
from gpmetis.refinement.jet import (
    MoveRequest,
    afterburner,
    best_moves,
    launch_score,
    partition_state,
    state_sums,
)
from gpmetis.refinement.jet_refiner import refine, refiner
from gpmetis.refinement.rebalance import cap_inflow, fill_empty_parts, rebalance_step

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

pytestmark = [pytest.mark.gpu, requires_cuda]

CASES = SMALL_GRAPHS + ["delaunay_n15", "rgg_n_2_15_s0", "random-w", "random-iso", "random-hubs",
                        "random-dense"]


def _graph(name):
    if name == "random-w":
        return random_graph(5000, 7, seed=4, weighted=True)
    if name == "random-hubs":
        return random_graph(6000, 6, seed=5, hubs=12, weighted=True)
    if name == "random-dense":  # degrees ~80: rows hashed by the thread-per-vertex kernels
        return random_graph(2000, 80, seed=13, weighted=True)
    if name == "random-big":  # > 65536 vertices: the rebalancing's id digits are coarse
        return random_graph(150_000, 5, seed=21, weighted=True)
    if name == "random-iso":
        return random_graph(3000, 4, seed=9, isolated=200, components=3)
    return load_fixture(name)


def _both(graph):
    cpu, gpu = get_backend("cpu"), get_backend("gpu")
    return DeviceGraph.upload(cpu, graph), DeviceGraph.upload(gpu, graph)


def _eq(host, device):
    assert np.array_equal(np.asarray(host), device.get())


@pytest.mark.parametrize("name", CASES)
def test_degree_range_equals_twin(name):
    gc, gg = _both(_graph(name))
    assert gg.degree_range == gc.degree_range
    assert (gc.degree_range[0] == 0) == (name in ("polblogs", "rgg_n_2_15_s0", "random-iso"))


@pytest.mark.parametrize("name", CASES)
def test_degree_lists_equal_twin(name):
    gc, gg = _both(_graph(name))
    for host, device in zip(gc.degree_tiers(), gg.degree_tiers()):
        assert (host is None) == (device is None)
        if host is not None and not np.isscalar(host):
            assert device.dtype == np.int32
            _eq(host, device)
        else:
            assert host == device


@pytest.mark.parametrize("name", CASES)
def test_matching_equals_twin(name):
    gc, gg = _both(_graph(name))
    cpu, gpu = gc.be, gg.be
    match_c = np.full(gc.nvtxs, -1, np.int32)
    match_g = gpu.xp.asarray(match_c)
    matched_c, matched_g = np.zeros(1, np.int32), gpu.xp.zeros(1, gpu.xp.int32)
    for seed in (1, 77, 12345):
        prop_c = propose(cpu, gc, match_c, 50, seed, True)
        prop_g = propose(gpu, gg, match_g, 50, seed, True)
        _eq(prop_c, prop_g)
        match_c = accept(cpu, prop_c, match_c, matched_c)
        match_g = accept(gpu, prop_g, match_g, matched_g)
        _eq(match_c, match_g)
        _eq(matched_c, matched_g)
        assert matched_c[0] == np.count_nonzero(match_c >= 0)
    for use_weights in (True, False):
        full_c = heavy_edge_matching(cpu, gc, 40, 5, use_weights, True, context=DEFAULT.coarsening)
        full_g = heavy_edge_matching(gpu, gg, 40, 5, use_weights, True, context=DEFAULT.coarsening)
        _eq(full_c, full_g)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("maxvwgt", [2, 10**6])
def test_two_hop_matching_equals_twin(name, maxvwgt):
    gc, gg = _both(_graph(name))
    match = np.full(gc.nvtxs, -1, np.int32)
    accept(gc.be, propose(gc.be, gc, match, 50, 9, True), match, np.zeros(1, np.int32))
    assert (match < 0).sum() > 1  # one round leaves vertices free
    match_c = two_hop_match(gc.be, gc, match.copy(), maxvwgt)
    match_g = two_hop_match(gg.be, gg, gg.be.xp.asarray(match), maxvwgt)
    _eq(match_c, match_g)
    assert (match_c != match).any()


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("loop", [True, False])
def test_contraction_equals_twin(name, loop, monkeypatch):
    # loop: the cooperative contract_loop and the rows' kernel; else the general kernels
    if not loop:
        monkeypatch.setattr(contraction, "by_loop", lambda g, nc: False)
    gc, gg = _both(_graph(name))
    match = heavy_edge_matching(gc.be, gc, 10**6, 3, True, True, context=DEFAULT.coarsening)
    cmap_c, nc_c = coarse_map(gc.be, match)
    cmap_g, nc_g = coarse_map(gg.be, gg.be.xp.asarray(match))
    _eq(cmap_c, cmap_g)
    assert nc_c == nc_g
    coarse_c = contract(gc.be, gc, cmap_c, nc_c)
    coarse_g = contract(gg.be, gg, cmap_g, nc_g)
    for a, b in zip(coarse_c.to_host(), coarse_g.to_host()):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("size", [3, 40, 400])
def test_contraction_of_large_clusters_equals_twin(size):
    # clusters of size random members: more than 32 members per warp batch, candidate lists
    # merged by a warp (up to 256 entries) and by a block with a hash table (longer ones)
    gc, gg = _both(random_graph(6000, 3, seed=size, weighted=True, isolated=50))
    cmap = np.random.default_rng(size).permutation(gc.nvtxs) // size
    cmap = cmap.astype(np.int32)
    nc = int(cmap.max()) + 1
    coarse_c = contract(gc.be, gc, cmap, nc)
    coarse_g = contract(gg.be, gg, gg.be.xp.asarray(cmap), nc)
    for a, b in zip(coarse_c.to_host(), coarse_g.to_host()):
        assert np.array_equal(a, b)
    caps = np.bincount(cmap, weights=np.diff(gc.xadj), minlength=nc)
    assert (caps > 256).all() if size == 400 else (caps <= 256).all()
    # contract_loop's warps take candidate lists longer than 256 with fewer neighbours
    assert contraction._contract_loop(gg.be, gg, gg.be.xp.asarray(cmap), nc)[0] is not None


@pytest.mark.parametrize("degree,size", [(3, 1), (6, 2)])
def test_contraction_knows_the_coarse_graphs_degrees(degree, size):
    # contract_loop finds the degree range and the warp rows' list, which the coarse graph
    # would otherwise find itself: the same values
    gg = _both(random_graph(6000, degree, seed=degree, weighted=True, isolated=20))[1]
    cmap = (np.random.default_rng(degree).permutation(gg.nvtxs) // size).astype(np.int32)
    nc = int(cmap.max()) + 1
    coarse = contract(gg.be, gg, gg.be.xp.asarray(cmap), nc)
    fresh = DeviceGraph(gg.be, coarse.xadj, coarse.adjncy, coarse.adjwgt, coarse.vwgt)
    assert coarse.degree_range == fresh.degree_range
    (known_max, known_mid, known_heavy), (max_degree, mid, heavy) = (
        coarse.degree_tiers(), fresh.degree_tiers())
    assert known_max == max_degree and known_heavy is None and heavy is None
    if degree == 3:  # coarse rows of at most 16 entries: none for warps
        assert fresh.max_degree <= 16 and mid is None and known_mid is None
    else:  # some longer
        assert 0 < len(mid) < nc
        _eq(mid.get(), known_mid)


def test_contraction_of_clusters_with_many_neighbours_equals_twin():
    # one cluster of 600 vertices beside singletons: more than 256 distinct coarse neighbours,
    # which contract_loop leaves to the general kernels, with the members it placed
    gc, gg = _both(random_graph(6000, 3, seed=600, weighted=True))
    order = np.random.default_rng(600).permutation(gc.nvtxs)
    cmap = np.maximum(order - 599, 0).astype(np.int32)
    nc = int(cmap.max()) + 1
    coarse_c = contract(gc.be, gc, cmap, nc)
    coarse_g = contract(gg.be, gg, gg.be.xp.asarray(cmap), nc)
    for a, b in zip(coarse_c.to_host(), coarse_g.to_host()):
        assert np.array_equal(a, b)
    assert coarse_c.xadj[1] > 256  # cluster 0's coarse row
    coarse, (members, mstart) = contraction._contract_loop(gg.be, gg, gg.be.xp.asarray(cmap), nc)
    assert coarse is None
    assert int(mstart[1]) == 600
    assert np.array_equal(np.sort(members.get()[:600]), np.flatnonzero(cmap == 0))


def test_contraction_of_many_member_clusters_equals_twin():
    # clusters of 100 mostly isolated vertices: several warp batches of members, short lists
    gc, gg = _both(random_graph(4000, 2, seed=100, isolated=3000))
    cmap = (np.random.default_rng(100).permutation(gc.nvtxs) // 100).astype(np.int32)
    coarse_c = contract(gc.be, gc, cmap, 40)
    coarse_g = contract(gg.be, gg, gg.be.xp.asarray(cmap), 40)
    for a, b in zip(coarse_c.to_host(), coarse_g.to_host()):
        assert np.array_equal(a, b)
    assert np.bincount(cmap, weights=np.diff(gc.xadj)).max() <= 256
    assert contraction._contract_loop(gg.be, gg, gg.be.xp.asarray(cmap), 40)[0] is not None


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("maxvwgt", [3, 40, 10**6])
def test_clustering_sub_rounds_equal_twin(name, maxvwgt):
    gc, gg = _both(_graph(name))
    cpu, gpu = gc.be, gg.be
    n = gc.nvtxs
    state_c = [np.arange(n, dtype=np.int32), gc.vwgt.copy(), np.zeros(1, np.uint64)]
    state_g = [gpu.xp.asarray(a) for a in state_c]
    dest_c, rating_c = np.empty(n, np.int32), np.empty(n, np.int32)
    dest_g, rating_g = gpu.xp.empty(n, gpu.xp.int32), gpu.xp.empty(n, gpu.xp.int32)
    work = Approval.allocate(gpu.xp, n)  # one set of work arrays, as a level uses them
    steps = [(5, 0), (5, 1), (9, 3), (9, 2), (11, 0)]
    subrounds = DEFAULT.coarsening.lp_subrounds
    schedule_c, schedule_g = Schedule(cpu, steps, subrounds), Schedule(gpu, steps, subrounds)
    for _ in steps:
        best_cluster(cpu, gc, state_c[0], state_c[1], maxvwgt, 7, schedule_c, dest_c, rating_c)
        best_cluster(gpu, gg, state_g[0], state_g[1], maxvwgt, 7, schedule_g, dest_g, rating_g)
        _eq(dest_c, dest_g)
        proposing = dest_c >= 0
        _eq(rating_c[proposing], rating_g[gpu.xp.asarray(proposing)])
        accepted_c = approve(cpu, dest_c, rating_c, gc.vwgt, state_c[1], maxvwgt)
        accepted_g = approve(gpu, dest_g, rating_g, gg.vwgt, state_g[1], maxvwgt, work)
        _eq(accepted_c, accepted_g)
        apply_moves(cpu, accepted_c, dest_c, gc.vwgt, *state_c, None)
        apply_moves(gpu, accepted_g, dest_g, gg.vwgt, *state_g, work)
        for a, b in zip(state_c, state_g):
            _eq(a, b)
        for left in (work.inflow, work.count, work.reserved):
            assert not left.any()  # zero again for the next sub-round
        schedule_c.advance()
        schedule_g.advance()
    assert state_c[2][0] > 0  # some vertices moved
    assert int(schedule_g.plan[0]) == len(steps)  # one step per advance, whatever the block


@pytest.mark.parametrize("name", ["4elt", "random-iso", "random-unit-hubs"])
@pytest.mark.parametrize("loop", [True, False])
def test_kernels_read_ones_where_unit_weights_are_not_in_memory(name, loop, monkeypatch):
    # a null adjwgt: the clustering's and the contraction's kernels (thread, warp and hub
    # rows; the cooperative and the general contraction) read ones
    if not loop:
        monkeypatch.setattr(contraction, "by_loop", lambda g, nc: False)
    graph = (random_graph(6000, 6, seed=5, hubs=12) if name == "random-unit-hubs"
             else _graph(name))
    gpu = get_backend("gpu")
    kept, dropped = (DeviceGraph.upload(gpu, graph) for _ in range(2))
    dropped.drop_unit_adjwgt()
    assert kept.unit_adjwgt and kept.adjwgt is not None and dropped.adjwgt is None
    found = []
    for g in (kept, dropped):
        cmap, nc = lp_clustering(gpu, g, 40, 7, DEFAULT.coarsening)
        found.append((cmap.get(), nc, contract(gpu, g, cmap, nc).to_host()))
    (cmap_k, nc_k, coarse_k), (cmap_d, nc_d, coarse_d) = found
    assert nc_k == nc_d < graph.nvtxs and np.array_equal(cmap_k, cmap_d)
    for a, b in zip(coarse_k, coarse_d, strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("copied", [True, False])  # the buckets' priorities copied, or read
@pytest.mark.parametrize("hub_proposals", [40, SMALL_BUCKET, SMALL_BUCKET + 1, LARGE_BUCKET,
                                           LARGE_BUCKET + 1, 5000])
def test_approval_of_over_subscribed_targets_equals_twin(hub_proposals, copied):
    # two targets with many proposals (several per warp lane; beyond LARGE_BUCKET, a block's,
    # both in one block's chunk of targets), many small targets, zero and equal weights and
    # ratings, targets already over the limit
    rng = np.random.default_rng(hub_proposals)
    n = 20_000
    dest = rng.integers(0, n, n).astype(np.int32)
    dest[rng.random(n) < 0.3] = -1
    hubs = rng.choice(n, 2 * hub_proposals, replace=False)
    dest[hubs[:hub_proposals]] = 7
    dest[hubs[hub_proposals:]] = 9
    dest[dest == np.arange(n)] = -1
    rating = rng.integers(1, 4, n).astype(np.int32)
    vwgt = rng.integers(0, 4, n).astype(np.int32)
    cw = (vwgt + rng.integers(0, 30, n)).astype(np.int32)
    cw[7] = cw[9] = 1
    gpu = get_backend("gpu")
    partly = 0
    for maxvwgt in (1, 12, 40, 400):
        expected = approve(get_backend("cpu"), dest, rating, vwgt, cw, maxvwgt)
        work = Approval.allocate(gpu.xp, n, copies=None if copied else (None, None))
        got = approve(gpu, *(gpu.xp.asarray(a) for a in (dest, rating, vwgt, cw)), maxvwgt,
                      work)
        _eq(expected, got)
        partly += 0 < expected[dest == 7].sum() < hub_proposals
    assert partly >= 2  # the hub took some of its proposals, not all


@pytest.mark.parametrize("n", [1, 300_000])
def test_cluster_numbering_equals_twin(n):
    # 300k labels: the grid scan spans many blocks' shares; about 63% of the labels are used
    labels = np.random.default_rng(n).choice(n, size=n).astype(np.int32)
    gpu = get_backend("gpu")
    cmap_c, nc_c = clustering._number_clusters(get_backend("cpu"), labels.copy())
    cmap_g, nc_g = clustering._number_clusters(gpu, gpu.xp.asarray(labels))
    _eq(cmap_c, cmap_g)
    assert nc_c == nc_g == len(np.unique(labels))


@pytest.mark.parametrize("name", CASES)
def test_clustering_and_its_contraction_equal_twin(name):
    gc, gg = _both(_graph(name))
    cmap_c, nc_c = lp_clustering(gc.be, gc, 60, seed=3, context=DEFAULT.coarsening)
    cmap_g, nc_g = lp_clustering(gg.be, gg, 60, seed=3, context=DEFAULT.coarsening)
    _eq(cmap_c, cmap_g)
    assert nc_c == nc_g < gc.nvtxs
    coarse_c = contract(gc.be, gc, cmap_c, nc_c)
    coarse_g = contract(gg.be, gg, cmap_g, nc_g)
    for a, b in zip(coarse_c.to_host(), coarse_g.to_host()):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("degree", [1, 16, 300])
def test_thinning_equals_twin(name, degree):
    gc, gg = _both(_graph(name))
    thin_c = heaviest_edges(gc.be, gc, degree, seed=11)
    thin_g = heaviest_edges(gg.be, gg, degree, seed=11)
    for a, b in zip(thin_c.to_host(), thin_g.to_host()):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("name", CASES + ["random-big"])
@pytest.mark.parametrize("nparts", [2, 16, 64])
def test_refinement_kernels_equal_twins(name, nparts):
    graph = _graph(name)
    gc, gg = _both(graph)
    xp = gg.be.xp
    rng = np.random.default_rng(nparts)
    part_c = rng.integers(0, nparts, gc.nvtxs).astype(np.int32)
    part_g = xp.asarray(part_c)
    locked = (rng.random(gc.nvtxs) < 0.2).astype(np.uint8)
    for num, den in ((1, 4), (3, 4)):
        req_c = MoveRequest(0, locked, num, den, nparts=nparts)
        req_g = MoveRequest(0, xp.asarray(locked), num, den, nparts=nparts)
        dest_c, gain_c = best_moves(gc.be, gc, part_c, req_c)
        dest_g, gain_g = best_moves(gg.be, gg, part_g, req_g)
        _eq(dest_c, dest_g)
        _eq(gain_c, gain_g)
        for a, b in zip(afterburner(gc.be, gc, part_c, dest_c, gain_c, req_c),
                        afterburner(gg.be, gg, part_g, dest_g, gain_g, req_g)):
            _eq(a, b)
        # the step capped per destination (tight limits: part weights near them)
        moved_c = afterburner(gc.be, gc, part_c, dest_c, gain_c, req_c)[1]
        pw_c = part_weights(gc.be, gc.vwgt[:, None], part_c, nparts)[:, 0]
        tight = np.maximum(pw_c + pw_c // 50, 1)
        for loose in (False, True):
            capped_c = cap_inflow(gc.be, gc, part_c, moved_c, gain_c, tight, pw_c, loose=loose,
                                  slack=RC.inflow_slack)
            capped_g = cap_inflow(gg.be, gg, part_g, xp.asarray(moved_c), gain_g.copy(), tight,
                                  pw_c, loose=loose, slack=RC.inflow_slack)
            for a, b in zip(capped_c, capped_g):
                _eq(a, b)
    total = int(gc.vwgt.sum())
    maxpw_c = np.full(nparts, int(1.03 * total / nparts), np.int64)
    # one part holding half the graph; then several overweight parts next to parts with room
    for skew in (np.where(rng.random(gc.nvtxs) < 0.5, 0, part_c),
                 np.where(rng.random(gc.nvtxs) < 0.3, part_c % max(nparts // 2, 1), part_c)):
        skew = skew.astype(np.int32)
        pw_c = part_weights(gc.be, gc.vwgt[:, None], skew, nparts)[:, 0]
        room = maxpw_c - pw_c
        dest_c, gain_c = best_moves(gc.be, gc, skew, MoveRequest(1, room=room, nparts=nparts))
        dest_g, gain_g = best_moves(gg.be, gg, xp.asarray(skew),
                                    MoveRequest(1, room=xp.asarray(room), nparts=nparts))
        _eq(dest_c, dest_g)
        _eq(gain_c, gain_g)
        balance = limits_balance(maxpw_c)
        moved_c = rebalance_step(gc.be, gc, skew, balance, pw_c)
        _eq(moved_c, rebalance_step(gg.be, gg, xp.asarray(skew), balance, pw_c))
        assert not np.array_equal(moved_c, skew)
        _eq(refine(gc.be, gc, skew, balance, context=RC, finest=True, patience=4)[0],
            refine(gg.be, gg, xp.asarray(skew), balance, context=RC, finest=True, patience=4)[0])


@pytest.mark.parametrize("name", ["delaunay_n15", "random-w", "random-hubs", "random-dense"])
@pytest.mark.parametrize("nparts", [2, 64, 3000])
def test_score_of_the_moves_equals_the_twin(name, nparts):
    # Jet's loop scores an iteration as the last score plus its moved vertices' change: from
    # the state of prev, adding the change must give the state of part (cut and part weights),
    # with moved neighbours, hub rows (the block kernel) and parts past the shared-memory sums
    gc, gg = _both(_graph(name))
    xp = gg.be.xp
    rng = np.random.default_rng(nparts)
    prev = rng.integers(0, nparts, gc.nvtxs).astype(np.int32)
    part = np.where(rng.random(gc.nvtxs) < 0.3, rng.integers(0, nparts, gc.nvtxs), prev)
    part = part.astype(np.int32)
    parts = limits_balance(np.zeros(nparts))
    cut, pw = partition_state(gc.be, gc, part, parts)
    out = xp.zeros(nparts + 1, dtype=xp.uint64)
    launch_score(gg.be, gg, xp.asarray(prev), out)
    assert int(out[0].get()) == 2 * partition_state(gc.be, gc, prev, parts)[0]
    launch_score(gg.be, gg, xp.asarray(part), out, prev=xp.asarray(prev))
    state = out.get().astype(np.int64)
    assert state[0] == 2 * cut
    assert np.array_equal(state[1:], pw)


@pytest.mark.parametrize("name", ["random-w", "random-hubs"])
def test_state_change_of_some_rows_equals_the_twin(name):
    # a rank's rows (the others' empty, as the distributed score lays them out): the change
    # from prev to part that the score kernel reads from the moved rows, against the twin's
    graph = _graph(name)
    half = graph.nvtxs // 2
    rng = np.random.default_rng(2)
    prev = rng.integers(0, 9, graph.nvtxs).astype(np.int32)
    part = np.where(rng.random(graph.nvtxs) < 0.2, rng.integers(0, 9, graph.nvtxs), prev)
    found = []
    for be in (get_backend("cpu"), get_backend("gpu")):
        g = DeviceGraph.upload(be, graph)
        xadj = be.xp.concatenate((g.xadj[:half + 1],
                                  be.xp.full(graph.nvtxs - half, int(g.xadj[half]))))
        vwgt = be.xp.where(be.xp.arange(graph.nvtxs) < half, g.vwgt, 0).astype(np.int32)
        rows = DeviceGraph(be, xadj, g.adjncy, g.adjwgt, vwgt)
        found.append(state_sums(be, rows, be.asarray(part.astype(np.int32)), 9,
                                prev=be.asarray(prev)))
    assert np.array_equal(*found)


@pytest.mark.parametrize("name", ["delaunay_n15", "random-w"])
def test_refiners_prepared_ahead_equal_twin(name):
    # the engine prepares the small levels' refiners while METIS runs and calls them later:
    # the buffers they hold must survive the memory other work allocates and fills meanwhile
    gc, gg = _both(_graph(name))
    xp, nparts = gg.be.xp, 8
    part = (np.arange(gc.nvtxs) * nparts // gc.nvtxs).astype(np.int32)
    maxpw = np.full(nparts, int(1.03 * int(gc.vwgt.sum()) / nparts), np.int64)
    prepared = [refiner(gg.be, gg, limits_balance(maxpw), context=RC, finest=finest, patience=4)
                for finest in (True, False)]
    # memory freed since would now be handed out again, here filled with 0x7f bytes
    n = gc.nvtxs
    clobber = [xp.full(size, 0x7F, dtype=xp.uint8)
               for size in (n, 4 * n, 8 * nparts * 256, 8 * nparts, 4) for _ in range(4)]
    for finest, run in reversed(list(zip((True, False), prepared))):
        expected = refiner(gc.be, gc, limits_balance(maxpw), context=RC, finest=finest,
                           patience=4)(part)
        got = run(xp.asarray(part))
        _eq(expected[0], got[0])
        assert expected[1] == int(got[1])
    del clobber  # held until the refiners ran


@pytest.mark.parametrize(("name", "nparts"), [
    (name, nparts) for name in ("delaunay_n15", "random-w", "random-big", "random-hubs",
                                "random-dense") for nparts in (2, 64)
] + [("random-big", 3000), ("random-dense", 3000), ("random-w", 10000), ("random-hubs", 10000),
     ("random-dense", 10000)])
def test_jet_loop_equals_the_host_loop(name, nparts):
    # the whole loop in one cooperative kernel against jet.py's host loop: the same best
    # partition and iterations from a random start (label propagation) and from a skewed one
    # (rebalancing first), with more vertices than the grid has threads (random-big), rows for
    # warps (random-dense) and blocks (random-hubs), and parts past score's shared memory (3000)
    # and past the blocks' (10000: threads hash every row)
    gc, gg = _both(_graph(name))
    rng = np.random.default_rng(nparts)
    start = rng.integers(0, nparts, gc.nvtxs).astype(np.int32)
    skewed = np.where(rng.random(gc.nvtxs) < 0.4, 0, start).astype(np.int32)
    maxpw = np.full(nparts, int(1.03 * int(gc.vwgt.sum()) / nparts), np.int64)
    host, device = (refiner(g.be, g, limits_balance(maxpw), context=RC, finest=True, patience=6)
                    for g in (gc, gg))
    for part in (start, skewed):
        expected, got = host(part), device(gg.be.xp.asarray(part))
        assert int(got[1]) == expected[1] >= 6
        _eq(expected[0], got[0])


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("nparts", [2, 8, 64])
def test_gpu_engine_equals_cpu_engine(name, nparts):
    graph = _graph(name)
    cpu = partition(graph, nparts, engine="cpu", seed=7)
    gpu = partition(graph, nparts, engine="gpu", seed=7)
    assert np.array_equal(cpu.part, gpu.part)
    assert gpu.engine == "gpu"


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("ctype", ["shem", "rm"])
def test_gpu_engine_equals_cpu_engine_when_matching(name, ctype):
    graph = _graph(name)
    cpu = partition(graph, 16, engine="cpu", seed=7, ctype=ctype)
    gpu = partition(graph, 16, engine="gpu", seed=7, ctype=ctype)
    assert np.array_equal(cpu.part, gpu.part)


@pytest.mark.parametrize("ncon", [1, 2])
def test_gpu_engine_equals_cpu_engine_with_weightless_islands(ncon):
    graph = random_graph(4000, 5, seed=8, isolated=300)
    vwgt = np.ones((graph.nvtxs, ncon), dtype=np.int64)
    vwgt[np.diff(graph.xadj) == 0] = 0  # the isolated vertices weigh nothing
    weighted = Graph.from_csr(graph.xadj, graph.adjncy, vwgt, None)
    cpu = partition(weighted, 8, engine="cpu", seed=7)
    gpu = partition(weighted, 8, engine="gpu", seed=7)
    assert np.array_equal(cpu.part, gpu.part)


def test_gpu_engine_is_deterministic():
    graph = load_fixture("delaunay_n16")
    runs = [partition(graph, 64, engine="gpu").part for _ in range(3)]
    assert all(np.array_equal(runs[0], r) for r in runs[1:])


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None,
                    reason="compute-sanitizer is not installed")
def test_no_kernel_errors_under_compute_sanitizer(tmp_path):
    script = (
        "from conftest import load_fixture\n"
        "from gpmetis import partition\n"
        "r = partition(load_fixture('3elt'), 8, engine='gpu')\n"
        "print('edgecut', r.edgecut)\n"
    )
    proc = subprocess.run(
        ["compute-sanitizer", "--error-exitcode", "3", "--tool", "memcheck",
         sys.executable, "-c", script],
        capture_output=True, text=True, cwd=str(tmp_path),
        env={**__import__("os").environ,
             "PYTHONPATH": ":".join(sys.path)},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "ERROR SUMMARY: 0 errors" in proc.stdout + proc.stderr


def test_warmup_phases_equal_the_twin():
    from gpmetis.partitioning.warmup import run_phases_on_grid

    assert run_phases_on_grid(get_backend("gpu")) == run_phases_on_grid(get_backend("cpu"))


def test_fill_empty_parts_equals_the_twin():
    graph = _graph("random-w")
    nparts = 32
    part = (np.arange(graph.nvtxs) % 29).astype(np.int32)  # parts 29-31 empty
    gpu, cpu = get_backend("gpu"), get_backend("cpu")
    assert np.array_equal(gpu.asnumpy(gpu.counts(gpu.asarray(part), nparts)),
                          cpu.counts(part, nparts))
    filled = [be.asnumpy(fill_empty_parts(be, DeviceGraph.upload(be, graph), be.asarray(part),
                                          nparts)) for be in (cpu, gpu)]
    assert np.array_equal(*filled)
    assert np.all(np.bincount(filled[1], minlength=nparts) > 0)


def test_levels_offloaded_to_the_host_give_the_same_partition(monkeypatch):
    graph = _graph("random-hubs")
    expected = partition(graph, 16, engine="cpu", seed=3).part
    offloads = []
    real = DeviceGraph.offload

    def counted(self):
        offloads.append(self.nvtxs)
        real(self)

    monkeypatch.setattr(DeviceGraph, "offload", counted)
    coarsening = replace(DEFAULT.coarsening, level_memory_budget=0.0,
                         free_memory_headroom=1e15)  # no room left
    monkeypatch.setitem(context.PRESETS, "default", replace(DEFAULT, coarsening=coarsening))
    assert np.array_equal(partition(graph, 16, engine="gpu", seed=3).part, expected)
    assert offloads, "a zero budget must offload every intermediate level"


@pytest.fixture
def small_stage(monkeypatch):
    """Staged uploads in chunks of 4 KB: many chunks per thread, and a short last one."""
    import gpmetis.staging as staged

    monkeypatch.setattr(staged, "STAGE_CHUNK", 4096)
    staged._buffer.cache_clear()
    yield staged
    staged._buffer.cache_clear()


@pytest.mark.parametrize("dtype,count", [(np.int64, 1), (np.int32, 2501), (np.int64, 30_011),
                                         (np.uint8, 77_777)])
def test_staged_copies_move_every_byte(small_stage, dtype, count):
    host = np.random.default_rng(count).integers(0, 2**31, count).astype(dtype)
    device = small_stage.upload(host)
    assert np.array_equal(device.get(), host)
    device += 1
    assert np.array_equal(small_stage.download(device), host + 1)


def test_copies_through_pinned_memory_move_every_byte(small_stage):
    # a download lands in pinned memory, from which an upload goes straight across
    host = np.random.default_rng(5).integers(0, 2**31, 30_011).astype(np.int64)
    pinned = small_stage.download(small_stage.upload(host))
    assert small_stage._pinned(pinned) and not small_stage._pinned(host)
    assert np.array_equal(pinned, host)
    assert np.array_equal(small_stage.upload(pinned[1:]).get(), host[1:])


def test_gpu_engine_with_staged_copies_equals_cpu_engine(small_stage, monkeypatch):
    import gpmetis.backend as backend

    monkeypatch.setattr(backend, "STAGED_MIN_BYTES", 1)  # every array through the buffers
    graph = _graph("random-w")
    expected = partition(graph, 16, engine="cpu", seed=3).part
    assert np.array_equal(partition(graph, 16, engine="gpu", seed=3).part, expected)


@pytest.mark.parametrize("nbins", [64, SHARED_BINS + 1])
def test_bin_sums_past_2_53_equal_cpu(nbins):
    # bin 0 takes 95% of 6M items: int32 weights near 2^31 (the shared-memory kernel up to
    # SHARED_BINS bins) and int64 ones up to 2^40 (xp.add.at) both sum past 2^53 there
    rng = np.random.default_rng(nbins)
    n = 6_000_000
    ids = np.where(rng.random(n) < 0.95, 0, rng.integers(0, nbins, n)).astype(np.int32)
    gpu, cpu = get_backend("gpu"), get_backend("cpu")
    for weights in (rng.integers(2**31 - 2**28, 2**31, n).astype(np.int32),
                    rng.integers(0, 2**40, n).astype(np.int64)):
        expected = cpu.bin_sums(ids, nbins, weights)
        assert expected[0] > 2**53 and expected.sum() == weights.sum(dtype=np.int64)
        got = gpu.bin_sums(gpu.asarray(ids), nbins, gpu.asarray(weights))
        assert np.array_equal(gpu.asnumpy(got), expected)


@pytest.mark.parametrize("nbins", [1, 64, SHARED_BINS, SHARED_BINS + 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_bin_sums_equal_bincount(nbins, weighted):
    # shared-memory sums up to SHARED_BINS bins, atomics on the bins past it; a few bins take
    # most of the items, as a partition's parts do
    rng = np.random.default_rng(nbins)
    n = 300_000
    ids = np.where(rng.random(n) < 0.9, rng.integers(0, min(nbins, 3), n),
                   rng.integers(0, nbins, n)).astype(np.int32)
    weights = rng.integers(0, 1000, n).astype(np.int32) if weighted else None
    gpu, cpu = get_backend("gpu"), get_backend("cpu")
    got = gpu.bin_sums(gpu.asarray(ids), nbins, None if weights is None else gpu.asarray(weights))
    expected = cpu.bin_sums(ids, nbins, weights)
    assert expected.dtype == np.int64 and got.dtype == np.int64
    assert np.array_equal(gpu.asnumpy(got), expected)
    assert expected.sum() == (n if weights is None else weights.sum())
