"""-minconn: its rounds run inside the multilevel pipelines (``refinement.minconn``, on the
middle and finest levels of a k-way run); under -ptype=rb it is ignored, as in METIS 5.1."""

from __future__ import annotations

from gpmetis.partitioning.modes import Mode

MINCONN_IGNORED = "-minconn cannot be used with -ptype=rb: it is ignored, as in METIS 5.1"


class Minconn(Mode):
    @classmethod
    def applies(cls, run) -> bool:
        return run.options.minconn

    def __init__(self, run) -> None:
        super().__init__(run)
        self.active = run.options.ptype == "kway"
        if not self.active:
            run.options = run.options.with_(minconn=False)  # in every bisection

    def note(self, stats, notes: dict) -> None:
        if self.active:
            notes["minconn_rounds"] = stats.minconn
