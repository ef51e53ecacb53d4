"""The Jet refiner: its label-propagation and rebalancing steps (``jet``'s and
``rebalance``'s) run by the host loop (``loop``), the twin of the loop ``jet_device`` runs on
the GPU."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.jet import (
    FILTER_COARSE,
    FILTER_FINEST,
    MoveRequest,
    afterburner,
    best_moves,
    partition_state,
)
from gpmetis.refinement.jet_device import DeviceRefiner
from gpmetis.refinement.loop import loop_on_host
from gpmetis.refinement.rebalance import cap_inflow, rebalance_step


def score_state(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray
                ) -> tuple[int, int]:
    """(total overweight over ``maxpwgt``, edgecut) of ``part``: smaller is better."""
    return _score(be, g, part, nparts, maxpwgt)[0]


def _score(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray):
    """((total overweight, edgecut), part weights): smaller scores are better."""
    cut, pw = partition_state(be, g, part, nparts)
    return (int(np.maximum(pw - maxpwgt, 0).sum()), cut), pw


def refiner(be: Backend, g: DeviceGraph, nparts: int, maxpwgt: np.ndarray, *, finest: bool,
            patience: int, group_size: int = 0) -> Callable:
    """A function from a partition of ``g`` to (the best partition Jet iterations find from
    it, iterations run: on the GPU a device scalar that ``int`` reads, so that the next level
    can be queued before this one ends); ``maxpwgt`` holds the part weight limits (int64, on
    the host or the backend). ``group_size``: rebalancing keeps vertices in their group of that
    many parts (``rebalance_step``'s), as label propagation does where edges join only parts of
    one group.
    On the GPU the level's buffers are made now (jet_device.py runs the loop on the device);
    the host loop here is its twin."""
    c_num, c_den = FILTER_FINEST if finest else FILTER_COARSE
    if be.gpu:
        return DeviceRefiner(be, g, nparts, maxpwgt, c_num=c_num, c_den=c_den,
                             patience=patience, group_size=group_size)
    return functools.partial(_refine_host, be, g, nparts=nparts, maxpwgt=maxpwgt, c_num=c_num,
                             c_den=c_den, patience=patience, group_size=group_size)


def refine(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray, *,
           finest: bool, patience: int):
    """(best partition found by Jet iterations from ``part``, iterations run), as the
    ``refiner`` gives them."""
    return refiner(be, g, nparts, maxpwgt, finest=finest, patience=patience)(part)


class JetSteps:
    """Jet's label propagation (with the afterburner and the cap on inflow) and rebalancing
    (vertices kept in their group of ``group_size`` parts) of ``g`` against ``maxpwgt``."""

    settle = None

    def __init__(self, be: Backend, g: DeviceGraph, nparts: int, maxpwgt: np.ndarray,
                 c_num: int, c_den: int, group_size: int) -> None:
        self.be, self.g, self.nparts, self.maxpwgt = be, g, nparts, maxpwgt
        self.c_num, self.c_den, self.group_size = c_num, c_den, group_size

    def score(self, part):
        return _score(self.be, self.g, part, self.nparts, self.maxpwgt)

    def propagate(self, part, locked, pwgts, loose: bool):
        be, g, nparts = self.be, self.g, self.nparts
        dest, gain = best_moves(be, g, part, nparts,
                                MoveRequest(0, locked, self.c_num, self.c_den))
        _, moved = afterburner(be, g, part, dest, gain, nparts)
        locked, part = cap_inflow(be, g, part, moved, gain, nparts, self.maxpwgt, pwgts,
                                  loose=loose)
        return part, locked

    def rebalance(self, part, pwgts):
        return rebalance_step(self.be, self.g, part, self.nparts, self.maxpwgt, pwgts,
                              group_size=self.group_size)


def _refine_host(be: Backend, g: DeviceGraph, part, *, nparts: int, maxpwgt: np.ndarray,
                 c_num: int, c_den: int, patience: int, group_size: int):
    steps = JetSteps(be, g, nparts, maxpwgt, c_num, c_den, group_size)
    return loop_on_host(be, g, steps, part, patience)
