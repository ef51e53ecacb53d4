"""Initial partition of the coarsest graph: METIS trials on the CPU cores.

When coarsening reached its target, the coarsest graph is what METIS's own k-way scheme would
split by recursive bisection, and so it is, a level of the bisection tree at a time so that the
cores share each level: the lowest cut of ``ntrials`` METIS bisections splits the graph, the
lowest of half as many splits each half, and so on until each piece has at most the context's
``piece_parts`` parts (at least one round: ``bisection_rounds``); then each piece gets whole
METIS recursive bisections (``METIS_PartGraphRecursive``) into its parts, the lowest cut
winning. As in METIS, a bisection's cut edges are dropped and each side is split on, so the
pieces' cuts add up to the whole's; one METIS run would do the same bisections one after the
other. The k-way refinement METIS would run next is the GPU's refinement of the coarsest level,
which also restores the balance. When coarsening stalled, or left a dense graph (power-law
graphs, where METIS's own k-way refinement matters most and bisections save no time), the graph
goes to METIS's whole k-way scheme; the lowest cut among the trials within the balance limit
wins (else the least excess). So does a small input that is not coarsened at all (``kway``):
there METIS's own multilevel scheme, FM refinement included, splits the input itself. A dense
graph is thinned first (``thinning``): METIS sees each vertex's heaviest edges, the trials are
scored on every edge. The trials use seeds ``seed, seed+1, ...`` and ties go to the earlier
trial, so the result does not depend on how many cores ran them. ``initial_bisections`` does the
same for each piece of a disjoint union (a depth of ``-ptype=rb``): every piece's trials in one
submission, the lowest cut per piece; ``initial_copies`` splits each copy of a union of copies
of one graph (``-preset=strong``'s runs at once) as ``initial_partition`` splits the graph,
every copy's trials of a round in one submission.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from gpmetis.backend import exact_bin_sums
from gpmetis.context import InitialContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.thinning import heaviest_edges
from gpmetis.initial_partitioning.workers import run_jobs
from gpmetis.partitioning.metis_engine import metis_index

CUT_BATCH_ENTRIES = 1 << 22  # trials x adjacency entries scored at once (~13 bytes each)
IPTYPE_GROW, IPTYPE_RANDOM = 0, 1  # METIS's METIS_IPTYPE_* codes for a bisection's start


def dense(nvtxs: int, nnz: int, context: InitialContext) -> bool:
    """Whether a coarsest graph's average degree is above the context's ``dense_degree``."""
    return nnz > context.dense_degree * nvtxs


def bisects(nvtxs: int, nnz: int, target: int, context: InitialContext) -> bool:
    """Whether a coarsest graph of ``nvtxs`` vertices and ``nnz`` adjacency entries, where
    coarsening aimed at ``target`` vertices, is split by recursive bisection (else k-way):
    coarsening did not stall (``stalled`` times the target at most) and the graph is not
    dense."""
    return nvtxs <= context.stalled * target and not dense(nvtxs, nnz, context)


def bisection_rounds(nparts: int, piece_parts: int) -> int:
    """The bisection tree's rounds before whole recursive bisections: at least one, and enough
    to leave each piece at most ``piece_parts`` parts."""
    return max(1, math.ceil(math.log2(nparts / piece_parts)))


def metis_trial(args: tuple) -> tuple[np.ndarray, int]:
    """One METIS run: its partition (int32) and its edge cut of the graph it was given."""
    import pymetis

    *csr, nparts, tpwgts, seed, ufactor, niter, iptype, recursive = args
    xadj, adjncy, vwgt, adjwgt = (metis_index(a) for a in csr)
    options = pymetis.Options(seed=seed, ufactor=ufactor, niter=niter, iptype=iptype)
    result = pymetis.part_graph(
        nparts,
        pymetis.CSRAdjacency(xadj, adjncy),
        vweights=vwgt,
        eweights=adjwgt,
        tpwgts=tpwgts,
        options=options,
        recursive=recursive,
    )
    return np.asarray(result.vertex_part, dtype=np.int32), int(result.edge_cuts)


def initial_partition(
    graph: DeviceGraph,
    maxpwgt: np.ndarray,
    tpwgts: np.ndarray | None,
    *,
    target: int,
    seed: int,
    ntrials: int,
    ufactor: int,
    niter: int,
    context: InitialContext,
    random_bisections: bool = False,
    kway: bool = False,
    meanwhile: Iterator[None] | None = None,
) -> np.ndarray:
    """A partition (int32, on the host) of the coarsest ``graph`` into as many parts as
    ``maxpwgt`` has limits, of target weights ``tpwgts`` (fractions; None: equal), where
    coarsening aimed at ``target`` vertices, from ``ntrials`` METIS runs at a time, as
    ``context`` sets them: a bisection tree (balanced per bisection, not to ``maxpwgt``; lowest
    cut per piece) or k-way partitions (lowest cut within ``maxpwgt``). ``random_bisections``:
    bisections start from random ones instead of grown regions (METIS's ``-iptype=random``).
    ``kway``: k-way trials whatever the graph's size
    (``graph`` is the input itself, not a coarsest graph). The steps of ``meanwhile`` run in
    this process while the workers compute, the rest after the trials (none where no trial is
    needed: nparts 1, an empty graph, or no more vertices than parts)."""
    n, nparts = graph.nvtxs, len(maxpwgt)
    if nparts == 1 or n == 0:
        return np.zeros(n, dtype=np.int32)
    if nparts >= n:
        return np.arange(n, dtype=np.int32) % nparts
    steps = iter(meanwhile if meanwhile is not None else ())
    tpwgts = np.full(nparts, 1 / nparts) if tpwgts is None else np.asarray(tpwgts, np.float64)
    if len(tpwgts) != nparts:
        raise ValueError(f"{len(tpwgts)} target weights for {nparts} parts")
    run = _Trials.of(graph, seed, ntrials, steps, ufactor, niter, random_bisections, context)
    if not kway and bisects(n, graph.nnz, target, context):
        part = _bisection_tree(graph.to_host(), [_Piece(np.arange(n), 0, tpwgts, seed)], run,
                               bisection_rounds(nparts, context.piece_parts))
    else:
        part = _kway(graph, tpwgts, maxpwgt, run)
    for _ in steps:
        pass
    return part


def initial_bisections(
    graph: DeviceGraph,
    labels: np.ndarray,
    tpwgts: np.ndarray,
    maxpwgt: np.ndarray,
    *,
    target: int,
    seed: int,
    ntrials: int,
    ufactor: int,
    niter: int,
    context: InitialContext,
    random_bisections: bool = False,
    meanwhile: Iterator[None] | None = None,
) -> np.ndarray:
    """The side (0 or 1, int32 on the host) of every vertex of the coarsest ``graph`` of a
    disjoint union, each piece (``labels``: host int32 piece ids, no edge between two pieces)
    bisected on its own into halves of target fractions ``tpwgts[i]`` ((npieces, 2)), as
    ``initial_partition`` bisects one graph: the lowest cut of ``ntrials`` METIS bisections, or
    where coarsening (aimed at ``target`` vertices in all) stalled or left a dense graph, of
    k-way runs within ``maxpwgt[i]`` ((npieces, 2) limits). Every piece's trials go to the
    workers in one submission; a piece of at most two vertices puts one on each side. The steps
    of ``meanwhile`` run while the workers compute, the rest after them."""
    steps = iter(meanwhile if meanwhile is not None else ())
    n = graph.nvtxs
    side, split, members = tiny_piece_sides(labels, len(tpwgts))
    if len(split):
        run = _Trials.of(graph, seed, ntrials, steps, ufactor, niter, random_bisections,
                         context)
        bisect = bisects(n, graph.nnz, target, context)
        trials = _piece_trials(graph, members, [(2, _explicit(tpwgts[i])) for i in split], run,
                               recursive=bisect,
                               thin=not bisect and dense(n, graph.nnz, context))
        for i, vertices, (sub, parts, cuts) in zip(split, members, trials):
            scores = list(cuts) if bisect else [
                (_excess(p, sub[2], maxpwgt[i]), cut) for p, cut in zip(parts, cuts)]
            side[vertices] = parts[scores.index(min(scores))]  # the first of equal scores
    for _ in steps:
        pass
    return side


def tiny_piece_sides(labels: np.ndarray, npieces: int) -> tuple[np.ndarray, np.ndarray, list]:
    """(side, split, members) for the bisection of every piece of ``labels`` (host piece ids):
    the sides of the vertices of pieces of at most two vertices (one on each side, by id; 0
    elsewhere), the pieces of more, and their vertex ids (ascending), which trials bisect."""
    n = len(labels)
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels, minlength=npieces)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    # each vertex's place in its piece, ids ascending: the tiny pieces' sides
    rank = np.arange(n) - np.repeat(starts[:-1], sizes)
    side = np.zeros(n, dtype=np.int32)
    side[order] = np.where(sizes[labels[order]] <= 2, rank % 2, 0)
    split = np.flatnonzero(sizes > 2)
    return side, split, [order[starts[i]:starts[i + 1]] for i in split]


def initial_copies(
    graph: DeviceGraph,
    labels: np.ndarray,
    maxpwgt: np.ndarray,
    tpwgts: np.ndarray,
    *,
    target: int,
    seeds: list[int],
    ntrials: int,
    ufactor: int,
    niter: int,
    context: InitialContext,
    random_bisections: bool = False,
    meanwhile: Iterator[None] | None = None,
) -> np.ndarray:
    """The partition (int32, on the host) of the coarsest ``graph`` of a disjoint union of
    copies of one graph (``labels``: host int32 copy ids, no edge between two copies): copy c's
    vertices into parts c * nparts .. (c + 1) * nparts - 1 (nparts: ``maxpwgt``'s limits of
    one copy), each copy split as
    ``initial_partition`` splits one graph (``ntrials`` trials seeded ``seeds[c]``, ... per
    copy; a bisection tree, or where coarsening, aimed at ``target`` vertices in all, stalled
    or left a dense graph, k-way trials within ``maxpwgt``), every copy's trials of a round in
    one submission. The steps of ``meanwhile`` run while the workers compute, the rest after."""
    steps = iter(meanwhile if meanwhile is not None else ())
    n, ncopies, nparts = graph.nvtxs, len(seeds), len(maxpwgt)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate(([0], np.cumsum(np.bincount(labels, minlength=ncopies))))
    members = [order[starts[c]:starts[c + 1]] for c in range(ncopies)]
    tpwgts = np.asarray(tpwgts, dtype=np.float64)
    run = _Trials.of(graph, seeds[0], ntrials, steps, ufactor, niter, random_bisections,
                     context, njobs=ntrials * ncopies)
    if bisects(n, graph.nnz, target, context):
        pieces = [_Piece(vertices, c * nparts, tpwgts, seeds[c])
                  for c, vertices in enumerate(members)]
        part = _bisection_tree(graph.to_host(), pieces, run,
                               bisection_rounds(nparts, context.piece_parts))
    else:
        part = np.zeros(n, dtype=np.int32)
        split = []
        for c, vertices in enumerate(members):
            if len(vertices) > nparts:
                split.append(c)
            else:  # a part for each vertex: nothing to split
                part[vertices] = c * nparts + np.arange(len(vertices), dtype=np.int32)
        trials = _piece_trials(graph, [members[c] for c in split],
                               [(nparts, _explicit(tpwgts))] * len(split), run, recursive=False,
                               thin=dense(n, graph.nnz, context),
                               seeds=[seeds[c] for c in split]) if split else []
        for c, (sub, parts, cuts) in zip(split, trials):
            scores = [(_excess(p, sub[2], maxpwgt), cut) for p, cut in zip(parts, cuts)]
            part[members[c]] = c * nparts + parts[scores.index(min(scores))]
    for _ in steps:
        pass
    return part


def _piece_trials(graph: DeviceGraph, members: list[np.ndarray], specs: list[tuple], run,
                  *, recursive: bool, thin: bool, seeds: list[int] | None = None
                  ) -> list[tuple[tuple, tuple, list[int]]]:
    """For each piece of ``graph`` (vertex ids ``members[i]``, trials' (nparts, tpwgts)
    ``specs[i]``), all pieces' trials in one submission of ``run``: (its induced subgraph on
    the host, its trials' partitions, their cuts). With ``thin`` (a dense graph) METIS sees
    each vertex's ``thin_degree`` heaviest edges, and the cuts are counted again on every
    edge."""
    seen = (heaviest_edges(graph.be, graph, run.context.thin_degree, run.seed) if thin
            else graph)
    subs = _induced(seen.to_host(), members)
    trials = run([(*sub, k, tp) for sub, (k, tp) in zip(subs, specs)], recursive=recursive,
                 seeds=seeds)
    if thin:
        subs = _induced(graph.to_host(), members)
    out = []
    for sub, results in zip(subs, trials):
        parts, cuts = zip(*results)
        out.append((sub, parts, _host_cuts(sub, parts) if thin else list(cuts)))
    return out


def _induced(host: tuple, members: list[np.ndarray]) -> list[tuple]:
    """``induced_subgraphs`` of the host CSR ``host`` on the vertex sets ``members``."""
    return induced_subgraphs(host, np.repeat(np.arange(len(host[0]) - 1), np.diff(host[0])),
                             members)


def _host_cuts(host: tuple, parts: list[np.ndarray]) -> list[int]:
    """Each partition's edge cut over every edge of the host CSR ``host`` (twice the cut: both
    entries, as METIS's trials are compared with one another only)."""
    xadj, adjncy, _, adjwgt = host
    src = np.repeat(np.arange(len(xadj) - 1), np.diff(xadj))
    stacked = np.stack(parts)
    cut = stacked[:, src] != stacked[:, adjncy]
    return [int(c) for c in np.where(cut, adjwgt, 0).sum(axis=1, dtype=np.int64)]


class _Trials:
    """Runs METIS trials, ``ntrials`` per graph unless told fewer, with seeds ``seed``,
    ``seed+1``, ...: all the graphs' trials at once, on the workers where ``parallel``;
    ``context``: the initial partitioning's."""

    def __init__(self, *, seed: int, ntrials: int, steps: Iterator[None], parallel: bool,
                 settings: tuple[int, int, int], context: InitialContext) -> None:
        self.seed, self.ntrials, self.steps, self.parallel = seed, ntrials, steps, parallel
        self.settings, self.context = settings, context

    @classmethod
    def of(cls, graph: DeviceGraph, seed: int, ntrials: int, steps: Iterator[None],
           ufactor: int, niter: int, random_bisections: bool, context: InitialContext,
           njobs: int | None = None) -> _Trials:
        """The trials of METIS runs on ``graph`` or its pieces: on the workers where there are
        several jobs (``njobs``, default ``ntrials``) and the graph has the context's
        ``parallel_min_nnz`` entries."""
        jobs = ntrials if njobs is None else njobs
        return cls(seed=seed, ntrials=ntrials, steps=steps,
                   parallel=jobs > 1 and graph.nnz >= context.parallel_min_nnz,
                   settings=(ufactor, niter,
                             IPTYPE_RANDOM if random_bisections else IPTYPE_GROW),
                   context=context)

    def __call__(self, graphs: list[tuple], recursive: bool, ntrials: int | None = None,
                 seeds: list[int] | None = None) -> list[list[tuple[np.ndarray, int]]]:
        """For each (xadj, adjncy, vwgt, adjwgt, nparts, tpwgts): its trials' (part, cut),
        with seeds from ``seeds``' entry for it (None: ``seed`` for all) on."""
        count = ntrials or self.ntrials
        seeds = seeds if seeds is not None else [self.seed] * len(graphs)
        jobs = [(metis_trial, (*g, first + t, *self.settings, recursive))
                for g, first in zip(graphs, seeds) for t in range(count)]
        results = run_jobs(jobs, self.steps, self.parallel)
        return [results[i:i + count] for i in range(0, len(results), count)]


@dataclass
class _Piece:
    """Vertices of the coarsest graph (ascending) to split into parts ``first``, ``first+1``,
    ... of target weights ``tpwgts`` (fractions of the piece's weight), by METIS trials seeded
    ``seed``, ``seed+1``, ..."""

    vertices: np.ndarray
    first: int
    tpwgts: np.ndarray
    seed: int


def _bisection_tree(host: tuple, pieces: list[_Piece], run: _Trials, rounds: int
                    ) -> np.ndarray:
    """The partition of the graph ``host``, whose vertices ``pieces`` share out, by recursive
    bisection of each piece (as METIS's, which cuts a bisection's edges and splits each half
    on), a tree level at a time: ``rounds`` rounds of bisections, then whole recursive
    bisections of each piece; each piece's lowest-cut trial wins, and the trials are shared out
    so that a round runs up to ``ntrials`` METIS runs at once per starting piece, all pieces'
    in one submission."""
    xadj, adjncy, vwgt, adjwgt = host
    src = np.repeat(np.arange(len(vwgt)), np.diff(xadj))
    part = np.zeros(len(vwgt), dtype=np.int32)
    for p in pieces:  # a part for each vertex: nothing to split
        if len(p.vertices) <= len(p.tpwgts):
            part[p.vertices] = p.first + np.arange(len(p.vertices), dtype=np.int32)
    for depth in range(rounds + 1):
        whole = depth == rounds
        pieces = [p for p in pieces if len(p.tpwgts) > 1 and len(p.vertices) > len(p.tpwgts)]
        if not pieces:
            break
        graphs = []
        for p, sub in zip(pieces, induced_subgraphs(host, src, [p.vertices for p in pieces])):
            tp = p.tpwgts if whole else np.array([side.sum() for side in half_parts(p.tpwgts)])
            graphs.append((*sub, len(tp), _explicit(tp)))
        trials = run(graphs, recursive=True, ntrials=max(1, run.ntrials >> depth),
                     seeds=[p.seed for p in pieces])
        halves = []
        for p, results in zip(pieces, trials):
            best = min(results, key=lambda result: result[1])[0]  # the first of equal cuts
            if whole:
                part[p.vertices] = p.first + best
                continue
            first = p.first
            for side, tp in enumerate(half_parts(p.tpwgts)):
                vertices = p.vertices[best == side]
                part[vertices] = first
                halves.append(_Piece(vertices, first, tp / tp.sum(), p.seed))
                first += len(tp)
        for p in halves:
            if len(p.vertices) <= len(p.tpwgts):  # a part for each vertex: nothing to split
                part[p.vertices] = p.first + np.arange(len(p.vertices), dtype=np.int32)
        pieces = halves
    return part


def half_parts(tpwgts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A bisection's two sides' parts, as METIS splits them (the first k // 2 parts, the rest)."""
    return tpwgts[:len(tpwgts) // 2], tpwgts[len(tpwgts) // 2:]


def _explicit(tpwgts: np.ndarray) -> list[float] | None:
    """Target weights for METIS, or None where they are equal (METIS's default)."""
    return None if np.allclose(tpwgts, tpwgts[0]) else [float(x) for x in tpwgts]


def induced_subgraphs(host: tuple, src: np.ndarray, pieces: list[np.ndarray]) -> list[tuple]:
    """The CSR arrays of the subgraphs of ``host`` induced by each of ``pieces`` (disjoint
    vertex lists, each ascending), each numbered in its piece's order with each row's entries
    kept in their order; from one pass over the edges, however many pieces."""
    xadj, adjncy, vwgt, adjwgt = host
    if len(pieces) == 1 and len(pieces[0]) == len(vwgt):
        return [host]
    sizes = np.array([len(p) for p in pieces])
    starts = np.concatenate(([0], np.cumsum(sizes)))
    members = np.concatenate(pieces)
    # small piece numbers: NumPy's stable sort of 16-bit keys is a radix sort, 3x a merge sort
    piece_of = np.full(len(vwgt), -1, dtype=np.int16 if len(pieces) < 1 << 15 else np.int64)
    piece_of[members] = np.repeat(np.arange(len(pieces)), sizes)
    rank = np.empty(len(vwgt), dtype=np.int64)  # a vertex's place among all pieces' members
    rank[members] = np.arange(len(members))
    ends = piece_of[adjncy]
    kept = np.flatnonzero((ends >= 0) & (ends == piece_of[src]))
    # by piece, and within one by row (pieces ascend), each row's entries in their order
    kept = kept[np.argsort(ends[kept], kind="stable")]
    rows = np.zeros(len(members) + 1, dtype=xadj.dtype)
    np.cumsum(np.bincount(rank[src[kept]], minlength=len(members)), out=rows[1:])
    local = (rank[adjncy[kept]] - starts[ends[kept]]).astype(adjncy.dtype)
    sub_adjwgt = adjwgt[kept]
    subgraphs = []
    for i, vertices in enumerate(pieces):
        first, last = rows[starts[i]], rows[starts[i + 1]]
        subgraphs.append((rows[starts[i]:starts[i + 1] + 1] - first, local[first:last],
                          vwgt[vertices], sub_adjwgt[first:last]))
    return subgraphs


def _kway(graph: DeviceGraph, tpwgts: np.ndarray, maxpwgt: np.ndarray, run: _Trials
          ) -> np.ndarray:
    """The lowest-cut k-way trial within ``maxpwgt`` (else the least excess), scored on every
    edge of ``graph`` where METIS saw a thinned one (else by METIS's own cuts)."""
    nparts = len(tpwgts)
    thin = dense(graph.nvtxs, graph.nnz, run.context)
    seen = heaviest_edges(graph.be, graph, run.context.thin_degree, run.seed) if thin else graph
    host = seen.to_host()
    parts, cuts = zip(*run([(*host, nparts, _explicit(tpwgts))], recursive=False)[0])
    if thin:
        cuts = _cuts(graph, parts)
    scores = [(_excess(part, host[2], maxpwgt), cut) for part, cut in zip(parts, cuts)]
    return parts[scores.index(min(scores))]


def _cuts(graph: DeviceGraph, parts: list[np.ndarray]) -> list[int]:
    """Each partition's edge cut over every edge of ``graph`` (twice the cut: both entries),
    in batches of trials of at most CUT_BATCH_ENTRIES adjacency entries: one upload and a
    handful of array operations per batch."""
    be, xp = graph.be, graph.be.xp
    src = be.sources(graph.xadj, graph.nnz)
    per_batch = max(1, CUT_BATCH_ENTRIES // max(graph.nnz, 1))
    cuts = []
    for first in range(0, len(parts), per_batch):
        stacked = be.asarray(np.stack(parts[first:first + per_batch]))
        cut = stacked[:, src] != stacked[:, graph.adjncy]
        sums = xp.where(cut, graph.adjwgt, 0).sum(axis=1, dtype=xp.int64)
        cuts.extend(int(c) for c in be.asnumpy(sums))
    return cuts


def _excess(part: np.ndarray, vwgt: np.ndarray, maxpwgt: np.ndarray) -> int:
    """The part weights' total excess over ``maxpwgt`` (one limit per part; exact)."""
    return int(np.maximum(exact_bin_sums(part, len(maxpwgt), vwgt) - maxpwgt, 0).sum())
