"""Rebalancing: move the cheapest vertices out of overweight parts into parts with room.

One step: every vertex of an overweight part gets its best adjacent destination with room (or,
when none is adjacent, the part with the most room) and a loss; per source part,
vertices are taken in (loss, id) order until its excess is covered; per destination, moves are
kept in the same order while they fit. Sorting makes the choice independent of thread order.
The GPU path runs the kernels of ``rebalance.cu``; ``_select_numpy`` is their twin.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import part_weights
from gpmetis.refinement.jet import MoveRequest, best_moves

CU_FILE = Path(__file__).with_name("rebalance.cu")
LOSS_BIAS = 1 << 31
NUM_LOSS_BUCKETS = 64
LOSS_BUCKET_OFFSET = 16


def rebalance_step(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray,
                   pwgts: np.ndarray):
    """One rebalancing round from host part weights ``pwgts`` and limits ``maxpwgt``; returns a
    new part array (or ``part`` itself when no part is overweight)."""
    room = maxpwgt - pwgts
    if not (room < 0).any():
        return part
    room_d = be.asarray(room)
    dest, gain = best_moves(be, g, part, nparts, MoveRequest(1, room=room_d))
    # Vertices with no adjacent part that has room head for the roomiest part, at a loss of
    # their whole internal connectivity (cheap for the many low-degree vertices of power-law
    # graphs, so they must stay candidates).
    roomiest = int(np.argmax(room))
    if be.gpu:
        return _select_cuda(be, g, part, nparts, room_d, dest, gain, roomiest)
    return _select_numpy(g, part, nparts, room, dest, gain, roomiest)


def _select_cuda(be: Backend, g: DeviceGraph, part, nparts: int, room, dest, gain,
                 roomiest: int):
    xp = be.xp
    n = g.nvtxs
    to = xp.empty(n, dtype=xp.int32)
    hist = xp.zeros(nparts * NUM_LOSS_BUCKETS, dtype=xp.uint64)
    be.launch(be.kernel(CU_FILE, "rebalance_prepare"), n,
              (np.int32(n), part, g.vwgt, dest, gain, room, np.int32(roomiest), to, hist))
    threshold = xp.empty(nparts, dtype=xp.int32)
    be.launch(be.kernel(CU_FILE, "rebalance_threshold"), nparts,
              (np.int32(nparts), room, hist, threshold))
    flag = xp.empty(n, dtype=xp.uint8)
    be.launch(be.kernel(CU_FILE, "rebalance_mark"), n,
              (np.int32(n), part, to, gain, threshold, flag))
    cand = xp.flatnonzero(flag)
    m = len(cand)
    if m == 0:
        return part
    key = xp.empty(m, dtype=xp.int64)
    be.launch(be.kernel(CU_FILE, "rebalance_source_keys"), m,
              (np.int32(m), cand, part, gain, key))
    cand, group, w, csum, first = _sorted_groups(be, g, cand, key, nparts)
    key2 = xp.empty(m, dtype=xp.int64)
    be.launch(be.kernel(CU_FILE, "rebalance_select"), m,
              (np.int32(m), cand, group, w, csum, first, room, to, gain, np.int32(nparts),
               key2))
    cand, group, _, csum, first = _sorted_groups(be, g, cand, key2, nparts)
    part = part.copy()
    be.launch(be.kernel(CU_FILE, "rebalance_apply"), m,
              (np.int32(m), cand, group, csum, first, room, np.int32(nparts), part))
    return part


def _sorted_groups(be: Backend, g: DeviceGraph, cand, key, nparts: int):
    """(cand, group, w, csum, first) for the candidates sorted by ``key`` (stable): their group
    (key >> 32), weight, the inclusive prefix sum of the weights and where each group starts."""
    xp = be.xp
    m = len(cand)
    order = xp.argsort(key)
    out_cand = xp.empty(m, dtype=xp.int64)
    group = xp.empty(m, dtype=xp.int32)
    w = xp.empty(m, dtype=xp.int64)
    be.launch(be.kernel(CU_FILE, "rebalance_gather"), m,
              (np.int32(m), order, cand, key, g.vwgt, out_cand, group, w))
    csum = xp.cumsum(w)
    first = xp.empty(nparts + 1, dtype=xp.int32)
    be.launch(be.kernel(CU_FILE, "group_starts"), m, (np.int32(m), group, first))
    return out_cand, group, w, csum, first


def _select_numpy(g: DeviceGraph, part, nparts: int, room, dest, gain, roomiest: int):
    to_all = np.where(dest < 0, np.int32(roomiest), dest)
    movable = (room[part] < 0) & (to_all != part)
    loss = -gain
    cand = np.flatnonzero(movable & _within_threshold(g, part, loss, movable, -room, nparts))
    if len(cand) == 0:
        return part
    src = part[cand]
    order = _ordered(src, loss[cand])
    cand, src = cand[order], src[order]
    w = g.vwgt[cand].astype(np.int64)
    before = _group_prefix(src, w, nparts) - w
    cand = cand[before < -room[src]]
    to = to_all[cand]
    order = _ordered(to, loss[cand])
    cand, to = cand[order], to[order]
    fits = _group_prefix(to, g.vwgt[cand].astype(np.int64), nparts) <= room[to]
    part = part.copy()
    part[cand[fits]] = to[fits]
    return part


def _group_prefix(groups, weights, ngroups: int):
    """Inclusive prefix sums of ``weights`` within runs of equal ``groups`` (sorted, < ngroups)."""
    csum = np.cumsum(weights)
    first = np.searchsorted(groups, np.arange(ngroups, dtype=groups.dtype))
    before = np.concatenate([np.zeros(1, dtype=csum.dtype), csum])[first]
    return csum - before[groups]


def _ordered(group, loss):
    """Order of items by (group, loss, index)."""
    clipped = np.clip(loss, -LOSS_BIAS, LOSS_BIAS - 1) + LOSS_BIAS
    return np.argsort((group.astype(np.int64) << 32) | clipped, kind="stable")


def _within_threshold(g: DeviceGraph, part, loss, movable, excess, nparts: int):
    """Mask of the vertices whose loss bucket can be reached before their part's excess is
    covered. Buckets are monotone in loss, so every vertex the (loss, id)-ordered selection takes
    is inside the mask: filtering first only shrinks the sorts, never changes their result."""
    bucket = np.clip(loss, -LOSS_BUCKET_OFFSET, NUM_LOSS_BUCKETS - 1 - LOSS_BUCKET_OFFSET)
    bucket = (bucket + LOSS_BUCKET_OFFSET).astype(np.int64)
    key = part.astype(np.int64) * NUM_LOSS_BUCKETS + bucket
    hist = np.bincount(key, weights=np.where(movable, g.vwgt, 0).astype(np.float64),
                       minlength=nparts * NUM_LOSS_BUCKETS)
    cum = np.cumsum(np.rint(hist).astype(np.int64).reshape(nparts, NUM_LOSS_BUCKETS), axis=1)
    reached = cum >= np.maximum(excess, 1)[:, None]
    threshold = np.where(reached.any(axis=1), reached.argmax(axis=1), NUM_LOSS_BUCKETS - 1)
    return bucket <= threshold[part]


def fill_empty_parts(be: Backend, g: DeviceGraph, part, nparts: int):
    """Give every empty part one vertex (when n >= nparts): the lightest spare vertices of the
    heaviest parts move, one per empty part. Returns a new part array."""
    xp = be.xp
    counts = xp.bincount(part, minlength=nparts)
    empty = xp.flatnonzero(counts == 0).astype(xp.int32)
    if len(empty) == 0 or g.nvtxs < nparts:
        return part
    pw = part_weights(be, g.vwgt[:, None], part, nparts)[:, 0]
    part_rank = xp.empty(nparts, dtype=xp.int64)
    part_rank[be.argsort_stable(-pw)] = xp.arange(nparts, dtype=xp.int64)
    order = be.argsort_stable(part_rank[part] * (1 << 32) + g.vwgt)
    grouped = part[order]
    spare = xp.concatenate([xp.zeros(1, dtype=bool), grouped[1:] == grouped[:-1]])
    movers = order[xp.flatnonzero(spare)[: len(empty)]]
    part = part.copy()
    part[movers] = empty
    return part
