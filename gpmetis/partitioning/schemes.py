"""How the gpu/cpu engines run a graph of one constraint and one of several: its upload, its
multilevel run (k-way or recursive bisection), the direct candidate's run, its state (excess
over the limits and cut) and its contiguity repair. ``engine.EngineRun`` and the modes see the
two through this one interface."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.multiconstraint.pipeline import multiconstraint_partition, upload
from gpmetis.multiconstraint.recursive import multiconstraint_recursive
from gpmetis.multiconstraint.refinement import score_state
from gpmetis.multiconstraint.weights import Balance
from gpmetis.options import Options
from gpmetis.partitioning.bisection_tree import bisection_balance
from gpmetis.partitioning.multilevel import multilevel_partition
from gpmetis.partitioning.problem import PartitionProblem
from gpmetis.partitioning.recursive import recursive_partition
from gpmetis.refinement.contiguity import make_contiguous
from gpmetis.refinement.jet import partition_state


class SingleConstraint:
    """A graph of one constraint: ``graph`` on the backend, ``limits`` (nparts,) int64."""

    def __init__(self, be: Backend, problem: PartitionProblem) -> None:
        self.be, self.problem = be, problem
        self.graph = DeviceGraph.upload(be, problem.graph)
        self.limits = problem.limits[:, 0]

    @property
    def weights(self):
        """(n, ncon) vertex weights on the backend, for the metrics."""
        return self.graph.vwgt[:, None]

    def partition(self, options: Options, seed: int, **extra):
        """(part, RunStats) of one multilevel run: k-way, or recursive bisection."""
        p = self.problem
        if options.ptype == "rb":
            return recursive_partition(self.graph, p.nparts, options, p.tpwgts, seed)
        return multilevel_partition(self.graph, p.nparts, options, p.tpwgts, seed, **extra)

    def direct(self, options: Options, seed: int, **extra):
        """(part, RunStats): METIS's k-way trials on the input itself, then its refinement."""
        p = self.problem
        return multilevel_partition(self.graph, p.nparts, options, p.tpwgts, seed, **extra,
                                    direct=True)

    def state(self, part, rb: bool) -> tuple[int, int]:
        """(excess over the limits, edgecut); ``rb``: the excess over the per-bisection
        limits, as recursive bisection balances."""
        p = self.problem
        cut, pw = partition_state(self.be, self.graph, part, p.nparts)
        if rb:
            return bisection_balance(pw, p.tpwgts, p.ubfactors[0])[0], cut
        return int(np.maximum(pw - self.limits, 0).sum()), cut

    def contiguous(self, part):
        """(part with every part connected, its rounds)."""
        return make_contiguous(self.be, self.graph, part, self.problem.nparts, self.limits)


class MultiConstraint:
    """A graph of several constraints: ``graph`` on the backend with its (ncon, n) weights
    (``wg``), and their ``balance``."""

    def __init__(self, be: Backend, problem: PartitionProblem) -> None:
        self.be, self.problem = be, problem
        self.wg = upload(be, problem.graph, problem.nparts)
        self.graph = self.wg.graph
        self.balance = Balance(problem.limits.T.copy(), problem.totals)

    @property
    def weights(self):
        return self.wg.weights.T

    def partition(self, options: Options, seed: int, **extra):
        p = self.problem
        if options.ptype == "rb":
            return multiconstraint_recursive(self.wg, p.nparts, options, p.tpwgts, seed)
        return multiconstraint_partition(self.wg, p.nparts, options, p.tpwgts, seed, **extra)

    def direct(self, options: Options, seed: int, **extra):
        p = self.problem
        return multiconstraint_partition(self.wg, p.nparts, options, p.tpwgts, seed,
                                         direct=True, **extra)

    def state(self, part, rb: bool) -> tuple[float, int]:
        """(excess, edgecut): the excess as ``Balance.excess``, or with ``rb`` each
        constraint's excess over its per-bisection limits as a share of its total."""
        p = self.problem
        (excess, cut), pwgts = score_state(self.be, self.graph, self.wg.weights, part,
                                           p.nparts, self.balance)
        if rb:
            excess = sum(bisection_balance(pwgts[c], p.tpwgts[:, c], p.ubfactors[c])[0]
                         / max(int(self.wg.totals[c]), 1) for c in range(p.ncon))
        return excess, cut

    def contiguous(self, part):
        return make_contiguous(self.be, self.graph, part, self.problem.nparts,
                               self.balance.limits, weights=self.wg.weights)


def scheme_for(be: Backend, problem: PartitionProblem) -> SingleConstraint | MultiConstraint:
    return MultiConstraint(be, problem) if problem.ncon > 1 else SingleConstraint(be, problem)
