"""The gpu engine's Jet loop, driven from the device.

Same iterations and result as the host loop of ``jet.refine`` (its twin), but the choice
between label propagation and rebalancing, the score and the best-state bookkeeping run on the
GPU (``jet_device.cu``), so an iteration needs no round trip. One iteration is captured once
per level as a CUDA graph and replayed; the host reads only the iteration and stale counts,
every few replays. Iterations after the stop run no kernel work.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.jet import (
    IMPROVEMENT,
    MAX_ITERATIONS,
    MoveRequest,
    always_on,
    launch_afterburner,
    launch_best_moves,
    launch_score,
)
from gpmetis.refinement.rebalance import (
    NUM_DIGITS,
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


def refine_on_device(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray, *,
                     c_num: int, c_den: int, patience: int):
    """(best partition, iterations run), as ``jet.refine``'s host loop computes them."""
    xp = be.xp
    n = g.nvtxs
    cur, nxt = part, xp.empty(n, dtype=xp.int32)  # part is refined in place
    locked, next_locked = xp.zeros(n, dtype=xp.uint8), xp.empty(n, dtype=xp.uint8)
    best = part.copy()
    dest = xp.empty(n, dtype=xp.int32)
    gain = xp.empty(n, dtype=xp.int32)
    limits = xp.asarray(maxpwgt, dtype=xp.int64)
    acc = xp.zeros(nparts + 1, dtype=xp.uint64)
    pw = xp.empty(nparts, dtype=xp.int64)
    room = xp.empty(nparts, dtype=xp.int64)
    roomiest = xp.empty(1, dtype=xp.int32)
    hist = xp.zeros(nparts * NUM_DIGITS, dtype=xp.uint64)
    inflow = (dest, hist, xp.zeros(nparts, dtype=xp.uint64), xp.empty(nparts, dtype=xp.int64))
    ctl = xp.zeros(CTL_SIZE, dtype=xp.int64)
    gates = xp.zeros(NUM_GATES, dtype=xp.int32)
    gate = [gates[i:i + 1] for i in range(NUM_GATES)]
    begin, end = be.kernel(CU_FILE, "jet_begin"), be.kernel(CU_FILE, "jet_end")
    commit = be.kernel(CU_FILE, "jet_commit")
    keep_factor = np.float64(1 - IMPROVEMENT)

    def finish(init: int) -> None:
        be.launch_blocks(end, 1, (np.int32(init), np.int32(nparts), limits, keep_factor, acc, pw,
                                  ctl, gates), block=CONTROL_BLOCK)

    def iteration() -> None:
        be.launch_blocks(begin, 1, (np.int32(nparts), limits, np.int64(patience),
                                    np.int64(MAX_ITERATIONS), pw, ctl, room, roomiest, gates),
                         block=CONTROL_BLOCK)
        lp = MoveRequest(0, locked, c_num, c_den, room)
        launch_best_moves(be, g, cur, nparts, lp, dest, gain, gate[GATE_LP])
        launch_afterburner(be, g, cur, dest, gain, nparts, next_locked, nxt, gate[GATE_LP])
        launch_cap_inflow(be, g, cur, nxt, gain, nparts, room, limits, inflow, next_locked,
                          gate[GATE_LP])
        rb = MoveRequest(1, locked, room=room)
        launch_best_moves(be, g, cur, nparts, rb, dest, gain, gate[GATE_REBALANCE])
        launch_select(be, g, cur, nparts, room, roomiest, dest, gain, hist, nxt,
                      gate[GATE_REBALANCE])
        launch_score(be, g, nxt, acc, gate[GATE_RUN])
        finish(0)
        be.launch(commit, n, (gates, np.int32(n), nxt, best, cur, next_locked, locked))

    launch_score(be, g, cur, acc, always_on(be))
    finish(1)
    # everything the capture launches must exist first: a capture may not allocate or sync
    g.row_hash_tables()
    select_buffers(g, nparts)
    g.heavy_split()
    stream = xp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        iteration()
        graph = stream.end_capture()
    replays = patience
    while True:
        for _ in range(replays):
            graph.launch()
        state = ctl.get()
        if state[CTL_ITERATIONS] >= MAX_ITERATIONS or state[CTL_STALE] >= patience:
            return best, int(state[CTL_ITERATIONS])
        replays = REPLAYS_BETWEEN_CHECKS
