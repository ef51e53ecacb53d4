"""The initial partition of the coarsest level, for one constraint or several: METIS trials on
the CPU cores, scored against the level's balance. One constraint: ``metis_trials`` (a
bisection tree, or k-way trials where coarsening stalled); several: ``ncon_trials`` (METIS's
multi-constraint scheme or its bisections of scalarised weights, then the multi-constraint
refinement)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gpmetis.balance import Balance
from gpmetis.coarsening.coarsen import Level
from gpmetis.context import InitialContext
from gpmetis.initial_partitioning import metis_trials, ncon_trials
from gpmetis.initial_partitioning.metis_trials import IPTYPE_GROW, IPTYPE_RANDOM
from gpmetis.options import Options


def initial_partition(coarsest: Level, balance: Balance, tpwgts: np.ndarray, options: Options,
                      context: InitialContext, *, seed: int, ntrials: int, target: int,
                      patience: int, input_nvtxs: int, direct: bool, coarsened: bool,
                      meanwhile: Iterator[None]) -> np.ndarray:
    """A partition (int32, host) of the ``coarsest`` level into ``balance.nparts`` parts of
    targets ``tpwgts`` (nparts, ncon), from ``ntrials`` trials at a time seeded ``seed, seed +
    1, ...``, as ``context`` sets them. ``target``: the vertices coarsening aimed at;
    ``patience``: the run's refinement patience (several constraints refine trials);
    ``input_nvtxs``: the finest level's size; ``direct``: the level is the input itself
    (k-way trials); ``coarsened``: finer levels follow. The steps of ``meanwhile`` run while
    the workers compute."""
    if coarsest.weights is None:
        return metis_trials.initial_partition(
            coarsest.graph, balance.limits[0], tpwgts.reshape(-1),
            target=target, seed=seed, ntrials=ntrials,
            ufactor=options.trial_ufactor, niter=options.niter, context=context,
            random_bisections=options.iptype == "random", kway=direct, meanwhile=meanwhile)
    coarsest.graph.reload()
    return ncon_trials.initial_partition(
        coarsest.graph, coarsest.weights, balance, tpwgts,
        np.asarray(options.ubfactors(balance.ncon), dtype=np.float64), seed=seed,
        ntrials=ntrials, ufactor=options.trial_ufactor, niter=options.niter,
        patience=patience, context=context, refinement=options.context.refinement,
        coarsened=coarsened,
        balanced_trials=ncon_trials.balanced_trials(input_nvtxs, options, context),
        iptype=IPTYPE_RANDOM if options.iptype == "random" else IPTYPE_GROW,
        meanwhile=meanwhile)


def initial_bisections(coarsest: Level, labels: np.ndarray, targets: np.ndarray,
                       balance: Balance, options: Options, context: InitialContext, *,
                       seed: int, target: int, ntrials: int,
                       meanwhile: Iterator[None]) -> np.ndarray:
    """The side (0 or 1, int32 on the host) of every vertex of the ``coarsest`` level of a
    disjoint union of pieces (``labels``: host piece ids), piece i bisected into halves of
    target fractions ``targets[i]`` ((2, ncon)) within ``balance``'s limits of parts 2i and
    2i + 1, by ``ntrials`` trials per piece as ``context`` sets them; coarsening aimed at
    ``target`` vertices in all."""
    npieces = len(targets)
    if coarsest.weights is None:
        return metis_trials.initial_bisections(
            coarsest.graph, labels, targets[:, :, 0], balance.limits[0].reshape(npieces, 2),
            target=target, seed=seed, ntrials=ntrials, ufactor=options.trial_ufactor,
            niter=options.niter, context=context,
            random_bisections=options.iptype == "random", meanwhile=meanwhile)
    return ncon_trials.initial_bisections(
        coarsest.graph, coarsest.graph.be.asnumpy(coarsest.weights).astype(np.int64), labels,
        targets, np.asarray(options.ubfactors(balance.ncon), dtype=np.float64), balance,
        options, seed, ntrials=ntrials, context=context, meanwhile=meanwhile)
