"""Rebalancing: move the cheapest vertices out of overweight parts into parts with room.

One step: every vertex of an overweight part gets its best adjacent destination with room (or,
when none is adjacent, the part with the most room) and a loss. Per source part, vertices are
taken in (loss bucket, id) order until its excess is covered; per destination, the taken moves
are kept in the same order while they fit. The order is resolved by a radix select over three
digits (loss bucket, two 8-bit digits of the id), so no sort is needed and the choice does not
depend on thread order; ids are only resolved to their top 16 bits, and within the last id range
of a part sources take all, destinations none. The GPU path runs the kernels of
``rebalance.cu``; ``rebalanced`` is their twin.

The same destination selection caps what a label-propagation step moves into each part
(``cap_inflow``): highest gains first, while they fit in the part's room, or in a loose step its
room plus some slack and what the step moves out of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpmetis.backend import Backend, backend_of
from gpmetis.balance import Balance
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import part_weights
from gpmetis.refinement.jet import MoveRequest, best_moves

CU_FILE = Path(__file__).with_name("rebalance.cu")
NUM_DIGITS = 256
NUM_LEVELS = 3
NEG_LOSSES = 16
MAX_BUCKET = 127


def rebalance_step(be: Backend, g: DeviceGraph, part, balance: Balance, pwgts: np.ndarray):
    """One rebalancing round from host part weights ``pwgts`` and ``balance``'s limits (its
    first constraint); returns a new part array (or ``part`` itself when no part is
    overweight). With groups of ``balance.group_size`` parts (0: none), a vertex that no
    adjacent part with room can take heads for the roomiest other part of its group instead of
    the roomiest part of all: where edges join only parts of one group (a piece's pair, a
    copy's k parts), no vertex leaves its group."""
    room = balance.limits[0] - pwgts
    if not (room < 0).any():
        return part
    group_size = balance.group_size
    room_d = be.asarray(room)
    dest, gain = best_moves(be, g, part, MoveRequest(1, room=room_d, nparts=balance.nparts))
    # Vertices with no adjacent part that has room head for the roomiest part (of their
    # group), at a loss of their whole internal connectivity (cheap for the many low-degree
    # vertices of power-law graphs, so they must stay candidates).
    return rebalance_moves(be, g, part, room, dest, gain, group_size, VertexOrder.of(g.nvtxs))


def rebalance_moves(be: Backend, g: DeviceGraph, part, room: np.ndarray, dest, gain,
                    group_size: int, order: VertexOrder):
    """The new partition of a rebalancing round of g's vertices, ordered among all by
    ``order``, from best_moves' (mode 1) ``dest``/``gain`` and the host ``room`` per part (on
    the GPU, ``dest`` is overwritten)."""
    roomiest = roomiest_parts(room, group_size)
    if be.gpu:
        return _select_cuda(be, g, part, be.asarray(room), dest, gain, roomiest, group_size,
                            order)
    return rebalanced(part, room, dest, gain, g.vwgt, roomiest, group_size, order)


def roomiest_parts(room: np.ndarray, group_size: int) -> np.ndarray:
    """What rebalance.cu's fallback_part reads (int32): without groups the first part with the
    most ``room``; with groups of ``group_size`` (>= 2) parts each group's part with the most
    room and the one with the second most (the lower id of equals first), as group_roomiest."""
    if not group_size:
        return np.array([np.argmax(room)], dtype=np.int32)
    rows = np.asarray(room, dtype=np.int64).reshape(-1, group_size)
    first = np.argmax(rows, axis=1)
    others = rows.copy()
    others[np.arange(len(rows)), first] = np.iinfo(np.int64).min
    second = np.argmax(others, axis=1)
    base = np.arange(len(rows)) * group_size
    return np.stack([base + first, base + second], axis=1).reshape(-1).astype(np.int32)


def fallback_parts(part: np.ndarray, roomiest: np.ndarray, group_size: int) -> np.ndarray:
    """Twin of rebalance.cu's fallback_part for each entry of ``part`` (int32)."""
    xp = backend_of(part).xp
    roomiest = xp.asarray(roomiest)
    if not group_size:
        return xp.full(len(part), roomiest[0], dtype=np.int32)
    first = roomiest[2 * (part // group_size)]
    return xp.where(first != part, first, roomiest[2 * (part // group_size) + 1]).astype(np.int32)


def id_shifts(n: int) -> tuple[int, int]:
    """Right shifts of a vertex id that give its high and low 8-bit order digits."""
    bits = max(n - 1, 0).bit_length()
    return max(bits - 8, 0), max(bits - 16, 0)


def _select_cuda(be: Backend, g: DeviceGraph, part, room, dest, gain, roomiest: np.ndarray,
                 group_size: int, order: VertexOrder):
    xp = be.xp
    out = xp.empty(g.nvtxs, dtype=xp.int32)
    launch_select(be, g, part, room, xp.asarray(roomiest, dtype=xp.int32), dest, gain,
                  xp.zeros(len(room) * NUM_DIGITS, dtype=xp.uint64), out, group_size=group_size,
                  order=order)
    return out


def select_buffers(g: DeviceGraph, nparts: int):
    """launch_select's work arrays: sel (int32 per part and level), base (int64 per part)."""
    xp = g.be.xp
    return (g.scratch("rb_sel", nparts * NUM_LEVELS, xp.int32),
            g.scratch("rb_base", nparts, xp.int64))


def launch_select(be: Backend, g: DeviceGraph, part, room, roomiest, dest, gain, hist, out, *,
                  group_size: int, order: VertexOrder) -> None:
    """Queue the selection of a rebalancing round from best_moves' (mode 1) ``dest``/``gain``:
    ``out`` = the new partition; ``dest`` is overwritten (it holds the items' destinations).
    ``room`` (int64 per part) and ``roomiest`` (int32, ``roomiest_parts``) live on the device;
    ``hist`` (uint64, nparts * 256) must be zero and is left zero. ``group_size``: as
    rebalance_step's; ``order``: where g's vertices stand among all."""
    n = g.nvtxs
    ids = order.kernel_args()
    sel, _ = select_buffers(g, len(room))
    be.launch_resident(be.kernel(CU_FILE, "rebalance_prepare"), n,
                       (np.int32(n), part, g.vwgt, gain, room, roomiest, np.int32(group_size),
                        dest, hist))
    _launch_select_pass(be, g, 1, room, dest, part, gain, hist, order)
    be.launch_resident(be.kernel(CU_FILE, "rebalance_take"), n,
                       (np.int32(n), part, dest, gain, g.vwgt, sel, *ids[:2], hist, ids[2]))
    _launch_select_pass(be, g, 0, room, dest, part, gain, hist, order)
    be.launch_resident(be.kernel(CU_FILE, "rebalance_apply"), n,
                       (np.int32(n), part, dest, gain, sel, *ids[:2], out, ids[2]))


def _launch_select_pass(be: Backend, g: DeviceGraph, source: int, room, to, part, gain,
                        hist, order: VertexOrder) -> None:
    """The radix select of one side (sources or destinations) over the items in ``to``, from
    the level-0 histogram already in ``hist``; ``room``: int64 per part. Each level's
    histogram is summed by ``order.reduce`` where the other ranks hold the other vertices."""
    n, nparts = g.nvtxs, len(room)
    ids = order.kernel_args()
    sel, base = select_buffers(g, nparts)
    threshold = be.kernel(CU_FILE, "select_threshold")
    digit_hist = be.kernel(CU_FILE, "select_digit_hist")
    for level in range(NUM_LEVELS):
        if level:
            be.launch_resident(digit_hist, n,
                               (np.int32(n), np.int32(level), np.int32(source), to, part,
                                gain, g.vwgt, sel, *ids[:2], hist, ids[2]))
        order.reduce_in_place(hist)
        be.launch_blocks(threshold, nparts, (np.int32(level), np.int32(source), room,
                                             hist, sel, base), block=NUM_DIGITS)


def cap_inflow(be: Backend, g: DeviceGraph, part, moved, gain, maxpwgt, pwgts: np.ndarray, *,
               loose: bool, slack: int, order: VertexOrder | None = None):
    """(keep, capped): a label-propagation step from ``part`` to ``moved`` with, per destination,
    only the highest-gain moves (gain bucket, then id) that fit in its room (host
    ``maxpwgt``/``pwgts``), or with ``loose`` in its room plus maxpwgt // ``slack`` plus what
    the step moves out of it. ``keep`` is the uint8 mask of the moves kept; ``gain`` is
    consumed on the GPU. ``order``: where g's vertices stand among all (g's alone where
    None)."""
    order = order or VertexOrder.of(g.nvtxs)
    if not be.gpu:
        keep = inflow_kept(part, moved, gain, g.vwgt, maxpwgt, pwgts, loose, slack, order)
        return keep.astype(np.uint8), be.xp.where(keep, moved, part).astype(np.int32)
    xp = be.xp
    nparts = len(pwgts)
    limits = xp.asarray(maxpwgt, dtype=xp.int64)
    room = limits - xp.asarray(pwgts, dtype=xp.int64)
    keep = xp.empty(g.nvtxs, dtype=xp.uint8)
    work = (xp.empty(g.nvtxs, dtype=xp.int32), xp.zeros(nparts * NUM_DIGITS, dtype=xp.uint64),
            xp.zeros(nparts, dtype=xp.uint64), xp.empty(nparts, dtype=xp.int64))
    launch_cap_inflow(be, g, part, moved, gain, room, limits, loose, slack, work, keep, order)
    return keep, moved


def launch_cap_inflow(be: Backend, g: DeviceGraph, part, moved, gain, room, maxpwgt,
                      loose: bool, slack: int, work: tuple, keep, order: VertexOrder) -> None:
    """Queue cap_inflow on device arrays (``room``, ``maxpwgt``: int64 per part): ``moved``
    becomes the capped partition and ``keep`` its mask. ``work`` = (to: int32 per vertex,
    hist: uint64 nparts * 256, zero, outflow: uint64 per part, zero, limit: int64 per part);
    hist and outflow are left zero."""
    n, nparts = g.nvtxs, len(room)
    to, hist, outflow, limit = work
    sel, _ = select_buffers(g, nparts)
    ids = order.kernel_args()
    be.launch_resident(be.kernel(CU_FILE, "inflow_prepare"), n,
                       (np.int32(n), part, moved, g.vwgt, np.int32(loose), gain, to, outflow,
                        hist))
    if loose:
        order.reduce_in_place(outflow)
    be.launch(be.kernel(CU_FILE, "inflow_limits"), nparts,
              (np.int32(nparts), room, maxpwgt, np.int64(slack), np.int32(loose),
               outflow, limit))
    _launch_select_pass(be, g, 0, limit, to, part, gain, hist, order)
    be.launch_resident(be.kernel(CU_FILE, "inflow_apply"), n,
                       (np.int32(n), part, to, gain, sel, *ids[:2], moved, keep, ids[2]))


@dataclass(frozen=True)
class VertexOrder:
    """Where the vertices of a selection stand among all: their ids are ``first``, first + 1,
    ... of ``n`` vertices; ``reduce`` sums an int64 histogram over every holder of vertices
    (None in one process; an all-reduce where ranks hold the vertices in pieces)."""

    n: int
    first: int = 0
    reduce: Callable[[np.ndarray], np.ndarray] | None = None

    @classmethod
    def of(cls, n: int) -> VertexOrder:
        return cls(n)

    def digits(self, loss: np.ndarray) -> list[np.ndarray]:
        """The selection's order digits: loss bucket, then two 8-bit digits of the id."""
        shift_hi, shift_lo = id_shifts(self.n)
        ids = backend_of(loss).xp.arange(self.first, self.first + len(loss), dtype=np.int64)
        return [loss_bucket(loss), (ids >> shift_hi) & (NUM_DIGITS - 1),
                (ids >> shift_lo) & (NUM_DIGITS - 1)]

    def kernel_args(self) -> tuple:
        """The select kernels' (shift_hi, shift_lo, id_base)."""
        return (*(np.int32(s) for s in id_shifts(self.n)), np.int64(self.first))

    def reduce_in_place(self, hist) -> None:
        """Sum the device histogram ``hist`` (uint64, wrapping as int64 does) over the
        holders of vertices, in place."""
        if self.reduce is not None:
            xp = backend_of(hist).xp
            hist[...] = self.reduce(hist.view(xp.int64)).view(xp.uint64)


def inflow_kept(part, moved, gain, vwgt, maxpwgt: np.ndarray, pwgts: np.ndarray, loose: bool,
                slack: int, order: VertexOrder) -> np.ndarray:
    """cap_inflow's twin: which moves from ``part`` to ``moved`` are kept (bool)."""
    be = backend_of(part)
    items = moved != part
    nparts = len(pwgts)
    maxpwgt = be.xp.asarray(maxpwgt).astype(np.int64)
    limit = maxpwgt - be.xp.asarray(pwgts)
    if loose:
        outflow = be.bin_sums(part[items], nparts, vwgt[items])
        if order.reduce is not None:
            outflow = order.reduce(outflow)
        limit += maxpwgt // slack + outflow
    digits = order.digits(-gain)
    digits[0] = MAX_BUCKET - loss_bucket(gain)
    return ordered_select(be.xp.where(items, moved, -1), digits, vwgt, limit, source=False,
                          reduce=order.reduce)


def loss_bucket(loss: np.ndarray) -> np.ndarray:
    """``rebalance.cu``'s loss_bucket: monotone, exact for |loss| < 16, four per octave above."""
    xp = backend_of(loss).xp
    loss = xp.asarray(loss, dtype=np.int64)
    big = xp.maximum(loss, NEG_LOSSES)
    e = xp.frexp(xp.minimum(big, 1 << 40).astype(np.float64))[1].astype(np.int64) - 1
    fine = 2 * NEG_LOSSES + (e - 4) * 4 + ((big >> xp.maximum(e - 2, 0)) & 3)
    exact = xp.clip(loss, -NEG_LOSSES, NEG_LOSSES - 1) + NEG_LOSSES
    return xp.where(loss < NEG_LOSSES, exact, xp.minimum(fine, MAX_BUCKET)).astype(np.int64)


def ordered_select(group: np.ndarray, digits: list[np.ndarray], w: np.ndarray,
                   limit: np.ndarray, source: bool, reduce=None) -> np.ndarray:
    """Mask of the items (``group`` >= 0) taken per group in the order of their ``digits``:
    sources take while the weight before an item is below ``limit`` (and the last undecided
    range), destinations while the weight up to and including it is at most ``limit`` (and not
    the last undecided range). ``reduce``: sums each histogram over the holders of the items
    (``VertexOrder.reduce``). Twin of select_threshold/select_digit_hist."""
    be = backend_of(group)
    xp = be.xp
    ngroups = len(limit)
    limit = xp.asarray(limit)
    undecided = group >= 0
    taken = xp.zeros(len(group), dtype=bool)
    base = xp.zeros(ngroups, dtype=np.int64)
    for d in digits:
        idx = xp.flatnonzero(undecided)
        hist = be.bin_sums(group[idx].astype(np.int64) * NUM_DIGITS + d[idx],
                           ngroups * NUM_DIGITS, w[idx])
        if reduce is not None:
            hist = reduce(hist)
        cum = base[:, None] + xp.cumsum(hist.reshape(ngroups, -1), 1)
        reached = cum >= limit[:, None] if source else cum > limit[:, None]
        sel = xp.where(reached.any(axis=1), reached.argmax(axis=1), NUM_DIGITS)
        before = xp.concatenate([base[:, None], cum], axis=1)
        base = before[xp.arange(ngroups), xp.minimum(sel, NUM_DIGITS)]
        mine = xp.where(undecided, sel[xp.maximum(group, 0)], -1)
        taken |= undecided & (d < mine)
        undecided &= d == mine
    return taken | undecided if source else taken


def rebalanced(part, room, dest, gain, vwgt, roomiest: np.ndarray, group_size: int,
               order: VertexOrder):
    """The twin of a rebalancing round's selection from best_moves' (mode 1) ``dest``/``gain``:
    the new partition."""
    xp = backend_of(part).xp
    room = xp.asarray(room)
    to = xp.where(dest < 0, fallback_parts(part, roomiest, group_size), dest)
    items = (room[part] < 0) & (to != part)
    digits = order.digits(-gain)
    group = xp.where(items, part, -1)
    taken = ordered_select(group, digits, vwgt, xp.maximum(-room, 1), source=True,
                           reduce=order.reduce)
    moves = ordered_select(xp.where(taken, to, -1), digits, vwgt, room, source=False,
                           reduce=order.reduce)
    return xp.where(moves, to, part).astype(np.int32)


def fill_empty_parts(be: Backend, g: DeviceGraph, part, nparts: int):
    """Give every empty part one vertex (when n >= nparts), leaving every other part at least
    one: the lightest vertices move, of those the ones whose edges into their own part weigh
    least (the cut grows by just that), then those of the heaviest parts. Returns a new array."""
    xp = be.xp
    empty = be.counts(part, nparts) == 0
    if g.nvtxs < nparts or not bool(empty.any()):  # one reduction read back, the common case
        return part
    empty = xp.flatnonzero(empty).astype(xp.int32)
    pw = part_weights(be, g.vwgt[:, None], part, nparts)[:, 0]
    part_rank = xp.empty(nparts, dtype=xp.int64)
    part_rank[be.argsort_stable(-pw)] = xp.arange(nparts, dtype=xp.int64)
    src = g.src  # built for this rare call on the GPU too
    adjwgt = 1 if g.adjwgt is None else g.adjwgt  # dropped while all ones
    cost = be.bin_sums(src, g.nvtxs, xp.where(part[src] == part[g.adjncy], adjwgt, 0)
                       .astype(xp.int32))
    order = be.argsort_stable(part_rank[part])  # ties: the heaviest parts' vertices first
    order = order[be.argsort_stable(cost[order])]
    order = order[be.argsort_stable(g.vwgt[order])]
    # each part keeps the last of its vertices in that order
    grouped = order[be.argsort_stable(part[order])]
    last = xp.concatenate([part[grouped][1:] != part[grouped][:-1], xp.ones(1, dtype=bool)])
    spare = xp.ones(g.nvtxs, dtype=bool)
    spare[grouped[last]] = False
    movers = order[xp.flatnonzero(spare[order])[: len(empty)]]
    part = part.copy()
    part[movers] = empty
    return part
