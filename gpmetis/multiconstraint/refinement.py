"""Multi-constraint refinement: Jet's label propagation with every move checked against each
constraint's limit, and rebalancing out of parts that are over in any constraint.

A label-propagation step takes Jet's candidate moves (``best_moves`` and the ``afterburner``
of the single-constraint refinement: they look at edges only) and keeps, per destination part,
the highest gains first while every constraint's weight moved in fits the part's room (in a
loose step, its room plus some slack, which rebalancing then takes back). A rebalancing step
considers, for each vertex that weighs in an over constraint of its part, its adjacent parts
and each constraint's roomiest part, keeps the moves that lower the total excess (each
constraint's excess over its total), gives the vertex its move of least cut lost per unit of
excess removed, takes each part's vertices in that order until every constraint's excess is
covered, and keeps per destination the moves that fit its room plus its cheapest move (alone,
it lowers the excess). When no single move lowers the excess (parts full in different
constraints), adjacent parts swap a vertex each (``swap_step``). The loop keeps the best
state (least excess, then lowest cut) and stops after ``patience`` iterations without a > 0.1%
improvement. Every step is array code that runs the same on NumPy and CuPy, and every order is
decided by values and vertex ids, so both engines take the same moves.
"""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend, get_backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.multiconstraint.weights import Balance, part_weights
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
from gpmetis.refinement.rebalance import INFLOW_SLACK

PRIORITY_BITS = 32
UNBOUNDED_ROOM = 1 << 62


def cap_moves(be: Backend, weights, cand, to, priority, room):
    """Mask over the moves ``cand`` -> ``to`` of those kept: per destination part, in order of
    ``priority`` (higher first; |priority| < 2^31; ties: the earlier move), while every
    constraint's weight moved in stays within ``room`` ((ncon, nparts) int64 on ``be``)."""
    xp = be.xp
    if len(cand) == 0:
        return xp.zeros(0, dtype=bool)
    key = to.astype(xp.int64) * (1 << PRIORITY_BITS) + (
        (1 << (PRIORITY_BITS - 1)) - 1 - priority.astype(xp.int64))
    order = be.argsort_stable(key)
    dest = to[order]
    movers = cand[order]
    first = xp.searchsorted(dest, dest, side="left")  # each move's segment start
    fits = xp.ones(len(cand), dtype=bool)
    for w, r in zip(weights, room):
        w = w[movers].astype(xp.int64)
        moved_in = xp.cumsum(w)
        moved_in -= moved_in[first] - w[first]
        fits &= moved_in <= r[dest]
    keep = xp.empty_like(fits)
    keep[order] = fits
    return keep


def lp_step(be: Backend, g: DeviceGraph, weights, part, nparts: int, room, locked,
            c_num: int, c_den: int):
    """(new partition, new locks): one label-propagation step whose inflow fits ``room``."""
    xp = be.xp
    dest, gain = best_moves(be, g, part, nparts, MoveRequest(0, locked, c_num, c_den))
    _, moved = afterburner(be, g, part, dest, gain, nparts)
    cand = xp.flatnonzero(moved != part)
    to = moved[cand]
    keep = cap_moves(be, weights, cand, to, gain[cand], be.asarray(room))
    cand, to = cand[keep], to[keep]
    part = part.copy()
    part[cand] = to
    locked = xp.zeros(g.nvtxs, dtype=xp.uint8)
    locked[cand] = 1
    return part, locked


def rebalance_step(be: Backend, g: DeviceGraph, weights, part, nparts: int,
                   balance: Balance, pwgts: np.ndarray):
    """A new partition with vertices moved out of the parts over in any constraint (``part``
    itself when none is, or when no move lowers the total excess)."""
    xp = be.xp
    excess_h = np.maximum(pwgts - balance.limits, 0)
    if not excess_h.any():
        return part
    excess = be.asarray(excess_h)
    n = g.nvtxs
    active = xp.zeros(n, dtype=bool)
    for c, w in enumerate(weights):
        active |= (excess[c][part] > 0) & (w > 0)

    # each active vertex's most connected adjacent part among those over in no constraint
    # (Jet's rebalancing kernel, given no room in the over parts and unbounded room elsewhere)
    over_part = (excess_h > 0).any(axis=0)
    room = be.asarray(np.where(over_part, -1, UNBOUNDED_ROOM).astype(np.int64))
    dest, gain = best_moves(be, g, part, nparts, MoveRequest(1, room=room))
    linked = active & (dest >= 0)
    vs = xp.flatnonzero(linked)
    ps = dest[vs].astype(xp.int64)
    loss = -gain[vs].astype(xp.int64)
    # ... and, for those with none, each constraint's part with the most room (relative to its
    # target), at the loss of their whole connectivity (-gain)
    lone = active & (dest < 0)
    share = (balance.limits - pwgts) / np.maximum(balance.limits, 1)
    for roomiest in sorted({int(np.argmax(row)) for row in share}):
        alone = xp.flatnonzero(lone & (part != roomiest))
        vs = xp.concatenate((vs, alone))
        ps = xp.concatenate((ps, xp.full(len(alone), roomiest, dtype=xp.int64)))
        loss = xp.concatenate((loss, -gain[alone].astype(xp.int64)))

    # a move is a candidate when it lowers the total excess; its cost is the cut it adds per
    # unit of excess it removes
    drop = _excess_drop(be, weights, vs, part[vs], ps, balance, pwgts)
    ok = drop > 0
    vs, ps = vs[ok], ps[ok]
    cost = loss[ok] / drop[ok]
    # each vertex's cheapest move (ties: the lower part)
    order = be.argsort_stable(cost)
    order = order[be.argsort_stable(vs[order])]
    first = xp.flatnonzero(xp.concatenate((xp.ones(min(len(order), 1), dtype=bool),
                                           vs[order][1:] != vs[order][:-1])))
    best = order[first]
    movers, dest, cost = vs[best], ps[best], cost[best]

    # per source part, the cheapest first until every constraint's excess is covered
    source = part[movers]
    order = be.argsort_stable(cost)
    order = order[be.argsort_stable(source[order])]
    movers, dest, source, cost = movers[order], dest[order], source[order], cost[order]
    first = xp.searchsorted(source, source, side="left")
    take = xp.zeros(len(movers), dtype=bool)
    for c, wc in enumerate(weights):
        wm = wc[movers].astype(xp.int64)
        before = xp.cumsum(wm) - wm  # weight ranked ahead of each vertex in its part
        before -= before[first]
        take |= (wm > 0) & (before < excess[c][source])
    movers, dest, cost = movers[take], dest[take], cost[take]
    keep = _destination_cap(be, weights, movers, dest, cost, pwgts, balance)
    if not bool(keep.any()):
        return part
    part = part.copy()
    part[movers[keep]] = dest[keep].astype(xp.int32)
    return part


def _destination_cap(be: Backend, weights, movers, dest, cost, pwgts: np.ndarray,
                     balance: Balance):
    """Mask of the moves kept: per destination, cheapest first, its first move (which alone
    lowers the excess) and the moves up to where the destination's room runs out in some
    constraint."""
    xp = be.xp
    if len(movers) == 0:
        return xp.zeros(0, dtype=bool)
    order = be.argsort_stable(cost)
    order = order[be.argsort_stable(dest[order])]
    movers, dest = movers[order], dest[order]
    first = xp.searchsorted(dest, dest, side="left")
    pw, limits = be.asarray(pwgts), be.asarray(balance.limits)
    fits = xp.ones(len(movers), dtype=bool)
    for c, wc in enumerate(weights):
        moved_in = _segment_cumsum(xp, wc[movers].astype(xp.int64), first)
        fits &= pw[c][dest] + moved_in <= limits[c][dest]
    kept = fits | (first == xp.arange(len(first)))
    keep = xp.empty(len(movers), dtype=bool)
    keep[order] = kept
    return keep


def _segment_cumsum(xp, values, first):
    """Inclusive running sums of int64 ``values`` restarting at each segment's ``first``."""
    sums = xp.cumsum(values)
    return sums - (sums[first] - values[first])


def _excess_drop(be: Backend, weights, v, source, dest, balance: Balance, pwgts: np.ndarray):
    """How much moving each vertex ``v`` from ``source`` to ``dest`` lowers the total excess
    (float64; each constraint's excess over its total)."""
    xp = be.xp
    pw, limits = be.asarray(pwgts), be.asarray(balance.limits)
    drop = xp.zeros(len(v), dtype=xp.float64)
    for c, wc in enumerate(weights):
        w = wc[v].astype(xp.int64)
        over_s = pw[c][source] - limits[c][source]
        over_d = pw[c][dest] - limits[c][dest]
        added = xp.maximum(over_d + w, 0) - xp.maximum(over_d, 0)
        change = xp.maximum(over_s, 0) - xp.maximum(over_s - w, 0) - added
        drop += change / float(max(balance.totals[c], 1))
    return drop


def swap_step(be: Backend, g: DeviceGraph, weights, part, nparts: int, balance: Balance,
              pwgts: np.ndarray):
    """A new partition where pairs of adjacent parts swap a boundary vertex each, at most one
    swap per part, each swap lowering the total excess (``part`` itself when none does).

    For when no single move lowers the excess: parts full in different constraints trade a
    vertex heavy in one for a vertex heavy in the other. Each pair of parts (A, B) offers A's
    boundary vertex towards B that relieves A's excess most (then loses the least cut), if A
    is over in a constraint it weighs in; B's boundary vertices towards A complete the swap,
    the one of least cut lost per unit of excess removed winning; a part takes the cheapest
    swap it is in, and a swap runs when both of its parts chose it."""
    xp = be.xp
    excess = be.asarray(np.maximum(pwgts - balance.limits, 0))
    n = g.nvtxs
    s, p, w = g.src, part[g.adjncy], g.adjwgt
    own = p == part[s]
    own_conn = be.bin_sums(s[own], n, w[own])
    pairs, inverse = xp.unique(s[~own].astype(xp.int64) * nparts + p[~own],
                               return_inverse=True)
    conn = be.bin_sums(inverse.reshape(-1), len(pairs), w[~own])
    u, to = pairs // nparts, pairs % nparts
    frm = part[u].astype(xp.int64)
    loss = own_conn[u] - conn
    over = xp.zeros(len(u), dtype=bool)
    for c, wc in enumerate(weights):
        over |= (excess[c][frm] > 0) & (wc[u] > 0)
    # each part pair's offer: the over part's move towards the other that relieves it most
    # (its weight in the part's over constraints, each over its total), then the cheapest
    relief = xp.zeros(len(u), dtype=xp.float64)
    for c, wc in enumerate(weights):
        relief += xp.minimum(wc[u], excess[c][frm]) / float(max(balance.totals[c], 1))
    key = frm[over] * nparts + to[over]
    order = be.argsort_stable(loss[over])
    order = order[be.argsort_stable(-relief[over][order])]
    order = order[be.argsort_stable(key[order])]
    key = key[order]
    first = xp.flatnonzero(xp.concatenate((xp.ones(min(len(key), 1), dtype=bool),
                                           key[1:] != key[:-1])))
    offer_key, offer = key[first], xp.flatnonzero(over)[order[first]]
    if len(offer_key) == 0:
        return part
    # the other side: a move back along the same pair of parts
    back = to * nparts + frm
    at = xp.minimum(xp.searchsorted(offer_key, back), len(offer_key) - 1)
    has = offer_key[at] == back
    mate, v = xp.flatnonzero(has), offer[at[has]]
    a, b = to[mate], frm[mate]  # v moves a -> b, u[mate] moves b -> a
    pw, limits = be.asarray(pwgts), be.asarray(balance.limits)
    drop = xp.zeros(len(mate), dtype=xp.float64)
    for c, wc in enumerate(weights):
        delta = wc[u[v]].astype(xp.int64) - wc[u[mate]]  # a's loss, b's gain
        after_a = pw[c][a] - delta - limits[c][a]
        after_b = pw[c][b] + delta - limits[c][b]
        change = (xp.maximum(pw[c][a] - limits[c][a], 0) - xp.maximum(after_a, 0)
                  + xp.maximum(pw[c][b] - limits[c][b], 0) - xp.maximum(after_b, 0))
        drop += change / float(max(balance.totals[c], 1))
    good = drop > 0
    mate, v, a, b = mate[good], v[good], a[good], b[good]
    if len(mate) == 0:
        return part
    cost = (loss[v] + loss[mate]) / drop[good]
    # a part takes its cheapest swap (ties: the earlier one); a swap both parts took runs
    order = be.argsort_stable(cost)
    rank = xp.empty(len(order), dtype=xp.int64)
    rank[order] = xp.arange(len(order), dtype=xp.int64)
    sides, ranks = xp.concatenate((a, b)), xp.concatenate((rank, rank))
    order = be.argsort_stable(ranks)
    order = order[be.argsort_stable(sides[order])]
    sides, ranks = sides[order], ranks[order]
    first = xp.concatenate((xp.ones(1, dtype=bool), sides[1:] != sides[:-1]))
    choice = xp.full(nparts, -1, dtype=xp.int64)
    choice[sides[first]] = ranks[first]
    run = (choice[a] == rank) & (choice[b] == rank)
    part = part.copy()
    part[u[v[run]]] = b[run].astype(xp.int32)
    part[u[mate[run]]] = a[run].astype(xp.int32)
    return part


def score_state(be: Backend, g: DeviceGraph, weights, part, nparts: int, balance: Balance):
    """((excess, edgecut), part weights (ncon, nparts) on the host)."""
    cut, _ = partition_state(be, g, part, nparts)
    pwgts = be.asnumpy(part_weights(be, weights, part, nparts))
    return (balance.excess(pwgts), cut), pwgts


def refine(be: Backend, g: DeviceGraph, weights, part, nparts: int, balance: Balance, *,
           finest: bool, patience: int):
    """(the best partition the iterations find from ``part`` (a new int32 array), iterations
    run); ``weights`` (ncon, n) int32 on ``be``."""
    xp = be.xp
    c_num, c_den = FILTER_FINEST if finest else FILTER_COARSE
    slack = balance.limits // INFLOW_SLACK
    locked = xp.zeros(g.nvtxs, dtype=xp.uint8)
    score, pwgts = score_state(be, g, weights, part, nparts, balance)
    best, best_score = part, score
    stale = iterations = 0
    loose = False
    while iterations < MAX_ITERATIONS and stale < patience:
        iterations += 1
        cut = score[1]
        lp = score[0] == 0
        if lp:
            room = balance.limits - pwgts + (slack if loose else 0)
            part, locked = lp_step(be, g, weights, part, nparts, room, locked, c_num, c_den)
        else:
            moved = rebalance_step(be, g, weights, part, nparts, balance, pwgts)
            if moved is part:  # no move lowers the excess: trade constraints
                moved = swap_step(be, g, weights, part, nparts, balance, pwgts)
            part = moved
            locked[:] = 0
        excess = score[0]
        score, pwgts = score_state(be, g, weights, part, nparts, balance)
        if lp:
            loose = not loose and score[1] >= (1 - IMPROVEMENT) * cut
        if score < best_score:
            big = score[0] < best_score[0] or score[1] < (1 - IMPROVEMENT) * best_score[1]
            best, best_score = part, score
            stale = 0 if big else stale + 1
        elif lp or score[0] >= (1 - IMPROVEMENT) * excess:
            stale += 1  # (a rebalancing step that still lowers the excess is not stale)
    return best.astype(xp.int32, copy=False), iterations


def refine_on_host(host: tuple, weights: np.ndarray, part: np.ndarray, nparts: int,
                   balance: Balance, patience: int) -> tuple[np.ndarray, float, int]:
    """(partition, excess, edgecut): ``part`` of the host graph ``host`` (xadj, adjncy, adjwgt,
    vwgt) with (ncon, n) ``weights`` after ``refine`` on the cpu backend, as the initial
    partition's trials run it on the workers."""
    xadj, adjncy, adjwgt, vwgt = host
    be = get_backend("cpu")
    g = DeviceGraph(be, xadj, adjncy.astype(np.int32), adjwgt.astype(np.int32),
                    vwgt.astype(np.int32))
    part, _ = refine(be, g, weights.astype(np.int32), part, nparts, balance, finest=False,
                     patience=patience)
    (excess, cut), _ = score_state(be, g, weights, part, nparts, balance)
    return part, excess, cut
