"""How the gpu/cpu engines run a graph of one constraint and one of several: its upload, its
multilevel run (k-way or recursive bisection), the direct candidate's run, its state (excess
over the limits and cut) and its contiguity repair. The multilevel pipeline is one for both;
the schemes differ in how a state is scored. ``engine.EngineRun`` and the modes see them
through this one interface."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import Balance
from gpmetis.coarsening.weights import upload
from gpmetis.options import Options
from gpmetis.partitioning.bisection_tree import bisection_balance
from gpmetis.partitioning.multilevel import multilevel_partition
from gpmetis.partitioning.problem import PartitionProblem
from gpmetis.partitioning.recursive import recursive_partition
from gpmetis.refinement.contiguity import make_contiguous
from gpmetis.refinement.jet import partition_state
from gpmetis.refinement.ncon import score_state


class Scheme:
    """The problem's graph on the backend (``wg``: ``graph`` with its constraint weights) and
    its ``balance`` (the problem's limits)."""

    def __init__(self, be: Backend, problem: PartitionProblem) -> None:
        self.be, self.problem = be, problem
        self.wg = upload(be, problem.graph, problem.nparts, problem.options.context.coarsening)
        self.graph = self.wg.graph
        self.balance = Balance(problem.limits.T.copy(), problem.totals)

    def balance_for(self, options: Options) -> Balance:
        """The limits of a run with ``options`` (-contig keeps rebalancing between adjacent
        parts)."""
        return Balance(self.balance.limits, self.balance.totals, adjacent_only=options.contig)

    def partition(self, options: Options, seed: int, **extra):
        """(part, RunStats) of one multilevel run: k-way, or recursive bisection."""
        p = self.problem
        if options.ptype == "rb":
            return recursive_partition(self.wg, p.tpwgts, options, seed)
        return multilevel_partition(self.wg, self.balance_for(options), options, p.tpwgts, seed,
                                    **extra)

    def direct(self, options: Options, seed: int, **extra):
        """(part, RunStats): METIS's k-way trials on the input itself, then its refinement."""
        return multilevel_partition(self.wg, self.balance_for(options), options,
                                    self.problem.tpwgts, seed, **extra, direct=True)

    def contiguous(self, part):
        """(part with every part connected, its rounds)."""
        return make_contiguous(self.be, self.graph, part, self.balance,
                               context=self.problem.options.context.refinement,
                               weights=self.wg.weights)


class SingleConstraint(Scheme):
    """One constraint: states scored by total overweight, an integer."""

    @property
    def weights(self):
        """(n, ncon) vertex weights on the backend, for the metrics."""
        return self.graph.vwgt[:, None]

    def state(self, part, rb: bool) -> tuple[int, int]:
        """(excess over the limits, edgecut); ``rb``: the excess over the per-bisection
        limits, as recursive bisection balances."""
        p = self.problem
        cut, pw = partition_state(self.be, self.graph, part, self.balance)
        if rb:
            return bisection_balance(pw, p.tpwgts, p.ubfactors[0])[0], cut
        return int(np.maximum(pw - self.balance.limits[0], 0).sum()), cut


class MultiConstraint(Scheme):
    """Several constraints: states scored by each constraint's excess as a share of its
    total (``Balance.excess``)."""

    @property
    def weights(self):
        return self.wg.weights.T

    def state(self, part, rb: bool) -> tuple[float, int]:
        """(excess, edgecut): the excess as ``Balance.excess``, or with ``rb`` each
        constraint's excess over its per-bisection limits as a share of its total."""
        p = self.problem
        (excess, cut), pwgts = score_state(self.be, self.graph, self.wg.weights, part,
                                           self.balance)
        if rb:
            excess = sum(bisection_balance(pwgts[c], p.tpwgts[:, c], p.ubfactors[c])[0]
                         / max(int(self.wg.totals[c]), 1) for c in range(p.ncon))
        return excess, cut


def scheme_for(be: Backend, problem: PartitionProblem) -> SingleConstraint | MultiConstraint:
    return MultiConstraint(be, problem) if problem.ncon > 1 else SingleConstraint(be, problem)
