"""Multi-constraint refinement: Jet's label propagation with every move checked against each
constraint's limit, and rebalancing out of parts that are over in any constraint.

A label-propagation step takes Jet's candidate moves (``best_moves`` and the ``afterburner``
of the single-constraint refinement: they look at edges only) and keeps, per destination part,
the highest gains first while every constraint's weight moved in fits the part's room (in a
loose step, its room plus some slack, which rebalancing then takes back). A rebalancing step
considers, for each vertex that weighs in an over constraint of its part, its most connected
adjacent part over in no constraint or, when it has none, each constraint's roomiest part
(unless ``Balance.adjacent_only``); it
keeps the moves that lower the total excess (each constraint's excess over its total), gives
the vertex its move of least cut lost per unit of excess removed (its cost), takes each part's
vertices in cost order until every constraint's excess is covered, and keeps per destination
the moves that fit its room, its cheapest move (alone, it lowers the excess), and the moves
whose sure relief at the source (their share of the excess that the vertices taken before them
leave, ``_relief``) outweighs all their weight in the constraints where they do not fit: on
power-law graphs every part is over in some constraint, and those moves let a step shed most
of the excess instead of one move per part. When no single move lowers the excess (parts full
in different constraints), adjacent parts swap a vertex each (``swap_step``). The loop keeps
the best state (least excess beyond a tolerance, then lowest cut) and stops after
``patience`` iterations without a > 0.1% improvement, or when no swap lowers the excess either
(the state can no longer change).

Both selections rank moves by (``order_key`` of the cost, 16 bits; then the vertex id's top 16
bits) and cut each constraint's groups (its parts) at the rank where their limit is reached: on
the GPU by the radix select of the single-constraint rebalancing (``ncon.cu``, run inside
the device loop of ``ncon_device.py``; no sort); on NumPy by one sort (``_select``), their
twin. Every order is decided by values and vertex ids, so both engines take the same moves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import Balance
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import constraint_weights
from gpmetis.refinement.jet import (
    MoveRequest,
    afterburner,
    best_moves,
    launch_score,
    partition_state,
)
from gpmetis.refinement.rebalance import id_shifts

CU_FILE = Path(__file__).with_name("ncon.cu")
SHARED_GROUPS = 4096  # mc_part_weights sums up to this many (constraint, part) pairs per block
UNBOUNDED_ROOM = 1 << 62
NO_FIRST = np.iinfo(np.uint64).max


def order_key(cost) -> np.ndarray:
    """A 16-bit int64 key per float64 cost, monotone (non-decreasing) in the cost: the top bits
    of an order-preserving map of its bits (sign, exponent, 4 mantissa bits), so integers
    below 32 keep their order exactly. Twin of ncon.cu's order_key."""
    bits = np.ascontiguousarray(cost, dtype=np.float64).view(np.uint64)
    bits = np.where(bits >> np.uint64(63) != 0, ~bits, bits | np.uint64(1 << 63))
    return (bits >> np.uint64(48)).astype(np.int64)


def lp_step(be: Backend, g: DeviceGraph, weights, part, room: np.ndarray, locked, c_num: int,
            c_den: int):
    """(new partition, new locks): one label-propagation step (NumPy) whose inflow fits
    ``room`` ((ncon, nparts) int64)."""
    request = MoveRequest(0, locked, c_num, c_den, nparts=room.shape[1])
    dest, gain = best_moves(be, g, part, request)
    _, moved = afterburner(be, g, part, dest, gain, request)
    cand = np.flatnonzero(moved != part)
    to = moved[cand]
    keep = cap_inflow(weights, cand, to, order_key(-gain[cand].astype(np.int64)),
                      np.asarray(room, dtype=np.int64), g.nvtxs)
    part = part.copy()
    part[cand[keep]] = to[keep]
    locked = np.zeros(g.nvtxs, dtype=np.uint8)
    locked[cand[keep]] = 1
    return part, locked


def cap_inflow(weights, cand, to, key, room: np.ndarray, n: int) -> np.ndarray:
    """Mask over the moves ``cand`` -> ``to`` (NumPy) of those kept: per destination part, in
    the order of (``key``, the vertex id's top 16 bits; ``n`` vertices), while every
    constraint's weight moved in, this move's included, stays within ``room`` ((ncon, nparts)
    int64); moves in the last id range that reaches a limit stay out."""
    ncon, nparts = room.shape
    groups = np.arange(ncon)[:, None] * nparts + np.asarray(to, dtype=np.int64)[None, :]
    return _select(groups, weights[:, cand], key, cand, n, room.ravel(), source=False).all(axis=0)


def _select(groups, w, key, v, n: int, limit, source: bool) -> np.ndarray:
    """(ncon, m) mask: per group (``groups`` (ncon, m): each constraint's group ids of items
    ``v``, -1 for none; ``w`` their weights; ``limit`` per group) the items in the order of
    their rank (key, then the id's top 16 bits of ``n`` vertices) up to the first rank at which
    the weight of the items ranked at or before it reaches the limit: >= it for sources, which
    take that rank too, > it for destinations, which do not. This is what the kernels' radix
    select over the rank's four digits decides (each level narrows the group to the digit at
    which its limit is reached), found here by one sort."""
    shift_hi, shift_lo = id_shifts(n)
    v = np.asarray(v, dtype=np.int64)
    rank = ((np.asarray(key, dtype=np.int64) << 16) | (((v >> shift_hi) & 255) << 8)
            | ((v >> shift_lo) & 255))
    flat = groups.ravel()
    items = np.flatnonzero(flat >= 0)
    group = flat[items]
    rank = np.tile(rank, len(groups))[items]
    order = np.argsort(group * (1 << 32) + rank, kind="stable")
    group, rank = group[order], rank[order]
    weight = np.asarray(w, dtype=np.int64).ravel()[items][order]
    sums = np.cumsum(weight)
    start = np.searchsorted(group, group, side="left")
    sums -= sums[start] - weight[start]  # within the group, through this item
    key2 = group * (1 << 32) + rank
    through = sums[np.searchsorted(key2, key2, side="right") - 1]  # through the item's rank
    limit = np.asarray(limit, dtype=np.int64)[group]
    # each group's threshold: the rank of its first item that reaches the limit (none: all go)
    reached = np.flatnonzero(through >= limit if source else through > limit)
    first = reached[np.diff(group[reached], prepend=-1) != 0]
    threshold = np.full(int(flat.max()) + 1 if len(items) else 0, 1 << 40, dtype=np.int64)
    threshold[group[first]] = rank[first]
    mask = np.zeros(len(flat), dtype=bool)
    mask[items[order]] = rank <= threshold[group] if source else rank < threshold[group]
    return mask.reshape(groups.shape)


def _relief(groups, w, key, v, n: int, excess, scale: np.ndarray) -> np.ndarray:
    """Per item, the excess its move surely removes at its source, over each constraint's
    total (``scale``): in each group (``groups`` as ``_select``'s, -1 for none; ``excess``
    per group), the part of the group's excess left by the items ranked strictly before it,
    at most its weight; items of one rank share it whole, as the kernels' select cannot tell
    them apart. Twin of mc_rebalance_take_pass's credit."""
    shift_hi, shift_lo = id_shifts(n)
    v = np.asarray(v, dtype=np.int64)
    rank = ((np.asarray(key, dtype=np.int64) << 16) | (((v >> shift_hi) & 255) << 8)
            | ((v >> shift_lo) & 255))
    credit = np.zeros(groups.shape[1])
    for c, row in enumerate(groups):
        items = np.flatnonzero(row >= 0)
        order = items[np.argsort(row[items] * (1 << 32) + rank[items], kind="stable")]
        group, r = row[order], rank[order]
        weight = np.asarray(w[c], dtype=np.int64)[order]
        sums = np.cumsum(weight) - weight  # before the item, from the first item on
        combined = group * (1 << 32) + r
        start = np.searchsorted(group, group, side="left")
        before = sums[np.searchsorted(combined, combined, side="left")] - sums[start]
        share = np.clip(np.asarray(excess, dtype=np.int64)[group] - before, 0, weight)
        credit[order] = credit[order] + share / scale[c]
    return credit


def rebalance_step(be: Backend, g: DeviceGraph, weights, part, balance: Balance,
                   pwgts: np.ndarray):
    """A new partition (NumPy) with vertices moved out of the parts over in any constraint
    (``part`` itself when none is, or when no move lowers the total excess)."""
    over = pwgts - balance.limits
    if not (over > 0).any():
        return part
    # best_moves (Jet's rebalancing kernel) given no room in the over parts, unbounded room
    # elsewhere: each vertex's most connected adjacent part over in no constraint
    bm_room = np.where((over > 0).any(axis=0), -1, UNBOUNDED_ROOM).astype(np.int64)
    # each constraint's part with the most room relative to its limit, for the vertices with
    # no such neighbour (at the loss of their whole connectivity, -gain); -1: none
    share = (balance.limits - pwgts) / np.maximum(balance.limits, 1)
    roomiest = (np.full(1, -1, dtype=np.int64) if balance.adjacent_only else
                np.array(sorted({int(np.argmax(row)) for row in share}), dtype=np.int64))
    dest, gain = best_moves(be, g, part, MoveRequest(1, room=bm_room, nparts=balance.nparts))
    return _rebalance_numpy(weights, part, over,
                            np.maximum(balance.totals, 1).astype(np.float64), roomiest, dest,
                            gain)


def _rebalance_numpy(weights, part, over: np.ndarray, scale: np.ndarray, roomiest: np.ndarray,
                     dest, gain):
    """rebalance_step on NumPy from best_moves' ``dest``/``gain`` (twin of the kernels of
    ``ncon.cu``); ``over``: (ncon, nparts) weight above the limits."""
    n, nparts = len(part), over.shape[1]
    active = ((over[:, part] > 0) & (weights > 0)).any(axis=0)
    v = np.flatnonzero(active)
    p = part[v]
    w = weights[:, v].astype(np.int64)
    over_s = over[:, p]
    loss = -gain[v].astype(np.int64)
    linked = dest[v] >= 0
    best_q = np.full(len(v), -1, dtype=np.int64)
    best_cost = np.zeros(len(v))
    # candidates in the kernel's order: the adjacent part, else each roomiest part but its own
    for i, r in enumerate(roomiest):
        q = np.where(linked, dest[v] if i == 0 else -1, np.where(p != r, r, -1))
        over_d = over[:, np.maximum(q, 0)]
        drop = np.zeros(len(v))
        for c in range(len(weights)):
            added = np.maximum(over_d[c] + w[c], 0) - np.maximum(over_d[c], 0)
            change = np.maximum(over_s[c], 0) - np.maximum(over_s[c] - w[c], 0) - added
            drop += change / scale[c]
        ok = (q >= 0) & (drop > 0)
        cost = loss / np.where(ok, drop, 1.0)
        better = ok & ((best_q < 0) | (cost < best_cost))
        best_q = np.where(better, q, best_q)
        best_cost = np.where(better, cost, best_cost)
    item = best_q >= 0
    v, p, to, w = v[item], p[item], best_q[item], w[:, item]
    key = order_key(best_cost[item])
    ncon = len(weights)
    # sources: per constraint over in the part that the vertex weighs in, until its excess
    # is covered
    owed = (w > 0) & (over[:, p] > 0)
    groups = np.where(owed, np.arange(ncon)[:, None] * nparts + p[None, :], -1)
    taken = _select(groups, w, key, v, n, np.maximum(over, 1).ravel(), source=True).any(axis=0)
    credit = _relief(groups, w, key, v, n, np.maximum(over, 1).ravel(), scale)[taken]
    v, to, key, w = v[taken], to[taken], key[taken], w[:, taken]
    # destinations: the moves that fit every constraint's room, each one's first move, and
    # the moves whose sure relief outweighs all their weight where they do not fit
    groups = np.arange(ncon)[:, None] * nparts + to[None, :]
    fits = _select(groups, w, key, v, n, -over.ravel(), source=False)
    for c in range(ncon):
        credit = credit - np.where(fits[c], 0.0, w[c] / scale[c])
    order = (key.astype(np.uint64) << np.uint64(32)) | v.astype(np.uint64)
    first = np.full(nparts, NO_FIRST, dtype=np.uint64)
    np.minimum.at(first, to, order)
    moves = fits.all(axis=0) | (order == first[to]) | (credit > 0)
    if not moves.any():
        return part
    part = part.copy()
    part[v[moves]] = to[moves].astype(np.int32)
    return part


def swap_step(be: Backend, g: DeviceGraph, weights, part, balance: Balance, pwgts: np.ndarray):
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
    n, nparts = g.nvtxs, balance.nparts
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


def score_state(be: Backend, g: DeviceGraph, weights, part, balance: Balance):
    """((excess, edgecut), part weights (ncon, nparts) on the host); on the GPU two kernels
    and one read-back."""
    nparts = balance.nparts
    if not be.gpu:
        cut, _ = partition_state(be, g, part, balance)
        pwgts = constraint_weights(be, weights, part, nparts)
        return (balance.excess(pwgts), cut), pwgts
    n, ncon = g.nvtxs, len(weights)
    groups = ncon * nparts
    out = be.xp.zeros(nparts + 1 + groups, dtype=be.xp.uint64)
    launch_score(be, g, part, out[:nparts + 1])  # 2 * cut (and the guide's part weights)
    shared = groups <= SHARED_GROUPS
    be.launch_resident(be.kernel(CU_FILE, "mc_part_weights"), n,
                       (np.int32(n), np.int32(ncon), np.int32(nparts), np.int32(shared), part,
                        weights, out[nparts + 1:]), shared_mem=8 * groups if shared else 0)
    host = out.get().astype(np.int64)
    pwgts = host[nparts + 1:].reshape(ncon, nparts)
    return (balance.excess(pwgts), int(host[0]) // 2), pwgts
