"""Initial partition of a multi-constraint coarsest graph: METIS trials on one scalar weight,
each repaired and refined by the multi-constraint refinement, the best balanced cut kept.

pymetis passes METIS one weight per vertex, so each trial gives METIS a scalarisation of the
weight vectors (the sum of the constraints' shares of their totals, or the largest share),
alternating recursive bisection and k-way; ``refinement.refine`` then moves the partition
within every constraint's limit and lowers its cut. Trials run on the worker processes with
seeds ``seed, seed+1, ...``; the lowest cut among the trials whose excess is within one part's
slack wins (else the least excess), ties to the earlier trial, so the
result does not depend on how many cores ran them, nor on the engine.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gpmetis.backend import get_backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.initial_partitioning.metis_trials import IPTYPE_GROW, PARALLEL_MIN_NNZ, metis_trial
from gpmetis.initial_partitioning.workers import run_jobs
from gpmetis.multiconstraint.refinement import refine, score_state
from gpmetis.multiconstraint.weights import Balance

SCALAR_RANGE = 1 << 16  # a scalarised weight of a vertex holding a whole constraint


def scalarised(weights: np.ndarray, totals: np.ndarray, use_max: bool) -> np.ndarray:
    """One int64 weight per vertex from (ncon, n) weights: the sum (or the largest) of each
    constraint's share of its total, scaled so that no vertex of weight gets zero."""
    shares = weights / np.maximum(totals, 1)[:, None]
    combined = shares.max(axis=0) if use_max else shares.sum(axis=0)
    scale = SCALAR_RANGE * weights.shape[1] / max(float(combined.sum()), 1e-300)
    return np.where(combined > 0, np.maximum(np.rint(combined * scale), 1), 0).astype(np.int64)


def mc_trial(args: tuple) -> tuple[np.ndarray, float, int]:
    """One trial: (partition, excess, edgecut) of the coarsest graph."""
    (xadj, adjncy, adjwgt, weights, nparts, tpwgts, limits, totals, trial, seed, ufactor,
     niter, patience) = args
    balance = Balance(limits, totals)
    scalar = scalarised(weights, totals, use_max=trial % 4 >= 2)
    part, _ = metis_trial((xadj, adjncy, scalar, adjwgt, nparts, tpwgts, seed, ufactor, niter,
                           IPTYPE_GROW, trial % 2 == 0))
    be = get_backend("cpu")
    g = DeviceGraph(be, xadj, adjncy.astype(np.int32), adjwgt.astype(np.int32),
                    scalar.astype(np.int32))
    part, _ = refine(be, g, weights.astype(np.int32), part, nparts, balance, finest=False,
                     patience=patience)
    (excess, cut), _ = score_state(be, g, weights, part, nparts, balance)
    return part, excess, cut


def initial_partition(graph: DeviceGraph, weights, nparts: int, balance: Balance,
                      tpwgts: np.ndarray, *, seed: int, ntrials: int, ufactor: int, niter: int,
                      patience: int, meanwhile: Iterator[None] | None = None) -> np.ndarray:
    """A partition (int32, host) of the coarsest ``graph`` with (ncon, n) ``weights`` on its
    backend, within ``balance`` where the trials reach it (else the least excess)."""
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
        jobs = [(mc_trial, (xadj, adjncy, adjwgt, host_weights, nparts, explicit,
                            balance.limits, balance.totals, t, seed + t, ufactor, niter,
                            patience))
                for t in range(ntrials)]
        results = run_jobs(jobs, steps, ntrials > 1 and len(adjncy) >= PARALLEL_MIN_NNZ)
        # the finer levels repair a small excess cheaply, not a bad cut: trials within one
        # part's allowed slack count as balanced
        near = balance.slack_share() / nparts
        scores = [(max(excess - near, 0.0), cut) for _, excess, cut in results]
        part = results[scores.index(min(scores))][0]
    for _ in steps:
        pass
    return part
