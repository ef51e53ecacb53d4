"""``partition``: the one entry point of the CLI and the Python API.

It picks the engine, checks that the engine can honour every option given, runs it (best of
``ncuts`` runs), and measures the result with METIS's metrics.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from gpmetis.backend import cuda_available
from gpmetis.balance import column_sums, max_part_weights, uniform_tpwgts
from gpmetis.c_output import trial_prints
from gpmetis.errors import OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.limits import check_limits, multilevel_fits
from gpmetis.metrics import PartitionMetrics, compute_metrics
from gpmetis.options import AUTO_GPU_MIN_SIZE, MIN_TPWGT, Options, check_nparts
from gpmetis.partitioning import warmup

# METIS 5.1's gpmetis drops -contig on a graph of several components, and so do we, saying so
CONTIG_IGNORED = "the input graph is not connected: -contig is ignored, as in METIS 5.1"
# METIS 5.1 lowers subdomain degrees in its k-way refinement only
MINCONN_IGNORED = "-minconn cannot be used with -ptype=rb: it is ignored, as in METIS 5.1"
DEFAULT_SEED = 4321
CUT_SEED_STRIDE = 7919
# per constraint, the bisections over their limits named one by one (METIS's multi-constraint
# recursive bisection leaves many a vertex over), then how many more
RB_WARNING_LINES = 3
BALANCE_RETRIES = 3  # more runs, at most, where the best -contig or multi-constraint run is over
COMBINE_SEED = 104729  # the combines' coarsening seeds, apart from the runs'
# -preset=strong runs its runs at once, as one multilevel run over the disjoint union of that
# many copies of the graph, where the union stays this small (vertices, adjacency entries):
# on small graphs a GPU run is bound by latency (launches, syncs, METIS's trials), not work,
# so R runs one after another cost R times one; above, the GPU is busy with one run anyway
STRONG_BATCH_MAX_VERTICES = 1 << 20
STRONG_BATCH_MAX_ENTRIES = 1 << 25


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
            from gpmetis.multiconstraint import metis_ncon

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


def load_tpwgts(options: Options, nparts: int, ncon: int) -> np.ndarray:
    """(nparts, ncon) target part weights: uniform, from a METIS tpwgts file, or given values."""
    if options.tpwgts is None:
        return uniform_tpwgts(nparts, ncon)
    if isinstance(options.tpwgts, str):
        from gpmetis.io import read_tpwgts

        return read_tpwgts(options.tpwgts, nparts, ncon)
    values = np.asarray(options.tpwgts, dtype=np.float64)
    if values.size != nparts * ncon or not (np.isfinite(values) & (values >= MIN_TPWGT)).all():
        # METIS rejects a part of zero target weight too (its -tpwgts file needs 0 < f < 1)
        raise OptionError("tpwgts", f"needs {nparts * ncon} positive fractions")
    values = values.reshape(nparts, ncon)
    return values / values.sum(axis=0, keepdims=True)


def partition(graph: Graph, nparts: int, options: Options | None = None, **kwargs) -> Result:
    """Partition ``graph`` into ``nparts`` parts; ``kwargs`` are METIS option names."""
    options = (options or Options()).with_(**kwargs) if kwargs else (options or Options())
    options.validate()
    check_nparts(nparts, graph.nvtxs)
    warmup.wait()
    engine = choose_engine(graph, options)
    check_limits(graph, nparts, engine)
    tpwgts = load_tpwgts(options, nparts, graph.ncon)
    seed = options.seed if options.seed >= 0 else DEFAULT_SEED
    start = time.perf_counter()
    with trial_prints(options.dbglvl > 0):  # the METIS trials of our engines print nothing
        engine, part, stats, metrics = _run_engine(graph, nparts, options, tpwgts, engine, seed)
    seconds = time.perf_counter() - start
    if metrics is None:
        metrics = compute_metrics(graph.xadj, graph.adjncy, graph.vwgt, graph.adjwgt, part,
                                  nparts, tpwgts, graph.vsize)
    else:
        seconds -= stats.pop("metrics_seconds", 0.0)
    if options.ptype == "rb":  # each constraint's limit holds per bisection, as in METIS
        from gpmetis.partitioning.recursive import bisection_balance

        pwgts = np.asarray(metrics.pwgts)
        warnings = []
        for c, ubfactor in enumerate(options.ubfactors(graph.ncon)):
            lines = bisection_balance(pwgts[:, c], tpwgts[:, c], ubfactor)[1]
            if len(lines) > RB_WARNING_LINES:
                lines = [*lines[:RB_WARNING_LINES],
                         f"{len(lines) - RB_WARNING_LINES} more bisections over their limits"]
            warnings += [f"constraint {c}: {line}" if graph.ncon > 1 else line
                         for line in lines]
    else:
        warnings = balance_warnings(graph, metrics, tpwgts, options.ubfactors(graph.ncon))
    if stats.get("contig") == CONTIG_IGNORED:
        warnings.insert(0, CONTIG_IGNORED)
    if options.minconn and options.ptype == "rb":
        warnings.insert(0, MINCONN_IGNORED)
    return Result(part, nparts, engine, metrics, seconds, stats, warnings)


def _run_engine(graph: Graph, nparts: int, options: Options, tpwgts: np.ndarray, engine: str,
                seed: int) -> tuple[str, np.ndarray, dict, PartitionMetrics | None]:
    """(the engine that answered, part, stats, metrics or None where not computed yet)."""
    stats: dict = {}
    metrics = None
    if nparts == 1 or graph.nvtxs == 0:
        part = np.zeros(graph.nvtxs, dtype=np.int32)
    elif engine == "metis":
        metis_options = options
        if options.contig and not _connected(graph):
            # METIS refuses -contig on such a graph; its gpmetis ignores it with a warning
            metis_options, stats = options.with_(contig=False), {"contig": CONTIG_IGNORED}
        part = _metis(graph, nparts, metis_options, tpwgts)
        if metis_options.contig:
            part = _metis_contiguous(graph, part, nparts, options, tpwgts)
        if options.engine == "auto" and options.ptype != "rb" and multilevel_runs(graph, options):
            engine, part, found, metrics = _within_limits(graph, nparts, options, tpwgts, seed,
                                                          part)
            stats |= found
    else:
        try:
            part, stats, metrics = _best_of_cuts(graph, nparts, options, tpwgts, engine, seed)
        except PartitionError as exc:
            if options.engine != "auto":
                raise
            # auto chose the GPU and it ran out of memory: METIS on the CPU still answers.
            stats = {"fallback": str(exc)}
            engine = "metis"
            part = _metis(graph, nparts, options, tpwgts)
    return engine, part, stats, metrics


def _within_limits(graph: Graph, nparts: int, options: Options, tpwgts: np.ndarray, seed: int,
                   part: np.ndarray) -> tuple[str, np.ndarray, dict, PartitionMetrics]:
    """(engine, part, stats, metrics): METIS's ``part`` where it is within every limit, else
    our engine's partition where it is less over (METIS's multi-constraint scheme ends a
    few units over a limit in about a quarter of its runs)."""
    metrics = compute_metrics(graph.xadj, graph.adjncy, graph.vwgt, graph.adjwgt, part, nparts,
                              tpwgts, graph.vsize)
    ubfactors = options.ubfactors(graph.ncon)
    excess = overweight(graph, metrics, tpwgts, ubfactors)
    if excess > 0:
        ours = "gpu" if cuda_available() else "cpu"
        try:
            found, stats, found_metrics = _best_of_cuts(graph, nparts, options, tpwgts, ours,
                                                        seed)
        except PartitionError:  # the GPU ran out of memory: METIS's stands
            return "metis", part, {}, metrics
        if overweight(graph, found_metrics, tpwgts, ubfactors) < excess:
            stats["metis_overweight"] = excess
            return ours, found, stats, found_metrics
    return "metis", part, {}, metrics


def _connected(graph: Graph) -> bool:
    from gpmetis.backend import get_backend
    from gpmetis.metrics import connected_components

    # each vertex's label is its component's smallest vertex
    return not connected_components(get_backend("cpu"), graph.xadj, graph.adjncy).any()


def _metis(graph: Graph, nparts: int, options: Options, tpwgts: np.ndarray) -> np.ndarray:
    """METIS's partition, with one vertex moved into each part it left empty (n >= nparts):
    no empty part is part of our contract, not of METIS's."""
    from gpmetis.partitioning.metis_engine import metis_partition

    part = metis_partition(graph, nparts, options, None if options.tpwgts is None else tpwgts)
    if graph.nvtxs < nparts or np.bincount(part, minlength=nparts).all():
        return part
    from gpmetis.backend import get_backend
    from gpmetis.device_graph import DeviceGraph
    from gpmetis.refinement.contiguity import fill_empty_parts_connected
    from gpmetis.refinement.rebalance import fill_empty_parts

    # under -contig the vertex that fills a part must not split its own
    fill = fill_empty_parts_connected if options.contig else fill_empty_parts
    cpu = get_backend("cpu")
    host = DeviceGraph(cpu, graph.xadj, graph.adjncy, graph.adjwgt, graph.vwgt[:, 0])
    return fill(cpu, host, part, nparts)


def _metis_contiguous(graph: Graph, part: np.ndarray, nparts: int, options: Options,
                      tpwgts: np.ndarray) -> np.ndarray:
    """METIS's ``part`` of the connected ``graph`` with every part connected
    (``make_contiguous`` within the k-way limits), as -contig promises on every engine:
    METIS's recursive bisection ignores -contig, and its k-way -contig can leave a part split.
    ``part`` itself where every part is connected already."""
    from gpmetis.backend import get_backend
    from gpmetis.device_graph import DeviceGraph
    from gpmetis.metrics import connected_components
    from gpmetis.refinement.contiguity import main_components, make_contiguous

    cpu = get_backend("cpu")
    host = DeviceGraph(cpu, graph.xadj, graph.adjncy, graph.adjwgt, graph.vwgt[:, 0])
    label = connected_components(cpu, host.xadj, host.adjncy, part)
    if bool(main_components(cpu, host, part, label, nparts).all()):
        return part
    limits = max_part_weights(column_sums(graph.vwgt), tpwgts, options.ubfactors(graph.ncon))
    weights = None if graph.ncon == 1 else np.ascontiguousarray(graph.vwgt.T)
    return make_contiguous(cpu, host, part, nparts, limits.T, weights=weights)[0]


def _weights_and_limits(graph: Graph, metrics: PartitionMetrics, tpwgts: np.ndarray,
                        ubfactors: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """(nparts, ncon) int64 part weights and METIS's limits (ubvec x target, at least the
    target rounded up)."""
    pwgts = np.asarray(metrics.pwgts, dtype=np.int64).reshape(-1, graph.ncon)
    return pwgts, max_part_weights(column_sums(graph.vwgt), tpwgts, ubfactors)


def overweight(graph: Graph, metrics: PartitionMetrics, tpwgts: np.ndarray,
               ubfactors: list[float]) -> float:
    """The largest excess of a part over its limit in any constraint, relative to that limit
    (0 when every part is within every limit)."""
    pwgts, limits = _weights_and_limits(graph, metrics, tpwgts, ubfactors)
    return float(np.max((pwgts - limits) / np.maximum(limits, 1), initial=0.0))


def balance_warnings(graph: Graph, metrics: PartitionMetrics, tpwgts: np.ndarray,
                     ubfactors: list[float]) -> list[str]:
    """One line per constraint with a part above its limit: the worst part, by how much, and
    the heaviest vertex."""
    pwgts, limits = _weights_and_limits(graph, metrics, tpwgts, ubfactors)
    lines = []
    for c in np.flatnonzero((pwgts > limits).any(axis=0)):
        p = int(np.argmax(pwgts[:, c] - limits[:, c]))
        heaviest = int(graph.vwgt[:, c].max())
        lines.append(
            f"constraint {c}: part {p} weighs {pwgts[p, c]}, {pwgts[p, c] - limits[p, c]} above "
            f"its limit {limits[p, c]} (ubvec {ubfactors[c]:g}); the heaviest vertex weighs "
            f"{heaviest}")
    return lines


def _best_of_cuts(graph: Graph, nparts, options, tpwgts, engine: str, seed: int):
    """The best of ``ncuts`` multilevel runs (least overweight, then lowest cut, or volume with
    -objtype=vol): (part on the host, stats, metrics)."""
    from gpmetis.backend import get_backend

    be = get_backend(engine)
    ncuts = options.runs
    try:
        g, vwgt, run, score, notes, combine, ncuts = _multilevel(be, graph, nparts, options,
                                                                 tpwgts)
        part, stats = run(seed)
        # -contig's rebalancing cannot always keep every part connected and within its limit,
        # nor the multi-constraint one every constraint: a run over its limit is followed by
        # runs with other seeds, the best kept
        retries = (BALANCE_RETRIES if graph.ncon > 1 or (options.contig and "contig" not in notes)
                   else 0)
        best = (score(part), part, stats)
        trial = 1
        while trial < ncuts or (best[0][0] > 0 and trial < ncuts + retries):
            part, stats = run(seed + trial * CUT_SEED_STRIDE)
            if combine is not None:
                part = combine(best[1], part, seed + trial * COMBINE_SEED, stats)
            if (trial_score := score(part)) < best[0]:
                best = (trial_score, part, stats)
            trial += 1
        _, part, stats = best
        metrics_start = time.perf_counter()
        be.release_free_memory()  # the metrics' arrays from fresh blocks, not the pool's fragments
        metrics = compute_metrics(g.xadj, g.adjncy, vwgt, g.adjwgt, part, nparts, tpwgts,
                                  None if graph.vsize is None else be.asarray(graph.vsize), be)
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
        **notes,
    }
    return be.asnumpy(part).astype(np.int32, copy=False), run_stats, metrics


def _vertex_sizes(be, graph: Graph, options: Options):
    """Under -objtype=vol, the vertex sizes (int64 on ``be``; ones where the graph has none)
    that the volume refinement and the runs' scores weigh; otherwise None."""
    if options.objtype != "vol":
        return None
    if graph.vsize is None:
        return be.xp.ones(graph.nvtxs, dtype=be.xp.int64)
    return be.asarray(graph.vsize, dtype=be.xp.int64)


def _multilevel(be, graph: Graph, nparts: int, options: Options, tpwgts: np.ndarray):
    """(device graph, its (n, ncon) weights for the metrics, run: seed -> (part, RunStats),
    score: part -> (excess, edgecut or volume), smaller is better, notes for the run's stats:
    whether -contig or -minconn was ignored, the last run's contiguity and -minconn rounds,
    volume refinement rounds, whether strong's runs ran at once, combine: (best, part, seed,
    the part's RunStats) -> a partition at least as good as both, timed into the stats, or
    None, and how many times to call run: ``options.runs``, or 1 where one call runs them all
    at once) for the graph's number of constraints, ``-ptype``, ``-contig``, ``-minconn`` and
    ``-objtype``."""
    from gpmetis.device_graph import DeviceGraph
    from gpmetis.metrics import connected_components
    from gpmetis.refinement.jet import partition_state

    if graph.ncon > 1:
        from gpmetis.multiconstraint.pipeline import multiconstraint_partition, upload
        from gpmetis.multiconstraint.recursive import multiconstraint_recursive
        from gpmetis.multiconstraint.refinement import score_state
        from gpmetis.multiconstraint.weights import Balance
        from gpmetis.partitioning.multilevel import direct_candidate
        from gpmetis.partitioning.recursive import bisection_balance
        from gpmetis.refinement.volume import communication_volume

        wg = upload(be, graph, nparts)
        balance = Balance.of(wg.totals, tpwgts, options.ubfactors(graph.ncon))
        rb = options.ptype == "rb"
        direct = not rb and direct_candidate(graph.nvtxs, nparts)
        if rb and options.minconn:
            options = options.with_(minconn=False)  # ignored (a warning says so)
        sizes = _vertex_sizes(be, graph, options)
        extra = {"vsize": sizes} if sizes is not None else {}
        # (each vertex's label is its component's smallest vertex: a connected graph's are 0)
        contig = options.contig and not bool(connected_components(be, wg.graph.xadj,
                                                                  wg.graph.adjncy).any())
        notes = {"contig": CONTIG_IGNORED} if options.contig and not contig else {}
        if options.contig and not contig:
            options = options.with_(contig=False)  # (METIS's trials would refuse the graph)

        def run(seed: int):
            if rb:
                part, stats = multiconstraint_recursive(wg, nparts, options, tpwgts, seed)
            else:
                part, stats = multiconstraint_partition(wg, nparts, options, tpwgts, seed,
                                                        **extra)
            if direct:  # a small input: the trials on it, then its refinement, kept if better
                split, split_stats = multiconstraint_partition(wg, nparts, options, tpwgts,
                                                               seed, direct=True, **extra)
                stats.initial += split_stats.initial
                stats.refinement += split_stats.refinement
                if score(split) < score(part):
                    part, stats.volume_rounds = split, split_stats.volume_rounds
            if contig:
                part = _contiguous(be, wg.graph, part, nparts, balance.limits, stats, notes,
                                   weights=wg.weights)
            if options.objtype == "vol":
                notes["volume_rounds"] = stats.volume_rounds
            if options.minconn:
                notes["minconn_rounds"] = stats.minconn
            return part, stats

        def score(part) -> tuple[float, int]:
            (excess, cut), pwgts = score_state(be, wg.graph, wg.weights, part, nparts, balance)
            if rb:  # each constraint's excess over its per-bisection limits, as a share
                ub = options.ubfactors(graph.ncon)
                excess = sum(bisection_balance(pwgts[c], tpwgts[:, c], ub[c])[0]
                             / max(int(wg.totals[c]), 1) for c in range(graph.ncon))
            if sizes is not None:
                cut = communication_volume(be, wg.graph, part, nparts, sizes)
            return excess, cut

        return wg.graph, wg.weights.T, run, score, notes, None, options.runs

    from gpmetis.partitioning.components import packed_start
    from gpmetis.partitioning.multilevel import (
        direct_candidate,
        multilevel_copies,
        multilevel_partition,
        vcycle,
    )
    from gpmetis.partitioning.recursive import bisection_balance, recursive_partition
    from gpmetis.refinement.volume import communication_volume

    g = DeviceGraph.upload(be, graph)
    ub = options.ubfactors(1)
    limits = max_part_weights(np.array([g.total_vwgt]), tpwgts, ub)[:, 0]
    pipeline = recursive_partition if options.ptype == "rb" else multilevel_partition
    # (not under -minconn: a V-cycle's refinement does not lower subdomain degrees)
    kway_cut = options.ptype == "kway" and not options.minconn
    # the components, found once: -contig needs one, placement packs several (each vertex's
    # label is its component's smallest vertex, so a connected graph's are all 0)
    labels = (connected_components(be, g.xadj, g.adjncy) if options.contig or kway_cut
              else None)
    contig = options.contig and not bool(labels.any())
    notes = {"contig": CONTIG_IGNORED} if options.contig and not contig else {}
    minconn = options.minconn and options.ptype == "kway"
    if options.minconn and not minconn:
        options = options.with_(minconn=False)  # ignored (a warning says so), in every bisection

    sizes = _vertex_sizes(be, graph, options)
    extra = {"vsize": sizes} if sizes is not None else {}
    # a disconnected graph's components packed whole: the start of a V-cycle per run, whose
    # partition is kept where it beats the run's own
    packed = packed_start(g, nparts, limits, tpwgts, labels) if kway_cut else None
    # (under -minconn too: its refinement of the input lowers the subdomain degrees)
    direct = options.ptype == "kway" and direct_candidate(g.nvtxs, nparts)
    combines = options.preset == "strong" and kway_cut and not contig
    runs = copies = options.runs
    if combines and options.objtype == "cut" and batches(graph, copies):
        # strong's runs as copies of one run, then one V-cycle combining all the copies (it
        # cuts less than combining the best two, for the same cost: docs/quality.md)
        def pipeline(g, nparts, options, tpwgts, seed):
            seeds = [seed + c * CUT_SEED_STRIDE for c in range(copies)]
            parts, stats = multilevel_copies(g, nparts, options, tpwgts, seeds)
            child, child_stats = vcycle(g, nparts, options, tpwgts, seed + COMBINE_SEED,
                                        *parts)
            stats.coarsening += child_stats.coarsening
            stats.refinement += child_stats.refinement
            return (child if score(child) < score(parts[0]) else parts[0]), stats

        notes["batched_runs"] = copies
        runs = 1

    def run(seed: int):
        part, stats = pipeline(g, nparts, options, tpwgts, seed, **extra)
        if direct:  # a small input: METIS's k-way trials on it, then Jet, kept where better
            split, split_stats = multilevel_partition(g, nparts, options, tpwgts, seed, **extra,
                                                      direct=True)
            stats.initial += split_stats.initial
            stats.refinement += split_stats.refinement
            if score(split) < score(part):
                part, stats.minconn = split, split_stats.minconn
                stats.volume_rounds = split_stats.volume_rounds
        if minconn:
            notes["minconn_rounds"] = stats.minconn
        if packed is not None:
            placed, placed_stats = vcycle(g, nparts, options, tpwgts, seed, packed)
            stats.coarsening += placed_stats.coarsening
            stats.refinement += placed_stats.refinement
            if score(placed) < score(part):
                part = placed
        if contig:
            part = _contiguous(be, g, part, nparts, limits, stats, notes)
        if options.objtype == "vol":
            notes["volume_rounds"] = stats.volume_rounds
        return part, stats

    def score(part) -> tuple[int, int]:
        cut, pw = partition_state(be, g, part, nparts)
        if options.ptype == "rb":
            return bisection_balance(pw, tpwgts, ub[0])[0], cut
        if sizes is not None:
            cut = communication_volume(be, g, part, nparts, sizes)
        return int(np.maximum(pw - limits, 0).sum()), cut

    def combine(best, part, seed: int, stats):
        # the overlay of two partitions is coarsened within both: kway and -contig-free only
        # (a combined partition may split a part; recursive bisection scores by bisection)
        child, child_stats = vcycle(g, nparts, options, tpwgts, seed, best, part)
        stats.coarsening += child_stats.coarsening
        stats.refinement += child_stats.refinement
        return child

    return g, g.vwgt[:, None], run, score, notes, combine if combines else None, runs


def _contiguous(be, g, part, nparts: int, limits: np.ndarray, stats, notes: dict, *,
                weights=None):
    """``part`` with every part connected (``make_contiguous``; ``weights``: a
    multi-constraint graph's (ncon, n), ``limits`` then (ncon, nparts)), its time added to the
    run's refinement and its rounds to ``notes``."""
    from gpmetis.refinement.contiguity import make_contiguous

    t0 = time.perf_counter()
    part, rounds = make_contiguous(be, g, part, nparts, limits, weights=weights)
    be.synchronize()
    stats.refinement += time.perf_counter() - t0
    notes["contig_rounds"] = {"merging": rounds[0], "rebalancing": rounds[1]}
    return part


def batches(graph: Graph, runs: int) -> bool:
    """Whether ``runs`` runs of ``graph`` run at once, as copies in one multilevel run: the
    union within STRONG_BATCH_MAX_VERTICES and _ENTRIES, its total weights below 2^31 (as the
    engines need of any graph)."""
    total_vwgt = int(graph.vwgt.sum()) if graph.has_vwgt else graph.nvtxs
    total_adjwgt = int(graph.adjwgt.sum()) if graph.has_adjwgt else len(graph.adjncy)
    return (runs > 1 and runs * graph.nvtxs <= STRONG_BATCH_MAX_VERTICES
            and runs * len(graph.adjncy) <= STRONG_BATCH_MAX_ENTRIES
            and runs * max(total_vwgt, total_adjwgt) <= np.iinfo(np.int32).max)
