"""The gpu engine's Jet loop, driven from the device.

Same iterations and result as the host loop of ``jet.refine`` (its twin), but the choice
between label propagation and rebalancing, the score and the best-state bookkeeping run on the
GPU (``jet_device.cu``), so an iteration needs no round trip. An iteration's score is the last
one's plus what its moved vertices change. Where every kernel takes every row (meshes, roads:
no warp or block versions are needed), the whole loop is one cooperative kernel, ``jet_loop``,
its steps separated by grid-wide barriers instead of kernel launches. Elsewhere one iteration
is captured once per level as a CUDA graph and replayed; the host reads only the iteration and
stale counts, every few replays, and iterations after the stop run no kernel work.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.jet import (
    IMPROVEMENT,
    MAX_ITERATIONS,
    MAX_SHARED_PARTS,
    MoveRequest,
    always_on,
    launch_afterburner,
    launch_best_moves,
    launch_score,
    score_shared_mem,
)
from gpmetis.refinement.rebalance import (
    INFLOW_SLACK,
    NUM_DIGITS,
    id_shifts,
    launch_cap_inflow,
    launch_select,
    select_buffers,
)

CU_FILE = Path(__file__).with_name("jet_device.cu")
CTL_SIZE = 8
CTL_STALE = 4
CTL_ITERATIONS = 5
GATE_LP, GATE_REBALANCE, GATE_RUN = range(3)  # as in jet_device.cu
NUM_GATES = 4  # the fourth, GATE_BEST, is written and read on the device only
CONTROL_BLOCK = 1024
REPLAYS_BETWEEN_CHECKS = 4


def fusable(g: DeviceGraph) -> bool:
    """Whether ``jet_loop`` can refine ``g``: no row needs a block (none is longer than
    HEAVY_DEGREE)."""
    return g.degree_tiers()[2] is None


class DeviceRefiner:
    """Refines partitions of one level as ``jet.refine``'s host loop does: (best partition,
    iterations run) = refiner(part). Its buffers (and, unless ``fused``, its captured
    iteration) are made at construction, so a level can be prepared before its starting
    partition exists. The loop runs as one ``jet_loop`` where ``fuse`` and ``fusable``
    (``fused``); both ways give the same result."""

    def __init__(self, be: Backend, g: DeviceGraph, nparts: int, maxpwgt: np.ndarray, *,
                 c_num: int, c_den: int, patience: int, fuse: bool = True) -> None:
        xp = be.xp
        n = g.nvtxs
        self.be, self.g, self.nparts, self.patience = be, g, nparts, patience
        self.fused = fuse and fusable(g)
        self.cur, nxt = xp.empty(n, dtype=xp.int32), xp.empty(n, dtype=xp.int32)
        self.locked, next_locked = xp.zeros(n, dtype=xp.uint8), xp.empty(n, dtype=xp.uint8)
        self.best = xp.empty(n, dtype=xp.int32)
        dest = xp.empty(n, dtype=xp.int32)
        gain = xp.empty(n, dtype=xp.int32)
        self.limits = xp.asarray(maxpwgt, dtype=xp.int64)
        self.acc = xp.zeros(nparts + 1, dtype=xp.uint64)
        self.pw = xp.empty(nparts, dtype=xp.int64)
        room = xp.empty(nparts, dtype=xp.int64)
        roomiest = xp.empty(1, dtype=xp.int32)
        hist = xp.zeros(nparts * NUM_DIGITS, dtype=xp.uint64)
        inflow = (dest, hist, xp.zeros(nparts, dtype=xp.uint64),
                  xp.empty(nparts, dtype=xp.int64))
        self.ctl = xp.zeros(CTL_SIZE, dtype=xp.int64)
        self.gates = xp.zeros(NUM_GATES, dtype=xp.int32)
        sel, base = select_buffers(g, nparts)
        if self.fused:
            outflow, limit = inflow[2:]
            max_degree, mid, _ = g.degree_tiers()
            nmid = 0 if mid is None else len(mid)
            mid = g.scratch("dummy32", 1, xp.int32) if mid is None else mid
            tables = g.row_hash_tables(max_degree)
            self._loop = (
                np.int32(n), np.int32(nparts), g.xadj, g.adjncy, g.adjwgt, g.vwgt, max_degree,
                mid, np.int32(nmid), self.limits, np.int64(patience), np.int64(MAX_ITERATIONS),
                np.int64(c_num), np.int64(c_den), np.int64(INFLOW_SLACK),
                np.float64(1 - IMPROVEMENT),
                *(np.int32(shift) for shift in id_shifts(n)), *tables, self.cur, nxt, self.best,
                self.locked, next_locked, dest, gain, self.pw, self.ctl, room, roomiest,
                self.gates, self.acc, hist, outflow, limit, sel, base)
            return
        split = nparts <= MAX_SHARED_PARTS  # as the launches decide
        warp_split = g.warp_split(split)
        tables = g.row_hash_tables(warp_split[0])
        gate = [self.gates[i:i + 1] for i in range(NUM_GATES)]
        begin, commit = be.kernel(CU_FILE, "jet_begin"), be.kernel(CU_FILE, "jet_commit")
        cur, locked = self.cur, self.locked

        def iteration() -> None:
            be.launch_blocks(begin, 1, (np.int32(nparts), self.limits, np.int64(patience),
                                        np.int64(MAX_ITERATIONS), self.pw, self.ctl, room,
                                        roomiest, self.gates), block=CONTROL_BLOCK)
            lp = MoveRequest(0, locked, c_num, c_den, room)
            launch_best_moves(be, g, cur, nparts, lp, dest, gain, gate[GATE_LP])
            launch_afterburner(be, g, cur, dest, gain, nparts, next_locked, nxt, gate[GATE_LP])
            launch_cap_inflow(be, g, cur, nxt, gain, nparts, room, self.limits, inflow,
                              next_locked, gate[GATE_LP])
            rb = MoveRequest(1, locked, room=room)
            launch_best_moves(be, g, cur, nparts, rb, dest, gain, gate[GATE_REBALANCE])
            launch_select(be, g, cur, nparts, room, roomiest, dest, gain, hist, nxt,
                          gate[GATE_REBALANCE])
            launch_score(be, g, nxt, self.acc, gate[GATE_RUN], prev=cur)
            self._finish(0)
            be.launch_resident(commit, n, (self.gates, np.int32(n), nxt, self.best, cur,
                                           next_locked, locked))

        # the captured graph holds raw pointers: every array it uses lives as long as self
        self._captured = (g.xadj, g.adjncy, g.adjwgt, g.vwgt, nxt, next_locked, dest, gain,
                          room, roomiest, hist, inflow, (sel, base), g.heavy_split(split),
                          warp_split, tables)
        self.replay = be.capture(iteration)  # everything it launches exists by now

    def _finish(self, init: int) -> None:
        self.be.launch_blocks(
            self.be.kernel(CU_FILE, "jet_end"), 1,
            (np.int32(init), np.int32(self.nparts), self.limits, np.float64(1 - IMPROVEMENT),
             self.acc, self.pw, self.ctl, self.gates), block=CONTROL_BLOCK)

    def __call__(self, part):
        """(best partition, iterations run) from ``part`` (int32, copied, not changed); the
        best partition is this refiner's buffer, overwritten by its next call."""
        self.cur[...] = part
        self.best[...] = part
        self.locked.fill(0)
        self.acc.fill(0)
        launch_score(self.be, self.g, self.cur, self.acc, always_on(self.be))
        self._finish(1)
        if self.fused:
            # a thread per vertex and digit of the selects, and a block per part: the parts'
            # thresholds are found at once
            blocks = max(-(-self.g.nvtxs // NUM_DIGITS), self.nparts)
            self.be.launch_cooperative(self.be.kernel(CU_FILE, "jet_loop"), blocks, self._loop,
                                       shared_mem=score_shared_mem(self.nparts),
                                       block=NUM_DIGITS)
            return self.best, int(self.ctl[CTL_ITERATIONS].get())
        replays = self.patience
        while True:
            for _ in range(replays):
                self.replay()
            state = self.ctl.get()
            if state[CTL_ITERATIONS] >= MAX_ITERATIONS or state[CTL_STALE] >= self.patience:
                return self.best, int(state[CTL_ITERATIONS])
            replays = REPLAYS_BETWEEN_CHECKS
