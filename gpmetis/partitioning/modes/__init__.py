"""The modes of the gpu/cpu engines' runs, each in its module, each plugged into
``engine.EngineRun`` through the hooks of ``Mode``: the run knows no mode by name.

A run of seed s: ``pipeline`` (a mode's replacement for the scheme's multilevel run, or the
scheme's), then every mode's ``candidate`` (a whole other partition, kept where it scores
better), then every ``finish``, then every ``note``; between runs, ``combine``. A mode whose
``applies`` is false for a run takes no part in it; modes are set up in the order of
``engine.MODES``, each seeing what the earlier ones set (the options they normalised).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpmetis.partitioning.engine import EngineRun
    from gpmetis.partitioning.multilevel import RunStats


class Mode:
    """A mode's hooks; each leaves the run as it is unless a mode overrides it."""

    def __init__(self, run: EngineRun) -> None:
        # (weak: the run holds its modes, and a cycle would keep its arrays, device ones
        # included, alive until the garbage collector next runs)
        self.run = weakref.proxy(run)

    @classmethod
    def applies(cls, run: EngineRun) -> bool:
        """Whether the mode takes part in ``run`` (given the options normalised so far)."""
        raise NotImplementedError

    def pipeline(self, seed: int) -> tuple | None:
        """(part, RunStats) of a run in place of the scheme's multilevel run, or None."""
        return None

    def candidate(self, seed: int, part, stats: RunStats):
        """``part``, or another partition of the run that scores better."""
        return part

    def finish(self, part, stats: RunStats):
        """``part`` after the mode's last pass over it."""
        return part

    def combine(self, best, part, seed: int, stats: RunStats):
        """A partition at least as good as the best so far and the run's ``part``, or None."""
        return None

    def objective(self, part) -> int | None:
        """The value runs are compared by after the excess, where not the edge cut."""
        return None

    def note(self, stats: RunStats, notes: dict) -> None:
        """What the run's statistics report of the mode."""
