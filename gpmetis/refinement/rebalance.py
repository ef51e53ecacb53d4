"""Rebalancing: move the cheapest vertices out of overweight parts into parts with room.

One step: every vertex of an overweight part gets its best adjacent destination with room (or,
when none is adjacent, the part with the most room) and a loss; per source part,
vertices are taken in (loss, id) order until its excess is covered; per destination, moves are
kept in the same order while they fit. Sorting makes the choice independent of thread order.
"""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import part_weights
from gpmetis.refinement.jet import MoveRequest, best_moves

LOSS_BIAS = 1 << 31
NUM_LOSS_BUCKETS = 64
LOSS_BUCKET_OFFSET = 16


def _group_prefix(be: Backend, groups, weights, ngroups: int):
    """Inclusive prefix sums of ``weights`` within runs of equal ``groups`` (sorted, < ngroups)."""
    xp = be.xp
    csum = xp.cumsum(weights)
    first = xp.searchsorted(groups, xp.arange(ngroups, dtype=groups.dtype))
    before = xp.concatenate([xp.zeros(1, dtype=csum.dtype), csum])[first]
    return csum - before[groups]


def _ordered(be: Backend, group, loss):
    """Order of items by (group, loss, index)."""
    xp = be.xp
    clipped = xp.clip(loss, -LOSS_BIAS, LOSS_BIAS - 1) + LOSS_BIAS
    return be.argsort_stable((group.astype(xp.int64) << 32) | clipped)


def _within_threshold(be: Backend, g: DeviceGraph, part, loss, movable, excess, nparts: int):
    """Mask of the vertices whose loss bucket can be reached before their part's excess is
    covered. Buckets are monotone in loss, so every vertex the (loss, id)-ordered selection takes
    is inside the mask: filtering first only shrinks the sorts, never changes their result."""
    xp = be.xp
    bucket = xp.clip(loss, -LOSS_BUCKET_OFFSET, NUM_LOSS_BUCKETS - 1 - LOSS_BUCKET_OFFSET)
    bucket = (bucket + LOSS_BUCKET_OFFSET).astype(xp.int64)
    key = part.astype(xp.int64) * NUM_LOSS_BUCKETS + bucket
    weights = xp.where(movable, g.vwgt, 0).astype(xp.float64)
    hist = be.asnumpy(xp.bincount(key, weights=weights, minlength=nparts * NUM_LOSS_BUCKETS))
    cum = np.cumsum(np.rint(hist).astype(np.int64).reshape(nparts, NUM_LOSS_BUCKETS), axis=1)
    reached = cum >= np.maximum(excess, 1)[:, None]
    threshold = np.where(reached.any(axis=1), reached.argmax(axis=1), NUM_LOSS_BUCKETS - 1)
    return bucket <= xp.asarray(threshold)[part]


def rebalance_step(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt, pwgts: np.ndarray):
    """One rebalancing round from part weights ``pwgts`` (host); returns a new part array."""
    xp = be.xp
    limits = be.asnumpy(maxpwgt)
    over = pwgts > limits
    if not over.any():
        return part
    room = limits - pwgts
    req = MoveRequest(1, over=xp.asarray(over.astype(np.uint8)), pwgts=xp.asarray(pwgts),
                      maxpwgt=maxpwgt)
    dest, gain = best_moves(be, g, part, nparts, req)
    # Vertices with no adjacent part that has room head for the roomiest part, at a loss of
    # their whole internal connectivity (cheap for the many low-degree vertices of power-law
    # graphs, so they must stay candidates).
    to_all = xp.where(dest < 0, np.int32(np.argmax(room)), dest)
    movable = req.over[part].astype(bool) & (to_all != part)
    cand = xp.flatnonzero(movable & _within_threshold(be, g, part, -gain, movable, pwgts - limits,
                                                      nparts)).astype(xp.int32)
    if len(cand) == 0:
        return part

    src = part[cand]
    order = _ordered(be, src, -gain[cand])
    cand, src = cand[order], src[order]
    w = g.vwgt[cand].astype(xp.int64)
    before = _group_prefix(be, src, w, nparts) - w
    cand = cand[before < xp.asarray(-room)[src]]

    to = to_all[cand]
    order = _ordered(be, to, -gain[cand])
    cand, to = cand[order], to[order]
    fits = _group_prefix(be, to, g.vwgt[cand].astype(xp.int64), nparts) <= xp.asarray(room)[to]
    part = part.copy()
    part[cand[fits]] = to[fits]
    return part


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
