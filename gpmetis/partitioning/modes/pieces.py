"""Runs of a graph the ranks hold in pieces: the multilevel run on the pieces
(``distributed.multilevel``), rank 0 calling the other ranks in. Everything else of the run
(its scores, the other modes' candidates) is rank 0's, on the whole graph."""

from __future__ import annotations

from gpmetis.partitioning.modes import Mode
from gpmetis.partitioning.multilevel import RunStats


class Pieces(Mode):
    @classmethod
    def applies(cls, run) -> bool:
        # the distributed pipeline: one constraint, k-way, the cut
        options = run.options
        return (run.problem.pieces is not None and run.problem.ncon == 1
                and options.ptype == "kway" and options.objtype == "cut" and not options.contig
                and not options.minconn and not options.context.runs.combine)

    def pipeline(self, seed: int):
        run = self.run
        problem = run.problem
        return problem.pieces.multilevel(run.scheme.balance_for(run.options), run.options,
                                         problem.tpwgts, seed, run.be.name)

    def note(self, stats: RunStats, notes: dict) -> None:
        notes["multilevel_on_pieces"] = True
