"""-objtype=vol: the finest level's volume refinement runs inside the multilevel pipelines
(``refinement.volume``, weighing the vertex sizes given here); runs are compared by their
communication volume."""

from __future__ import annotations

from gpmetis.partitioning.modes import Mode
from gpmetis.refinement.volume import communication_volume


class Volume(Mode):
    @classmethod
    def applies(cls, run) -> bool:
        return run.options.objtype == "vol"

    def __init__(self, run) -> None:
        super().__init__(run)
        be, graph = run.be, run.problem.graph
        if graph.vsize is None:  # ones where the graph has none
            self.sizes = be.xp.ones(graph.nvtxs, dtype=be.xp.int64)
        else:
            self.sizes = be.asarray(graph.vsize, dtype=be.xp.int64)
        run.extra["vsize"] = self.sizes

    def objective(self, part) -> int:
        run = self.run
        return communication_volume(run.be, run.scheme.graph, part, run.problem.nparts,
                                    self.sizes)

    def note(self, stats, notes: dict) -> None:
        notes["volume_rounds"] = stats.volume_rounds
