"""The direct candidate of a small input split into few parts: METIS's k-way trials on the
input itself, uncoarsened, then its refinement, kept where it scores better than the run's own
(METIS's FM refinement moves whole regions that Jet's single-vertex moves miss)."""

from __future__ import annotations

from gpmetis.context import DirectContext
from gpmetis.partitioning.modes import Mode


def direct_candidate(nvtxs: int, nparts: int, context: DirectContext) -> bool:
    """Whether a graph of ``nvtxs`` vertices split into ``nparts`` parts also gets the
    direct candidate: within the context's ``max_vertices`` and ``max_parts``."""
    return nvtxs <= context.max_vertices and nparts <= context.max_parts


class Direct(Mode):
    @classmethod
    def applies(cls, run) -> bool:
        p = run.problem
        return run.options.ptype == "kway" and direct_candidate(p.graph.nvtxs, p.nparts,
                                                                run.options.context.direct)

    def candidate(self, seed: int, part, stats):
        run = self.run
        split, split_stats = run.scheme.direct(run.options, seed, **run.extra)
        stats.initial += split_stats.initial
        stats.refinement += split_stats.refinement
        if run.score(split) < run.score(part):
            part, stats.minconn = split, split_stats.minconn
            stats.volume_rounds = split_stats.volume_rounds
        return part
