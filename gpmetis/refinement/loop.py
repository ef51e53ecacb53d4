"""The host refinement loop that both refiners run (Jet's for one constraint and the
multi-constraint one, each through its ``Steps``), the twin of their loops on the device.

Label propagation runs while the partition is within its limits, rebalancing while it is not.
A label-propagation step fills each part only up to its limit, except after such a step that
did not lower the cut by more than the context's ``improvement``: the next one is loose (it
may overfill parts by some slack, which rebalancing then takes back). The loop keeps the best
state seen (least excess, then lowest cut) and stops after ``patience`` stale iterations,
after the context's ``max_iterations``, or where rebalancing can change nothing.
"""

from __future__ import annotations

from typing import Protocol

from gpmetis.backend import Backend
from gpmetis.context import RefinementContext


class Steps(Protocol):
    """A refiner's steps and the ``context`` they run under. ``settle``: after a balanced
    state is kept, a rebalancing step that removes less than this share of the excess is stale
    (None: every step that finds no better state is stale)."""

    settle: float | None
    context: RefinementContext

    def score(self, part) -> tuple[tuple, object]:
        """((excess, cut), part weights) of ``part``: smaller scores are better."""

    def propagate(self, part, locked, pwgts, loose: bool) -> tuple[object, object]:
        """(part, locked) after a label-propagation step."""

    def rebalance(self, part, pwgts):
        """``part`` after a rebalancing step, or None where no move changes anything."""


def loop_on_host(be: Backend, steps: Steps, part, patience: int):
    """(the best partition the loop finds from ``part``, iterations run)."""
    xp = be.xp
    improvement, max_iterations = steps.context.improvement, steps.context.max_iterations
    locked = xp.zeros(len(part), dtype=xp.uint8)
    best_score, pwgts = steps.score(part)
    best, score = part.copy(), best_score
    stale = iterations = 0
    loose = False
    while iterations < max_iterations and stale < patience:
        iterations += 1
        excess, cut = score
        lp = excess == 0
        if lp:
            part, locked = steps.propagate(part, locked, pwgts, loose)
        else:
            moved = steps.rebalance(part, pwgts)
            if moved is None:  # every later iteration would find the same
                break
            part = moved
            locked[:] = 0
        score, pwgts = steps.score(part)
        if lp:
            loose = not loose and score[1] >= (1 - improvement) * cut
        if score < best_score:
            big = score[0] < best_score[0] or score[1] < (1 - improvement) * best_score[1]
            best, best_score = part.copy(), score
            stale = 0 if big else stale + 1
        elif lp or steps.settle is None or score[0] >= (
                1 - (steps.settle if best_score[0] == 0 else improvement)) * excess:
            # a rebalancing step that still lowers the excess is not stale; once a balanced
            # state is kept, only one that removes a good share of it
            stale += 1
    return best, iterations
