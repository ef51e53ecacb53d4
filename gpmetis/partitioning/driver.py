"""``partition``: the one entry point of the CLI and the Python API.

It builds the problem (``problem.PartitionProblem``), picks the engine and checks that it can
honour every option given, runs it (the gpu/cpu engines' best of ``ncuts`` runs, or METIS),
measures the result with METIS's metrics and checks every part against its limits once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from gpmetis.backend import cuda_available
from gpmetis.c_output import trial_prints
from gpmetis.errors import OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.limits import check_limits, multilevel_fits
from gpmetis.metrics import PartitionMetrics, compute_metrics
from gpmetis.options import AUTO_GPU_MIN_SIZE, Options
from gpmetis.partitioning import metis_ncon, warmup
from gpmetis.partitioning.bisection_tree import bisection_balance
from gpmetis.partitioning.metis_engine import metis_engine
from gpmetis.partitioning.modes.contig import CONTIG_IGNORED
from gpmetis.partitioning.modes.minconn import MINCONN_IGNORED
from gpmetis.partitioning.problem import PartitionProblem

# per constraint, the bisections over their limits named one by one (METIS's multi-constraint
# recursive bisection leaves many a vertex over), then how many more
RB_WARNING_LINES = 3


@dataclass
class Result:
    """A partition and what it costs: parts (int32, 0-based), METIS's metrics, timings."""

    part: np.ndarray
    nparts: int
    engine: str
    metrics: PartitionMetrics
    seconds: float
    stats: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. a part over its balance limit

    @property
    def edgecut(self) -> int:
        return self.metrics.edgecut

    @property
    def volume(self) -> int:
        return self.metrics.volume

    @property
    def imbalance(self) -> float:
        return max(self.metrics.imbalance)


def unsupported_by_multilevel(graph: Graph, options: Options) -> list[tuple[str, str]]:
    """(option, reason) pairs that the gpu/cpu engines cannot honour for this graph."""
    problems = []
    if options.iptype in ("edge", "node"):
        problems.append(("iptype", f"'{options.iptype}' (a separator's start, as for ndmetis) "
                                   "runs only with -engine=metis; the gpu/cpu engines' bisections "
                                   "start from grown regions (grow, metisrb) or random ones"))
    if options.rtype is not None:
        problems.append(("rtype", "the gpu/cpu engines refine with Jet; use -engine=metis"))
    if options.ondisk:
        problems.append(("ondisk", "is not supported: the graph is always held in memory"))
    return problems


def multilevel_runs(graph: Graph, options: Options) -> bool:
    """True when the gpu/cpu engines offer what ``options`` ask and ``graph`` fits them."""
    return not unsupported_by_multilevel(graph, options) and multilevel_fits(graph)


def choose_engine(graph: Graph, options: Options) -> str:
    """The engine that will run: ``auto`` -> gpu for graphs of at least AUTO_GPU_MIN_SIZE
    vertices plus edges when CUDA is usable and the gpu engine offers what the options ask,
    else metis (METIS's own multi-constraint scheme for several constraints), whatever
    ``ncon``. Small graphs never touch CUDA: importing CuPy alone costs more than METIS's run.
    Where this pymetis lacks METIS's multi-constraint entry points, a multi-constraint graph
    runs on the gpu/cpu engine instead."""
    engine = options.engine
    if engine == "auto":
        runnable = multilevel_runs(graph, options)
        large = graph.nvtxs + graph.nedges >= AUTO_GPU_MIN_SIZE
        engine = "gpu" if large and runnable and cuda_available() else "metis"
        if engine == "metis" and runnable and graph.ncon > 1:
            if not metis_ncon.available():
                engine = "gpu" if cuda_available() else "cpu"
    check_engine(graph, options, engine)
    return engine


def check_engine(graph: Graph, options: Options, engine: str) -> None:
    """OptionError naming the first option that ``engine`` (gpu or cpu) cannot honour for
    ``graph``, or the gpu engine where CUDA is not usable."""
    if engine in ("gpu", "cpu"):
        problems = unsupported_by_multilevel(graph, options)
        if problems:
            name, reason = problems[0]
            raise OptionError(name, f"{reason} (engine {engine})")
    if engine == "gpu" and not cuda_available():
        raise OptionError("engine", "'gpu' needs CuPy and a CUDA device; none is usable here")


def partition(graph: Graph, nparts: int, options: Options | None = None, *,
              pieces: object | None = None, **kwargs) -> Result:
    """Partition ``graph`` into ``nparts`` parts; ``kwargs`` are METIS option names;
    ``pieces``: the ranks that hold the graph in pieces (``PartitionProblem.pieces``)."""
    options = (options or Options()).with_(**kwargs) if kwargs else (options or Options())
    if options.gpus is not None:
        from gpmetis.distributed.spawn import gpu_count, partition_on_gpus

        ranks = gpu_count(options.validate().gpus)
        options = replace(options, gpus=None, engine="gpu")
        if ranks > 1 and pieces is None:
            return partition_on_gpus(graph, nparts, options, ranks)
    problem = PartitionProblem.of(graph, nparts, options, pieces)
    warmup.wait()
    engine = choose_engine(graph, options)
    check_limits(graph, nparts, engine)
    start = time.perf_counter()
    with trial_prints(options.dbglvl > 0):  # the METIS trials of our engines print nothing
        engine, part, stats, metrics = _run_engine(problem, engine)
    seconds = time.perf_counter() - start
    if metrics is None:
        metrics = compute_metrics(graph.xadj, graph.adjncy, graph.vwgt, graph.adjwgt, part,
                                  nparts, problem.tpwgts, graph.vsize)
    else:
        seconds -= stats.pop("metrics_seconds", 0.0)
    warnings = balance_warnings(problem, metrics)
    if stats.get("contig") == CONTIG_IGNORED:
        warnings.insert(0, CONTIG_IGNORED)
    if options.minconn and options.ptype == "rb":
        warnings.insert(0, MINCONN_IGNORED)
    return Result(part, nparts, engine, metrics, seconds, stats, warnings)


def _run_engine(problem: PartitionProblem, engine: str
                ) -> tuple[str, np.ndarray, dict, PartitionMetrics | None]:
    """(the engine that answered, part, stats, metrics or None where not computed yet)."""
    graph, options = problem.graph, problem.options
    if problem.nparts == 1 or graph.nvtxs == 0:
        return engine, np.zeros(graph.nvtxs, dtype=np.int32), {}, None
    if engine == "metis":
        part, stats = metis_engine(problem)
        if options.engine == "auto" and options.ptype != "rb" and multilevel_runs(graph, options):
            engine, part, found, metrics = _within_limits(problem, part)
            return engine, part, stats | found, metrics
        return engine, part, stats, None
    try:
        part, stats, metrics = _multilevel_engine(problem, engine)
    except PartitionError as exc:
        if options.engine != "auto":
            raise
        # auto chose the GPU and it ran out of memory: METIS on the CPU still answers.
        part, stats = metis_engine(problem)
        return "metis", part, {**stats, "fallback": str(exc)}, None
    return engine, part, stats, metrics


def _multilevel_engine(problem: PartitionProblem, engine: str
                       ) -> tuple[np.ndarray, dict, PartitionMetrics]:
    # the gpu/cpu engines' modules load only when they run: a small graph's METIS run
    # imports none of the multilevel pipeline (its start-up is most of its time)
    from gpmetis.partitioning.engine import multilevel_engine

    return multilevel_engine(problem, engine)


def _within_limits(problem: PartitionProblem, part: np.ndarray
                   ) -> tuple[str, np.ndarray, dict, PartitionMetrics]:
    """(engine, part, stats, metrics): METIS's ``part`` where it is within every limit, else
    our engine's partition where it is less over (METIS's multi-constraint scheme ends a
    few units over a limit in about a quarter of its runs)."""
    graph = problem.graph
    metrics = compute_metrics(graph.xadj, graph.adjncy, graph.vwgt, graph.adjwgt, part,
                              problem.nparts, problem.tpwgts, graph.vsize)
    excess = overweight(problem, metrics)
    if excess > 0:
        ours = "gpu" if cuda_available() else "cpu"
        try:
            found, stats, found_metrics = _multilevel_engine(problem, ours)
        except PartitionError:  # the GPU ran out of memory: METIS's stands
            return "metis", part, {}, metrics
        if overweight(problem, found_metrics) < excess:
            stats["metis_overweight"] = excess
            return ours, found, stats, found_metrics
    return "metis", part, {}, metrics


def _part_weights(problem: PartitionProblem, metrics: PartitionMetrics) -> np.ndarray:
    """(nparts, ncon) int64 part weights."""
    return np.asarray(metrics.pwgts, dtype=np.int64).reshape(-1, problem.ncon)


def overweight(problem: PartitionProblem, metrics: PartitionMetrics) -> float:
    """The largest excess of a part over its limit in any constraint, relative to that limit
    (0 when every part is within every limit)."""
    limits = problem.limits
    return float(np.max((_part_weights(problem, metrics) - limits) / np.maximum(limits, 1),
                        initial=0.0))


def balance_warnings(problem: PartitionProblem, metrics: PartitionMetrics) -> list[str]:
    """The one check of every part against its limits: with -ptype=rb each bisection's (as in
    METIS), else one line per constraint with a part above its limit: the worst part, by how
    much, and the heaviest vertex."""
    pwgts, ubfactors = _part_weights(problem, metrics), problem.ubfactors
    ncon = problem.ncon
    if problem.options.ptype == "rb":
        warnings = []
        for c, ubfactor in enumerate(ubfactors):
            lines = bisection_balance(pwgts[:, c], problem.tpwgts[:, c], ubfactor)[1]
            if len(lines) > RB_WARNING_LINES:
                lines = [*lines[:RB_WARNING_LINES],
                         f"{len(lines) - RB_WARNING_LINES} more bisections over their limits"]
            warnings += [f"constraint {c}: {line}" if ncon > 1 else line for line in lines]
        return warnings
    limits = problem.limits
    lines = []
    for c in np.flatnonzero((pwgts > limits).any(axis=0)):
        p = int(np.argmax(pwgts[:, c] - limits[:, c]))
        heaviest = problem.graph.max_vwgt[c]
        lines.append(
            f"constraint {c}: part {p} weighs {pwgts[p, c]}, {pwgts[p, c] - limits[p, c]} above "
            f"its limit {limits[p, c]} (ubvec {ubfactors[c]:g}); the heaviest vertex weighs "
            f"{heaviest}")
    return lines
