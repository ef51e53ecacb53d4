"""``-contig``: make every part connected (the graph being connected), then rebalance without
splitting a part again. Vectorised array code on the engine's backend (CuPy on the gpu
engine, NumPy on the cpu engine); both give the same partition.

1. Components of the parts (``connected_components`` with the partition): each part keeps its
   heaviest component (ties: the one holding the smallest vertex id), its main one.
2. Every other component moves, whole, to the adjacent part whose main component it is most
   connected to (edge weight), among the parts with room for it, else among all; components
   touching no main component wait for the next round. A moved component joins a main one, so
   each round lowers the number of components and no two components swap forever.
3. While a part is over its limit: where every overweight part has an adjacent part with
   room for all its excess, each moves its excess there in one chunk (``move_chunks``: the
   vertices nearest that part, inside the part, and any pieces they cut off). Else the
   vertices of overweight parts that are adjacent to an open part (within its limit and
   lighter than every overweight part; it takes up to its room, or half its gap to them, so
   excess also diffuses through full parts over several rounds) and have a neighbour in
   their own part are candidates; a candidate moves only if no better candidate (loss, then
   id) lies within two edges, so no two movers are adjacent. Per source part the cheapest
   moves are taken until its excess is covered, per destination while they fit. Then the
   parts' components are recomputed, and every mover adjacent to a piece of its old part
   outside that part's main component (it was an articulation point) goes back: each such
   piece reached the main one through movers adjacent to pieces, all restored, so every part
   is connected again; a mover joins its new part as a vertex adjacent to it.
4. Rounds of moves that lower the cut (gain > 0, into parts with room) under the same rules,
   until a round lowers the cut by less than 1/``contig_refine_stop`` of it (the context's).

Weights are (ncon, n) and limits (ncon, nparts), one row per constraint (a single-constraint
graph: ``g.vwgt`` as one row): a part is over when it is over in any constraint and has room
when it has room in every one; a move or a merge fits when it fits in every constraint, and
excess is covered per constraint (a source gives while any of its constraints is over).

The entry points build a ``Contiguity``, one call's state, whose methods are the steps; its base
``PartitionRounds`` (the graph, its weights, the ``Balance``) serves minconn.py and volume.py too.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from gpmetis.backend import Backend, exact_bin_sums
from gpmetis.balance import Balance
from gpmetis.context import RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import connected_components, constraint_weights, edgecut

LOSS_OFFSET = 2**31  # losses lie in (-2^31, 2^31): (loss + offset) * n + id fits an int64
NO_PRIORITY = np.int64(2**63 - 1)
UNLIMITED = np.int64(2**62)  # the cap of a full part on the way to parts with room


def make_contiguous(be: Backend, g: DeviceGraph, part, balance: Balance, *,
                    context: RefinementContext, weights=None):
    """(part, rounds): ``part`` with every part connected (``g`` connected), over ``balance``'s
    limits (with ``weights``, (ncon, n) on the backend, per constraint and part) only where
    rebalancing found no move that keeps the parts connected; rounds = (merging rounds,
    rebalancing rounds)."""
    return Contiguity(be, g, balance, context, weights).repair(part)


def rebalance_connected(be: Backend, g: DeviceGraph, part, balance: Balance, *,
                        context: RefinementContext, weights=None):
    """One round of moves out of the parts over ``balance``'s limits that keeps every part
    connected (module docstring, step 3: chunks first, else single vertices): the new
    partition, or None when no part is overweight or nothing can move."""
    return Contiguity(be, g, balance, context, weights).rebalance_round(part, chunks=True)[0]


def refine_connected(be: Backend, g: DeviceGraph, part, balance: Balance, *,
                     context: RefinementContext, weights=None):
    """One round of cut-lowering moves (gain > 0, into parts with room under ``balance``) that
    keeps every part connected, under step 3's rules: the new partition, or None when none
    moves."""
    return Contiguity(be, g, balance, context, weights).refine_round(part)


class PartitionRounds:
    """What the rounds of one call over partitions of ``g`` share (-contig's, -minconn's,
    -objtype=vol's): the backend, the graph, the refinement ``context``, its constraint
    ``weights`` ((ncon, n) on the backend, ``g.vwgt`` as the one row where None is given), the
    ``balance`` the parts keep
    (``limits``: (ncon, nparts) int64 on the host) and every adjacency entry's row ``src``,
    built on first use."""

    def __init__(self, be: Backend, g: DeviceGraph, balance: Balance,
                 context: RefinementContext, weights=None) -> None:
        self.be, self.g, self.balance, self.context = be, g, balance, context
        self.weights = g.vwgt[None, :] if weights is None else weights
        self.nparts = balance.nparts
        self.limits = balance.limits

    @cached_property
    def src(self):
        """The source vertex (int32) of every adjacency entry of ``g``."""
        return self.be.sources(self.g.xadj, self.g.nnz)

    def part_weights(self, part):
        """(ncon, nparts) int64 on the backend: each part's weight in each constraint."""
        return constraint_weights(self.be, self.weights, part, self.nparts)

    def min_over_neighbours(self, values):
        """Per vertex, the minimum of ``values`` (int64) over itself and its neighbours."""
        return _scatter_min(self.be, values.copy(), self.src, values[self.g.adjncy])

    def merge_components(self, part, label, main, *, must_fit: bool = False):
        """``part`` with each non-main component (``label``: the components of the parts,
        ``main``: ``main_components``) that touches a main component of another part moved to
        the most connected one of those parts (those with room for it in every constraint
        first; with ``must_fit``, only to those)."""
        be, g, xp, nparts = self.be, self.g, self.be.xp, self.nparts
        n = g.nvtxs
        src = self.src
        edge = xp.flatnonzero(~main[src] & main[g.adjncy])
        comp = label[src[edge]].astype(xp.int64)
        dest = part[g.adjncy[edge]].astype(xp.int64)
        keys = comp * nparts + dest
        uniq, inverse = xp.unique(keys, return_inverse=True)
        conn = be.bin_sums(inverse.astype(xp.int32).ravel(), len(uniq), g.adjwgt[edge])
        comp, dest = uniq // nparts, uniq % nparts
        cw = xp.stack([be.bin_sums(label, n, w)[comp] for w in self.weights])
        pw = self.part_weights(part)
        fits = (pw[:, dest] + cw <= xp.asarray(self.limits)[:, dest]).all(axis=0)
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


class Contiguity(PartitionRounds):
    """One ``-contig`` repair (module docstring): ``repair`` runs its steps; each round takes
    the partition and returns the next one, or None."""

    @cached_property
    def unit(self) -> np.ndarray:
        """Per constraint the mean weight of the vertices that weigh in it, rounded up (host
        int64): a part with less room than that in some constraint passes excess on rather than
        taking it, as a full part does (a vertex heavier than a part's room cannot enter it)."""
        xp, be = self.be.xp, self.be
        sums = be.asnumpy(xp.stack([w.sum(dtype=xp.int64) for w in self.weights]))
        counts = be.asnumpy(xp.stack([xp.count_nonzero(w) for w in self.weights]))
        return -(-sums // np.maximum(counts, 1))

    def repair(self, part):
        """``make_contiguous``: steps 1 and 2 until every part is connected, then step 3's
        rounds (at most the context's ``contig_max_rounds``), then step 4's."""
        be, g, xp = self.be, self.g, self.be.xp
        part = part.astype(xp.int32, copy=True)
        merges = 0
        while True:
            label = connected_components(be, g.xadj, g.adjncy, part)
            main = main_components(be, g, part, label)
            if bool(main.all()):
                break
            part = self.merge_components(part, label, main)
            merges += 1
        rebalances = 0
        chunks = True
        while rebalances < self.context.contig_max_rounds:
            moved, chunks = self.rebalance_round(part, chunks)
            if moved is None:
                break
            part = moved
            rebalances += 1
        cut = None
        for _ in range(self.context.contig_refine_rounds):
            moved = self.refine_round(part)
            if moved is None:
                break
            if cut is None:
                cut = edgecut(be, self.src, g.adjncy, g.adjwgt, part)
            part, before, cut = moved, cut, edgecut(be, self.src, g.adjncy, g.adjwgt, moved)
            # each round costs a components search
            if (before - cut) * self.context.contig_refine_stop < before:
                break
        return part, (merges, rebalances)

    def rebalance_round(self, part, chunks: bool):
        """(``rebalance_connected``'s partition, whether later rounds may try chunks): with
        ``chunks``, chunks where they serve every overweight part; once every chunk of a round
        went back, later rounds move single vertices only."""
        be, g, xp = self.be, self.g, self.be.xp
        host_pw = be.asnumpy(self.part_weights(part))
        over = (host_pw > self.limits).any(axis=0)
        if not over.any():
            return None, chunks
        src = self.src
        ps, pd = part[src], part[g.adjncy]
        cut = ps != pd
        keys = ps[cut].astype(xp.int64) * self.nparts + pd[cut]
        del ps, pd
        if not chunks:
            del cut
            keys = be.asnumpy(xp.unique(keys))
            return self._connected_round(part, False, keys=keys, host_pw=host_pw), chunks
        keys, inverse = xp.unique(keys, return_inverse=True)
        conn = be.bin_sums(inverse.astype(xp.int32).ravel(), len(keys), g.adjwgt[cut])
        keys, conn = be.asnumpy(keys), be.asnumpy(conn)
        del cut, inverse
        room = self.limits - host_pw
        to, amount = plan_chunks(keys, conn, room)
        # chunks only where they serve every overweight part: alternating with rounds of single
        # vertices would halve the pace of the excess travelling through full parts
        if ((to >= 0) == over).all():
            moved = self.move_chunks(part, to, amount, room)
            if moved is not None:
                return moved, True
            chunks = False
        return self._connected_round(part, False, keys=keys, host_pw=host_pw), chunks

    def move_chunks(self, part, to: np.ndarray, amount: np.ndarray, room: np.ndarray):
        """``part`` with the chunks of ``plan_chunks`` moved, or None when none could: a chunk
        is the prefix, in (distance, loss, id) order, of its part's vertices within the
        context's ``contig_chunk_depth`` edges of the destination (inside the part), while the
        weight before a vertex is below ``amount`` in some constraint (``amount`` and
        ``room``: (ncon, nparts) on the host);
        every vertex at distance d > 0 has a neighbour at d - 1 before it, so the destination
        stays connected. Pieces the chunk cuts off its part (they touched the rest only through
        the chunk) follow it, unless they outweigh it in a constraint (a chunk that cuts off
        more is a poor cut: on a social graph, a chunk of 37 cut off 112 and raised the cut by
        18%) or chunk and pieces together overfill the destination's ``room``: then the part
        keeps all of it. Every accepted move lowers the total excess."""
        be, g, xp, nparts = self.be, self.g, self.be.xp, self.nparts
        n = g.nvtxs
        src, weights = self.src, self.weights
        t = xp.asarray(to, dtype=xp.int32)[part]  # per vertex: its part's destination, or -1
        ts, pd = t[src], part[g.adjncy]
        inside = xp.flatnonzero((ts >= 0) & (part[src] == pd))
        dist = xp.full(n, self.context.contig_chunk_depth + 1, dtype=xp.int32)
        dist[src[pd == ts]] = 0
        s_in, d_in = src[inside], g.adjncy[inside]
        for _ in range(self.context.contig_chunk_depth):
            _scatter_min(be, dist, s_in, dist[d_in] + 1)
        own = be.bin_sums(src, n, xp.where(part[src] == pd, g.adjwgt, 0))
        into = be.bin_sums(src, n, xp.where(pd == ts, g.adjwgt, 0))
        del ts, pd, inside, s_in, d_in
        cand = xp.flatnonzero(dist <= self.context.contig_chunk_depth).astype(xp.int32)
        order = dist[cand].astype(xp.int64) * 2**32 + (own[cand] - into[cand] + LOSS_OFFSET)
        vw = xp.stack([w[cand] for w in weights]).astype(xp.int64)
        take = take_in_order(be, part[cand], order, cand, vw, xp.asarray(amount), before=True)
        chunk = cand[take]
        moved = part.copy()
        moved[chunk] = t[chunk]
        label = connected_components(be, g.xadj, g.adjncy, moved)
        cut_off = ~main_components(be, g, moved, label)
        sent = constraint_weights(be, [w[chunk] for w in weights], part[chunk], nparts)
        pieces = be.asnumpy(constraint_weights(be, [xp.where(cut_off, w, 0) for w in weights],
                                               moved, nparts))
        sent = be.asnumpy(sent)
        keep = ((to >= 0) & (sent > 0).any(axis=0) & (pieces <= sent).all(axis=0)
                & (sent + pieces <= room[:, np.maximum(to, 0)]).all(axis=0))
        if not keep.any():
            return None
        kept = xp.asarray(keep)
        moved = xp.where(kept[part] & ((moved != part) | cut_off), t, part).astype(xp.int32)
        return moved

    def refine_round(self, part):
        """``refine_connected``: one round of step 4."""
        return self._connected_round(part, True)

    def _connected_round(self, part, refine: bool, keys=None, host_pw=None):
        """A round of step 3 (not ``refine``: given the sorted adjacent part pairs ``keys`` and
        the host part weights ``host_pw``, a part being over its limit) or step 4."""
        be, g, xp, nparts = self.be, self.g, self.be.xp, self.nparts
        n = g.nvtxs
        weights = self.weights
        pw = self.part_weights(part) if host_pw is None else xp.asarray(host_pw)
        device_limits = xp.asarray(self.limits)
        room = device_limits - pw
        over = (room < 0).any(axis=0)
        has_room = (room > 0).all(axis=0)
        src = self.src
        ps, pd = part[src], part[g.adjncy]
        if refine:
            over = xp.ones(nparts, dtype=xp.bool_)
            toward = has_room[pd] & (pd != ps)
            cap = room
        else:
            # destinations: down the hop distance to a part with room in the part graph; a full
            # part takes what it passes on in later rounds, so excess flows through full parts
            hops = xp.asarray(hops_to_room(keys, self.limits - host_pw, self.unit))
            # ... and lighter than the source where full (of several constraints: its largest
            # weight relative to its limit smaller): no excess piles up in a part that cannot
            # pass it on
            size = pw[0] if len(weights) == 1 else (pw / xp.maximum(device_limits, 1)).max(axis=0)
            toward = (hops[pd] < hops[ps]) & ((hops[pd] == 0) | (size[pd] < size[ps]))
            cap = xp.where(hops == 0, room, xp.where(hops < nparts, UNLIMITED, 0))
        own = be.bin_sums(src, n, xp.where(ps == pd, g.adjwgt, 0))
        # best destination per candidate vertex: an adjacent destination part, one with room
        # first, then the most connected (ties: smaller part id)
        e = xp.flatnonzero(over[ps] & toward)
        if not len(e):
            return None
        dest, loss = self._destinations(src[e], pd[e], g.adjwgt[e], has_room, own)
        cand = (dest >= 0) & (own > 0)  # a vertex alone in its part never leaves it
        if refine:
            cand &= loss < 0
        # no two candidates within two edges of each other move: the better one (loss, then id)
        # goes, so nothing within two edges of a moved vertex moves (its detours stay)
        priority = xp.where(cand, (loss + LOSS_OFFSET) * n + xp.arange(n, dtype=xp.int64),
                            NO_PRIORITY)
        best = self.min_over_neighbours(self.min_over_neighbours(priority))
        cand &= best == priority
        movers = xp.flatnonzero(cand).astype(xp.int32)
        if not len(movers):
            return None
        del ps, pd
        vw = xp.stack([w[movers] for w in weights]).astype(xp.int64)
        if not refine:
            # sources: by (part, loss, id), taken while the weight before one is below the
            # excess
            take = take_in_order(be, part[movers], loss[movers], movers, vw, -room, before=True)
            movers, vw = movers[take], vw[:, take]
        # destinations: the same order, kept while they fit in the cap
        keep = take_in_order(be, dest[movers], loss[movers], movers, vw, cap, before=False)
        movers = movers[keep]
        if not len(movers):
            return None
        moved = part.copy()
        moved[movers] = dest[movers]
        return self._connected_moves(part, moved, movers, None if refine else -room)

    def _destinations(self, tails, pd, adjwgt, has_room, own):
        """(dest, loss) per vertex for the candidate entries (``tails`` -> part ``pd``, weight
        ``adjwgt``): its adjacent destination part, one with room first, then the most
        connected (ties: smaller part id), -1 where none; and the cut its move adds (``own``:
        its edges into its part)."""
        be, xp, nparts = self.be, self.be.xp, self.nparts
        n = self.g.nvtxs
        uniq, inverse = xp.unique(tails.astype(xp.int64) * nparts + pd, return_inverse=True)
        conn = be.bin_sums(inverse.astype(xp.int32).ravel(), len(uniq), adjwgt.astype(xp.int32))
        v, q = uniq // nparts, (uniq % nparts).astype(xp.int32)
        order = be.argsort_stable(-conn)
        order = order[be.argsort_stable(~has_room[q[order]])]
        order = order[be.argsort_stable(v[order])]
        vo = v[order]
        first = order[xp.concatenate((xp.ones(1, dtype=xp.bool_), vo[1:] != vo[:-1]))]
        cand_v = v[first].astype(xp.int32)
        dest = xp.full(n, -1, dtype=xp.int32)
        dest[cand_v] = q[first]
        loss = xp.zeros(n, dtype=xp.int64)
        loss[cand_v] = own[cand_v] - conn[first]
        return dest, loss

    def _connected_moves(self, part, moved, movers, excess):
        """``moved`` where every part stays connected; else, where ``excess`` (ncon, nparts,
        under rebalancing) is given, the pieces that movers cut off their old parts follow them
        (``_follow``) where that works; else the movers that cut a piece off go back (None
        where that is every mover)."""
        be, g, xp = self.be, self.g, self.be.xp
        n = g.nvtxs
        src = self.src
        label = connected_components(be, g.xadj, g.adjncy, moved)
        main = main_components(be, g, moved, label)
        if bool(main.all()):
            return moved
        # movers that were articulation points cut pieces off their old parts (module docstring)
        is_mover = xp.zeros(n, dtype=xp.bool_)
        is_mover[movers] = True
        e = xp.flatnonzero(~main[src] & is_mover[g.adjncy] & (part[g.adjncy] == moved[src]))
        piece, m = label[src[e]], g.adjncy[e]
        if excess is not None:
            with_pieces = self._follow(part, moved, label, piece, m, excess)
            if with_pieces is not None:
                return with_pieces
        back = movers[be.counts(m, n)[movers] > 0]
        if len(back) == len(movers):
            return None
        moved[back] = part[back]
        return moved

    def _follow(self, part, moved, label, piece, m, excess):
        """``moved`` with the pieces cut off their parts following their movers where every
        mover a piece touches goes to one part and the piece weighs at most its part's
        ``excess`` (ncon, nparts) in each constraint its part is over in, the movers of the
        other pieces back: the new partition if every part is connected, else None."""
        be, g, xp = self.be, self.g, self.be.xp
        n = g.nvtxs
        to = moved[m]
        lowest = _scatter_min(be, xp.full(n, np.iinfo(np.int32).max, dtype=xp.int32), piece, to)
        highest = -_scatter_min(be, xp.zeros(n, dtype=xp.int32), piece, -to)
        weight = xp.stack([be.bin_sums(label, n, w) for w in self.weights])
        ex = excess[:, part]  # per (constraint, vertex): the excess of the vertex's part
        within = (weight <= ex) | ((ex <= 0) & (ex > 0).any(axis=0))
        ok = (lowest == highest) & within.all(axis=0)
        while True:  # pieces touching a mover that goes back go back too, until none changes
            back = xp.zeros(n, dtype=xp.bool_)
            back[m[~ok[piece]]] = True
            stays = ok.copy()
            stays[piece[back[m]]] = False
            if bool((stays == ok).all()):
                break
            ok = stays
        moved = moved.copy()
        moved[m[back[m]]] = part[m[back[m]]]
        roots = xp.unique(piece[ok[piece]])
        follows = xp.zeros(n, dtype=xp.bool_)
        follows[roots] = True
        vertices = xp.flatnonzero(follows[label])
        if not len(vertices):
            return None
        moved[vertices] = lowest[label[vertices]]
        label = connected_components(be, g.xadj, g.adjncy, moved)
        return moved if bool(main_components(be, g, moved, label).all()) else None


def main_components(be: Backend, g: DeviceGraph, part, label):
    """Bool per vertex: it lies in its part's heaviest component (``label``: the components of
    the parts; ties: smallest label)."""
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


def plan_chunks(keys: np.ndarray, conn: np.ndarray,
                room: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Host part-level plan of a chunk round: per part the part its chunk goes to (-1: none)
    and the chunk's weight per constraint ((ncon, nparts)), from the parts' ``room`` (their
    limits less their weights, (ncon, nparts)), the sorted keys p * nparts + q of the adjacent
    part pairs and their cut weights. Each overweight part sends its excess to its most
    connected adjacent part with room for all of it (ties: the smaller id); a part takes from
    one sender only (the most overweight, then the smaller id), so chunks never meet. (Excess
    that no adjacent part can take whole travels by single vertices, through full parts.)"""
    nparts = room.shape[1]
    excess = np.maximum(-room, 0)
    p, q = keys // nparts, keys % nparts
    i = np.flatnonzero((excess[:, p] > 0).any(axis=0) & (room[:, q] >= excess[:, p]).all(axis=0))
    i = i[np.lexsort((q[i], -conn[i], p[i]))]
    i = i[np.r_[True, p[i][1:] != p[i][:-1]]] if len(i) else i
    i = i[np.lexsort((p[i], room.min(axis=0)[p[i]], q[i]))]
    i = i[np.r_[True, q[i][1:] != q[i][:-1]]] if len(i) else i
    to = np.full(nparts, -1, dtype=np.int64)
    amount = np.zeros(room.shape, dtype=np.int64)
    to[p[i]] = q[i]
    amount[:, p[i]] = excess[:, p[i]]
    return to, amount


def _scatter_min(be: Backend, out, idx, values):
    """``out`` with out[idx[i]] = min(out[idx[i]], values[i]) for every i."""
    be.xp.minimum.at(out, idx, values)
    return out


def hops_to_room(pairs: np.ndarray, room: np.ndarray,
                 unit: np.ndarray | None = None) -> np.ndarray:
    """Per part, the fewest part-graph edges (sorted keys p * nparts + q of the adjacent pairs)
    to a part with room (``room`` (ncon, nparts): at least ``unit`` (per constraint, default 1)
    in every constraint; nparts where none is reachable)."""
    nparts = room.shape[1]
    unit = np.ones(len(room), np.int64) if unit is None else np.asarray(unit)
    has_room = (room >= unit[:, None]).all(axis=0)
    hops = np.where(has_room, 0, nparts).astype(np.int64)
    p, q = pairs // nparts, pairs % nparts
    while True:
        nearer = hops.copy()
        np.minimum.at(nearer, p, hops[q] + 1)
        if (nearer == hops).all():
            return hops
        hops = nearer


def take_in_order(be: Backend, group, loss, ids, w, limit, *, before: bool):
    """Bool mask of the items taken per group in (loss, id) order: with ``before``, while the
    weight of the group's earlier items is below ``limit[group]`` (in some constraint), else
    while the weight up to and including the item is at most ``limit[group]`` (in every
    constraint). ``w`` per item or (ncon, items), ``limit`` per group or (ncon, groups)."""
    xp = be.xp
    w = w.reshape(-1, len(ids))
    limit = limit.reshape(len(w), -1)
    order = be.argsort_stable(ids)
    order = order[be.argsort_stable(loss[order])]
    order = order[be.argsort_stable(group[order])]
    gs, ws = group[order], w[:, order]
    cum = xp.cumsum(ws, axis=1)
    first = xp.concatenate((xp.ones(1, dtype=xp.bool_), gs[1:] != gs[:-1]))
    start_at = xp.flatnonzero(first)
    seg = xp.cumsum(first.astype(xp.int64)) - 1
    base = (cum - ws)[:, start_at][:, seg]
    upto = cum - base
    lim = limit[:, gs]
    ok = (upto - ws < lim).any(axis=0) if before else (upto <= lim).all(axis=0)
    taken = xp.zeros(len(ids), dtype=xp.bool_)
    taken[order] = ok
    return taken




def fill_empty_parts_connected(be: Backend, g: DeviceGraph, part, nparts: int, tries: int):
    """``fill_empty_parts`` for ``-contig`` (on the cpu backend: METIS's partitions, which may
    leave parts empty): each empty part takes a vertex of the heaviest part of two or more
    vertices whose part stays connected without it (the fewest neighbours in its part first,
    at most ``tries`` checked a part; a vertex with one such neighbour always qualifies). A
    part whose vertices all hold it together gives none. Returns a new array."""
    part = part.astype(np.int32, copy=True)
    pw = exact_bin_sums(part, nparts, g.vwgt)
    size = np.bincount(part, minlength=nparts)
    for empty in np.flatnonzero(size == 0):
        for donor in np.argsort(-pw, kind="stable"):
            if size[donor] < 2:
                continue
            mover = _connected_mover(be, g, part, int(donor), tries)
            if mover is not None:
                part[mover] = empty
                pw[donor] -= g.vwgt[mover]
                pw[empty] += g.vwgt[mover]
                size[donor] -= 1
                size[empty] = 1
                break
    return part


def _connected_mover(be: Backend, g: DeviceGraph, part, donor: int, tries: int) -> int | None:
    """A vertex of part ``donor`` whose part stays connected without it, or None."""
    members = np.flatnonzero(part == donor)
    src = g.src
    inside = np.bincount(src[(part[src] == donor) & (part[g.adjncy] == donor)],
                         minlength=g.nvtxs)[members]
    for v in members[np.argsort(inside, kind="stable")[:tries]]:
        trial = part.copy()
        trial[v] = -1
        label = connected_components(be, g.xadj, g.adjncy, trial)
        if len(np.unique(label[members[members != v]])) == 1:
            return int(v)
    return None
