"""The rebalancing round's selection rule (cpu backend; the GPU kernels are checked against it in
test_gpu_twins.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import limits_balance, random_graph

from gpmetis.backend import get_backend
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.graph import Graph
from gpmetis.metrics import part_weights
from gpmetis.refinement.rebalance import (
    MAX_BUCKET,
    cap_inflow,
    fill_empty_parts,
    id_shifts,
    loss_bucket,
    ordered_select,
    rebalance_step,
)

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

CPU = get_backend("cpu")


def test_loss_bucket_is_monotone_and_exact_near_zero():
    loss = np.arange(-100, 1 << 20, dtype=np.int64)
    b = loss_bucket(loss)
    assert np.all(np.diff(b) >= 0)
    assert np.all(np.diff(b[(loss >= -16) & (loss < 16)]) == 1)
    assert b.min() == 0
    assert np.array_equal(loss_bucket(np.array([-(1 << 62), 1 << 40, 1 << 62])), [0, 127, 127])
    # four buckets per octave: 32..63 spans 4 buckets, 64..127 the next 4
    assert len(np.unique(loss_bucket(np.arange(32, 64)))) == 4
    assert loss_bucket(np.array([64]))[0] == loss_bucket(np.array([63]))[0] + 1


def test_id_shifts_resolve_small_graphs_exactly():
    for n in (1, 2, 255, 256, 257, 5000, 65536):
        hi, lo = id_shifts(n)
        ids = np.arange(n)
        key = ((ids >> hi) & 255) * 256 + ((ids >> lo) & 255)
        assert len(np.unique(key)) == n and np.all(np.diff(key) > 0)
    assert id_shifts(1 << 20) == (12, 4)


def _brute_force(group, bucket, w, limit, source):
    """Per group, items in (bucket, id) order: sources take while the weight before an item is
    below the limit, destinations while the weight up to it is at most the limit."""
    taken = np.zeros(len(group), dtype=bool)
    for g in range(len(limit)):
        items = [v for v in np.lexsort((np.arange(len(group)), bucket)) if group[v] == g]
        total = 0
        for v in items:
            if source and total >= limit[g]:
                break
            total += int(w[v])
            if not source and total > limit[g]:
                break
            taken[v] = True
    return taken


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("source", [True, False])
def test_ordered_select_equals_sequential_rule(seed, source):
    rng = np.random.default_rng(seed)
    n, ngroups = 3000, 7
    group = rng.integers(-1, ngroups, n)
    bucket = rng.integers(0, 6, n)  # many ties: the id decides within a bucket
    w = rng.integers(0, 10, n)
    limit = rng.integers(-5, 3000, ngroups)
    if source:
        limit = np.maximum(limit, 1)
    hi, lo = id_shifts(n)
    ids = np.arange(n)
    digits = [bucket, (ids >> hi) & 255, (ids >> lo) & 255]
    got = ordered_select(group, digits, w, limit, source)
    assert np.array_equal(got, _brute_force(group, bucket, w, limit, source))


def test_ordered_select_last_range_goes_to_sources_only():
    # one group, four items with equal digits: undecided after every level
    group = np.zeros(4, dtype=np.int64)
    digits = [np.zeros(4, dtype=np.int64)] * 3
    w = np.ones(4, dtype=np.int64)
    assert ordered_select(group, digits, w, np.array([2]), source=True).all()
    assert not ordered_select(group, digits, w, np.array([2]), source=False).any()
    assert ordered_select(group, digits, w, np.array([4]), source=False).all()


@pytest.mark.parametrize("n", [4000, 150_000])
def test_rebalance_step_covers_excess_and_fills_no_part_beyond_its_limit(n):
    graph = random_graph(n, 6, seed=n, weighted=True)
    g = DeviceGraph.upload(CPU, graph)
    nparts = 16
    rng = np.random.default_rng(3)
    part = (np.arange(n) * nparts // n).astype(np.int32)
    part[rng.random(n) < 0.15] = 0  # part 0 far over its limit
    limit = np.full(nparts, int(1.03 * g.vwgt.sum() / nparts), np.int64)
    pw = part_weights(CPU, g.vwgt[:, None], part, nparts)[:, 0]
    moved = rebalance_step(CPU, g, part, limits_balance(limit), pw)
    after = part_weights(CPU, g.vwgt[:, None], moved, nparts)[:, 0]
    receivers = after > pw
    assert receivers.any() and after[0] < pw[0]
    assert np.all(after[receivers] <= limit[receivers])
    assert np.all(moved[part != 0] == part[part != 0])


@pytest.mark.parametrize("loose", [False, True])
def test_cap_inflow_keeps_the_highest_gains_that_fit(loose):
    graph = random_graph(3000, 6, seed=12, weighted=True)
    g = DeviceGraph.upload(CPU, graph)
    nparts = 8
    rng = np.random.default_rng(5)
    part = (np.arange(g.nvtxs) * nparts // g.nvtxs).astype(np.int32)
    moved = part.copy()
    step = rng.random(g.nvtxs) < 0.4
    moved[step] = rng.choice([1, 2], step.sum())  # a step that piles into parts 1 and 2
    moved[step & (moved == part)] = 0
    gain = rng.integers(-40, 5000, g.nvtxs)
    pw = part_weights(CPU, g.vwgt[:, None], part, nparts)[:, 0]
    maxpwgt = np.full(nparts, int(1.03 * g.vwgt.sum() / nparts), np.int64)
    keep, capped = cap_inflow(CPU, g, part, moved, gain, maxpwgt, pw, loose=loose,
                              slack=RC.inflow_slack)
    items = moved != part
    assert np.array_equal(capped, np.where(keep == 1, moved, part))
    assert keep[~items].sum() == 0 and 0 < keep[items].sum() < items.sum()
    # per destination: the sequential rule over (gain bucket high to low, id), with the room
    # and, when loose, the slack and what the step moves out of the part
    limit = maxpwgt - pw
    if loose:
        outflow = np.bincount(part[items], weights=g.vwgt[items], minlength=nparts)
        limit += maxpwgt // RC.inflow_slack + outflow.astype(np.int64)
    else:  # a strict step fills no part beyond its limit
        after = part_weights(CPU, g.vwgt[:, None], capped, nparts)[:, 0]
        assert np.all(after <= np.maximum(maxpwgt, pw))
    bucket = MAX_BUCKET - loss_bucket(gain)
    expected = _brute_force(np.where(items, moved, -1), bucket, g.vwgt, limit, source=False)
    assert np.array_equal(keep == 1, expected)


def test_fill_empty_parts_moves_the_lightest_spare_vertices_of_the_heaviest_parts():
    graph = random_graph(400, 5, seed=7, weighted=True)
    g = DeviceGraph.upload(CPU, graph)
    nparts = 8
    part = (np.arange(400) % 5).astype(np.int32)  # parts 5, 6 and 7 empty
    part[:40] = 0  # part 0 the heaviest
    filled = fill_empty_parts(CPU, g, part, nparts)
    assert np.array_equal(np.bincount(filled, minlength=nparts) > 0, np.ones(nparts, bool))
    moved = np.flatnonzero(filled != part)
    assert sorted(filled[moved]) == [5, 6, 7]
    pw = part_weights(CPU, g.vwgt[:, None], part, nparts)[:, 0]
    heaviest = int(np.argmax(pw))
    assert np.all(part[moved] == heaviest)
    members = np.flatnonzero(part == heaviest)
    assert np.all(g.vwgt[moved] <= np.sort(g.vwgt[members])[3])  # among the 4 lightest
    full = (np.arange(400) % nparts).astype(np.int32)
    assert fill_empty_parts(CPU, g, full, nparts) is full


def test_fill_empty_parts_takes_weights_beyond_32_bits():
    # the metis engine fills the parts METIS left empty with the graph's int64 weights
    n, nparts = 6, 6
    vwgt = np.array([2**40, 3, 2**40 + 5, 2**33, 7, 2**40], dtype=np.int64)
    ring = Graph.from_csr(np.arange(0, 2 * n + 1, 2),
                          np.array([1, 5, 0, 2, 1, 3, 2, 4, 3, 5, 4, 0]), vwgt)
    part = np.array([0, 1, 0, 1, 1, 0], dtype=np.int32)  # parts 2-5 empty; 0 the heaviest
    filled = fill_empty_parts(CPU, DeviceGraph(CPU, ring.xadj, ring.adjncy, ring.adjwgt, vwgt),
                              part, nparts)
    assert sorted(np.bincount(filled, minlength=nparts)) == [1] * nparts
    # the lightest move first (1, 4, then 0 before 5: equal weight and cost, by id) into parts
    # 2 to 5; each part keeps its heaviest (0: vertex 2, 1: vertex 3)
    assert filled.tolist() == [4, 2, 0, 1, 3, 5]


def test_fill_empty_parts_moves_the_vertex_that_cuts_least():
    # a hub 1 joined to leaves 0, 2, 3 and to 4, which also joins 3: every vertex weighs 1;
    # moving a leaf (0 or 2) cuts one edge, the hub four
    xadj = np.array([0, 1, 5, 6, 8, 10])
    adjncy = np.array([1, 0, 2, 3, 4, 1, 1, 4, 1, 3])
    g = DeviceGraph.upload(CPU, Graph.from_csr(xadj, adjncy))
    part = np.zeros(5, dtype=np.int32)
    filled = fill_empty_parts(CPU, g, part, 2)
    assert filled.tolist() == [1, 0, 0, 0, 0]  # leaf 0: the cut is 1, its least
    three = fill_empty_parts(CPU, g, part, 3)
    assert sorted(np.flatnonzero(three)) == [0, 2]  # both leaves, then the cut is 2
