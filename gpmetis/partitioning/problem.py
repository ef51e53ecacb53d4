"""The partitioning problem: the graph, the number of parts and their targets and limits, the
options and the seed, built and checked once by the driver. Engines and modes read it instead of
loose parameters, so a limit is computed in one place."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gpmetis.balance import max_part_weights, uniform_tpwgts
from gpmetis.errors import OptionError
from gpmetis.graph import Graph
from gpmetis.io import read_tpwgts
from gpmetis.options import MIN_TPWGT, Options, check_nparts

DEFAULT_SEED = 4321
CUT_SEED_STRIDE = 7919  # run r of a problem takes seed + r * CUT_SEED_STRIDE
COMBINE_SEED = 104729  # the combines' coarsening seeds, apart from the runs'


@dataclass(frozen=True)
class PartitionProblem:
    """``graph`` into ``nparts`` parts: part p's constraint c targets ``tpwgts[p, c]`` of the
    constraint's total and may weigh up to ``limits[p, c]`` (``ubfactors[c]`` times the target,
    rounded down, or the target rounded up where that is more); ``options`` valid; ``seed`` the
    first run's (``-seed``, or DEFAULT_SEED where negative). ``pieces``: where ranks hold the
    graph in pieces, the runs they take part in (``distributed.partition.DistributedRun``)."""

    graph: Graph
    nparts: int
    options: Options
    tpwgts: np.ndarray
    ubfactors: tuple[float, ...]
    seed: int
    pieces: object | None = None

    @classmethod
    def of(cls, graph: Graph, nparts: int, options: Options,
           pieces: object | None = None) -> PartitionProblem:
        """The problem, with OptionError naming the first option out of range or not
        matching the graph (NPARTS, -ubvec's entries, -tpwgts)."""
        options.validate()
        check_nparts(nparts, graph.nvtxs)
        ubfactors = tuple(options.ubfactors(graph.ncon))
        tpwgts = load_tpwgts(options, nparts, graph.ncon)
        seed = options.seed if options.seed >= 0 else DEFAULT_SEED
        return cls(graph, nparts, options, tpwgts, ubfactors, seed, pieces)

    @property
    def ncon(self) -> int:
        return self.graph.ncon

    @cached_property
    def totals(self) -> np.ndarray:
        """Each constraint's total vertex weight (int64)."""
        return np.array(self.graph.weight_totals.vwgt, dtype=np.int64)

    @cached_property
    def limits(self) -> np.ndarray:
        """(nparts, ncon) int64: the most each part may weigh in each constraint."""
        return max_part_weights(self.totals, self.tpwgts, self.ubfactors)


def load_tpwgts(options: Options, nparts: int, ncon: int) -> np.ndarray:
    """(nparts, ncon) target part weights: uniform, from a METIS tpwgts file, or given values."""
    if options.tpwgts is None:
        return uniform_tpwgts(nparts, ncon)
    if isinstance(options.tpwgts, str):
        return read_tpwgts(options.tpwgts, nparts, ncon)
    values = np.asarray(options.tpwgts, dtype=np.float64)
    if values.size != nparts * ncon or not (np.isfinite(values) & (values >= MIN_TPWGT)).all():
        # METIS rejects a part of zero target weight too (its -tpwgts file needs 0 < f < 1)
        raise OptionError("tpwgts", f"needs {nparts * ncon} positive fractions")
    values = values.reshape(nparts, ncon)
    return values / values.sum(axis=0, keepdims=True)
