"""From a partition of the split graph to one part per edge, balanced, and what it costs.

Everything here is the same array code on both backends (NumPy and CuPy): stable sorts,
prefix sums and searches only, so the gpu and cpu engines give the same edge parts. Loops run
per round or per part, never per edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import Balance

BALANCE_ROUNDS = 8  # rounds of moves out of overweight parts; each leaves no receiver over


@dataclass
class EdgeSlots:
    """The input's edges in graph-file order (vertices in order, for vertex u its neighbours
    v > u in the order of u's row): ``slot`` (int64) the edge's slot in its lower endpoint's
    row, ``other`` (int64) its slot in the higher endpoint's row, ``load`` (int32; summed in
    int64) its weight;
    ``edge_of_slot`` (int64) the edge of every slot."""

    slot: object
    other: object
    load: object
    edge_of_slot: object

    @classmethod
    def of(cls, be: Backend, src, adjncy, partner, loads) -> EdgeSlots:
        xp = be.xp
        upper = src < adjncy
        slot = xp.flatnonzero(upper)
        rank = xp.cumsum(upper, dtype=xp.int64) - 1
        edge_of_slot = xp.where(upper, rank, rank[partner])
        load = (xp.ones(len(slot), dtype=xp.int32) if loads is None
                else loads[slot].astype(xp.int32))
        return cls(slot, partner[slot].astype(xp.int64), load, edge_of_slot)


@dataclass
class EdgeMetrics:
    """What an edge partition costs: ``copies`` (vertex copies: distinct (vertex, part) pairs
    over the vertices that have an edge), ``vertices`` (how many have one), part ``loads``
    (int64 NumPy) and ``limit`` (the balance limit of one part)."""

    copies: int
    vertices: int
    loads: np.ndarray
    limit: int

    @property
    def replication_factor(self) -> float:
        return self.copies / self.vertices if self.vertices else 0.0

    @property
    def copies_beyond_one(self) -> int:
        return self.copies - self.vertices

    @property
    def edge_balance(self) -> float:
        """The largest part's load over the average."""
        total = int(self.loads.sum())
        return float(self.loads.max()) * len(self.loads) / total if total else 0.0


def edge_parts(be: Backend, edges: EdgeSlots, split_part, balance: Balance):
    """(int32 part per edge on ``be``, dominant edges cut): each edge takes the part of its
    lower endpoint's slot; then ``balance_edges`` and ``fill_empty_parts``."""
    xp = be.xp
    part = split_part[edges.slot].astype(xp.int32)
    other = split_part[edges.other].astype(xp.int32)
    cut = int((part != other).sum())
    part = balance_edges(be, part, other, edges.load, balance)
    return fill_empty_parts(be, part, edges.load, balance.nparts), cut


def _within_groups(be: Backend, keys, values):
    """Inclusive prefix sums of ``values`` restarting at every run of equal ``keys`` (sorted)."""
    xp = be.xp
    total = xp.cumsum(values, dtype=xp.int64)
    first = xp.searchsorted(keys, keys, side="left")
    return total - (total[first] - values[first])


def balance_edges(be: Backend, part, other, load, balance: Balance):
    """Edge parts with every part's load within its limit (``balance``'s, one constraint: the
    loads; equal parts) where moves allow it.

    Each round first moves edges whose other slot lies in a part with room (a cut dominant edge:
    the move adds no copy of its lower endpoint that the split graph did not have), then, for
    what is still over, the lightest edges (then in edge order) of each overweight part into the
    parts with room, in part order, each whole inside one part's room (one that would straddle
    two waits for the next round). No receiver goes over; when no edge fits, the lightest edge
    of the heaviest part moves to the lightest part if that lowers their larger load. With unit
    loads every limit then holds; heavy edges may leave one over, which the metrics show.
    """
    xp = be.xp
    nparts, limit = balance.nparts, int(balance.limits[0].max())
    part, other = part.copy(), other.copy()
    for _ in range(BALANCE_ROUNDS):
        loads = be.bin_sums(part, nparts, load)
        excess = loads - limit
        if not bool((excess > 0).any()):
            break
        room = xp.maximum(-excess, 0)
        # free moves: to the part of the edge's other slot
        cand = xp.flatnonzero((part != other) & (excess[part] > 0) & (room[other] > 0))
        cand = cand[be.argsort_stable(part[cand])]
        need = _within_groups(be, part[cand], load[cand]) - load[cand] < excess[part[cand]]
        cand = cand[need]
        cand = cand[be.argsort_stable(other[cand])]
        fits = _within_groups(be, other[cand], load[cand]) <= room[other[cand]]
        moved = cand[fits]
        if len(moved):
            part[moved], other[moved] = other[moved], part[moved]
            continue
        # forced moves: the lightest edges of each overweight part (then in edge order) fill
        # the parts with room, in part order, each edge whole inside one part's room
        cand = xp.flatnonzero(excess[part] > 0)
        cand = cand[be.argsort_stable(load[cand])]
        cand = cand[be.argsort_stable(part[cand])]
        need = _within_groups(be, part[cand], load[cand]) - load[cand] < excess[part[cand]]
        cand = cand[need]
        ends = xp.cumsum(room)
        last = xp.cumsum(load[cand], dtype=xp.int64)
        dest = xp.searchsorted(ends, last, side="left")
        keep = dest < nparts
        keep[keep] &= last[keep] - load[cand][keep] >= ends[dest[keep]] - room[dest[keep]]
        moved, dest = cand[keep], dest[keep].astype(xp.int32)
        if not len(moved):
            # no edge fits a part's room: the lightest edge of the heaviest part goes to the
            # lightest part where that lowers the largest load of the two
            heavy, light = int(xp.argmax(loads)), int(xp.argmin(loads))
            edges = xp.flatnonzero(part == heavy)
            e = edges[int(xp.argmin(load[edges]))]
            if int(loads[light] + load[e]) >= int(loads[heavy]):
                break
            moved, dest = e[None], xp.full(1, light, dtype=xp.int32)
        other[moved] = part[moved]
        part[moved] = dest
    return part


def fill_empty_parts(be: Backend, part, load, nparts: int):
    """Edge parts with no part empty (there are at least ``nparts`` edges): the j-th empty
    part takes the j-th spare edge, spare edges being those after the first of their part,
    ordered by their part's load (heaviest first), then part id, then edge order."""
    xp = be.xp
    counts = be.counts(part, nparts)
    empty = xp.flatnonzero(counts == 0)
    if not len(empty):
        return part
    loads = be.bin_sums(part, nparts, load)
    order = be.argsort_stable(part)
    by_part = part[order]
    first = xp.searchsorted(by_part, by_part, side="left")
    spare = order[xp.arange(len(order)) != first]
    spare = spare[be.argsort_stable(-loads[part[spare]])]
    part = part.copy()
    part[spare[:len(empty)]] = empty.astype(xp.int32)
    return part


def edge_metrics(be: Backend, edges: EdgeSlots, src, part, balance: Balance,
                 nvertices_with_edges: int) -> EdgeMetrics:
    """The copies of ``part`` (per edge) counted over every slot's (vertex, part) pair, and the
    parts' loads against ``balance``'s limit."""
    xp = be.xp
    nparts, limit = balance.nparts, int(balance.limits[0].max())
    keys = src.astype(xp.int64) * nparts + part[edges.edge_of_slot]
    keys = xp.sort(keys)
    copies = int((keys[1:] != keys[:-1]).sum()) + 1 if len(keys) else 0
    loads = be.asnumpy(be.bin_sums(part, nparts, edges.load))
    return EdgeMetrics(copies, nvertices_with_edges, loads, limit)
