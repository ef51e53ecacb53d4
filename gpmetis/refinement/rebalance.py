"""Rebalancing: move the cheapest vertices out of overweight parts into parts with room.

One step: every vertex of an overweight part gets its best destination with room (or, when no
adjacent part has room, the part with the most room) and a loss; per source part, vertices are
taken in (loss, id) order until its excess is covered; per destination, moves are kept in the same
order while they fit. Sorting makes the choice independent of thread order.
"""

from __future__ import annotations

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import part_weights
from gpmetis.refinement.jet import MoveRequest, best_moves

LOSS_BIAS = 1 << 31


def _group_prefix(be: Backend, keys, weights):
    """Inclusive prefix sums of ``weights`` restarting where ``keys`` (sorted) changes."""
    xp = be.xp
    csum = xp.cumsum(weights)
    starts = xp.concatenate([xp.ones(1, dtype=bool), keys[1:] != keys[:-1]])
    start_pos = xp.flatnonzero(starts)[xp.cumsum(starts) - 1]
    return csum - csum[start_pos] + weights[start_pos]


def _ordered(be: Backend, group, loss):
    """Order of items by (group, loss, index)."""
    xp = be.xp
    clipped = xp.clip(loss, -LOSS_BIAS, LOSS_BIAS - 1) + LOSS_BIAS
    return be.argsort_stable(group.astype(xp.int64) * (1 << 32) + clipped)


def rebalance_step(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt):
    """One rebalancing round (returns a new part array)."""
    xp = be.xp
    pw = part_weights(be, g.vwgt[:, None], part, nparts)[:, 0]
    over = (pw > maxpwgt).astype(xp.uint8)
    req = MoveRequest(1, over=over, pwgts=pw, maxpwgt=maxpwgt)
    dest, gain = best_moves(be, g, part, nparts, req)
    cand = xp.flatnonzero(over[part])
    if len(cand) == 0:
        return part
    roomiest = xp.argmax(maxpwgt - pw).astype(xp.int32)
    to = dest[cand]
    to = xp.where(to < 0, roomiest, to)
    src = part[cand]
    loss = -gain[cand]
    w = g.vwgt[cand].astype(xp.int64)
    keep = to != src

    order = _ordered(be, src, loss)
    cand, to, src, loss, w, keep = (a[order] for a in (cand, to, src, loss, w, keep))
    before = _group_prefix(be, src, w) - w
    take = keep & (before < (pw - maxpwgt)[src])
    cand, to, loss, w = cand[take], to[take], loss[take], w[take]

    order = _ordered(be, to, loss)
    cand, to, w = cand[order], to[order], w[order]
    fits = _group_prefix(be, to, w) <= (maxpwgt - pw)[to]
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
