"""Combined k-way runs (the context's ``runs.combine``, -preset=strong's): each run after the
first combined with the best so far by a V-cycle that coarsens within both partitions; where the
copies of the graph together are small, the runs run at once, as one multilevel run over the
disjoint union of the copies, combined by one V-cycle over all of them
(``multilevel.multilevel_copies``)."""

from __future__ import annotations

from gpmetis.context import RunsContext
from gpmetis.graph import Graph
from gpmetis.partitioning.modes import Mode
from gpmetis.partitioning.multilevel import multilevel_copies, vcycle
from gpmetis.partitioning.problem import COMBINE_SEED, CUT_SEED_STRIDE


def batches(graph: Graph, runs: int, context: RunsContext) -> bool:
    """Whether ``runs`` runs of ``graph`` run at once, as copies in one multilevel run: the
    union within the context's ``batch_max_vertices`` and ``batch_max_entries``."""
    return (runs > 1 and runs * graph.nvtxs <= context.batch_max_vertices
            and runs * len(graph.adjncy) <= context.batch_max_entries)


class Strong(Mode):
    @classmethod
    def applies(cls, run) -> bool:
        # k-way cut runs only: a combined partition may split a part, recursive bisection
        # scores by bisection, and a V-cycle's refinement does not lower subdomain degrees
        options = run.options
        return (options.context.runs.combine and run.problem.ncon == 1 and options.ptype == "kway"
                and not options.minconn and not options.contig)

    def __init__(self, run) -> None:
        super().__init__(run)
        self.copies = run.options.runs
        self.batched = (run.options.objtype == "cut"
                        and batches(run.problem.graph, self.copies, run.options.context.runs))
        if self.batched:
            run.notes["batched_runs"] = self.copies
            run.runs = 1

    def pipeline(self, seed: int):
        if not self.batched:
            return None
        run, p = self.run, self.run.problem
        g = run.scheme.graph
        seeds = [seed + c * CUT_SEED_STRIDE for c in range(self.copies)]  # as runs' seeds
        parts, stats = multilevel_copies(g, run.scheme.balance, run.options, p.tpwgts, seeds)
        child, child_stats = vcycle(g, run.scheme.balance, run.options, seed + COMBINE_SEED,
                                    *parts)
        stats.coarsening += child_stats.coarsening
        stats.refinement += child_stats.refinement
        return (child if run.score(child) < run.score(parts[0]) else parts[0]), stats

    def combine(self, best, part, seed: int, stats):
        run = self.run
        child, child_stats = vcycle(run.scheme.graph, run.scheme.balance, run.options, seed,
                                    best, part)
        stats.coarsening += child_stats.coarsening
        stats.refinement += child_stats.refinement
        return child
