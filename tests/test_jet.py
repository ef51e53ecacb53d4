"""The Jet refinement loop (cpu engine; test_gpu_twins.py holds the device loop to it)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import limits_balance, load_fixture

from gpmetis.backend import get_backend
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import edgecut, part_weights
from gpmetis.refinement import jet_refiner
from gpmetis.refinement.jet_refiner import refine

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

CPU = get_backend("cpu")


@pytest.mark.parametrize("nparts", [8, 64])
def test_label_propagation_is_loose_only_after_a_strict_step_that_stalled(monkeypatch, nparts):
    g = DeviceGraph.upload(CPU, load_fixture("3elt"))
    maxpwgt = np.full(nparts, int(1.03 * g.vwgt.sum() / nparts), np.int64)
    steps = []  # (loose, cut before, cut after, part weights before, after)
    cap_inflow = jet_refiner.cap_inflow

    def recording(be, g, part, moved, gain, maxpwgt, pwgts, *, loose, slack):
        keep, capped = cap_inflow(be, g, part, moved, gain, maxpwgt, pwgts, loose=loose,
                                  slack=slack)
        cuts = [edgecut(be, g.src, g.adjncy, g.adjwgt, p) for p in (part, capped)]
        after = part_weights(be, g.vwgt[:, None], capped, nparts)[:, 0]
        steps.append((loose, *cuts, pwgts.copy(), after))
        return keep, capped

    monkeypatch.setattr(jet_refiner, "cap_inflow", recording)
    start = (np.arange(g.nvtxs) * nparts // g.nvtxs).astype(np.int32)
    refine(CPU, g, start, limits_balance(maxpwgt), context=RC, finest=True, patience=12)
    loose = [s[0] for s in steps]
    assert not loose[0] and any(loose) and not all(loose)
    for (was_loose, before, after, *_), now_loose in zip(steps, loose[1:]):
        assert now_loose == (not was_loose and after >= (1 - RC.improvement) * before)
    for is_loose, _, _, pw_before, pw_after in steps:
        if not is_loose:  # a strict step fills no part beyond its limit
            assert np.all(pw_after <= np.maximum(maxpwgt, pw_before))


@pytest.mark.parametrize("nparts", [2, 8, 64])
def test_best_moves_dense_table_equals_sorted_pairs(monkeypatch, nparts):
    # the NumPy best_moves' two ways to find each vertex's most connected other part (a
    # dense (vertex, part) table on dense graphs, sorted pairs otherwise) give the same moves
    from conftest import random_graph

    from gpmetis.refinement import jet

    g = DeviceGraph.upload(CPU, random_graph(3000, 30, seed=nparts, hubs=5, weighted=True))
    rng = np.random.default_rng(nparts)
    part = rng.integers(0, nparts, g.nvtxs).astype(np.int32)
    requests = (jet.MoveRequest(0, (rng.random(g.nvtxs) < 0.2).astype(np.uint8), 1, 4,
                                nparts=nparts),
                jet.MoveRequest(1, room=np.where(np.arange(nparts) % 2 == 0, -5,
                                                 rng.integers(0, 8, nparts)).astype(np.int64),
                                nparts=nparts))
    for req in requests:
        monkeypatch.setattr(jet, "DENSE_PAIRS_PER_EDGE", 1 << 40)
        dense = jet.best_moves(CPU, g, part, req)
        monkeypatch.setattr(jet, "DENSE_PAIRS_PER_EDGE", 0)
        pairs = jet.best_moves(CPU, g, part, req)
        assert (dense[0] >= 0).any()
        for a, b in zip(dense, pairs):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("share", [0.0, 0.02, 0.3, 1.0])
def test_state_change_from_prev_adds_up_to_the_new_state(share):
    # the score of a move set read from its moved vertices only (an edge counted twice where
    # its other end stayed): the previous state plus the change is the new one, also where the
    # graph holds some rows only (the sums of disjoint row sets add up)
    from conftest import random_graph

    from gpmetis.refinement.jet import state_sums

    g = DeviceGraph.upload(CPU, random_graph(3000, 6, seed=3, weighted=True))
    rng = np.random.default_rng(5)
    prev = rng.integers(0, 9, g.nvtxs).astype(np.int32)
    part = np.where(rng.random(g.nvtxs) < share, rng.integers(0, 9, g.nvtxs), prev)
    part = part.astype(np.int32)
    change = state_sums(CPU, g, part, 9, prev=prev)
    assert np.array_equal(state_sums(CPU, g, prev, 9) + change, state_sums(CPU, g, part, 9))
    half = g.nvtxs // 2  # the rows 0..half-1 and the rest, as two ranks hold them
    rows = [DeviceGraph(CPU, xadj, g.adjncy, g.adjwgt, vwgt) for xadj, vwgt in (
        (np.concatenate((g.xadj[:half + 1], np.full(g.nvtxs - half, g.xadj[half]))),
         np.where(np.arange(g.nvtxs) < half, g.vwgt, 0)),
        (np.concatenate((np.full(half, g.xadj[half]), g.xadj[half:])),
         np.where(np.arange(g.nvtxs) >= half, g.vwgt, 0)))]
    assert np.array_equal(sum(state_sums(CPU, r, part, 9, prev=prev) for r in rows), change)
