"""The Jet refiner: its label-propagation and rebalancing steps (``jet``'s and
``rebalance``'s) run by the host loop (``loop``), the twin of the loop ``jet_device`` runs on
the GPU."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.jet import (
    MoveRequest,
    afterburner,
    best_moves,
    partition_state,
)
from gpmetis.refinement.jet_device import DeviceRefiner
from gpmetis.refinement.loop import loop_on_host
from gpmetis.refinement.rebalance import cap_inflow, rebalance_step


def score_state(be: Backend, g: DeviceGraph, part, balance: Balance) -> tuple[int, int]:
    """(total overweight over ``balance``'s limits, edgecut) of ``part``: smaller is better."""
    return _score(be, g, part, balance)[0]


def _score(be: Backend, g: DeviceGraph, part, balance: Balance):
    """((total overweight, edgecut), part weights): smaller scores are better."""
    cut, pw = partition_state(be, g, part, balance)
    return (int(np.maximum(pw - balance.limits[0], 0).sum()), cut), pw


def refiner(be: Backend, g: DeviceGraph, balance: Balance, *, context: RefinementContext,
            finest: bool, patience: int) -> Callable:
    """A function from a partition of ``g`` to (the best partition Jet iterations find from
    it, iterations run: on the GPU a device scalar that ``int`` reads, so that the next level
    can be queued before this one ends), against ``balance``'s limits (its first constraint);
    rebalancing keeps vertices in their group of ``balance.group_size`` parts
    (``rebalance_step``'s), as label propagation does where edges join only parts of one group.
    ``finest``: the finest level's negative-gain filter (``context``'s), else the coarse one.
    On the GPU the level's buffers are made now (jet_device.py runs the loop on the device);
    the host loop here is its twin."""
    if be.gpu:
        return DeviceRefiner(be, g, balance, context=context, finest=finest, patience=patience)
    return functools.partial(_refine_host, be, g, balance=balance, context=context,
                             finest=finest, patience=patience)


def refine(be: Backend, g: DeviceGraph, part, balance: Balance, *, context: RefinementContext,
           finest: bool, patience: int):
    """(best partition found by Jet iterations from ``part``, iterations run), as the
    ``refiner`` gives them."""
    return refiner(be, g, balance, context=context, finest=finest, patience=patience)(part)


class JetSteps:
    """Jet's label propagation (with the afterburner and the cap on inflow) and rebalancing
    (vertices kept in their group of ``balance.group_size`` parts) of ``g`` against
    ``balance``'s limits, under ``context``."""

    settle = None

    def __init__(self, be: Backend, g: DeviceGraph, balance: Balance,
                 context: RefinementContext, finest: bool) -> None:
        self.be, self.g, self.balance, self.context = be, g, balance, context
        self.maxpwgt = balance.limits_on(be)
        self.c_num, self.c_den = context.filter_finest if finest else context.filter_coarse

    def score(self, part):
        return _score(self.be, self.g, part, self.balance)

    def propagate(self, part, locked, pwgts, loose: bool):
        be, g = self.be, self.g
        request = MoveRequest(0, locked, self.c_num, self.c_den, nparts=self.balance.nparts)
        dest, gain = best_moves(be, g, part, request)
        _, moved = afterburner(be, g, part, dest, gain, request)
        locked, part = cap_inflow(be, g, part, moved, gain, self.maxpwgt, pwgts, loose=loose,
                                  slack=self.context.inflow_slack)
        return part, locked

    def rebalance(self, part, pwgts):
        return rebalance_step(self.be, self.g, part, self.balance, pwgts)


def _refine_host(be: Backend, g: DeviceGraph, part, *, balance: Balance,
                 context: RefinementContext, finest: bool, patience: int):
    steps = JetSteps(be, g, balance, context, finest)
    return loop_on_host(be, steps, part, patience)
