"""The run summary in METIS 5.1 ``gpmetis``'s line shapes, and the same report as a JSON-ready
dict (docs/json-report.md lists its keys).

The summary keeps METIS's lines on METIS's line numbers: for a one-constraint run whose parts are
contiguous, the banner is on lines 2-4, ``- Edgecut:`` on line 15, the timing lines on 28-30 and
``Max memory used`` on 33, as METIS 5.1 prints them. gpmetis's own lines (the engine, peak GPU
memory, the per-phase timing of ``-dbglvl``) come after METIS's, before the closing rule. The
line shapes (rules, banner, sections, timing and memory blocks) serve the companion programs'
summaries too.
"""

from __future__ import annotations

import resource
import sys
from dataclasses import dataclass

from gpmetis import __version__
from gpmetis.graph import Graph
from gpmetis.options import Options
from gpmetis.partitioning.driver import Result

# The JSON report's layout version: raised when a key is removed, renamed or changes meaning
# (added keys keep it).
REPORT_FORMAT_VERSION = 1


@dataclass
class Timing:
    """Seconds of the run's phases as METIS's timing block names them."""

    io: float
    partitioning: float
    reporting: float = 0.0


def max_rss_mb() -> float:
    """Peak resident memory of this process in MB (METIS's "Max memory used")."""
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss_kb / 1024.0 if sys.platform != "darwin" else rss_kb / 2**20


RULE = "*" * 78
SHORT_RULE = "*" * 70  # graphchk's


def section(title: str, width: int = 77) -> str:
    """METIS's section line: the title, a space, dashes up to ``width`` characters."""
    return f"{title} {'-' * (width - 1 - len(title))}"


def banner(program: str) -> list[str]:
    """The three lines that stand where METIS prints its title, build and type sizes."""
    return [
        f"{program} (gpmetis {__version__}), METIS 5.1 {program} compatible",
        " (runs gpmetis's engines; METIS 5.2 through pymetis where it orders or is chosen)",
        " size of idx_t: 64bits, real_t: 64bits, idx_t *: 64bits",
    ]


def timing_lines(io: float, work: float, label: str, note: str, reporting: float) -> list[str]:
    """METIS's timing block (``label`` is "Partitioning" or "Ordering")."""
    return [
        section("Timing Information"),
        f"  I/O:          \t\t {io:7.3f} sec",
        f"  {label + ':':<14}\t\t {work:7.3f} sec   ({note})",
        f"  Reporting:    \t\t {reporting:7.3f} sec",
    ]


def memory_lines() -> list[str]:
    """METIS's memory block (this process's peak resident memory)."""
    return [section("Memory Information"), f"  Max memory used:\t\t {max_rss_mb():7.3f} MB"]


def yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def report_dict(graph: Graph, result: Result, options: Options, timing: Timing,
                partition_file: str | None = None) -> dict:
    """Everything the summary shows, as plain JSON types. ``partition_file`` is the partition
    file the run writes (None with -nooutput)."""
    return {
        "format_version": REPORT_FORMAT_VERSION,
        "gpmetis_version": __version__,
        "files": {"graph": graph.name, "partition": partition_file, "report": options.json},
        "graph": {"name": graph.name, "nvtxs": graph.nvtxs, "nedges": graph.nedges,
                  "ncon": graph.ncon},
        "nparts": result.nparts,
        "engine": result.engine,
        "options": _options_dict(options, result),
        "metrics": result.metrics.as_dict(),
        "timing": {"io": timing.io, "partitioning": timing.partitioning,
                   "reporting": timing.reporting},
        "memory": {"max_rss_mb": max_rss_mb(),
                   "peak_gpu_bytes": int(result.stats.get("peak_gpu_bytes", 0))},
        "levels": result.stats.get("levels", []),
        "phases": {k: result.stats[k] for k in ("coarsening", "initial", "refinement")
                   if k in result.stats},
        "warnings": [*graph.warnings, *result.warnings],
        **({"distributed": result.stats["distributed"]} if "distributed" in result.stats
           else {}),
    }


def ran_rtype(options: Options, engine: str) -> str:
    """The refinement that ran: Jet on the gpu and cpu engines (they refuse -rtype), followed
    by volume refinement on the finest level with -objtype=vol, METIS's own scheme on the
    metis engine."""
    if engine not in ("gpu", "cpu"):
        return options.effective_rtype
    return "jet+volume" if options.objtype == "vol" else "jet"


def ran_iptype(options: Options, engine: str, ncon: int = 1, nvtxs: int = 0) -> str:
    """The initial partitioning that ran. On the gpu and cpu engines: k-way starts from METIS
    recursive bisections of the coarsest graph (metisrb), whose bisections grow regions, or
    start from random ones with -iptype=random (metisrb-random); a multi-constraint graph's
    from METIS's multi-constraint k-way runs (mckway) or, on large graphs or with
    -iptype=random, from METIS recursive bisections of scalarised weights (mcrb, mcrb-random);
    each bisection of -ptype=rb starts from grown regions (grow) or random ones (random)."""
    if engine not in ("gpu", "cpu"):
        return options.effective_iptype
    random = options.iptype == "random"
    if options.ptype == "rb":
        return "random" if random else "grow"
    if ncon > 1:
        from gpmetis.initial_partitioning.ncon_trials import balanced_trials

        if balanced_trials(nvtxs, options, options.context.initial):
            return "mckway"
    scheme = "mcrb" if ncon > 1 else "metisrb"
    return f"{scheme}-random" if random else scheme


def contig_ran(options: Options, result: Result) -> bool:
    """-contig was asked for and honoured (not dropped for a disconnected graph)."""
    return options.contig and "contig" not in result.stats


def minconn_ran(options: Options) -> bool:
    """-minconn was asked for and honoured: k-way only, as in METIS 5.1."""
    return options.minconn and options.ptype == "kway"


def _options_dict(options: Options, result: Result) -> dict:
    engine = result.engine
    return {
        "ptype": options.ptype, "objtype": options.objtype,
        "ctype": options.effective_ctype(engine),
        "rtype": ran_rtype(options, engine),
        "iptype": ran_iptype(options, engine, len(result.metrics.imbalance), len(result.part)),
        "dbglvl": options.dbglvl, "ufactor": options.effective_ufactor,
        "no2hop": options.no2hop, "minconn": minconn_ran(options),
        "contig": contig_ran(options, result),
        "nooutput": options.nooutput, "seed": options.seed, "niter": options.niter,
        "ncuts": options.ncuts, "preset": options.preset, "engine": options.engine,
    }


def format_summary(graph: Graph, result: Result, options: Options, timing: Timing) -> str:
    """The run summary: METIS 5.1 ``gpmetis``'s lines on METIS's line numbers, then gpmetis's own
    (the engine, the fallback note, peak GPU memory, the phase timing of -dbglvl)."""
    m = result.metrics
    o = options
    ub = 1.0 + o.effective_ufactor / 1000.0
    lines = [
        RULE,
        *banner("gpmetis"),
        "",
        section("Graph Information"),
        f" Name: {graph.name}, #Vertices: {graph.nvtxs}, #Edges: {graph.nedges}, "
        f"#Parts: {result.nparts}",
    ]
    if graph.ncon > 1:
        lines.append(f" Balancing constraints: {graph.ncon}")
    lines += [
        "",
        section("Options"),
        f" ptype={o.ptype}, objtype={o.objtype}, ctype={o.effective_ctype(result.engine)}, "
        f"rtype={ran_rtype(o, result.engine)}, "
        f"iptype={ran_iptype(o, result.engine, graph.ncon, graph.nvtxs)}",
        f" dbglvl={o.dbglvl}, ufactor={ub:.3f}, no2hop={yes(o.no2hop)}, "
        f"minconn={yes(minconn_ran(o))}, contig={yes(contig_ran(o, result))}, "
        f"nooutput={yes(o.nooutput)}",
        f" seed={o.seed}, niter={o.niter}, ncuts={o.ncuts}",
        *([" ubvec=(" + " ".join(f"{u:.2e}" for u in o.ubvec) + ")"] if o.ubvec else []),
        *([f" preset={o.preset}"] if o.preset != "default" else []),
        "",
        section("Direct k-way Partitioning" if o.ptype == "kway" else "Recursive Partitioning"),
        f" - Edgecut: {m.edgecut}, communication volume: {m.volume}.",
        "",
        " - Balance:",
    ]
    for c, (imb, bound) in enumerate(zip(m.imbalance, m.vertex_bound)):
        lines.append(f"     constraint #{c}:  {imb:5.3f} out of {bound:5.3f}")
    lines.append("")
    if graph.ncon == 1:
        lines += [
            " - Most overweight partition:",
            f"     pid: {m.overweight_pid}, actual: {m.overweight_actual}, "
            f"desired: {m.overweight_desired}, ratio: {m.overweight_ratio:.2f}.",
            "",
        ]
    lines += [
        f" - Subdomain connectivity: max: {m.maxndom}, min: {m.minndom}, avg: {m.avgndom:.2f}",
        "",
        *_contiguity_lines(m, result.nparts),
        *timing_lines(timing.io, timing.partitioning, "Partitioning", f"{result.engine} engine",
                      timing.reporting),
        "",
        *memory_lines(),
    ]
    peak = result.stats.get("peak_gpu_bytes", 0)
    if peak:
        lines.append(f"  Peak GPU memory:\t\t {peak / 2**20:7.3f} MB")
    lines.append(f"  Engine: {result.engine} (-engine={o.engine})")
    if "distributed" in result.stats:
        ranks = result.stats["distributed"]["ranks"]
        where = ("multilevel runs on their pieces" if result.stats.get("multilevel_on_pieces")
                 else "the run on rank 0")
        lines.append(f"  Ranks: {ranks} ({where})")
    if result.stats.get("fallback"):
        lines.append(f"  Note: {result.stats['fallback']}; METIS ran instead")
    if result.stats.get("metis_overweight"):
        lines.append(f"  Note: METIS's partition was {100 * result.stats['metis_overweight']:.3f}% "
                     f"over a limit; the {result.engine} engine's is kept")
    if o.dbglvl > 0 and result.stats:
        lines += ["", *_phase_lines(result.stats)]
    lines.append(RULE)
    return "\n".join(lines)


def _contiguity_lines(m, nparts: int) -> list[str]:
    """The contiguity report and the blank line METIS 5.1 prints after it; its report of a
    disconnected graph ends without a line break, so no blank line follows that one."""
    if m.part_components == nparts:
        return [" - Each partition is contiguous.", ""]
    if m.ncomponents == 1:
        return [
            f" - There are {m.noncontiguous} non-contiguous partitions.",
            f"   Total components after removing the cut edges: {m.part_components},",
            f"   max components: {m.max_part_components} for pid: {m.max_components_pid}.",
            "",
        ]
    return [
        f" - The original graph had {m.ncomponents} connected components and the resulting",
        f"   partitioning after removing the cut edges has {m.part_components} components.",
    ]


def _phase_lines(stats: dict) -> list[str]:
    lines = [
        section("Phase Timing"),
        f"     coarsening:         \t {stats['coarsening']:7.3f} sec",
        f"     initial partition:  \t {stats['initial']:7.3f} sec",
        f"     uncoarsening+refine:\t {stats['refinement']:7.3f} sec",
        "     levels:",
    ]
    for lvl in stats["levels"]:
        lines.append(
            f"       level {lvl['level']:2d}: nvtxs {lvl['nvtxs']:>10d}  "
            f"nedges {lvl['nedges']:>11d}  coarsen {lvl['seconds']:7.3f} sec  "
            f"refinement iterations {lvl.get('refine_iterations', 0)}"
        )
    return lines
