"""``-ptype=rb`` of a multi-constraint graph on the gpu and cpu engines: recursive bisection as
``partitioning/recursive.py`` runs it (the pieces of one depth bisected together, one
multilevel job over their disjoint union), every bisection balancing each constraint to its
own per-bisection limit (``-ubvec``, or METIS's rb ufactor of 1 per constraint), as METIS's
MlevelRecursiveBisection of a multi-constraint graph does.

A depth's job: the pieces' union (``split_pieces``) with its guide and constraint weights ->
coarsening within the pieces on the guide weight (clusters within every constraint's cluster
limit) -> each piece's coarsest graph bisected by METIS's own multi-constraint bisection
(trials on the workers, every piece's in one submission; the least excess over the piece's
limits, then the lowest cut) -> the multi-constraint refinement of the union in two parts per
piece, level by level. That refinement moves vertices to adjacent parts only
(``Balance.adjacent_only``) and no edge joins two pieces, so no vertex leaves its piece's pair.
"""

from __future__ import annotations

import time

import numpy as np

from gpmetis.balance import max_part_weights
from gpmetis.coarsening.coarsen import coarsen
from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.metis_trials import (
    IPTYPE_GROW,
    IPTYPE_RANDOM,
    PARALLEL_MIN_NNZ,
    induced_subgraphs,
    tiny_piece_sides,
)
from gpmetis.initial_partitioning.workers import run_jobs, start_workers
from gpmetis.multiconstraint import metis_ncon
from gpmetis.multiconstraint.pipeline import refine_levels
from gpmetis.multiconstraint.weights import Balance, coarse_weights
from gpmetis.options import Options
from gpmetis.partitioning.bisection_tree import Piece, bisection_targets
from gpmetis.partitioning.multilevel import (
    INITIAL_TRIALS,
    PIECE_TRIALS,
    RunStats,
    fill_empty_halves,
    piece_coarsen_to,
)
from gpmetis.partitioning.recursive import DEPTH_SEED_STRIDE, bisect_depths


def multiconstraint_recursive(wg, nparts: int, options: Options, tpwgts: np.ndarray,
                              seed: int) -> tuple[object, RunStats]:
    """(part, stats): ``nparts`` parts of the multi-constraint graph ``wg`` (a
    ``pipeline.WeightedGraph``; part int32 on its backend) by recursive bisection, each
    bisection within ``options.ubfactors(ncon)`` of its targets in every constraint, where the
    bisections reach it; ``stats`` sums the depths' phase times."""
    ncon = len(wg.totals)

    def bisect(pieces: list[Piece], labels, sub, vertices, depth: int):
        # (npieces, 2, ncon): each half's share of its piece, per constraint
        targets = np.stack([np.stack([bisection_targets(tpwgts[:, c], p)[:, 0]
                                      for c in range(ncon)], axis=1) for p in pieces])
        return multiconstraint_bisections(sub, wg.weights[:, vertices], labels, targets, wg,
                                          options, seed + depth * DEPTH_SEED_STRIDE)

    return bisect_depths(wg.graph, nparts, bisect)


def multiconstraint_bisections(g: DeviceGraph, weights, labels, targets: np.ndarray, wg,
                               options: Options, seed: int):
    """(part, stats): every piece of the disjoint union ``g`` (guide weights; ``weights`` its
    (ncon, n) constraint weights, ``labels`` each vertex's piece) bisected at once, piece i's
    halves parts 2i and 2i+1 of target fractions ``targets[i]`` ((2, ncon)) of the piece's
    weight in each constraint. ``wg``: the whole graph's (its totals scale the excess, its
    guide's cluster limit bounds the coarse vertices)."""
    be, xp = g.be, g.be.xp
    stats = RunStats()
    npieces, ncon = len(targets), len(weights)
    nparts = 2 * npieces
    ubvec = np.asarray(options.ubfactors(ncon), dtype=np.float64)
    start_workers(INITIAL_TRIALS)
    t0 = time.perf_counter()
    piece_weights = np.stack([be.asnumpy(be.bin_sums(labels, npieces, w)) for w in weights],
                             axis=1)
    limits = np.concatenate([max_part_weights(piece_weights[i], targets[i], ubvec)
                             for i in range(npieces)]).T.copy()  # (ncon, 2 * npieces)
    balance = Balance(limits, np.asarray(wg.totals, dtype=np.int64), adjacent_only=True)
    sizes = be.asnumpy(be.counts(labels, npieces))
    target = int(sum(min(int(size), piece_coarsen_to(int(size), npieces)) for size in sizes))
    levels = coarsen(be, g, 2, seed, options.effective_ctype(be.name), not options.no2hop,
                     maxvwgt=wg.scale, within=labels, closed=True, target=target)
    coarse_labels = be.asnumpy(levels[-1].part)
    levels[-1].part = None
    level_weights = [weights]
    for level, coarser in zip(levels, levels[1:]):
        level_weights.append(coarse_weights(be, level_weights[-1], level.cmap, coarser.nvtxs))
    t1 = time.perf_counter()
    stats.coarsening = t1 - t0

    coarsest = levels[-1].graph
    side = initial_sides(coarsest, be.asnumpy(level_weights[-1]).astype(np.int64),
                         coarse_labels, targets, ubvec, balance, options, seed,
                         ntrials=max(PIECE_TRIALS, INITIAL_TRIALS // npieces))
    t2 = time.perf_counter()
    stats.initial = t2 - t1

    part = refine_levels(levels, level_weights, xp.asarray(2 * coarse_labels + side,
                                                           dtype=xp.int32),
                         nparts, balance, options.niter + 2)
    part = fill_empty_halves(be, g, part, nparts)
    stats.refinement = time.perf_counter() - t2
    return part, stats


def bisection_trial(args: tuple) -> tuple[np.ndarray, int]:
    """One trial on a piece's coarsest graph: (sides, edgecut) of METIS's multi-constraint
    bisection."""
    xadj, adjncy, adjwgt, weights, tpwgts, ubvec, seed, niter, iptype = args
    return metis_ncon.part_graph(xadj, adjncy, adjwgt, weights, 2, tpwgts, ubvec,
                                 options={"seed": seed, "niter": niter, "iptype": iptype},
                                 recursive=True)


def initial_sides(graph: DeviceGraph, weights: np.ndarray, labels: np.ndarray,
                  targets: np.ndarray, ubvec: np.ndarray, balance: Balance, options: Options,
                  seed: int, *, ntrials: int) -> np.ndarray:
    """The side (0 or 1, int32 on the host) of every vertex of the coarsest ``graph`` of a
    disjoint union (host ``weights`` (ncon, n), ``labels`` its pieces): per piece the trial of
    least excess over its halves' limits in ``balance`` (then the lowest cut, then the earlier
    seed); a piece of at most two vertices puts one on each side."""
    n = graph.nvtxs
    side, split, members = tiny_piece_sides(labels, len(targets))
    if not len(split):
        return side
    metis_ncon.require()  # here, not on the workers: a missing entry point is the run's error
    host = graph.to_host()
    subs = induced_subgraphs(host, np.repeat(np.arange(n), np.diff(host[0])), members)
    iptype = IPTYPE_RANDOM if options.iptype == "random" else IPTYPE_GROW
    jobs = [(bisection_trial, (xadj, adjncy, adjwgt, weights[:, vertices], targets[i], ubvec,
                               seed + t, options.niter, iptype))
            for i, vertices, (xadj, adjncy, _, adjwgt) in zip(split, members, subs)
            for t in range(ntrials)]
    results = run_jobs(jobs, iter(()), len(host[1]) >= PARALLEL_MIN_NNZ)
    scale = np.maximum(balance.totals, 1).astype(np.float64)
    for j, (i, vertices) in enumerate(zip(split, members)):
        scores = []
        for sides, cut in results[j * ntrials:(j + 1) * ntrials]:
            pw = np.stack([np.bincount(sides, weights=w, minlength=2)
                           for w in weights[:, vertices]])
            over = np.maximum(pw - balance.limits[:, 2 * i:2 * i + 2], 0).sum(axis=1) / scale
            scores.append((float(over.sum()), cut))
        best = scores.index(min(scores))  # the first of equal scores
        side[vertices] = results[j * ntrials + best][0]
    return side
