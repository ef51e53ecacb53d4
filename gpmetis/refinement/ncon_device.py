"""The gpu engine's multi-constraint refinement loop, run on the device as one kernel per level.

Same iterations and result as ``ncon_refiner.refine``'s host loop (``loop``, its twin), but
a level's loop is one cooperative kernel, ``mc_loop`` (``ncon_device.cu``): the choice between
label propagation and rebalancing, the moves, the score and the best-state bookkeeping run as
steps separated by grid-wide barriers. The host steps in only when a rebalancing step keeps no
move: it runs ``swap_step`` and the kernel resumes from the swapped partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpmetis.backend import Backend, loop_blocks
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.jet import MAX_SHARED_PARTS, score_shared_mem
from gpmetis.refinement.ncon import SHARED_GROUPS, score_state, swap_step
from gpmetis.refinement.rebalance import NUM_DIGITS, id_shifts

CU_FILE = Path(__file__).with_name("ncon_device.cu")
LEVELS = 4  # as MC_LEVELS in ncon.cu: cost key high and low digits, id high and low
CTL_SIZE = 6  # as MC_CTL_SIZE in ncon_device.cu
CTL_ITERATIONS, CTL_SWAP = 3, 4
NUM_GATES = 5


@dataclass
class _Work:
    """The selections' buffers for one level: per vertex the item's destination, key and
    a rebalancing's credit; per (constraint, part) group the select's histogram (zero between
    uses), digits and base; per part the first (key, id) of a rebalancing's destination; the
    kept count; and each constraint's total (at least 1) as float64."""

    to: object
    ckey: object
    credit: object
    hist: object
    sel: object
    base: object
    first: object
    kept: object
    scale: object

    @classmethod
    def make(cls, be: Backend, n: int, balance: Balance) -> _Work:
        xp = be.xp
        nparts, totals = balance.nparts, balance.totals
        groups = balance.ncon * nparts
        to, ckey = be.carve((n, n), xp.int32)
        hist, first, kept = be.carve((groups * NUM_DIGITS, nparts, 1), xp.uint64, zeroed=1)
        return cls(to, ckey, xp.empty(n, dtype=xp.float64), hist,
                   xp.empty(groups * LEVELS, dtype=xp.int32),
                   xp.empty(groups, dtype=xp.int64), first, kept,
                   xp.asarray(np.maximum(totals, 1).astype(np.float64)))


class DeviceLoop:
    """Refines partitions of one level as ``ncon_refiner.refine``'s host loop does: (best
    partition, iterations run) = loop(part). ``weights``: (ncon, n) int32 on the device."""

    def __init__(self, be: Backend, g: DeviceGraph, weights, balance: Balance, *,
                 context: RefinementContext, finest: bool, patience: int,
                 tolerance: float) -> None:
        xp = be.xp
        c_num, c_den = context.filter_finest if finest else context.filter_coarse
        n, ncon, nparts = g.nvtxs, balance.ncon, balance.nparts
        groups = ncon * nparts
        self.be, self.g, self.weights, self.nparts, self.balance = be, g, weights, nparts, balance
        split = nparts <= MAX_SHARED_PARTS
        max_degree, mid, heavy = g.warp_split(split)
        lists = g.id_list_args(mid, heavy)  # mid, nmid, heavy, nheavy
        work = _Work.make(be, n, balance)
        part, moved, self.best, self.cur, dest, gain = be.carve((n,) * 6, xp.int32)
        locks = be.carve((n, n), xp.uint8)
        # ctl then pw (one read-back when the loop stops), the per-group rooms, bm_room,
        # roomiest
        books = be.carve((CTL_SIZE + groups, *(groups,) * 4, nparts, ncon), xp.int64)
        self._ctl_pw = books[0]
        self.ctl, self.pw = books[0][:CTL_SIZE], books[0][CTL_SIZE:]
        acc, pwacc = be.carve((nparts + 1, groups), xp.uint64)
        fctl = xp.zeros(2, dtype=xp.float64)
        gates = xp.zeros(NUM_GATES, dtype=xp.int32)
        limits = xp.asarray(balance.limits.ravel(), dtype=xp.int64)
        slack = xp.asarray((balance.limits // context.inflow_slack).ravel(), dtype=xp.int64)
        shared = groups <= SHARED_GROUPS
        self._args = (
            np.int32(n), np.int32(ncon), np.int32(nparts), g.xadj, g.adjncy, g.adjwgt, g.vwgt,
            max_degree, *lists, weights, limits, slack, work.scale, np.int32(shared),
            np.float64(tolerance), np.int64(patience), np.int64(context.max_iterations),
            np.int64(c_num), np.int64(c_den), np.float64(1 - context.improvement),
            np.float64(1 - context.ncon_settle), *(np.int32(s) for s in id_shifts(n)),
            np.int32(balance.adjacent_only))
        self._state = (*g.row_hash_tables(max_degree), part, moved, self.best, self.cur, *locks,
                       dest, gain, self.ctl, fctl, gates, acc, pwacc, self.pw, *books[1:],
                       work.to, work.ckey, work.hist, work.sel, work.base, work.first,
                       work.credit, work.kept)
        self._shared_mem = max(score_shared_mem(nparts), 4 * nparts * (heavy is not None),
                               8 * groups * shared)
        # a thread per vertex and digit of the selects, a warp per mid row, a block per group
        # (their thresholds are found at once) and per heavy row
        self._blocks = loop_blocks(n, NUM_DIGITS, int(lists[1]), max(groups, int(lists[3])))

    def __call__(self, part):
        """(best partition, iterations run) from ``part`` (int32, not changed): the loop's
        kernel, and ``swap_step`` on the host whenever a rebalancing step keeps no move. The
        partition is this loop's buffer, overwritten by its next call."""
        be, kernel = self.be, self.be.kernel(CU_FILE, "mc_loop")
        start, resume = part, 0
        while True:
            be.launch_cooperative(kernel, self._blocks,
                                  (*self._args, np.int32(resume), *self._state, start),
                                  shared_mem=self._shared_mem, block=NUM_DIGITS)
            books = self._ctl_pw.get()
            if not books[CTL_SWAP]:
                return self.best, int(books[CTL_ITERATIONS])
            pwgts = books[CTL_SIZE:].reshape(self.balance.ncon, self.nparts)
            start = swap_step(be, self.g, self.weights, self.cur, self.balance, pwgts)
            if start is self.cur:
                # nor does a swap: the loop would change nothing more (the host loop stops
                # there too, that rebalancing iteration counted)
                return self.best, int(books[CTL_ITERATIONS]) + 1
            resume = 1


def refine_each(g: DeviceGraph, weights, parts: list, balance: Balance, *,
                context: RefinementContext, patience: int,
                tolerance: float) -> list[tuple[np.ndarray, float, int]]:
    """(partition on the host, excess, edgecut) of each host partition in ``parts`` after the
    coarse levels' refinement on the device, as ``refine_on_host`` gives them: one loop's
    buffers serve them all."""
    be = g.be
    loop = DeviceLoop(be, g, weights, balance, context=context, finest=False, patience=patience,
                      tolerance=tolerance)
    out = []
    for part in parts:
        best, _ = loop(be.asarray(part, dtype=be.xp.int32))
        (excess, cut), _ = score_state(be, g, weights, best, balance)
        out.append((be.asnumpy(best), excess, cut))
    return out
