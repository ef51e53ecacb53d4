"""How the gpu/cpu engines run a graph of one constraint and one of several: its upload, its
multilevel run (k-way or recursive bisection), the direct candidate's run, its state (excess
over the limits and cut) and its contiguity repair. The multilevel pipeline is one for both;
the schemes differ in how a state is scored. ``engine.EngineRun`` and the modes see them
through this one interface."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from gpmetis.backend import Backend
from gpmetis.balance import Balance
from gpmetis.coarsening.weights import WeightedGraph, upload
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import PartitionMetrics, compute_metrics, connected_components
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
        self.balance = Balance(problem.limits.T.copy(), problem.totals)

    @cached_property
    def wg(self) -> WeightedGraph:
        """The graph on the backend, uploaded where a run first reads it."""
        p = self.problem
        return upload(self.be, p.graph, p.nparts, p.options.context.coarsening)

    @property
    def graph(self) -> DeviceGraph:
        return self.wg.graph

    @cached_property
    def components(self):
        """Each vertex's component, named by its smallest vertex (on the backend)."""
        return connected_components(self.be, self.graph.xadj, self.graph.adjncy)

    @cached_property
    def ncomponents(self) -> int:
        labels = self.components
        return int((labels == self.be.xp.arange(len(labels), dtype=labels.dtype)).sum())

    @cached_property
    def heaviest_component(self) -> int:
        """The weight of the heaviest connected component (the first constraint's)."""
        g = self.graph
        return int(self.be.bin_sums(self.components, g.nvtxs, g.vwgt).max()) if g.nvtxs else 0

    def metrics(self, part) -> PartitionMetrics:
        """The report's metrics of ``part``."""
        g, p = self.graph, self.problem
        vsize = None if p.graph.vsize is None else self.be.asarray(p.graph.vsize)
        return compute_metrics(g.xadj, g.adjncy, self.weights, g.adjwgt, part, p.nparts,
                               p.tpwgts, vsize, self.be)

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
        cut, pw = self.cut_and_part_weights(part)
        if rb:
            return bisection_balance(pw, p.tpwgts, p.ubfactors[0])[0], cut
        return int(np.maximum(pw - self.balance.limits[0], 0).sum()), cut

    def cut_and_part_weights(self, part) -> tuple[int, np.ndarray]:
        return partition_state(self.be, self.graph, part, self.balance)


class PiecesScheme(SingleConstraint):
    """One constraint on a graph the ranks hold in pieces (``problem.pieces``): the states,
    the components and the metrics are counted on the pieces (``distributed.metrics``), so
    the whole graph reaches the backend only for a mode that reads it."""

    def cut_and_part_weights(self, part) -> tuple[int, np.ndarray]:
        return self.problem.pieces.state(part, self.problem.nparts, self.be.name)

    @cached_property
    def ncomponents(self) -> int:
        return self.problem.pieces.ncomponents(self.be.name)

    @cached_property
    def heaviest_component(self) -> int:
        return self.problem.pieces.heaviest_component(self.be.name)

    @cached_property
    def components(self):
        # one component: every vertex's smallest is vertex 0
        if self.ncomponents == 1:
            return self.be.xp.zeros(self.problem.graph.nvtxs, dtype=np.int32)
        return self.be.asarray(self.problem.pieces.components(self.be.name))

    def metrics(self, part) -> PartitionMetrics:
        p = self.problem
        return p.pieces.metrics(part, p.nparts, p.tpwgts, self.be.name)


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
    if problem.ncon > 1:
        return MultiConstraint(be, problem)
    return SingleConstraint(be, problem) if problem.pieces is None else PiecesScheme(be, problem)
