"""Recursive bisection of a multi-constraint coarsest graph, every bisection balanced in every
constraint.

A k-way METIS run on one scalar weight leaves parts several percent over in some constraint,
and repairing k parts at once costs much cut. Bisecting instead repairs one boundary at a time:
each bisection is a METIS bisection of the piece on a scalarisation of its weights, then the
multi-constraint refinement of those two sides (``refinement.refine`` with two parts) to each
side's share of every constraint within half of ``ubvec``'s slack; the k-way refinement of the
tree's partition balances the parts to ``ubvec`` itself. A level of the tree at a time, every
piece's trials run at once on the workers; a piece's best trial (excess within one side's
slack, then the lowest cut; ties to the earlier trial) splits it, so the result does not depend
on how many cores ran them.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gpmetis.initial_partitioning.metis_trials import (
    half_parts,
    induced_subgraphs,
    metis_trial,
)
from gpmetis.initial_partitioning.workers import run_jobs
from gpmetis.multiconstraint.refinement import refine_on_host
from gpmetis.multiconstraint.weights import Balance, scalarised


def bisection_trial(args: tuple) -> tuple[np.ndarray, float, int]:
    """One bisection of a piece: (sides 0/1 int32, excess, edgecut) after the multi-constraint
    refinement of METIS's bisection of a scalarised weight."""
    (xadj, adjncy, adjwgt, weights, fractions, ubvec, trial, seed, ufactor, niter,
     patience, iptype, near) = args
    totals = weights.sum(axis=1)
    limits = np.maximum(np.ceil(totals[:, None] * fractions.T * ubvec[:, None]), 1)
    balance = Balance(limits.astype(np.int64), totals)
    scalar = scalarised(weights, totals, use_max=trial % 2 == 1)
    share = fractions.mean(axis=1)
    tpwgts = None if np.isclose(share[0], share[1]) else list(share / share.sum())
    sides, _ = metis_trial((xadj, adjncy, scalar, adjwgt, 2, tpwgts, seed, ufactor, niter,
                            iptype, True))
    return refine_on_host((xadj, adjncy, adjwgt, scalar), weights, sides, 2, balance, patience,
                          near)


def bisection_tree(host: tuple, weights: np.ndarray, tpwgts: np.ndarray, ubvec: np.ndarray,
                   *, seed: int, ntrials: int, ufactor: int, niter: int, patience: int,
                   iptype: int, steps: Iterator[None], parallel: bool) -> np.ndarray:
    """A partition (int32) of the graph ``host`` (xadj, adjncy, adjwgt) with (ncon, n) int64
    ``weights`` into len(tpwgts) parts of targets ``tpwgts`` (nparts, ncon), by recursive
    bisection as METIS splits the parts (the first k // 2, the rest); a level's pieces get
    ``ntrials`` trials each at the first level, half as many at each next (at least 2)."""
    xadj, adjncy, adjwgt = host
    n = len(xadj) - 1
    src = np.repeat(np.arange(n), np.diff(xadj))
    per_level = 1 + (np.asarray(ubvec, dtype=np.float64) - 1) / 2
    near = (per_level.min() - 1) / 4  # half a side's slack, as an excess
    part = np.zeros(n, dtype=np.int32)
    pieces = [(np.arange(n), 0, tpwgts)]  # (vertices ascending, first part, their targets)
    depth = 0
    while pieces:
        count = max(2, ntrials >> depth)
        subgraphs = induced_subgraphs((xadj, adjncy, np.zeros(n), adjwgt), src,
                                      [p[0] for p in pieces])
        jobs = []
        for (vertices, _, tp), (sx, sa, _, sw) in zip(pieces, subgraphs):
            left, right = half_parts(tp)
            fractions = np.stack([left.sum(axis=0), right.sum(axis=0)]) / tp.sum(axis=0)
            jobs += [(bisection_trial, (sx, sa, sw, weights[:, vertices], fractions, per_level,
                                        t, seed + t, ufactor, niter, patience, iptype,
                                        near))
                     for t in range(count)]
        results = run_jobs(jobs, steps, parallel and len(jobs) > 1)
        halves = []
        for i, (vertices, first, tp) in enumerate(pieces):
            trials = results[i * count:(i + 1) * count]
            scores = [(max(excess - near, 0.0), cut) for _, excess, cut in trials]
            sides = trials[scores.index(min(scores))][0]
            for side, side_tp in enumerate(half_parts(tp)):
                members = vertices[sides == side]
                part[members] = first
                if len(side_tp) > 1 and len(members) > len(side_tp):
                    halves.append((members, first, side_tp))
                elif len(side_tp) > 1:  # a part for each vertex: nothing to split
                    part[members] = first + np.arange(len(members), dtype=np.int32)
                first += len(side_tp)
        pieces = halves
        depth += 1
    return part
