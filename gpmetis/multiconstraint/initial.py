"""Initial partition of a multi-constraint coarsest graph: METIS trials on one scalar weight,
each repaired and refined by the multi-constraint refinement, the best balanced cut kept.

pymetis passes METIS one weight per vertex, so each trial gives METIS's recursive bisection a
scalarisation of the weight vectors (alternately the sum of the constraints' shares of their
totals and the largest share); ``refinement.refine`` then moves the partition within every
constraint's limit and lowers its cut. METIS's k-way runs cost several times a bisection tree
on a coarsest graph, whose own k-way phase this refinement replaces. Trials run on the worker
processes with seeds ``seed, seed+1, ...``; the ``REFINED_TRIALS`` of least cut are refined (on
the device by the gpu engine, on the workers by the cpu engine); the lowest cut among those
whose excess is within one part's slack wins (else the least excess), ties to the one METIS
cut less (then the earlier trial), so the result does not depend on how many cores ran them,
nor on the engine.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.metis_trials import IPTYPE_GROW, PARALLEL_MIN_NNZ, metis_trial
from gpmetis.initial_partitioning.workers import run_jobs
from gpmetis.multiconstraint.bisection import bisection_tree
from gpmetis.multiconstraint.refinement import refine_on_host
from gpmetis.multiconstraint.weights import Balance, scalarised

# a trial's refinement stops after this many iterations without improvement (at most
# the run's patience): the kept trial is refined again as the coarsest level, so the trials
# need their balance more than their last percent of cut
TRIAL_PATIENCE = 4
# this many trials of least cut are refined: METIS's cut ranks them well enough, and each
# refinement costs more than the trial
REFINED_TRIALS = 4


def mc_trial(args: tuple) -> tuple[np.ndarray, int]:
    """One trial on the coarsest graph: (partition, edgecut) of METIS's recursive bisection of
    a scalarisation of its weights."""
    (xadj, adjncy, adjwgt, weights, nparts, tpwgts, totals, trial, seed, ufactor, niter,
     iptype) = args
    scalar = scalarised(weights, totals, use_max=trial % 2 == 1)
    return metis_trial((xadj, adjncy, scalar, adjwgt, nparts, tpwgts, seed, ufactor, niter,
                        iptype, True))


def refined_trial(args: tuple) -> tuple[np.ndarray, float, int]:
    """A trial's partition after the multi-constraint refinement: (partition, excess,
    edgecut). The refinement weighs vertices by ``weights``; its move kernels compare the
    graph's single weight only with rooms of -1 or unbounded, so unit weights serve."""
    xadj, adjncy, adjwgt, weights, part, nparts, limits, totals, patience, near = args
    ones = np.ones(len(xadj) - 1, dtype=np.int32)
    return refine_on_host((xadj, adjncy, adjwgt, ones), weights, part, nparts,
                          Balance(limits, totals), patience, near)


def _refined_tree(host: tuple, weights: np.ndarray, tpwgts: np.ndarray, balance: Balance,
                  ubvec: np.ndarray, near: float, **settings) -> tuple[np.ndarray, float, int]:
    """The multi-constraint bisection tree's partition, refined as a k-way partition to an
    excess within ``near``: (partition, excess, edgecut)."""
    part = bisection_tree(host, weights, tpwgts, ubvec, **settings)
    ones = np.ones(len(host[0]) - 1, dtype=np.int32)
    return refine_on_host((*host, ones), weights, part, len(tpwgts), balance,
                          settings["patience"], near)


def initial_partition(graph: DeviceGraph, weights, nparts: int, balance: Balance,
                      tpwgts: np.ndarray, ubvec: np.ndarray, *, seed: int, ntrials: int,
                      ufactor: int, niter: int, patience: int, coarsened: bool = True,
                      iptype: int = IPTYPE_GROW, always_tree: bool = True,
                      meanwhile: Iterator[None] | None = None) -> np.ndarray:
    """A partition (int32, host) of the coarsest ``graph`` with (ncon, n) ``weights`` on its
    backend, within ``balance`` (from ``ubvec``, one factor per constraint) where the trials
    reach it (else the least excess); ``coarsened``: finer levels follow; ``iptype``: how
    METIS's bisections start (METIS's IPTYPE_GROW or IPTYPE_RANDOM code); ``always_tree``: the
    bisection tree joins the trials even when one of them is balanced (else only when none
    is)."""
    n = graph.nvtxs
    steps = iter(meanwhile if meanwhile is not None else ())
    if nparts == 1 or n == 0:
        part = np.zeros(n, dtype=np.int32)
    elif nparts >= n:
        part = np.arange(n, dtype=np.int32) % nparts
    else:
        xadj, adjncy, _, adjwgt = graph.to_host()
        host_weights = graph.be.asnumpy(weights).astype(np.int64)
        # METIS sees one target per part: the mean of its constraints' targets
        targets = tpwgts.mean(axis=1)
        explicit = None if np.allclose(targets, 1 / nparts) else list(targets / targets.sum())
        # the finer levels repair a small excess cheaply, not a bad cut: trials within one
        # part's allowed slack count as balanced
        # (unless the coarsest graph is the input: nothing finer is left to repair it)
        near = balance.slack_share() / nparts if coarsened else 0.0
        jobs = [(mc_trial, (xadj, adjncy, adjwgt, host_weights, nparts, explicit,
                            balance.totals, t, seed + t, ufactor, niter, iptype))
                for t in range(ntrials)]
        parallel = ntrials > 1 and len(adjncy) >= PARALLEL_MIN_NNZ
        trials = run_jobs(jobs, steps, parallel)
        # the trials of least cut are refined (ties to the earlier trial): on the device one
        # after another, else on the workers (twins: the loops take the same steps)
        kept = sorted(range(ntrials), key=lambda t: (trials[t][1], t))[:REFINED_TRIALS]
        trial_patience = min(patience, TRIAL_PATIENCE)
        if graph.be.gpu:
            from gpmetis.multiconstraint.refinement_device import refine_each

            results = refine_each(graph, weights, [trials[t][0] for t in kept], nparts,
                                  balance, patience=trial_patience, tolerance=near)
        else:
            results = run_jobs([(refined_trial, (xadj, adjncy, adjwgt, host_weights,
                                                 trials[t][0], nparts, balance.limits,
                                                 balance.totals, trial_patience, near))
                                for t in kept], steps, parallel)
        if always_tree or all(excess > near for _, excess, _ in results):
            results.append(_refined_tree((xadj, adjncy, adjwgt), host_weights, tpwgts,
                                         balance, ubvec, near, seed=seed, ntrials=ntrials,
                                         ufactor=ufactor, niter=niter, patience=patience,
                                         iptype=iptype, steps=steps, parallel=parallel))
        scores = [(max(excess - near, 0.0), cut) for _, excess, cut in results]
        part = results[scores.index(min(scores))][0]
    for _ in steps:
        pass
    return part
