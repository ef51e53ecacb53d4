"""Initial partition of a multi-constraint coarsest graph: METIS trials, the best of them refined
by the multi-constraint refinement, the best balanced cut kept.

The trials are one of two kinds, ``ntrials`` of them on the worker processes with seeds
``seed, seed+1, ...``:

- METIS's own multi-constraint k-way scheme (``metis_ncon``), which balances every constraint
  while it cuts. Small inputs get these: their coarsest graph is the input or a level or two
  from it, too coarse for a repair of unbalanced parts to keep the cut.
- METIS's recursive bisection of a scalarisation of the weights (alternately the sum of the
  constraints' shares of their totals and the largest share). Large inputs get these: they
  cost a fraction of the others, and the finer levels remove what excess is left. When none
  of them comes within one part's slack after its refinement, the k-way trials run too.

The context's ``ncon_refined_trials`` best trials (within one part's slack first, then METIS's
least cut) are refined (on the device by the gpu engine, on the workers by the cpu engine);
the lowest cut among those within that slack wins (else the least excess), ties to the earlier
one, so the result does not depend on how many cores ran them, nor on the engine.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gpmetis.backend import exact_bin_sums, get_backend
from gpmetis.balance import Balance
from gpmetis.context import InitialContext, RefinementContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.metis_trials import (
    IPTYPE_GROW,
    IPTYPE_RANDOM,
    induced_subgraphs,
    metis_trial,
    tiny_piece_sides,
)
from gpmetis.initial_partitioning.workers import run_jobs
from gpmetis.metrics import constraint_weights
from gpmetis.options import Options
from gpmetis.partitioning import metis_ncon
from gpmetis.refinement.ncon_device import refine_each
from gpmetis.refinement.ncon_refiner import refine_on_host

SCALAR_RANGE = 1 << 16  # a scalarised weight of a vertex holding a whole constraint


def balanced_trials(nvtxs: int, options: Options, context: InitialContext) -> bool:
    """Whether the coarsest graph of an input of ``nvtxs`` vertices gets METIS's
    multi-constraint k-way trials from the start: inputs up to the context's
    ``ncon_kway_max_vertices``, unless -iptype=random asks for bisections from random starts
    (which METIS's k-way scheme does not take)."""
    return nvtxs <= context.ncon_kway_max_vertices and options.iptype != "random"


def scalarised(weights: np.ndarray, totals: np.ndarray, use_max: bool) -> np.ndarray:
    """One int64 weight per vertex from (ncon, n) weights, for METIS, which balances one: the
    sum (or the largest) of each constraint's share of its total, scaled so that no vertex of
    weight gets zero."""
    shares = weights / np.maximum(totals, 1)[:, None]
    combined = shares.max(axis=0) if use_max else shares.sum(axis=0)
    scale = SCALAR_RANGE * weights.shape[1] / max(float(combined.sum()), 1e-300)
    return np.where(combined > 0, np.maximum(np.rint(combined * scale), 1), 0).astype(np.int64)


def scalar_trial(args: tuple) -> tuple[np.ndarray, int]:
    """One trial on the coarsest graph: (partition, edgecut) of METIS's recursive bisection of
    a scalarisation of its weights."""
    (xadj, adjncy, adjwgt, weights, nparts, tpwgts, totals, trial, seed, ufactor, niter,
     iptype) = args
    scalar = scalarised(weights, totals, use_max=trial % 2 == 1)
    return metis_trial((xadj, adjncy, scalar, adjwgt, nparts, tpwgts, seed, ufactor, niter,
                        iptype, True))


def ncon_trial(args: tuple) -> tuple[np.ndarray, int]:
    """One trial on the coarsest graph: (partition, edgecut) of METIS's multi-constraint k-way
    scheme."""
    xadj, adjncy, adjwgt, weights, nparts, tpwgts, ubvec, seed, niter, contig = args
    return metis_ncon.part_graph(xadj, adjncy, adjwgt, weights, nparts, tpwgts, ubvec,
                                 options={"seed": seed, "niter": niter, "contig": int(contig)})


def refined_trial(args: tuple) -> tuple[np.ndarray, float, int]:
    """A trial's partition after the multi-constraint refinement: (partition, excess,
    edgecut). The refinement weighs vertices by ``weights``; its move kernels compare the
    graph's single weight only with rooms of -1 or unbounded, so unit weights serve."""
    xadj, adjncy, adjwgt, weights, part, balance, refinement, patience, near = args
    ones = np.ones(len(xadj) - 1, dtype=np.int32)
    return refine_on_host((xadj, adjncy, adjwgt, ones), weights, part, balance, refinement,
                          patience, near)


def initial_partition(graph: DeviceGraph, weights, balance: Balance,
                      tpwgts: np.ndarray, ubvec: np.ndarray, *, seed: int, ntrials: int,
                      ufactor: int, niter: int, patience: int, context: InitialContext,
                      refinement: RefinementContext, coarsened: bool = True,
                      iptype: int = IPTYPE_GROW,
                      balanced_trials: bool = True,
                      meanwhile: Iterator[None] | None = None) -> np.ndarray:
    """A partition (int32, host) of the coarsest ``graph`` with (ncon, n) ``weights`` on its
    backend, within ``balance`` (from ``ubvec``, one factor per constraint) where the trials
    reach it (else the least excess); ``coarsened``: finer levels follow; ``iptype``: how the
    scalarised trials' bisections start (METIS's IPTYPE_GROW or IPTYPE_RANDOM code);
    ``balanced_trials``: METIS's multi-constraint k-way trials from the start (else the
    scalarised ones, and the former only where none of those is balanced); ``context``: how
    many trials are refined, and for how long; ``refinement``: the refinement's context."""
    n, nparts = graph.nvtxs, balance.nparts
    steps = iter(meanwhile if meanwhile is not None else ())
    if nparts == 1 or n == 0:
        part = np.zeros(n, dtype=np.int32)
    elif nparts >= n:
        part = np.arange(n, dtype=np.int32) % nparts
    else:
        host = graph.to_host()
        host_weights = graph.be.asnumpy(weights).astype(np.int64)
        # the finer levels repair a small excess cheaply, not a bad cut: trials within one
        # part's allowed slack count as balanced
        # (unless the coarsest graph is the input: nothing finer is left to repair it)
        near = balance.slack_share() / nparts if coarsened else 0.0
        trials = _Trials(graph, weights, host, host_weights, balance, refinement, near,
                         min(patience, context.ncon_trial_patience), steps,
                         ntrials > 1 and len(host[1]) >= context.parallel_min_nnz,
                         context.ncon_refined_trials)
        if balanced_trials:
            results = trials.refined(_ncon_jobs(trials, tpwgts, ubvec, seed, ntrials, niter))
        else:
            # METIS sees one target per part: the mean of its constraints' targets
            targets = tpwgts.mean(axis=1)
            explicit = (None if np.allclose(targets, 1 / nparts)
                        else list(targets / targets.sum()))
            xadj, adjncy, _, adjwgt = host
            results = trials.refined([
                (scalar_trial, (xadj, adjncy, adjwgt, host_weights, nparts, explicit,
                                balance.totals, t, seed + t, ufactor, niter, iptype))
                for t in range(ntrials)])
            if all(excess > near for _, excess, _ in results):
                results += trials.refined(_ncon_jobs(trials, tpwgts, ubvec, seed, ntrials,
                                                     niter))
        scores = [(max(excess - near, 0.0), cut) for _, excess, cut in results]
        part = results[scores.index(min(scores))][0]
    for _ in steps:
        pass
    return part


def _ncon_jobs(trials: _Trials, tpwgts: np.ndarray, ubvec: np.ndarray, seed: int,
               ntrials: int, niter: int) -> list:
    """The jobs of ``ntrials`` METIS multi-constraint k-way trials."""
    metis_ncon.require()  # here, not on the workers: a missing entry point is the run's error
    xadj, adjncy, _, adjwgt = trials.host
    nparts = trials.nparts
    targets = None if np.allclose(tpwgts, 1 / nparts) else tpwgts
    # under -contig (Balance.adjacent_only) METIS's own keeps its parts connected
    return [(ncon_trial, (xadj, adjncy, adjwgt, trials.host_weights, nparts, targets, ubvec,
                          seed + t, niter, trials.balance.adjacent_only))
            for t in range(ntrials)]


class _Trials:
    """Runs trials on the coarsest graph and refines the best of them."""

    def __init__(self, graph: DeviceGraph, weights, host: tuple, host_weights: np.ndarray,
                 balance: Balance, refinement: RefinementContext, near: float,
                 patience: int, steps: Iterator[None], parallel: bool, nrefined: int) -> None:
        self.refinement = refinement
        self.graph, self.weights, self.host, self.host_weights = graph, weights, host, host_weights
        self.nparts, self.balance, self.near, self.patience = (balance.nparts, balance, near,
                                                               patience)
        self.steps, self.parallel, self.nrefined = steps, parallel, nrefined

    def refined(self, jobs: list) -> list[tuple[np.ndarray, float, int]]:
        """(partition, excess, edgecut) of the ``nrefined`` best trials of ``jobs`` after
        the refinement (ties to the earlier trial): on the device one after another, else on
        the workers (twins: the loops take the same steps)."""
        trials = run_jobs(jobs, self.steps, self.parallel)
        cpu = get_backend("cpu")
        unbalanced = [self.balance.excess(constraint_weights(cpu, self.host_weights, part,
                                                       self.nparts)) > self.near
                      for part, _ in trials]
        kept = sorted(range(len(trials)),
                      key=lambda t: (unbalanced[t], trials[t][1], t))[:self.nrefined]
        parts = [trials[t][0] for t in kept]
        if self.graph.be.gpu:
            return refine_each(self.graph, self.weights, parts, self.balance,
                               context=self.refinement, patience=self.patience,
                               tolerance=self.near)
        xadj, adjncy, _, adjwgt = self.host
        return run_jobs([(refined_trial, (xadj, adjncy, adjwgt, self.host_weights, part,
                                          self.balance, self.refinement, self.patience,
                                          self.near))
                         for part in parts], self.steps, self.parallel)


def bisection_trial(args: tuple) -> tuple[np.ndarray, int]:
    """One trial on a piece's coarsest graph: (sides, edgecut) of METIS's multi-constraint
    bisection."""
    xadj, adjncy, adjwgt, weights, tpwgts, ubvec, seed, niter, iptype = args
    return metis_ncon.part_graph(xadj, adjncy, adjwgt, weights, 2, tpwgts, ubvec,
                                 options={"seed": seed, "niter": niter, "iptype": iptype},
                                 recursive=True)


def initial_bisections(graph: DeviceGraph, weights: np.ndarray, labels: np.ndarray,
                       targets: np.ndarray, ubvec: np.ndarray, balance: Balance,
                       options: Options, seed: int, *, ntrials: int, context: InitialContext,
                       meanwhile: Iterator[None] | None = None) -> np.ndarray:
    """The side (0 or 1, int32 on the host) of every vertex of the coarsest ``graph`` of a
    disjoint union (host ``weights`` (ncon, n), ``labels`` its pieces): per piece the trial of
    least excess over its halves' limits in ``balance`` (then the lowest cut, then the earlier
    seed); a piece of at most two vertices puts one on each side. The steps of ``meanwhile``
    run while the workers compute, the rest after them."""
    steps = iter(meanwhile if meanwhile is not None else ())
    n = graph.nvtxs
    side, split, members = tiny_piece_sides(labels, len(targets))
    if not len(split):
        for _ in steps:
            pass
        return side
    metis_ncon.require()  # here, not on the workers: a missing entry point is the run's error
    host = graph.to_host()
    subs = induced_subgraphs(host, np.repeat(np.arange(n), np.diff(host[0])), members)
    iptype = IPTYPE_RANDOM if options.iptype == "random" else IPTYPE_GROW
    jobs = [(bisection_trial, (xadj, adjncy, adjwgt, weights[:, vertices], targets[i], ubvec,
                               seed + t, options.niter, iptype))
            for i, vertices, (xadj, adjncy, _, adjwgt) in zip(split, members, subs)
            for t in range(ntrials)]
    results = run_jobs(jobs, steps, len(host[1]) >= context.parallel_min_nnz)
    scale = np.maximum(balance.totals, 1).astype(np.float64)
    for j, (i, vertices) in enumerate(zip(split, members)):
        scores = []
        for sides, cut in results[j * ntrials:(j + 1) * ntrials]:
            pw = np.stack([exact_bin_sums(sides, 2, w)
                           for w in weights[:, vertices]])
            over = np.maximum(pw - balance.limits[:, 2 * i:2 * i + 2], 0).sum(axis=1) / scale
            scores.append((float(over.sum()), cut))
        best = scores.index(min(scores))  # the first of equal scores
        side[vertices] = results[j * ntrials + best][0]
    for _ in steps:
        pass
    return side
