"""``-minconn``: lower the largest subdomain degree (the number of parts a part is adjacent to)
while keeping the cut close and every part within its limit. Vertex-level work is array code
on the engine's backend (CuPy on the gpu engine, NumPy on the cpu engine); the part-level
decisions (arrays of a few entries per part) are NumPy on the host, the same code for both
engines, so both give the same partition.

1. Elimination rounds, METIS's idea (minconn.c) in parallel: the subdomain graph (the cut
   weight between every two adjacent parts) gives each part its degree. While the largest
   degree is at least 1.4x the average, every part of high degree looks at its weak interfaces
   (weight below half its average interface) from the lightest up. An interface (me, other) goes
   when a group moves whole to a target part that ``me`` is already adjacent to: first the
   vertices of ``other`` adjacent to ``me``, else those of ``me`` adjacent to ``other``. The
   target is the group's most connected part that takes it within its limit and gains no new
   adjacent part, else the one whose degree grows least, never to the degree of ``me``, nor any
   other part's. Per round, operations on disjoint sets of parts run at once (the highest
   degree first).
2. Refinement rounds of single-vertex moves with gain > 0 into parts with room that create no
   new part adjacency (every part the vertex touches is already adjacent to its destination);
   no two adjacent vertices move in one round, so the checks stay true together.

A multi-constraint graph's (ncon, n) weights and (ncon, nparts) limits are checked per
constraint, as in contiguity.py: a group or a vertex fits where it fits in every constraint, a
part is over where it is over in any.

``minimize_connectivity`` builds a ``MinConn``, one call's state, whose methods are the steps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from gpmetis.backend import Backend, exact_bin_sums
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import connected_components
from gpmetis.refinement.contiguity import (
    PartitionRounds,
    hops_to_room,
    main_components,
    take_in_order,
)
from gpmetis.refinement.ncon_refiner import refine
from gpmetis.refinement.rebalance import rebalance_step

# up to this many parts the subdomain graph is a dense table of nparts^2 cut weights summed on
# the device (one histogram, one read-back of at most 512 KB) instead of a sort of the pairs;
# the groups' (group, part) connections likewise, up to as many entries
DENSE_PARTS = 256
GAIN_OFFSET = 2**31  # gains lie in (-2^31, 2^31): (offset - gain) * n + id fits an int64
NO_PRIORITY = np.int64(2**63 - 1)


def minimize_connectivity(be: Backend, g: DeviceGraph, part, balance: Balance,
                          cut_rounds: int, *, context: RefinementContext, weights=None):
    """(part, rounds): ``part`` with its largest subdomain degree lowered where groups of
    boundary vertices can move (module docstring), every part within ``balance``'s limits
    where rebalancing can reach them; ``weights``: (ncon, n) on the backend, or None (``g.vwgt``
    is the one constraint). rounds = (elimination rounds, rebalancing and refinement rounds).
    ``cut_rounds``: step 2's rounds, at most, once every part is within its limit (0 on a
    coarse level: the next finer level's refinement lowers the cut; the rebalancing rounds
    stay, as without them that refinement's rebalancing adds part adjacencies back)."""
    return MinConn(be, g, balance, context, weights).run(part, cut_rounds)


class Candidates(NamedTuple):
    """Step 1's candidate operations (host arrays, one entry per weak interface and scheme):
    the interface (``me``, ``other``) of cut weight ``wgt``; scheme 0 moves the vertices of
    ``other`` adjacent to ``me``, scheme 1 those of ``me`` adjacent to ``other``: the group of
    part ``frm``'s vertices adjacent to part ``to``."""

    me: np.ndarray
    other: np.ndarray
    scheme: np.ndarray
    wgt: np.ndarray
    frm: np.ndarray
    to: np.ndarray


class Groups(NamedTuple):
    """The groups of step 1 (host arrays): their sorted ``keys`` from * nparts + to (the
    vertices of part ``from`` adjacent to part ``to``), their ``weights`` (ncon, groups), the
    weights ``ext`` of their edges to the rest of ``from`` (int64 per group), and the parts
    they ``touch``: (group index, part, connection weight) sorted by (group, part), ``from``
    among them where they touch its rest."""

    keys: np.ndarray
    weights: np.ndarray
    ext: np.ndarray
    touch: tuple[np.ndarray, np.ndarray, np.ndarray]


class MinConn(PartitionRounds):
    """One ``minimize_connectivity`` call (module docstring): ``run`` runs its steps; each
    round takes the partition and returns the next one, or None. ``several``: weights were
    given (several constraints: the multi-constraint refinement loop is the fallback
    rebalancing)."""

    def __init__(self, be: Backend, g: DeviceGraph, balance: Balance,
                 context: RefinementContext, weights=None) -> None:
        super().__init__(be, g, balance, context, weights)
        self.several = weights is not None

    def run(self, part, cut_rounds: int):
        """``minimize_connectivity``'s (part, rounds)."""
        be, xp = self.be, self.be.xp
        part = self.merge_fragments(part.astype(xp.int32, copy=True))
        eliminations = 0
        while True:
            # the round that finds nothing to eliminate hands its subdomain graph to step 2
            pairs, sub = self.vertex_part_pairs(part)
            if eliminations == self.context.minconn_max_rounds:
                break
            moved = self.eliminate_round(part, pairs=pairs, sub=sub)
            if moved is None:
                break
            part = moved
            eliminations += 1
        refinements = 0
        while refinements < self.context.minconn_max_rounds:
            pw = be.asnumpy(self.part_weights(part))
            over = bool((pw > self.limits).any())
            if not over and refinements >= cut_rounds:
                break
            moved = self.constrained_round(part, rebalance=over, pairs=pairs, sub=sub, pw=pw)
            if moved is None and over:
                # no move out of the overweight parts keeps the subdomain graph: any
                # rebalancing
                moved = self._rebalance(part, pw)
            if moved is None:
                break
            part, pairs, sub = moved, None, None
            refinements += 1
        return part, (eliminations, refinements)

    def _rebalance(self, part, pw: np.ndarray):
        """A rebalancing step from the (ncon, nparts) host part weights ``pw``: the single-
        constraint one, or a multi-constraint graph's refinement loop moving to adjacent parts
        only (a distant part would gain a neighbour); None where nothing changes."""
        be, g = self.be, self.g
        if not self.several:
            moved = rebalance_step(be, g, part, self.balance, pw[0])
            return None if moved is part else moved
        moved, _ = refine(be, g, self.weights, part, replace(self.balance, adjacent_only=True),
                          context=self.context, finest=True,
                          patience=self.context.minconn_rebalance_patience)
        return None if bool((moved == part).all()) else moved

    def merge_fragments(self, part):
        """``part`` with each component of a part other than its heaviest moved whole to the
        adjacent part it is most connected to, where that part has room for it: it has no edge
        to the rest of its part, so the cut only falls, and its part loses the neighbours it
        gave."""
        be, g = self.be, self.g
        label = connected_components(be, g.xadj, g.adjncy, part)
        main = main_components(be, g, part, label)
        if bool(main.all()):
            return part
        return self.merge_components(part, label, main, must_fit=True)

    def vertex_part_pairs(self, part):
        """((v int64, q int32, conn int64), subdomain graph): per vertex v and other part q it
        is adjacent to, sorted by (v, q), the weight of v's edges into q; and
        ``subdomain_graph``'s (keys, weights) on the host."""
        be, g, xp, nparts = self.be, self.g, self.be.xp, self.nparts
        src = self.src
        pd = part[g.adjncy]
        e = xp.flatnonzero(part[src] != pd)
        keys = src[e].astype(xp.int64) * nparts + pd[e]
        uniq, inverse = xp.unique(keys, return_inverse=True)
        conn = be.bin_sums(inverse.astype(xp.int32).ravel(), len(uniq), g.adjwgt[e])
        pairs = (uniq // nparts, (uniq % nparts).astype(xp.int32), conn)
        if nparts > DENSE_PARTS:
            return pairs, self.subdomain_graph(part, pairs)
        # the cut weight of every ordered pair of parts by one histogram of the cut edges
        ids = part[src[e]] * np.int32(nparts) + pd[e]
        table = be.asnumpy(be.bin_sums(ids, nparts * nparts, g.adjwgt[e]))
        adjacent_pairs = np.flatnonzero(table)
        return pairs, (adjacent_pairs.astype(np.int64), table[adjacent_pairs])

    def subdomain_graph(self, part, pairs):
        """(keys, weights) on the host: the sorted int64 keys p * nparts + q of the adjacent
        part pairs (both orders) and the cut weight between them, from ``vertex_part_pairs``'s
        pairs."""
        be, xp = self.be, self.be.xp
        v, q, conn = pairs
        if not len(v):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        keys, inverse = xp.unique(part[v].astype(xp.int64) * self.nparts + q,
                                  return_inverse=True)
        weights = be.bin_sums(inverse.astype(xp.int32).ravel(), len(keys), conn)
        return be.asnumpy(keys), be.asnumpy(weights)

    def adjacent(self, xp, keys, a, b):
        """Bool per (a, b): the parts are adjacent in the subdomain graph of sorted ``keys``
        (arrays of the module ``xp``)."""
        wanted = a.astype(xp.int64) * self.nparts + b
        if not len(keys):
            return xp.zeros(len(wanted), dtype=xp.bool_)
        at = xp.minimum(xp.searchsorted(keys, wanted), len(keys) - 1)
        return keys[at] == wanted

    def eliminate_round(self, part, *, pairs=None, sub=None):
        """One round of step 1: the new partition, or None when the degrees are even enough or
        no group can move. ``pairs`` and ``sub``: ``part``'s ``vertex_part_pairs`` and
        ``subdomain_graph`` where known."""
        be, xp, nparts = self.be, self.be.xp, self.nparts
        if pairs is None:
            pairs, sub = self.vertex_part_pairs(part)
        keys, cut = sub
        p, q = keys // nparts, keys % nparts
        nads = np.bincount(p, minlength=nparts)
        avg, top = int(nads.sum()) // nparts, int(nads.max())
        bad_num, bad_den = self.context.minconn_bad_factor
        if top * bad_den < bad_num * avg or not top:
            return None
        totalout = exact_bin_sums(p, nparts, cut)
        weak = np.flatnonzero((nads[p] >= avg + (top - avg) // 2)
                              & (cut < -(-totalout[p] // (2 * nads[p]))))
        if not len(weak):
            return None
        # candidates: scheme 0 moves other's vertices adjacent to me, scheme 1 mine adjacent
        # to other
        me = np.concatenate((p[weak], p[weak]))
        other = np.concatenate((q[weak], q[weak]))
        scheme = np.repeat(np.arange(2), len(weak))
        cands = Candidates(me, other, scheme, np.concatenate((cut[weak], cut[weak])),
                           np.where(scheme == 0, other, me), np.where(scheme == 0, me, other))
        groups = self.groups(part, pairs, np.unique(cands.frm * nparts + cands.to))
        # elimination may fill a part up to the context's minconn_slack over its limit
        slack_num, slack_den = self.context.minconn_slack
        cap = self.limits + self.limits * slack_num // slack_den
        room = cap - be.asnumpy(self.part_weights(part))
        choice = self.choose_targets(keys, nads, room, groups, cands)
        if choice is None:
            return None
        chosen_keys, targets = choice
        v, vq, _ = pairs
        member_keys = part[v].astype(xp.int64) * nparts + vq
        chosen_d = xp.asarray(chosen_keys)
        at = xp.minimum(xp.searchsorted(chosen_d, member_keys), len(chosen_keys) - 1)
        hit = xp.flatnonzero(chosen_d[at] == member_keys)
        part = part.copy()
        part[v[hit]] = xp.asarray(targets, dtype=xp.int32)[at[hit]]
        return part

    def groups(self, part, pairs, group_keys: np.ndarray) -> Groups:
        """The ``Groups`` of the sorted host ``group_keys`` (from * nparts + to) of ``part``,
        from its ``vertex_part_pairs``'s pairs."""
        be, g, xp, nparts = self.be, self.g, self.be.xp, self.nparts
        weights = self.weights
        v, q, conn = pairs
        pair_keys = v * nparts + q
        member_keys = part[v].astype(xp.int64) * nparts + q
        keys = xp.asarray(group_keys)
        at = xp.minimum(xp.searchsorted(keys, member_keys), len(group_keys) - 1)
        hit = xp.flatnonzero(keys[at] == member_keys)
        mv, mg = v[hit], at[hit]
        ngroups = len(group_keys)
        # each member's edges to vertices of its part outside its group (not adjacent to ``to``)
        row, e = expand(xp, g.xadj[mv], g.xadj[mv + 1] - g.xadj[mv])
        u = g.adjncy[e].astype(xp.int64)
        wanted = u * nparts + q[hit][row]
        found = pair_keys[xp.minimum(xp.searchsorted(pair_keys, wanted), len(pair_keys) - 1)]
        outside = (part[u] == part[mv[row]]) & (found != wanted)
        rest = be.bin_sums(row.astype(xp.int32), len(mv), xp.where(outside, g.adjwgt[e], 0))
        del row, e, u, wanted, found, outside
        # every part each member touches: the member's own (v, q) entries, and its part
        first = xp.searchsorted(v, mv, side="left")
        count = xp.searchsorted(v, mv, side="right") - first
        owner, entry = expand(xp, first, count)
        tg = xp.concatenate((mg[owner], mg))
        tq = xp.concatenate((q[entry].astype(xp.int64), part[mv].astype(xp.int64)))
        tc = xp.concatenate((conn[entry], rest))
        if ngroups * nparts <= DENSE_PARTS**2:
            # one histogram, one read-back: a dense (group, part) table, then the groups'
            # weights per constraint; a group's edges to the rest of ``from`` are its entry at
            # part ``from``
            size = ngroups * nparts
            ids = xp.concatenate((tg * nparts + tq,
                                  *(size + c * ngroups + mg for c in range(len(weights)))))
            sums = be.asnumpy(be.bin_sums(ids.astype(xp.int32), size + len(weights) * ngroups,
                                          xp.concatenate((tc, *(w[mv].astype(xp.int64)
                                                                for w in weights)))))
            table, gw = sums[:size], sums[size:].reshape(len(weights), ngroups)
            tkeys = np.flatnonzero(table).astype(np.int64)
            ext = table[np.arange(ngroups) * nparts + group_keys // nparts]
            return Groups(group_keys, gw, ext, (tkeys // nparts, tkeys % nparts, table[tkeys]))
        keep = tc > 0
        tkeys, inverse = xp.unique(tg[keep] * nparts + tq[keep], return_inverse=True)
        tconn = be.bin_sums(inverse.astype(xp.int32).ravel(), len(tkeys), tc[keep])
        gw = xp.stack([be.bin_sums(mg.astype(xp.int32), ngroups, w[mv]) for w in weights])
        ext = be.bin_sums(mg.astype(xp.int32), ngroups, rest)
        tkeys = be.asnumpy(tkeys)
        return Groups(group_keys, be.asnumpy(gw), be.asnumpy(ext),
                      (tkeys // nparts, tkeys % nparts, be.asnumpy(tconn)))

    def choose_targets(self, keys: np.ndarray, nads: np.ndarray, room: np.ndarray,
                       groups: Groups, cands: Candidates):
        """Host part-level selection of a round (module docstring, step 1): (sorted group keys,
        their targets) of the operations run at once, or None. ``keys``: the subdomain graph's,
        ``nads`` the parts' degrees, ``room`` (ncon, nparts) what each part may still take."""
        nparts = self.nparts
        me, other, scheme, wgt, frm, to = cands
        gw, ext = groups.weights, groups.ext
        tg, tj, tconn = groups.touch
        gi = np.searchsorted(groups.keys, frm * nparts + to)
        tstart = np.searchsorted(tg, np.arange(len(groups.keys)), side="left")
        tcount = np.searchsorted(tg, np.arange(len(groups.keys)), side="right") - tstart
        # options: (candidate, target k) for every part the candidate's group touches
        c, t = expand(np, tstart[gi], tcount[gi])
        k = tj[t]
        ok = (k != frm[c]) & (k != to[c]) & self.adjacent(np, keys, me[c], k)
        ok &= (gw[:, gi[c]] <= room[:, k]).all(axis=0)
        c, t, k = c[ok], t[ok], k[ok]
        # the parts j the group touches that k is not adjacent to become k's new neighbours
        o, b = expand(np, tstart[gi[c]], tcount[gi[c]])
        j = tj[b]
        new = (j != k[o]) & ~self.adjacent(np, keys, k[o], j)
        bad = new & (nads[j] + 1 >= nads[me[c[o]]])
        nadd = np.bincount(o, weights=new, minlength=len(c)).astype(np.int64)
        ok = np.bincount(o, weights=bad, minlength=len(c)) == 0
        ok &= (nadd == 0) | (nads[k] + nadd < nads[me[c]])
        c, t, k, nadd = c[ok], t[ok], k[ok], nadd[ok]
        if not len(c):
            return None
        # what the move adds to the cut: the group's edges to the rest of ``from`` less its
        # edges into the target; at most minconn_cost_factor x the interface it removes
        delta = ext[gi[c]] - tconn[t]
        ok = -(-delta // self.context.minconn_cost_factor) <= wgt[c]  # exact near 2^63
        c, t, k, nadd, delta = c[ok], t[ok], k[ok], nadd[ok], delta[ok]
        if not len(c):
            return None
        # per part me the cheapest operation; among equals METIS's order: the candidate's
        # scheme, interface weight and other part, then targets gaining no neighbour (most
        # connected first), then those growing least
        grows = nadd > 0
        order = np.lexsort((k, -tconn[t], np.where(grows, nadd, 0),
                            np.where(grows, nads[k] + nadd, 0), grows, other[c], wgt[c],
                            scheme[c], delta, me[c]))
        first = order[np.r_[True, me[c[order[1:]]] != me[c[order[:-1]]]]]
        op_me, op_other, op_target = me[c[first]], other[c[first]], k[first]
        op_key = frm[c[first]] * nparts + to[c[first]]
        # operations on disjoint parts, the higher degree of me first (then its id)
        rank = np.empty(len(first), np.int64)
        rank[np.lexsort((op_me, -nads[op_me]))] = np.arange(len(first))
        parts = np.stack((op_me, op_other, op_target), axis=1)
        alive = np.ones(len(first), bool)
        chosen = np.zeros(len(first), bool)
        while alive.any():
            best = np.full(nparts, len(first), np.int64)
            np.minimum.at(best, parts[alive].ravel(), np.repeat(rank[alive], 3))
            won = alive & (best[parts] == rank[:, None]).all(axis=1)
            chosen |= won
            used = np.zeros(nparts, bool)
            used[parts[won].ravel()] = True
            alive &= ~used[parts].any(axis=1)
        by_key = np.argsort(op_key[chosen], kind="stable")
        return op_key[chosen][by_key], op_target[chosen][by_key]

    def constrained_round(self, part, *, rebalance: bool, pairs=None, sub=None, pw=None):
        """One round of step 2 (``rebalance``: step 3): the new partition, or None when no
        move is found. ``pairs``, ``sub`` and ``pw`` (host (ncon, nparts) part weights):
        ``part``'s, where known."""
        be, g, xp, nparts = self.be, self.g, self.be.xp, self.nparts
        n = g.nvtxs
        src, weights, limits = self.src, self.weights, self.limits
        if pairs is None:
            pairs, sub = self.vertex_part_pairs(part)
        v, q, conn = pairs
        if not len(v):
            return None
        host_keys = sub[0]
        keys = xp.asarray(host_keys)
        own = be.bin_sums(src, n, xp.where(part[src] == part[g.adjncy], g.adjwgt, 0))
        if pw is None:
            pw = be.asnumpy(self.part_weights(part))
        room = xp.asarray(limits - pw)
        over = (room < 0).any(axis=0)
        cap = room
        if rebalance:
            # moves go down the hop distance to a part with room in the subdomain graph: a full
            # part takes what it passes on in the next round
            hops = xp.asarray(hops_to_room(host_keys, limits - pw))
            cap = xp.where(hops == 0, room, xp.where(hops < nparts, NO_PRIORITY, 0))
        gain = conn - own[v]
        first = xp.searchsorted(v, v, side="left")
        count = xp.searchsorted(v, v, side="right") - first
        fits = xp.stack([w[v] <= c[q] for w, c in zip(weights, cap)]).all(axis=0)
        cand = (count <= self.context.minconn_checked_parts) & fits
        cand &= (over[part[v]] & (hops[q] < hops[part[v]])) if rebalance else (gain > 0)
        a = xp.flatnonzero(cand)
        if not len(a):
            return None
        # a destination q is allowed when every other part the vertex touches is adjacent to q
        owner, entry = expand(xp, first[a], count[a])
        fails = (q[entry] != q[a[owner]]) & ~self.adjacent(xp, keys, q[a[owner]], q[entry])
        a = a[be.bin_sums(owner.astype(xp.int32), len(a), fails.astype(xp.int32)) == 0]
        if not len(a):
            return None
        # per vertex the best allowed move (highest gain, then smaller part id: entries are
        # sorted)
        by = a[be.argsort_stable(-gain[a])]
        by = by[be.argsort_stable(v[by])]
        best = by[xp.concatenate((xp.ones(1, dtype=xp.bool_), v[by][1:] != v[by][:-1]))]
        mv = v[best].astype(xp.int32)
        dest = xp.full(n, -1, dtype=xp.int32)
        dest[mv] = q[best]
        priority = xp.full(n, NO_PRIORITY, dtype=xp.int64)
        priority[mv] = (GAIN_OFFSET - gain[best]) * n + mv
        # no two adjacent vertices move: the better one (gain, then id) goes
        mv = mv[self.min_over_neighbours(priority)[mv] == priority[mv]]
        if not len(mv):
            return None
        loss = priority[mv] // n - GAIN_OFFSET
        vw = xp.stack([w[mv] for w in weights]).astype(xp.int64)
        if rebalance:
            # per source the cheapest moves until its excess is covered
            take = take_in_order(be, part[mv], loss, mv, vw, -room, before=True)
            mv, loss, vw = mv[take], loss[take], vw[:, take]
        keep = take_in_order(be, dest[mv], loss, mv, vw, cap, before=False)
        mv = mv[keep]
        if not len(mv):
            return None
        part = part.copy()
        part[mv] = dest[mv]
        return part


def expand(xp, starts, counts):
    """(owner, at): for each item i, counts[i] entries at starts[i], starts[i] + 1, ...;
    owner the item's index, at the position (int64 both)."""
    ends = xp.cumsum(counts.astype(xp.int64))
    total = int(ends[-1]) if len(ends) else 0
    t = xp.arange(total, dtype=xp.int64)
    owner = xp.searchsorted(ends, t, side="right")
    return owner, starts[owner] + t - (ends[owner] - counts[owner])
