"""The Jet refiner: its loop of label-propagation and rebalancing steps (``jet``'s and
``rebalance``'s) on the host, the twin of the loop ``jet_device`` runs on the GPU.

A label-propagation step fills each part only up to its limit, except after such a step that
did not lower the cut by > 0.1%: the next one is loose, it may overfill parts by some slack, and
rebalancing then restores the limits. The loop keeps the best state seen (least overweight, then
lowest cut) and stops after ``patience`` iterations without a > 0.1% improvement.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.jet import (
    FILTER_COARSE,
    FILTER_FINEST,
    IMPROVEMENT,
    MAX_ITERATIONS,
    MoveRequest,
    afterburner,
    best_moves,
    partition_state,
)
from gpmetis.refinement.jet_device import DeviceRefiner
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


def _refine_host(be: Backend, g: DeviceGraph, part, *, nparts: int, maxpwgt: np.ndarray,
                 c_num: int, c_den: int, patience: int, group_size: int):
    xp = be.xp
    locked = xp.zeros(g.nvtxs, dtype=xp.uint8)
    best_score, pwgts = _score(be, g, part, nparts, maxpwgt)
    best = part.copy()
    score = best_score
    stale = 0
    iterations = 0
    loose = False
    while iterations < MAX_ITERATIONS and stale < patience:
        iterations += 1
        cut = score[1]
        lp = score[0] == 0
        if lp:
            dest, gain = best_moves(be, g, part, nparts, MoveRequest(0, locked, c_num, c_den))
            _, moved = afterburner(be, g, part, dest, gain, nparts)
            locked, part = cap_inflow(be, g, part, moved, gain, nparts, maxpwgt, pwgts,
                                      loose=loose)
        else:
            part = rebalance_step(be, g, part, nparts, maxpwgt, pwgts, group_size=group_size)
            locked[:] = 0
        score, pwgts = _score(be, g, part, nparts, maxpwgt)
        if lp:
            loose = not loose and score[1] >= (1 - IMPROVEMENT) * cut
        if score < best_score:
            big = score[0] < best_score[0] or score[1] < (1 - IMPROVEMENT) * best_score[1]
            best, best_score = part.copy(), score
            stale = 0 if big else stale + 1
        else:
            stale += 1
    return best, iterations
