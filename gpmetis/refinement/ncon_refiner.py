"""The multi-constraint refiner: ``ncon``'s label-propagation, rebalancing and swap steps
run by the host loop (``loop``), the twin of the loop ``ncon_device`` runs on
the GPU, and the refinement the initial partition's trials run on the workers."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend, get_backend
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.loop import loop_on_host
from gpmetis.refinement.ncon import (
    lp_step,
    rebalance_step,
    score_state,
    swap_step,
)
from gpmetis.refinement.ncon_device import DeviceLoop


def refine(be: Backend, g: DeviceGraph, weights, part, balance: Balance, *,
           context: RefinementContext, finest: bool, patience: int, tolerance: float = 0.0):
    """(the best partition the iterations find from ``part``, iterations run); ``weights``
    (ncon, n) int32 on ``be``; an excess within ``tolerance`` counts as none (a coarse
    partition's finer levels remove it); ``finest``: the finest level's negative-gain filter
    (``context``'s), else the coarse one. On the GPU the loop runs on the device
    (ncon_device.py); the host loop here is its twin."""
    if be.gpu:
        return DeviceLoop(be, g, weights, balance, context=context, finest=finest,
                          patience=patience, tolerance=tolerance)(part)
    steps = MultiConstraintSteps(be, g, weights, balance, context, finest, tolerance)
    best, iterations = loop_on_host(be, steps, part, patience)
    return best.astype(np.int32, copy=False), iterations


class MultiConstraintSteps:
    """The multi-constraint label propagation (every move within every constraint's room)
    and rebalancing, with a swap step where no single move lowers the excess; an excess
    within ``tolerance`` counts as none."""

    def __init__(self, be: Backend, g: DeviceGraph, weights, balance: Balance,
                 context: RefinementContext, finest: bool, tolerance: float) -> None:
        self.be, self.g, self.weights, self.balance = be, g, weights, balance
        self.context, self.settle, self.tolerance = context, context.ncon_settle, tolerance
        self.c_num, self.c_den = context.filter_finest if finest else context.filter_coarse
        self.slack = balance.limits // context.inflow_slack

    def score(self, part):
        return _tolerant(score_state(self.be, self.g, self.weights, part, self.balance),
                         self.tolerance)

    def propagate(self, part, locked, pwgts, loose: bool):
        room = self.balance.limits - pwgts + (self.slack if loose else 0)
        return lp_step(self.be, self.g, self.weights, part, room, locked, self.c_num,
                       self.c_den)

    def rebalance(self, part, pwgts):
        be, g, weights, balance = self.be, self.g, self.weights, self.balance
        moved = rebalance_step(be, g, weights, part, balance, pwgts)
        if moved is part:  # no move lowers the excess: trade constraints
            moved = swap_step(be, g, weights, part, balance, pwgts)
        return None if moved is part else moved


def _tolerant(state: tuple, tolerance: float) -> tuple:
    """score_state's answer with the excess less ``tolerance`` (at least 0)."""
    (excess, cut), pwgts = state
    return (max(excess - tolerance, 0.0), cut), pwgts


def refine_on_host(host: tuple, weights: np.ndarray, part: np.ndarray, balance: Balance,
                   context: RefinementContext, patience: int,
                   tolerance: float = 0.0) -> tuple[np.ndarray, float, int]:
    """(partition, excess, edgecut): ``part`` of the host graph ``host`` (xadj, adjncy, adjwgt,
    vwgt) with (ncon, n) ``weights`` after ``refine`` on the cpu backend, as the initial
    partition's trials run it on the workers."""
    xadj, adjncy, adjwgt, vwgt = host
    be = get_backend("cpu")
    g = DeviceGraph(be, xadj, adjncy.astype(np.int32), adjwgt.astype(np.int32),
                    vwgt.astype(np.int32))
    part, _ = refine(be, g, weights.astype(np.int32), part, balance, context=context,
                     finest=False, patience=patience, tolerance=tolerance)
    (excess, cut), _ = score_state(be, g, weights, part, balance)
    return part, excess, cut
