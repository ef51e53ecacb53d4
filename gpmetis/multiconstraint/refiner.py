"""The multi-constraint refiner: the loop of ``refinement``'s label-propagation, rebalancing
and swap steps on the host, the twin of the loop ``refinement_device`` runs on the GPU, and the
refinement the initial partition's trials run on the workers."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend, get_backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.multiconstraint.refinement import (
    SETTLE,
    lp_step,
    rebalance_step,
    score_state,
    swap_step,
)
from gpmetis.multiconstraint.refinement_device import DeviceLoop
from gpmetis.multiconstraint.weights import Balance
from gpmetis.refinement.jet import FILTER_COARSE, FILTER_FINEST, IMPROVEMENT, MAX_ITERATIONS
from gpmetis.refinement.rebalance import INFLOW_SLACK


def refine(be: Backend, g: DeviceGraph, weights, part, nparts: int, balance: Balance, *,
           finest: bool, patience: int, tolerance: float = 0.0):
    """(the best partition the iterations find from ``part``, iterations run); ``weights``
    (ncon, n) int32 on ``be``; an excess within ``tolerance`` counts as none (a coarse
    partition's finer levels remove it). On the GPU the loop runs on the device
    (refinement_device.py); the host loop here is its twin."""
    c_num, c_den = FILTER_FINEST if finest else FILTER_COARSE
    if be.gpu:
        return DeviceLoop(be, g, weights, nparts, balance, c_num=c_num, c_den=c_den,
                          patience=patience, tolerance=tolerance)(part)
    slack = balance.limits // INFLOW_SLACK
    locked = np.zeros(g.nvtxs, dtype=np.uint8)
    score, pwgts = _tolerant(score_state(be, g, weights, part, nparts, balance), tolerance)
    best, best_score = part, score
    stale = iterations = 0
    loose = False
    while iterations < MAX_ITERATIONS and stale < patience:
        iterations += 1
        cut = score[1]
        lp = score[0] == 0
        if lp:
            room = balance.limits - pwgts + (slack if loose else 0)
            part, locked = lp_step(be, g, weights, part, nparts, room, locked, c_num, c_den)
        else:
            moved = rebalance_step(be, g, weights, part, nparts, balance, pwgts)
            if moved is part:  # no move lowers the excess: trade constraints
                moved = swap_step(be, g, weights, part, nparts, balance, pwgts)
                if moved is part:
                    # nor does a swap: every later iteration would find the same, changing
                    # nothing until the patience runs out
                    break
            part = moved
            locked[:] = 0
        excess = score[0]
        score, pwgts = _tolerant(score_state(be, g, weights, part, nparts, balance), tolerance)
        if lp:
            loose = not loose and score[1] >= (1 - IMPROVEMENT) * cut
        if score < best_score:
            big = score[0] < best_score[0] or score[1] < (1 - IMPROVEMENT) * best_score[1]
            best, best_score = part, score
            stale = 0 if big else stale + 1
        elif lp or score[0] >= (1 - (SETTLE if best_score[0] == 0 else IMPROVEMENT)) * excess:
            # a rebalancing step that still lowers the excess is not stale; once a balanced
            # state is kept, only one that removes a good share of it
            stale += 1
    return best.astype(np.int32, copy=False), iterations


def _tolerant(state: tuple, tolerance: float) -> tuple:
    """score_state's answer with the excess less ``tolerance`` (at least 0)."""
    (excess, cut), pwgts = state
    return (max(excess - tolerance, 0.0), cut), pwgts


def refine_on_host(host: tuple, weights: np.ndarray, part: np.ndarray, nparts: int,
                   balance: Balance, patience: int,
                   tolerance: float = 0.0) -> tuple[np.ndarray, float, int]:
    """(partition, excess, edgecut): ``part`` of the host graph ``host`` (xadj, adjncy, adjwgt,
    vwgt) with (ncon, n) ``weights`` after ``refine`` on the cpu backend, as the initial
    partition's trials run it on the workers."""
    xadj, adjncy, adjwgt, vwgt = host
    be = get_backend("cpu")
    g = DeviceGraph(be, xadj, adjncy.astype(np.int32), adjwgt.astype(np.int32),
                    vwgt.astype(np.int32))
    part, _ = refine(be, g, weights.astype(np.int32), part, nparts, balance, finest=False,
                     patience=patience, tolerance=tolerance)
    (excess, cut), _ = score_state(be, g, weights, part, nparts, balance)
    return part, excess, cut
