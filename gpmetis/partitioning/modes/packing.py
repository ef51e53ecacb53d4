"""Component packing: on a graph of several components, none much heavier than a part, the
components placed whole into the parts (``partitioning.components``) start a V-cycle each run,
kept where it beats the run's own: a component that fits a part is not cut to balance."""

from __future__ import annotations

from gpmetis.partitioning.components import packed_start, packs
from gpmetis.partitioning.modes import Mode
from gpmetis.partitioning.multilevel import vcycle


class Packing(Mode):
    @classmethod
    def applies(cls, run) -> bool:
        # (not under -minconn: a V-cycle's refinement does not lower subdomain degrees)
        return run.problem.ncon == 1 and run.options.ptype == "kway" and not run.options.minconn

    def __init__(self, run) -> None:
        super().__init__(run)
        p, scheme, context = run.problem, run.scheme, run.options.context.packing
        limits = scheme.balance.limits[0]
        # (whether it packs is known without the graph's arrays, which the packing reads)
        self.packed = None
        if scheme.ncomponents > 1 and packs(scheme.heaviest_component, limits, context):
            self.packed = packed_start(scheme.graph, limits, p.tpwgts, run.components, context)

    def candidate(self, seed: int, part, stats):
        if self.packed is None:
            return part
        run = self.run
        placed, placed_stats = vcycle(run.scheme.graph, run.scheme.balance, run.options, seed,
                                      self.packed)
        stats.coarsening += placed_stats.coarsening
        stats.refinement += placed_stats.refinement
        return placed if run.score(placed) < run.score(part) else part
