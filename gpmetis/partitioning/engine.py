"""The gpu and cpu engines' answer to a problem: the best of ``options.runs`` multilevel runs
(least excess over the limits, then the lowest edge cut or a mode's objective), each a run of
the graph's constraint scheme (``schemes``) with the modes' hooks around it (``modes``)."""

from __future__ import annotations

import time

import numpy as np

from gpmetis.backend import Backend, get_backend
from gpmetis.errors import PartitionError
from gpmetis.metrics import PartitionMetrics
from gpmetis.partitioning.modes import Mode
from gpmetis.partitioning.modes.contig import Contig
from gpmetis.partitioning.modes.direct import Direct
from gpmetis.partitioning.modes.minconn import Minconn
from gpmetis.partitioning.modes.packing import Packing
from gpmetis.partitioning.modes.pieces import Pieces
from gpmetis.partitioning.modes.strong import Strong
from gpmetis.partitioning.modes.volume import Volume
from gpmetis.partitioning.problem import COMBINE_SEED, CUT_SEED_STRIDE, PartitionProblem
from gpmetis.partitioning.schemes import scheme_for

# Set up in this order (each sees the options the earlier ones normalised); candidates are
# tried in it too: the direct candidate before the packed components' V-cycle.
MODES: tuple[type[Mode], ...] = (Minconn, Contig, Volume, Direct, Packing, Strong, Pieces)


class EngineRun:
    """The runs of ``problem`` on ``be``: the scheme, the options as the modes normalised them,
    the modes that apply, the arguments every pipeline takes (``extra``), the notes for the
    statistics and how many times to run (``runs``: one where a mode runs them all at once)."""

    def __init__(self, be: Backend, problem: PartitionProblem) -> None:
        self.be, self.problem = be, problem
        self.scheme = scheme_for(be, problem)
        self.options = problem.options
        self.notes: dict = {}
        self.extra: dict = {}
        self.runs = problem.options.runs
        self.modes: list[Mode] = []
        for mode in MODES:
            if mode.applies(self):
                self.modes.append(mode(self))

    @property
    def components(self):
        """Each vertex's component, named by its smallest vertex (on the backend)."""
        return self.scheme.components

    def score(self, part) -> tuple:
        """(excess over the limits, edge cut or the modes' objective): smaller is better."""
        excess, cut = self.scheme.state(part, self.options.ptype == "rb")
        for mode in self.modes:
            value = mode.objective(part)
            cut = cut if value is None else value
        return excess, cut

    def run(self, seed: int):
        """(part, RunStats) of the run of ``seed``."""
        found = next((out for mode in self.modes if (out := mode.pipeline(seed)) is not None),
                     None)
        part, stats = found or self.scheme.partition(self.options, seed, **self.extra)
        for mode in self.modes:
            part = mode.candidate(seed, part, stats)
        for mode in self.modes:
            part = mode.finish(part, stats)
        for mode in self.modes:
            mode.note(stats, self.notes)
        return part, stats

    def combine(self, best, part, seed: int, stats):
        for mode in self.modes:
            child = mode.combine(best, part, seed, stats)
            if child is not None:
                return child
        return part

    def best(self):
        """(part, RunStats) of the best run: ``runs`` of them, and up to the context's
        ``balance_retries`` more while the best is over a limit under -contig or several
        constraints."""
        seed = self.problem.seed
        part, stats = self.run(seed)
        retries = (self.options.context.runs.balance_retries
                   if self.problem.ncon > 1 or self.options.contig else 0)
        best = (self.score(part), part, stats)
        trial = 1
        while trial < self.runs or (best[0][0] > 0 and trial < self.runs + retries):
            part, stats = self.run(seed + trial * CUT_SEED_STRIDE)
            part = self.combine(best[1], part, seed + trial * COMBINE_SEED, stats)
            if (trial_score := self.score(part)) < best[0]:
                best = (trial_score, part, stats)
            trial += 1
        return best[1], best[2]


def multilevel_engine(problem: PartitionProblem, engine: str
                      ) -> tuple[np.ndarray, dict, PartitionMetrics]:
    """(part on the host, stats, metrics) of the gpu or cpu ``engine``'s best run; a
    PartitionError where the graph does not fit the engine's memory."""
    be = get_backend(engine)
    options = problem.options
    if problem.pieces is None:  # (a distributed run began on its ranks)
        be.start_run()
    try:
        run = EngineRun(be, problem)
        part, stats = run.best()
        metrics_start = time.perf_counter()
        be.release_free_memory()  # the metrics' arrays from fresh blocks, not the pool's fragments
        metrics = run.scheme.metrics(part)
        metrics_seconds = time.perf_counter() - metrics_start
    except MemoryError as exc:
        raise PartitionError(
            f"the graph does not fit in {engine.upper()} memory ({exc}); try -engine=metis"
        ) from exc
    run_stats = {
        "levels": stats.levels,
        "coarsening": stats.coarsening,
        "initial": stats.initial,
        "refinement": stats.refinement,
        "peak_gpu_bytes": be.peak_memory(),  # the metrics' arrays included
        "ncuts": options.runs,
        "preset": options.preset,
        "metrics_seconds": metrics_seconds,
        **run.notes,
    }
    return be.asnumpy(part).astype(np.int32, copy=False), run_stats, metrics
