"""``-ptype=rb`` on the gpu and cpu engines: recursive bisection with METIS 5.1's semantics.

A piece holding ``c`` parts is bisected into a first half of ``c // 2`` parts and a second of
the rest, with target weights in the ratio of the halves' ``tpwgts`` sums; each bisection is
balanced on its own to the per-bisection imbalance (``-ufactor``, 1 by default for rb, or
``-ubvec``), as METIS's MlevelRecursiveBisection does. The cut edges of a bisection are dropped
and each side is split on, depth after depth.

The bisections of one depth run as one multilevel job: one stable sort by piece groups the
pieces' vertices, one pass keeps the edges inside a piece and renumbers them, giving one graph
whose components lie in the pieces; ``multilevel_bisections`` coarsens it (coarse vertices
inside pieces), bisects every piece's coarsest graph with METIS trials submitted together, and
refines the union with Jet in two parts per piece, no vertex leaving its piece's pair. So a
depth costs one multilevel run whatever its number of pieces (k - 1 bisections take
ceil(log2 k) runs); the partition does not depend on the backend.
"""

from __future__ import annotations

import numpy as np

from gpmetis.coarsening.weights import WeightedGraph
from gpmetis.device_graph import DeviceGraph
from gpmetis.options import Options
from gpmetis.partitioning.bisection_tree import Piece, bisection_targets
from gpmetis.partitioning.multilevel import RunStats, multilevel_bisections
from gpmetis.refinement.rebalance import fill_empty_parts

# seeds of the depths' runs: the run's seed plus the depth times this
DEPTH_SEED_STRIDE = 104729


def split_pieces(g: DeviceGraph, part, pieces: list[Piece]):
    """(vertices, labels, sub): the vertices of the ``pieces`` that hold at least two (the
    others have nothing to bisect), grouped by piece with ascending ids inside one; each one's
    piece (int32 index into ``pieces``, nondecreasing); and the graph they induce without the
    edges between pieces, numbered by position in ``vertices`` (rows in ascending order, each
    row's entries in the input's order): a disjoint union whose components lie in pieces."""
    be, xp = g.be, g.be.xp
    firsts = np.array([p.first for p in pieces])
    index = np.full(int(firsts.max()) + 1, len(pieces), dtype=np.int32)
    index[firsts] = np.arange(len(pieces), dtype=np.int32)
    label = be.asarray(index)[part]
    sizes = be.asnumpy(be.counts(label, len(pieces) + 1))
    small = np.flatnonzero(sizes[:-1] < 2)
    if len(small):  # a piece of one vertex keeps it in its first half
        index[firsts[small]] = len(pieces)
        label = be.asarray(index)[part]
    order = be.argsort_stable(label)
    vertices = order[:g.nvtxs - int(sizes[-1] + sizes[small].sum())]
    rank = xp.empty(g.nvtxs, dtype=xp.int32)
    rank[order] = xp.arange(g.nvtxs, dtype=xp.int32)
    src = be.sources(g.xadj, g.nnz)
    ends = label[src]
    inside = xp.flatnonzero((ends == label[g.adjncy]) & (ends < len(pieces)))
    new_src = rank[src[inside]]
    del src, ends
    by_row = be.argsort_stable(new_src)
    entries = inside[by_row]
    xadj = xp.zeros(len(vertices) + 1, dtype=xp.int64)
    xp.cumsum(be.counts(new_src, len(vertices)), out=xadj[1:])
    sub = DeviceGraph(be, xadj, rank[g.adjncy[entries]], g.adjwgt[entries], g.vwgt[vertices],
                      unit_adjwgt=g.unit_adjwgt)
    return vertices, label[vertices], sub


def recursive_partition(wg: WeightedGraph, tpwgts: np.ndarray, options: Options,
                        seed: int) -> tuple[object, RunStats]:
    """(part, stats): ``wg`` (int32 on its backend) in parts of targets ``tpwgts`` (nparts,
    ncon) by recursive bisection, every bisection within ``options.ubfactors`` of its targets
    in every constraint, where the bisections reach it; ``stats`` sums the depths' phase
    times."""
    def bisect(pieces: list[Piece], labels, sub: DeviceGraph, vertices, depth: int):
        targets = np.stack([bisection_targets(tpwgts, p) for p in pieces])
        return multilevel_bisections(wg.restricted(sub, vertices), labels, targets, options,
                                     seed + depth * DEPTH_SEED_STRIDE)

    return bisect_depths(wg.graph, len(tpwgts), bisect)


def bisect_depths(g: DeviceGraph, nparts: int, bisect) -> tuple[object, RunStats]:
    """(part, stats): ``nparts`` parts of ``g`` by bisecting each depth's pieces with
    ``bisect(pieces, labels, sub, vertices, depth)`` -> (halves, RunStats), given
    ``split_pieces``'s union: piece i's halves are 2i and 2i + 1. Empty parts are filled."""
    be, xp = g.be, g.be.xp
    stats = RunStats()
    part = xp.zeros(g.nvtxs, dtype=xp.int32)
    pieces = [Piece(0, nparts)] if nparts > 1 else []
    depth = 0
    while pieces:
        vertices, labels, sub = split_pieces(g, part, pieces)
        if len(vertices):
            halves, run = bisect(pieces, labels, sub, vertices, depth)
            stats.coarsening += run.coarsening
            stats.initial += run.initial
            stats.refinement += run.refinement
            # half h of piece i is part first + h * (count // 2)
            firsts = be.asarray(np.array([p.first for p in pieces], dtype=np.int32))
            nlefts = be.asarray(np.array([p.count // 2 for p in pieces], dtype=np.int32))
            piece = halves >> 1
            part[vertices] = firsts[piece] + (halves & 1) * nlefts[piece]
        del vertices, labels, sub
        pieces = [Piece(first, count) for p in pieces
                  for first, count in ((p.first, p.count // 2),
                                       (p.first + p.count // 2, p.count - p.count // 2))
                  if count > 1]
        depth += 1
    return fill_empty_parts(be, g, part, nparts), stats
