"""``-contig``: make every part connected (the graph being connected), then rebalance without
splitting a part again. Vectorised array code on the engine's backend (CuPy on the gpu
engine, NumPy on the cpu engine); both give the same partition.

1. Components of the parts (``connected_components`` with the partition): each part keeps its
   heaviest component (ties: the one holding the smallest vertex id), its main one.
2. Every other component moves, whole, to the adjacent part whose main component it is most
   connected to (edge weight), among the parts with room for it, else among all; components
   touching no main component wait for the next round. A moved component joins a main one, so
   each round lowers the number of components and no two components swap forever.
3. While a part is over its limit: the vertices of overweight parts that are adjacent to an
   open part (within its limit and lighter than every overweight part; it takes up to its room,
   or half its gap to them, so excess also diffuses through full parts over several rounds),
   and whose own-part neighbours are connected by paths of two edges at most through their
   part, are candidates; a candidate moves only if no better candidate (loss, then id) lies
   within two edges, so no two vertices that close move at once. A path through a moved vertex
   then detours through vertices within two edges of it, none of which moved: the part stays
   connected, and the receiving part gains a vertex adjacent to it. Per source part the cheapest
   moves are taken until its excess is covered, per destination while they fit.
4. Rounds of moves that lower the cut (gain > 0, into parts with room) under the same rules.
"""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import connected_components

MAX_ROUNDS = 256  # rebalancing rounds; each moves at least one vertex or ends
LOSS_OFFSET = 2**31  # losses lie in (-2^31, 2^31): (loss + offset) * n + id fits an int64
NO_PRIORITY = np.int64(2**63 - 1)
REFINE_ROUNDS = 16  # rounds of cut-lowering moves that keep the parts connected, at most
# a candidate's own-part neighbours of higher degree are not expanded when checking that they are
# connected among themselves (they count as joined to none): the check stays sound, its cost
# bounded on power-law graphs
EXPAND_DEGREE = 256


def make_contiguous(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray):
    """(part, rounds): ``part`` with every part connected (``g`` connected), over its limit
    ``maxpwgt`` (host int64 per part) only where rebalancing found no move that keeps the parts
    connected; rounds = (merging rounds, rebalancing rounds)."""
    xp = be.xp
    part = part.astype(xp.int32, copy=True)
    merges = 0
    while True:
        label = connected_components(be, g.xadj, g.adjncy, part)
        main = main_components(be, g, part, label, nparts)
        if bool(main.all()):
            break
        part = merge_components(be, g, part, label, main, nparts, maxpwgt)
        merges += 1
    rebalances = 0
    while rebalances < MAX_ROUNDS:
        moved = rebalance_connected(be, g, part, nparts, maxpwgt)
        if moved is None:
            break
        part = moved
        rebalances += 1
    for _ in range(REFINE_ROUNDS):
        moved = refine_connected(be, g, part, nparts, maxpwgt)
        if moved is None:
            break
        part = moved
    return part, (merges, rebalances)


def main_components(be: Backend, g: DeviceGraph, part, label, nparts: int):
    """Bool per vertex: it lies in its part's heaviest component (ties: smallest label)."""
    xp = be.xp
    n = g.nvtxs
    cw = be.bin_sums(label, n, g.vwgt)
    roots = xp.flatnonzero(label == xp.arange(n, dtype=xp.int32)).astype(xp.int32)
    by_weight = roots[be.argsort_stable(-cw[roots])]
    grouped = by_weight[be.argsort_stable(part[by_weight])]
    gp = part[grouped]
    first = xp.concatenate((xp.ones(1, dtype=xp.bool_), gp[1:] != gp[:-1]))
    is_main = xp.zeros(n, dtype=xp.bool_)
    is_main[grouped[first]] = True
    return is_main[label]


def merge_components(be: Backend, g: DeviceGraph, part, label, main, nparts: int,
                     maxpwgt: np.ndarray, *, must_fit: bool = False):
    """``part`` with each non-main component that touches a main component of another part
    moved to the most connected one of those parts (those with room for it first; with
    ``must_fit``, only to those)."""
    xp = be.xp
    n = g.nvtxs
    src = be.sources(g.xadj, g.nnz)
    edge = xp.flatnonzero(~main[src] & main[g.adjncy])
    comp = label[src[edge]].astype(xp.int64)
    dest = part[g.adjncy[edge]].astype(xp.int64)
    keys = comp * nparts + dest
    uniq, inverse = xp.unique(keys, return_inverse=True)
    conn = be.bin_sums(inverse.astype(xp.int32).ravel(), len(uniq), g.adjwgt[edge])
    comp, dest = uniq // nparts, uniq % nparts
    cw = be.bin_sums(label, n, g.vwgt)[comp]
    pw = be.bin_sums(part, nparts, g.vwgt)
    fits = pw[dest] + cw <= xp.asarray(maxpwgt, dtype=xp.int64)[dest]
    # per component: fitting before not, then most connected, then the smaller part id
    # (uniq is sorted by (comp, dest), so the stable sorts keep dest ascending among ties)
    order = be.argsort_stable(-conn)
    order = order[be.argsort_stable(~fits[order])]
    if must_fit:
        order = order[fits[order]]
        if not len(order):
            return part
    order = order[be.argsort_stable(comp[order])]
    cs = comp[order]
    first = xp.concatenate((xp.ones(1, dtype=xp.bool_), cs[1:] != cs[:-1]))
    target = xp.full(n, -1, dtype=xp.int32)
    target[cs[first]] = dest[order][first].astype(xp.int32)
    to = target[label]
    return xp.where(to >= 0, to, part).astype(xp.int32)


def rebalance_connected(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray):
    """One round of moves out of overweight parts that keeps every part connected (module
    docstring, step 3): the new partition, or None when no part is overweight or nothing can
    move."""
    return _connected_round(be, g, part, nparts, maxpwgt, refine=False)


def refine_connected(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray):
    """One round of cut-lowering moves (gain > 0, into parts with room for them) that keeps
    every part connected, under step 3's rules: the new partition, or None when none moves."""
    return _connected_round(be, g, part, nparts, maxpwgt, refine=True)


def _connected_round(be: Backend, g: DeviceGraph, part, nparts: int, maxpwgt: np.ndarray,
                     refine: bool):
    xp = be.xp
    n = g.nvtxs
    limits = xp.asarray(maxpwgt, dtype=xp.int64)
    pw = be.bin_sums(part, nparts, g.vwgt)
    room = limits - pw
    over = room < 0
    if refine:
        over = xp.ones(nparts, dtype=xp.bool_)
        open_ = room > 0
        cap = room
    elif not bool(over.any()):
        return None
    else:
        # destinations: parts within their limit and lighter than every overweight part; each
        # takes up to its room, or up to half its gap to the lightest overweight part where
        # that is more (the excess then diffuses on through it in later rounds)
        lightest_over = pw[over].min()
        open_ = (room >= 0) & (pw < lightest_over)
        cap = xp.where(open_, xp.maximum(room, (lightest_over - pw) // 2), 0)
    src = be.sources(g.xadj, g.nnz)
    ps, pd = part[src], part[g.adjncy]
    own = be.bin_sums(src, n, xp.where(ps == pd, g.adjwgt, 0))
    # best destination per vertex of an overweight part: an adjacent open part, one with room
    # first, then the most connected (ties: smaller part id)
    e = xp.flatnonzero(over[ps] & open_[pd])
    if not len(e):
        return None
    uniq, inverse = xp.unique(src[e].astype(xp.int64) * nparts + pd[e], return_inverse=True)
    conn = be.bin_sums(inverse.astype(xp.int32).ravel(), len(uniq), g.adjwgt[e].astype(xp.int32))
    v, q = uniq // nparts, (uniq % nparts).astype(xp.int32)
    order = be.argsort_stable(-conn)
    order = order[be.argsort_stable(room[q[order]] <= 0)]
    order = order[be.argsort_stable(v[order])]
    vo = v[order]
    first = order[xp.concatenate((xp.ones(1, dtype=xp.bool_), vo[1:] != vo[:-1]))]
    cand_v = v[first].astype(xp.int32)
    dest = xp.full(n, -1, dtype=xp.int32)
    dest[cand_v] = q[first]
    loss = xp.zeros(n, dtype=xp.int64)
    loss[cand_v] = own[cand_v] - conn[first]
    cand = dest >= 0
    if refine:
        cand &= loss < 0
    cand &= own_neighbours_connected(be, g, part, cand, src)
    # no two candidates within two edges of each other move: the better one (loss, then id)
    # goes, so nothing within two edges of a moved vertex moves (its detours stay)
    priority = xp.where(cand, (loss + LOSS_OFFSET) * n + xp.arange(n, dtype=xp.int64),
                        NO_PRIORITY)
    best = min_over_neighbours(be, g, src, min_over_neighbours(be, g, src, priority))
    cand &= best == priority
    movers = xp.flatnonzero(cand).astype(xp.int32)
    if not len(movers):
        return None
    del src, ps, pd
    vw = g.vwgt[movers].astype(xp.int64)
    if not refine:
        # sources: by (part, loss, id), taken while the weight before one is below the excess
        take = take_in_order(be, part[movers], loss[movers], movers, vw, -room, before=True)
        movers, vw = movers[take], vw[take]
    # destinations: the same order, kept while they fit in the cap
    keep = take_in_order(be, dest[movers], loss[movers], movers, vw, cap, before=False)
    movers = movers[keep]
    if not len(movers):
        return None
    part = part.copy()
    part[movers] = dest[movers]
    return part


def take_in_order(be: Backend, group, loss, ids, w, limit, *, before: bool):
    """Bool mask of the items taken per group in (loss, id) order: with ``before``, while the
    weight of the group's earlier items is below ``limit[group]``, else while the weight up to
    and including the item is at most ``limit[group]``."""
    xp = be.xp
    order = be.argsort_stable(ids)
    order = order[be.argsort_stable(loss[order])]
    order = order[be.argsort_stable(group[order])]
    gs, ws = group[order], w[order]
    cum = xp.cumsum(ws)
    first = xp.concatenate((xp.ones(1, dtype=xp.bool_), gs[1:] != gs[:-1]))
    start_at = xp.flatnonzero(first)
    seg = xp.cumsum(first.astype(xp.int64)) - 1
    base = (cum - ws)[start_at][seg]
    upto = cum - base
    ok = (upto - ws < limit[gs]) if before else (upto <= limit[gs])
    taken = xp.zeros(len(ids), dtype=xp.bool_)
    taken[order] = ok
    return taken


def own_neighbours_connected(be: Backend, g: DeviceGraph, part, cand, src):
    """Bool per vertex: a candidate (``cand``) with at least one neighbour in its own part, all
    of them connected by paths of at most two edges through its own part, not through the
    vertex itself (neighbours of degree above EXPAND_DEGREE contribute no paths: a sound
    under-estimate)."""
    xp = be.xp
    n = g.nvtxs
    slot_e = xp.flatnonzero(cand[src] & (part[src] == part[g.adjncy]))
    nslots = len(slot_e)
    has_slot = (be.counts(src[slot_e], n) > 0) if nslots else xp.zeros(n, dtype=xp.bool_)
    if not nslots:
        return has_slot
    sv = src[slot_e].astype(xp.int64)
    sa = g.adjncy[slot_e].astype(xp.int64)
    deg = (g.xadj[sa + 1] - g.xadj[sa]).astype(xp.int64)
    deg = xp.where(deg <= EXPAND_DEGREE, deg, 0)
    ends = xp.cumsum(deg)
    total = int(ends[-1])
    t = xp.arange(total, dtype=xp.int64)
    slot = xp.searchsorted(ends, t, side="right")
    b = g.adjncy[g.xadj[sa[slot]] + (t - (ends[slot] - deg[slot]))].astype(xp.int64)
    del t
    keep = (part[b] == part[sv[slot]]) & (b != sv[slot])
    slot, b = slot[keep], b[keep]
    # the local graph of each candidate v: nodes (v, x) for its own-part neighbours and theirs,
    # an edge from (v, a) to (v, b) for every own-part neighbour b of a
    keys = xp.concatenate((sv * n + sa, sv[slot] * n + b))
    nodes, node = xp.unique(keys, return_inverse=True)
    node = node.ravel().astype(xp.int32)
    i, j = node[slot], node[nslots:]
    i, j = xp.concatenate((i, j)), xp.concatenate((j, i))
    by_i = be.argsort_stable(i)
    xadj = xp.zeros(len(nodes) + 1, dtype=xp.int64)
    xp.cumsum(be.counts(i, len(nodes)), out=xadj[1:])
    comp = connected_components(be, xadj, j[by_i])[node[:nslots]]
    first_comp = xp.full(n, -1, dtype=xp.int32)
    first_comp[sv] = comp  # any one slot's component per vertex: all must agree
    split = be.bin_sums(sv.astype(xp.int32), n, (comp != first_comp[sv]).astype(xp.int32))
    return has_slot & (split == 0)


def min_over_neighbours(be: Backend, g: DeviceGraph, src, values):
    """Per vertex, the minimum of ``values`` (int64) over itself and its neighbours."""
    out = values.copy()
    if be.gpu:
        import cupyx

        cupyx.scatter_min(out, src, values[g.adjncy])
    else:
        np.minimum.at(out, src, values[g.adjncy])
    return out
