"""``-objtype=vol``: refinement that lowers METIS's total communication volume,
sum over v of vsize[v] x |F(v)|, F(v) the parts other than part[v] among v's neighbours.
Vectorised array code on the engine's backend (CuPy on the gpu engine, NumPy on the cpu
engine); both give the same partition.

Each round rebuilds the boundary table: the sorted (v, p) pairs, p in F(v), with v's
neighbour count and their vsize and edge-weight sums in p (METIS's per-vertex part lists).
Moving v from a to b changes the volume by (gain = the decrease):

    vsize[v] * [v has no neighbour in a]                       v's own term
  + sum of vsize[u], u in N(v), part[u] != a, v u's only neighbour in a      u loses a
  - sum of vsize[u], u in N(v), part[u] != b, no neighbour of u in b         u gains b

The candidates b are F(v) (METIS's too). The last sum is D(v) = sum of vsize over N(v), less
the u in b or with b in F(u): the latter come from intersecting F(v) with F(u) on every edge
between two boundary vertices, enumerating the shorter list and looking its parts up in the
other's. Each vertex takes its best move (volume gain, then cut gain, then the smaller part);
those that lower (volume, cut) are candidates. A move changes the terms of the vertex and its
neighbours; two moves change a common term by less than the sum of their gains only when one
enters the part the other leaves (that vertex keeps the part), so a candidate moves when it
ranks first among the candidates it clashes so with at a common vertex: the volume drops by at
least the moves' gains. (Keeping only moves that rank first within two edges, exact but
stricter, took twice the rounds on 3D grids.) Per destination the movers are kept in rank
order while they fit in its room: no move breaks a part's limit.

``refine_volume`` builds a ``VolumeRefinement``, one call's state, whose methods are the steps.
"""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.contiguity import PartitionRounds
from gpmetis.refinement.minconn import expand

# move scores pack (volume gain, cut gain) into one int64: the volume gain clamped to 31 bits
# (its sign, which decides whether a move is taken, is kept), the cut gain offset by 2^31
GAIN_CLAMP = 2**30 - 1
CUT_OFFSET = 2**31
EXPAND_CHUNK = 1 << 24  # intersection items made at once (working memory ~ 40 bytes each)


def communication_volume(be: Backend, g: DeviceGraph, part, nparts: int, vsize) -> int:
    """METIS's total communication volume of ``part`` into ``nparts`` parts (``vsize``: int64
    per vertex)."""
    table = BoundaryTable(be, g, part, nparts, be.sources(g.xadj, g.nnz), vsize)
    return int(be.xp.sum(vsize[table.owner]))


class BoundaryTable:
    """The sorted (vertex, foreign part) pairs of a partition into ``nparts`` parts, one per
    part in F(v): ``keys`` v * nparts + p (int64), ``owner`` v and ``dest`` p (int32), the
    neighbour ``count``, their vsize sum ``vconn`` and edge weight sum ``econn`` (int64); per
    vertex ``rows`` (int64 count of its pairs) and ``first`` (int64 index of its first pair);
    per adjacency entry ``cut`` (bool: its ends lie in different parts)."""

    def __init__(self, be: Backend, g: DeviceGraph, part, nparts: int, src, vsize) -> None:
        """The table of ``part`` (``src``: every adjacency entry's row)."""
        xp = be.xp
        self.nparts = nparts
        self.cut = part[src] != part[g.adjncy]
        cut = xp.flatnonzero(self.cut)
        keys = src[cut].astype(xp.int64) * nparts + part[g.adjncy[cut]]
        keys, inverse = xp.unique(keys, return_inverse=True)
        inverse = inverse.astype(xp.int32).ravel()
        npairs = len(keys)
        self.keys = keys
        self.owner = (keys // nparts).astype(xp.int32)
        self.dest = (keys % nparts).astype(xp.int32)
        self.count = be.bin_sums(inverse, npairs)
        self.vconn = be.bin_sums(inverse, npairs, vsize[g.adjncy[cut]])
        self.econn = be.bin_sums(inverse, npairs, g.adjwgt[cut])
        self.rows = be.counts(self.owner, g.nvtxs)
        self.first = xp.cumsum(self.rows) - self.rows

    def find(self, be: Backend, v, p):
        """(positions, found): where the pairs (``v``, ``p``) sit in the table, and which of
        them are there."""
        xp = be.xp
        keys = v.astype(xp.int64) * self.nparts + p
        pos = xp.minimum(xp.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        return pos, self.keys[pos] == keys


def refine_volume(be: Backend, g: DeviceGraph, part, balance: Balance, vsize, *,
                  context: RefinementContext, weights=None):
    """(part, rounds): ``part`` (int32, not changed) after rounds of volume-lowering moves that
    keep every part within ``balance``'s limits; ``vsize`` int64 per vertex. ``weights``:
    (ncon, n) on the backend, or None (``g.vwgt`` is the one constraint); every move keeps
    every constraint within its limit. Stops after the context's ``volume_max_rounds``, when a
    round lowers the volume by less than its ``volume_improvement``, or when none moves."""
    return VolumeRefinement(be, g, balance, context, vsize, weights).run(part)


class VolumeRefinement(PartitionRounds):
    """``refine_volume``'s rounds over one level: besides what every round shares, the vertex
    sizes ``vsize`` (int64 per vertex) and D(v), the vsize sum of v's neighbours, constant for
    the level."""

    def __init__(self, be: Backend, g: DeviceGraph, balance: Balance,
                 context: RefinementContext, vsize, weights=None) -> None:
        super().__init__(be, g, balance, context, weights)
        self.vsize = vsize
        self.nbr_vsize = be.bin_sums(self.src, g.nvtxs, vsize[g.adjncy])
        self.device_limits = be.xp.asarray(balance.limits, dtype=be.xp.int64)

    def table(self, part) -> BoundaryTable:
        """The boundary table of ``part``."""
        return BoundaryTable(self.be, self.g, part, self.nparts, self.src, self.vsize)

    def run(self, part):
        """``refine_volume``'s (part, rounds)."""
        xp = self.be.xp
        rounds = 0
        volume = None
        while rounds < self.context.volume_max_rounds:
            table = self.table(part)
            if not len(table.keys):
                break
            if volume is None:
                volume = int(xp.sum(self.vsize[table.owner]))
            moved = self.move_round(part, table)
            if moved is None:
                break
            part, gained = moved
            rounds += 1
            if gained < self.context.volume_improvement * volume:
                break
            volume -= gained
        return part, rounds

    def move_gains(self, part, table: BoundaryTable):
        """(volume gain, cut gain) of moving each pair's vertex to its part (int64 per pair of
        ``table``, ``part``'s): how much the volume and the edge cut drop."""
        be, g, xp = self.be, self.g, self.be.xp
        n = g.nvtxs
        src, vsize = self.src, self.vsize
        cut = table.cut
        own_w = be.bin_sums(src, n, xp.where(cut, 0, g.adjwgt))
        own_n = be.counts(src[~cut], n)
        # u loses foreign part a = part[v] when v is its only neighbour there
        e = xp.flatnonzero(cut)
        v, u = src[e], g.adjncy[e]
        pos, _ = table.find(be, u, part[v])
        last = table.count[pos] == 1
        leaves = be.bin_sums(v[last], n, vsize[u[last]])
        del e, v, u, pos, last
        shared = self._shared_sizes(table)
        v = table.owner
        gain = (xp.where(own_n[v] == 0, vsize[v], 0) + leaves[v] - self.nbr_vsize[v]
                + table.vconn + shared)
        return gain, table.econn - own_w[v]

    def move_round(self, part, table: BoundaryTable):
        """(new part, volume it saves) after one round of moves from ``part`` (``table``: its
        boundary table), or None when none moves."""
        be, xp = self.be, self.be.xp
        weights = self.weights
        gain, cut_gain = self.move_gains(part, table)
        v = table.owner
        room = self.device_limits - self.part_weights(part)
        # a vertex heads for the best part with room for it in every constraint (full parts
        # take what others leave)
        fits = xp.ones(len(v), dtype=xp.bool_)
        for w, r in zip(weights, room):
            fits &= w[v] <= r[table.dest]
        gain = xp.where(fits, gain, -GAIN_CLAMP)
        score = (xp.clip(gain, -GAIN_CLAMP, GAIN_CLAMP) * (2 * CUT_OFFSET)
                 + xp.clip(cut_gain, -CUT_OFFSET, CUT_OFFSET - 1) + CUT_OFFSET)
        # each vertex's best pair: the highest score, then the smallest part (pairs sorted by
        # part)
        best = _segment_max(be, table, score)
        pick = xp.flatnonzero(score == best[v])
        pick = pick[xp.concatenate((xp.ones(1, dtype=xp.bool_), v[pick][1:] != v[pick][:-1]))]
        pick = pick[(gain[pick] > 0) | ((gain[pick] == 0) & (cut_gain[pick] > 0))]
        if not len(pick):
            return None
        # in rank order: the best score first, then the smaller id (pick is in id order)
        pick = pick[be.argsort_stable(-score[pick])]
        pick = pick[self._first_of_clashes(part, v[pick], table.dest[pick])]
        pick = _fitting(be, part, room, v[pick], table.dest[pick], weights, pick)
        if not len(pick):
            return None
        movers = v[pick]
        part = part.copy()
        part[movers] = table.dest[pick]
        return part, int(xp.sum(gain[pick]))

    def _first_of_clashes(self, part, movers, dest):
        """Bool per mover (``movers`` in rank order, to ``dest``): it ranks before every mover
        that clashes with it, one that enters the part it leaves or leaves the part it enters,
        at a vertex both are or neighbour (each mover is a vertex of its own). Two such moves'
        gains may overstate their joint gain (a vertex keeps the part one leaves because the
        other enters it); any other two moves' joint gain is at least the sum of their gains
        (both leave or both enter a part, or parts apart), so the moves kept lower the volume
        by at least their gains."""
        be, g, xp, nparts = self.be, self.g, self.be.xp, self.nparts
        first = g.xadj[movers]
        owner, at = expand(xp, first, g.xadj[movers + 1] - first + 1)
        # each mover's items, in mover order: its neighbours, then itself
        self_item = at == g.xadj[movers + 1][owner]
        x = xp.where(self_item, movers[owner], g.adjncy[xp.where(self_item, 0, at)])
        x = x.astype(xp.int64)
        del at, self_item
        # keys (vertex, part, side): side 0 for the part a mover leaves, 1 for the one it enters
        keys = xp.concatenate(((x * nparts + part[movers][owner]) * 2,
                               (x * nparts + dest[owner]) * 2 + 1))
        ranks = xp.concatenate((owner, owner))
        del x
        order = be.argsort_stable(keys)
        keys, ranks = keys[order], ranks[order]
        # equal keys come from one side, in mover order, so the first of each has the least
        # rank
        heads = xp.flatnonzero(xp.concatenate((xp.ones(1, dtype=xp.bool_),
                                               keys[1:] != keys[:-1])))
        head_keys, head_ranks = keys[heads], ranks[heads]
        opposite = keys ^ 1
        found = xp.minimum(xp.searchsorted(head_keys, opposite), len(heads) - 1)
        clash = (head_keys[found] == opposite) & (head_ranks[found] < ranks)
        beaten = be.bin_sums(ranks.astype(xp.int32), len(movers), clash.astype(xp.int32))
        return beaten == 0

    def _shared_sizes(self, table: BoundaryTable):
        """Per pair (v, b): the vsize sum of v's neighbours u with b in F(u), over the edges
        between two boundary vertices, each intersecting F(v) and F(u) from the shorter
        list."""
        be, g, xp = self.be, self.g, self.be.xp
        src, vsize = self.src, self.vsize
        out = xp.zeros(len(table.keys), dtype=xp.int64)
        both = xp.flatnonzero((table.rows[src] > 0) & (table.rows[g.adjncy] > 0))
        if not len(both):
            return out
        v, u = src[both], g.adjncy[both]
        del both
        from_v = table.rows[v] <= table.rows[u]
        size = xp.where(from_v, table.rows[v], table.rows[u])
        ends = xp.cumsum(size)
        # ranges of edges of about EXPAND_CHUNK items each: the working memory follows the
        # range
        total = int(ends[-1])
        cuts = xp.searchsorted(ends, xp.arange(EXPAND_CHUNK, total, EXPAND_CHUNK,
                                               dtype=xp.int64))
        bounds = [0, *be.asnumpy(cuts).tolist(), len(v)]
        for e0, e1 in zip(bounds[:-1], bounds[1:]):
            if e0 == e1:
                continue
            base = ends[e0 - 1] if e0 else xp.zeros((), dtype=xp.int64)
            count = int(ends[e1 - 1] - base)
            t = xp.arange(count, dtype=xp.int64)
            slot = xp.searchsorted(ends[e0:e1] - base, t, side="right") + e0
            mine = t - (ends[slot] - size[slot] - base)
            del t
            fv = from_v[slot]
            vs, us = v[slot], u[slot]
            del slot
            mine += xp.where(fv, table.first[vs], table.first[us])
            other = xp.where(fv, us, vs)
            pos, found = table.find(be, other, table.dest[mine])
            at = xp.where(fv, mine, pos)[found]
            out += be.bin_sums(at.astype(xp.int32), len(out), vsize[us[found]])
        return out


def _fitting(be: Backend, part, room, movers, dest, weights, pick):
    """The items of ``pick`` whose moves (``movers`` to ``dest``, in rank order) are kept, in
    two passes, each constraint of ``weights`` (ncon, n; ``room`` (ncon, nparts)) checked: per
    destination in rank order while they fit in its room plus what all the moves take out of
    it; then the same with only what the kept moves into parts that need none of that credit
    in any constraint take out (those moves all stay in the second pass, so every part ends
    within its limits)."""
    xp = be.xp
    nparts = room.shape[1]
    w = [c[movers].astype(xp.int64) for c in weights]
    source = part[movers]
    keep = xp.ones(len(movers), dtype=xp.bool_)
    for wc, rc in zip(w, room):
        keep &= _take_in_rank_order(be, dest, wc, rc + be.bin_sums(source, nparts, wc))
    kept_w = [xp.where(keep, wc, 0) for wc in w]
    safe = xp.ones(nparts, dtype=xp.bool_)
    for kc, rc in zip(kept_w, room):
        safe &= be.bin_sums(dest, nparts, kc) <= rc
    for kc, rc in zip(kept_w, room):
        credit = be.bin_sums(source, nparts, xp.where(safe[dest], kc, 0))
        keep &= _take_in_rank_order(be, dest, kc, rc + credit)
    return pick[keep]


def _take_in_rank_order(be: Backend, dest, w, limit):
    """Bool per item (items in rank order): per destination, whether the weight ``w`` of its
    items up to and including this one is at most ``limit[dest]`` (``limit`` per part)."""
    xp = be.xp
    order = be.argsort_stable(dest)
    d = dest[order]
    totals = be.bin_sums(dest, len(limit), w)
    upto = xp.cumsum(w[order]) - (xp.cumsum(totals) - totals)[d]
    taken = xp.empty(len(dest), dtype=xp.bool_)
    taken[order] = upto <= limit[d]
    return taken


def _segment_max(be: Backend, table: BoundaryTable, values):
    """Per vertex, the largest of ``values`` (one per pair) over its pairs (int64; vertices
    without pairs: undefined)."""
    xp = be.xp
    if be.gpu:
        out = xp.full(len(table.rows), np.iinfo(np.int64).min, dtype=xp.int64)
        xp.maximum.at(out, table.owner, values)
        return out
    out = np.zeros(len(table.rows), dtype=np.int64)
    has = table.rows > 0
    out[has] = np.maximum.reduceat(values, table.first[has])
    return out
