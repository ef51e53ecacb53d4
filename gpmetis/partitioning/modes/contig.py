"""-contig: every part connected after the run (``refinement.contiguity``), on a connected
graph; on one of several components it is ignored, as METIS 5.1's gpmetis does."""

from __future__ import annotations

import time

from gpmetis.partitioning.modes import Mode

CONTIG_IGNORED = "the input graph is not connected: -contig is ignored, as in METIS 5.1"


class Contig(Mode):
    @classmethod
    def applies(cls, run) -> bool:
        return run.options.contig

    def __init__(self, run) -> None:
        super().__init__(run)
        # (each vertex's label is its component's smallest vertex: a connected graph's are 0)
        self.active = not bool(run.components.any())
        if not self.active:
            run.notes["contig"] = CONTIG_IGNORED
            run.options = run.options.with_(contig=False)  # (METIS's trials would refuse it)

    def finish(self, part, stats):
        if not self.active:
            return part
        t0 = time.perf_counter()
        part, rounds = self.run.scheme.contiguous(part)
        self.run.be.synchronize()
        stats.refinement += time.perf_counter() - t0
        self.run.notes["contig_rounds"] = {"merging": rounds[0], "rebalancing": rounds[1]}
        return part
