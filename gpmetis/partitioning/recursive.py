"""``-ptype=rb`` on the gpu and cpu engines: recursive bisection with METIS 5.1's semantics.

A piece holding ``c`` parts is bisected into a first half of ``c // 2`` parts and a second of
the rest, with target weights in the ratio of the halves' ``tpwgts`` sums; each bisection is
balanced on its own to the per-bisection imbalance (``-ufactor``, 1 by default for rb, or
``-ubvec``), as METIS's MlevelRecursiveBisection does. The cut edges of a bisection are dropped
and each side is split on, depth after depth.

All pieces of one depth are cut out of the graph together: one stable sort by piece groups their
vertices, one pass keeps the edges inside a piece and renumbers them, so every piece is a
contiguous range of one graph whose components are the pieces. Each range is then bisected by
the 2-way multilevel pipeline (coarsening, METIS trials, Jet refinement) on the engine's
backend, one after the other; the partition does not depend on the backend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpmetis.balance import max_part_weights
from gpmetis.device_graph import DeviceGraph
from gpmetis.options import Options
from gpmetis.partitioning.multilevel import RunStats, multilevel_partition
from gpmetis.refinement.rebalance import fill_empty_parts

# seeds of the bisections: the run's seed plus the piece's first part times this
PIECE_SEED_STRIDE = 104729


@dataclass(frozen=True)
class Piece:
    """The vertices that carry part id ``first`` and will hold parts [first, first + count)."""

    first: int
    count: int


def bisection_targets(tpwgts: np.ndarray, piece: Piece) -> np.ndarray:
    """(2, 1) target fractions of a piece's two halves: the first ``count // 2`` parts' share
    of the piece's target weight, and the rest (METIS's tpwgts2)."""
    tw = np.asarray(tpwgts, dtype=np.float64).reshape(-1)[piece.first:piece.first + piece.count]
    left = float(tw[:piece.count // 2].sum() / tw.sum())
    return np.array([[left], [1.0 - left]])


def split_pieces(g: DeviceGraph, part, pieces: list[Piece]):
    """(order, ranges, sub): ``order`` the vertex ids grouped by part id (ascending ids inside
    one), ``ranges`` (host int64, (len(pieces), 2)) each piece's [lo, hi) in ``order``, ``sub``
    the graph of those ranges: the edges whose ends share a piece, renumbered by position in
    ``order`` (rows in ascending order, each row's entries in the input's order)."""
    be, xp = g.be, g.be.xp
    order = be.argsort_stable(part)
    rank = xp.empty(g.nvtxs, dtype=xp.int32)
    rank[order] = xp.arange(g.nvtxs, dtype=xp.int32)
    counts = be.asnumpy(be.counts(part, int(max(p.first for p in pieces)) + 1))
    before = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    ranges = np.array([[before[p.first], before[p.first + 1]] for p in pieces], dtype=np.int64)
    src = be.sources(g.xadj, g.nnz)
    inside = xp.flatnonzero(part[src] == part[g.adjncy])
    new_src = rank[src[inside]]
    del src
    by_row = be.argsort_stable(new_src)
    entries = inside[by_row]
    xadj = xp.zeros(g.nvtxs + 1, dtype=xp.int64)
    xp.cumsum(be.counts(new_src, g.nvtxs), out=xadj[1:])
    sub = DeviceGraph(be, xadj, rank[g.adjncy[entries]], g.adjwgt[entries], g.vwgt[order],
                      unit_adjwgt=g.unit_adjwgt)
    return order, ranges, sub


def piece_graph(sub: DeviceGraph, lo: int, hi: int) -> DeviceGraph:
    """The vertices [lo, hi) of ``sub`` (a range closed under its edges) as a graph of their own."""
    xp = sub.be.xp
    e0, e1 = (int(x) for x in sub.be.asnumpy(sub.xadj[xp.asarray([lo, hi])]))
    return DeviceGraph(sub.be, sub.xadj[lo:hi + 1] - e0, sub.adjncy[e0:e1] - np.int32(lo),
                       sub.adjwgt[e0:e1], sub.vwgt[lo:hi], unit_adjwgt=sub.unit_adjwgt)


def recursive_partition(g: DeviceGraph, nparts: int, options: Options, tpwgts: np.ndarray,
                        seed: int) -> tuple[object, RunStats]:
    """(part, stats): ``nparts`` parts of ``g`` (int32 on g's backend) by recursive bisection,
    every bisection within ``options.ubfactors(1)`` of its targets; ``stats`` sums the
    bisections' phase times."""
    be, xp = g.be, g.be.xp
    stats = RunStats()
    part = xp.zeros(g.nvtxs, dtype=xp.int32)
    pieces = [Piece(0, nparts)] if nparts > 1 else []
    while pieces:
        order, ranges, sub = split_pieces(g, part, pieces)
        following = []
        for i, piece in enumerate(pieces):
            lo, hi = (int(x) for x in ranges[i])
            nleft = piece.count // 2
            if hi - lo >= 2:
                side, run = multilevel_partition(
                    piece_graph(sub, lo, hi), 2, options, bisection_targets(tpwgts, piece),
                    seed + piece.first * PIECE_SEED_STRIDE)
                stats.coarsening += run.coarsening
                stats.initial += run.initial
                stats.refinement += run.refinement
                part[order[lo:hi]] = side * np.int32(nleft) + np.int32(piece.first)
            # a piece of one vertex keeps it in its first half; empty parts are filled below
            for first, count in ((piece.first, nleft), (piece.first + nleft,
                                                        piece.count - nleft)):
                if count > 1:
                    following.append(Piece(first, count))
        del order, sub
        pieces = following
    return fill_empty_parts(be, g, part, nparts), stats


def bisection_balance(pwgts, tpwgts: np.ndarray, ubfactor: float) -> tuple[int, list[str]]:
    """(total excess, one line per bisection over its limit) of a recursive bisection's part
    weights: at every node of the bisection tree, each half may weigh at most
    ``max_part_weights`` of the node's weight with the halves' targets, the node's real weight
    (not its target) being what the bisection split, as in METIS."""
    pw = np.asarray(pwgts, dtype=np.int64).reshape(-1)
    excess = 0
    lines = []
    pieces = [Piece(0, len(pw))] if len(pw) > 1 else []
    while pieces:
        following = []
        for piece in pieces:
            nleft = piece.count // 2
            halves = [(piece.first, nleft), (piece.first + nleft, piece.count - nleft)]
            weights = np.array([[pw[f:f + c].sum()] for f, c in halves])
            limits = max_part_weights(np.array([weights.sum()]), bisection_targets(tpwgts, piece),
                                      [ubfactor])
            over = np.maximum(weights - limits, 0)[:, 0]
            excess += int(over.sum())
            for (first, count), w, lim, o in zip(halves, weights[:, 0], limits[:, 0], over):
                if o:
                    last = piece.first + piece.count - 1
                    lines.append(f"bisection of parts {piece.first}..{last}: parts "
                                 f"{first}..{first + count - 1} weigh {w}, {o} above "
                                 f"their limit {lim} (ufactor per bisection {ubfactor:g})")
                if count > 1:
                    following.append(Piece(first, count))
        pieces = following
    return excess, lines
