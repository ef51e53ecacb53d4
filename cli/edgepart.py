"""The ``gpmetis GRAPH K -edgepart`` run: read, partition the edges, print the summary, write
``GRAPH.edgepart.K`` (and the JSON report): all files or none, only when the run succeeded."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import click

from gpmetis.edge_partitioning.driver import EdgeResult, partition_edges
from gpmetis.errors import OptionError
from gpmetis.graph import Graph
from gpmetis.io import read_graph
from gpmetis.io.partfile import partition_bytes, staged_files
from gpmetis.options import Options
from gpmetis.report import REPORT_FORMAT_VERSION

RULE = "*" * 78


def edge_output_path(graphfile: str, nparts: int, options: Options) -> str | None:
    return None if options.nooutput else options.output or f"{graphfile}.edgepart.{nparts}"


def run_edgepart(graphfile: str, nparts: int, options: Options,
                 same_file: Callable[[str, str], bool], show: Callable[[str], None]) -> None:
    """The whole command; ``same_file(a, b)``: whether writing a replaces b; ``show`` prints
    the summary."""
    output = edge_output_path(graphfile, nparts, options)
    for name, path in (("o", output), ("json", options.json)):
        if path is not None and same_file(path, graphfile):
            raise OptionError(name, f"'{path}' is the input graph; writing it would destroy it")
    if output is not None and options.json is not None and same_file(options.json, output):
        raise OptionError("json", f"'{options.json}' is also the edge partition file")
    t0 = time.perf_counter()
    graph = read_graph(graphfile, symmetrize=options.symmetrize)
    t1 = time.perf_counter()
    for warning in graph.warnings:
        click.echo(f"gpmetis: warning: {warning}", err=True)
    result = partition_edges(graph, nparts, options)
    t2 = time.perf_counter()
    for warning in result.warnings:
        click.echo(f"gpmetis: warning: {warning}", err=True)
    files = [] if output is None else [(output, partition_bytes(result.part))]
    timing = {"io": t1 - t0, "edge_partitioning": result.seconds, "total": t2 - t0}
    if options.json:
        report = {"format_version": REPORT_FORMAT_VERSION, "graph": graphfile,
                  "nvtxs": graph.nvtxs, "nedges": graph.nedges,
                  "output": output, **result.report(), "timing": timing}
        files.append((options.json, json.dumps(report, indent=2).encode()))
    with staged_files(files):  # written once the summary is out
        if not options.quiet:
            show(format_edge_summary(graph, result, options, timing))


def format_edge_summary(graph: Graph, result: EdgeResult, options: Options,
                        timing: dict) -> str:
    """The run summary: METIS-like blocks with the edge partition's numbers."""
    split = result.stats["split_graph"]
    ub = options.ubfactors(1)[0]
    lines = [
        RULE,
        f"gpmetis edge partitioning (SPAC), engine: {result.engine}",
        "",
        f" Name: {graph.name}, #Vertices: {graph.nvtxs}, #Edges: {graph.nedges}, "
        f"#Parts: {result.nparts}",
        f" Split graph: #Vertices: {split['nvtxs']}, #Edges: {split['nedges']}, dominant edge "
        f"weight: {split['dominant_weight']}",
        f" ufactor={ub:.3f}, seed={options.seed}, ncuts={options.ncuts}, engine={options.engine} "
        f"(ran: {result.engine})",
        "",
        f" - Replication factor: {result.replication_factor:.4f}, vertex copies beyond one: "
        f"{result.copies_beyond_one}.",
        f" - Edge balance: {result.edge_balance:5.3f} out of {ub:5.3f} (largest part "
        f"{int(result.part_loads.max())}, limit {result.limit}).",
        f" - Dominant edges cut by the split-graph partition: {split['dominant_edges_cut']}.",
        "",
        "Timing Information " + "-" * 59,
        f"  I/O:                 {timing['io']:7.3f} sec",
        f"  Edge partitioning:   {timing['edge_partitioning']:7.3f} sec   (split graph "
        f"{result.stats['build_seconds']:.3f}, partition and map back "
        f"{result.stats['partition_seconds']:.3f})",
        f"  Total:               {timing['total']:7.3f} sec",
        RULE,
    ]
    return "\n".join(lines)
