"""The gpu engine's Jet loop, run on the device as one kernel per level.

Same iterations and result as ``jet_refiner.refine``'s host loop (``loop``, its twin), but the
whole loop of a level is one cooperative kernel, ``jet_loop`` (``jet_device.cu``): the choice
between label propagation and rebalancing, the moves, the score and the best-state bookkeeping
run as steps separated by grid-wide barriers, with no kernel launch or host round trip until the
level stops. An iteration's score is the last one's plus what its moved vertices change.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend, loop_blocks
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.jet import MAX_SHARED_PARTS, score_shared_mem
from gpmetis.refinement.rebalance import (
    NUM_DIGITS,
    NUM_LEVELS,
    id_shifts,
    select_buffers,
)

CU_FILE = Path(__file__).with_name("jet_device.cu")
CTL_SIZE = 8
CTL_ITERATIONS = 5  # as in jet_device.cu
NUM_GATES = 5  # as in jet_device.cu


class DeviceRefiner:
    """Refines partitions of one level as ``jet_refiner.refine``'s host loop does: (best partition,
    iterations run) = refiner(part). Its buffers are made at construction, so a level can be
    prepared before its starting partition exists. ``balance``, ``context``, ``finest``: as
    ``jet_refiner.refiner``'s."""

    def __init__(self, be: Backend, g: DeviceGraph, balance: Balance, *,
                 context: RefinementContext, finest: bool, patience: int) -> None:
        xp = be.xp
        c_num, c_den = context.filter_finest if finest else context.filter_coarse
        n, nparts, group_size = g.nvtxs, balance.nparts, balance.group_size
        self.be = be
        # rows by length as the kernels take them; blocks keep a count per part in shared memory
        split = nparts <= MAX_SHARED_PARTS
        max_degree, mid, heavy = g.warp_split(split)
        lists = g.id_list_args(mid, heavy)  # mid, nmid, heavy, nheavy
        # jet_loop's arrays as slices of four allocations (an allocation each made the
        # construction's host time, which the large levels wait for and the small ones spend
        # beside the METIS trials, twice as long): per vertex part, moved, best, dest, gain
        # (int32) and locked, next_locked (uint8); ctl, then per part pw, room, limit (int64),
        # outflow, acc and the select's histogram (uint64), all zero
        part, moved, self.best, dest, gain = be.carve((n,) * 5, xp.int32)
        locks = be.carve((n, n), xp.uint8)
        books = (CTL_SIZE, *(nparts,) * 4, nparts + 1, NUM_DIGITS * nparts)
        self.ctl, pw, room, limit, outflow, acc, hist = be.carve(books, xp.int64,
                                                                 zeroed=len(books))
        outflow, acc, hist = (a.view(xp.uint64) for a in (outflow, acc, hist))
        # the selects' level flags (zero), roomiest (rebalance.roomiest_parts's) and the gates
        nroomiest = 2 * (nparts // group_size) if group_size else 1
        opened, roomiest, gates = be.carve((NUM_LEVELS - 1, nroomiest, NUM_GATES), xp.int32,
                                           zeroed=1)
        # jet_loop's state in its order (the loop sets each before it reads it)
        state = (part, moved, self.best, *locks, dest, gain, pw, self.ctl, room, opened,
                 roomiest, gates, acc)
        self._args = (
            np.int32(n), np.int32(nparts), g.xadj, g.adjncy, g.adjwgt, g.vwgt, max_degree,
            *lists, xp.asarray(balance.limits_on(be), dtype=xp.int64),
            np.int64(patience), np.int64(context.max_iterations), np.int64(c_num),
            np.int64(c_den), np.int64(context.inflow_slack), np.float64(1 - context.improvement),
            *(np.int32(shift) for shift in id_shifts(n)), np.int32(group_size),
            *g.row_hash_tables(max_degree),
            *state, hist, outflow, limit, *select_buffers(g, nparts))
        self._shared_mem = max(score_shared_mem(nparts), 4 * nparts * (heavy is not None))
        # a thread per vertex and digit of the selects, a warp per mid row, a block per part
        # (the parts' thresholds are found at once) and per heavy row
        self._blocks = loop_blocks(n, NUM_DIGITS, int(lists[1]), max(nparts, int(lists[3])))

    def __call__(self, part):
        """(best partition, iterations run) from ``part`` (int32, copied, not changed), queued
        without waiting for the level to end: the iterations are a device scalar (``int``
        reads it); both are this refiner's buffers, overwritten by its next call."""
        be = self.be
        be.launch_cooperative(be.kernel(CU_FILE, "jet_loop"), self._blocks, (*self._args, part),
                              shared_mem=self._shared_mem, block=NUM_DIGITS)
        return self.best, self.ctl[CTL_ITERATIONS]
