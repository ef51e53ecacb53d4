"""``partition_edges``: SPAC edge partitioning (split the graph, partition it, map back).

The split graph is built on the engine's backend (``split_graph``), partitioned by the
multilevel pipeline (gpu, cpu) or by METIS (metis), and every edge gets one part
(``assign``): the part of its lower endpoint's slot, then moves that keep each part's load
within the ufactor limit of the average.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpmetis.api import partition_inputs
from gpmetis.backend import cuda_available, get_backend
from gpmetis.balance import Balance, uniform_tpwgts
from gpmetis.edge_partitioning.assign import EdgeSlots, edge_metrics, edge_parts
from gpmetis.edge_partitioning.split_graph import build_split_graph
from gpmetis.errors import OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.options import Options
from gpmetis.partitioning.driver import check_engine, partition
from gpmetis.partitioning.problem import CUT_SEED_STRIDE, DEFAULT_SEED

# auto runs the gpu engine from this many split-graph edges (about 3m); below, METIS.
AUTO_GPU_MIN_SPLIT_EDGES = 2_000_000

REFUSED = (
    ("ptype", lambda o: o.ptype == "rb", "'rb': the split graph is partitioned k-way"),
    ("objtype", lambda o: o.objtype == "vol", "'vol': edge partitioning minimises vertex copies"),
    ("contig", lambda o: o.contig, "contiguous parts of the split graph mean nothing for edges"),
    ("minconn", lambda o: o.minconn, "subdomain connectivity is not an edge-partition objective"),
    ("tpwgts", lambda o: o.tpwgts is not None, "edge parts are balanced evenly (-ufactor)"),
)


@dataclass
class EdgeResult:
    """An edge partition: ``part`` (int32, one per undirected edge in graph-file order: vertices
    in order, for vertex u its neighbours v > u in the order of u's row) and its costs."""

    part: np.ndarray
    nparts: int
    engine: str
    replication_factor: float
    copies_beyond_one: int
    edge_balance: float
    part_loads: np.ndarray
    limit: int
    seconds: float
    stats: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def report(self) -> dict:
        """The JSON report's numbers."""
        return {
            "nparts": self.nparts,
            "engine": self.engine,
            "replication_factor": self.replication_factor,
            "vertex_copies_beyond_one": self.copies_beyond_one,
            "edge_balance": self.edge_balance,
            "max_part_load": int(self.part_loads.max()),
            "part_load_limit": self.limit,
            "seconds": self.seconds,
            **self.stats,
            "warnings": self.warnings,
        }


@dataclass
class NodeEdgeResult(EdgeResult):
    """An ``EdgeResult`` for a networkx graph: ``part[i]`` is the part of the edge between the
    nodes ``labels[ends[i, 0]]`` and ``labels[ends[i, 1]]``."""

    labels: list = field(default_factory=list)
    ends: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int32))

    @property
    def edge_part(self) -> dict:
        """Each edge's part, keyed by its pair of nodes in ``G.nodes`` order (the orientation
        in which ``G.edges`` lists an undirected graph's edges)."""
        first, second = (map(self.labels.__getitem__, ends) for ends in self.ends.T.tolist())
        return dict(zip(zip(first, second), self.part.tolist()))


def check_edge_options(graph: Graph, nparts: int, options: Options) -> None:
    """OptionError (exit 2) for options an edge partition cannot honour, a graph with no edges,
    or more parts than edges."""
    for name, refused, reason in REFUSED:
        if refused(options):
            raise OptionError(name, f"cannot be used with -edgepart: {reason}")
    if graph.nedges == 0:
        raise OptionError("edgepart", f"{graph.name} has no edges to partition")
    if isinstance(nparts, bool) or not isinstance(nparts, (int, np.integer)) or nparts < 1:
        raise OptionError("nparts", f"must be a positive integer, got {nparts!r}")
    if nparts > graph.nedges:
        raise OptionError("nparts", f"{nparts} edge parts for a graph of {graph.nedges} "
                                    f"edge{'s' if graph.nedges > 1 else ''}")


def choose_edge_engine(graph: Graph, options: Options) -> str:
    """``auto``: gpu for split graphs of AUTO_GPU_MIN_SPLIT_EDGES edges or more when CUDA is
    usable, else metis."""
    engine = options.engine
    if engine == "auto":
        large = 3 * graph.nedges >= AUTO_GPU_MIN_SPLIT_EDGES
        engine = "gpu" if large and cuda_available() else "metis"

    check_engine(graph, options, engine)
    return engine


def partition_edges(graph: Any, nparts: int, options: Any = None, *, mtx_weights: bool = False,
                    weight: str | None = None, **kwargs: Any) -> EdgeResult:
    """Partition the edges of ``graph`` into ``nparts`` parts by SPAC. Takes what ``partition``
    takes: ``graph`` (a ``Graph``, scipy.sparse matrix or array, networkx graph, adjacency
    lists or ``CSRAdjacency``), ``options`` (a ``gpmetis.options.Options``, a mapping of its
    names, or a METIS-style ``Options``), ``mtx_weights`` (scipy: |a_ij| as edge weights),
    ``weight`` (networkx: the edge attribute of the weights) and METIS option names in
    ``kwargs`` (engine, ufactor, ubvec, seed, ncuts, niter, ctype, ...). Edge weights are the
    edges' loads; vertex weights are not used. For a networkx graph the result is a
    ``NodeEdgeResult``, whose ``edge_part`` is keyed by node pair."""
    graph, labels, options = partition_inputs(graph, options, mtx_weights=mtx_weights,
                                              weight=weight)
    options = options.with_(**kwargs) if kwargs else options
    options.validate()
    check_edge_options(graph, nparts, options)
    engine = choose_edge_engine(graph, options)

    be = get_backend("cpu" if engine == "metis" else engine)
    start = time.perf_counter()
    try:
        part, stats, metrics = _run(be, engine, graph, nparts, options)
    except MemoryError as exc:
        raise PartitionError(f"the split graph does not fit in {engine.upper()} memory ({exc}); "
                             "try -engine=metis") from exc
    seconds = time.perf_counter() - start
    warnings = []
    over = np.flatnonzero(metrics.loads > metrics.limit)
    if len(over):
        p = int(over[np.argmax(metrics.loads[over])])
        warnings.append(f"edge part {p} carries {int(metrics.loads[p])}, above the limit "
                        f"{metrics.limit} (the heaviest edge weighs {int(graph.adjwgt.max())})")
    result = EdgeResult(part, nparts, engine, metrics.replication_factor,
                        metrics.copies_beyond_one, metrics.edge_balance, metrics.loads,
                        metrics.limit, seconds, stats, warnings)
    if labels is None:
        return result
    src = graph.sources()
    upper = graph.adjncy > src  # each edge once, in the order of ``part``
    return NodeEdgeResult(**{f: getattr(result, f) for f in EdgeResult.__dataclass_fields__},
                          labels=labels, ends=np.stack([src[upper], graph.adjncy[upper]], 1))


def _run(be, engine: str, graph: Graph, nparts: int, options: Options):
    """(edge parts on the host, stats, EdgeMetrics) of the best of ``ncuts`` runs: the fewest
    load above the limits, then the fewest copies."""
    be.start_run()
    t0 = time.perf_counter()
    xadj, adjncy, loads = _upload(be, graph)
    split = build_split_graph(be, xadj, adjncy, loads)
    edges = EdgeSlots.of(be, split.src, adjncy, split.partner, loads)
    total = int(edges.load.sum())
    balance = Balance.of([total], uniform_tpwgts(nparts), options.ubfactors(1))
    with_edges = int((xadj[1:] > xadj[:-1]).sum())
    be.synchronize()
    t1 = time.perf_counter()
    seed = options.seed if options.seed >= 0 else DEFAULT_SEED
    run = _split_partitioner(be, engine, split, nparts, options)
    best = None
    for trial in range(options.ncuts):
        split_part = run(seed + trial * CUT_SEED_STRIDE)
        part, cut = edge_parts(be, edges, split_part, balance)
        metrics = edge_metrics(be, edges, split.src, part, balance, with_edges)
        score = (int(np.maximum(metrics.loads - metrics.limit, 0).sum()), metrics.copies)
        if best is None or score < best[0]:
            best = (score, part, cut, metrics)
    _, part, cut, metrics = best
    be.synchronize()
    t2 = time.perf_counter()
    stats = {
        "split_graph": {"nvtxs": split.nslots, "nedges": split.graph.nnz // 2,
                        "dominant_weight": split.dominant, "dominant_edges_cut": cut},
        "build_seconds": t1 - t0,
        "partition_seconds": t2 - t1,
        "ncuts": options.ncuts,
    }
    if be.gpu:
        stats["peak_gpu_bytes"] = be.peak_memory()
    return be.asnumpy(part).astype(np.int32, copy=False), stats, metrics


def _upload(be, graph: Graph):
    """(xadj int64, adjncy int32, loads int32 or None for unit loads) on ``be``: each load is
    one edge's weight, at most its end's weighted degree, which ``gpmetis.limits`` bounds."""
    xadj, adjncy = be.upload(graph.xadj, np.int64), be.upload(graph.adjncy, np.int32)
    loads = be.upload(graph.adjwgt, np.int32) if graph.has_adjwgt else None
    return xadj, adjncy, loads


def _split_partitioner(be, engine: str, split, nparts: int, options: Options):
    """seed -> int32 part of every split-graph vertex, on ``be``."""
    if engine == "metis":
        g = split.graph
        host = Graph(g.xadj, g.adjncy, g.vwgt.astype(np.int64)[:, None],
                     g.adjwgt.astype(np.int64), name="split graph", has_vwgt=True,
                     has_adjwgt=True)

        def run_metis(seed: int):
            return partition(host, nparts, options.with_(engine="metis", seed=seed, ncuts=1)).part

        return run_metis

    from gpmetis.coarsening.weights import WeightedGraph
    from gpmetis.partitioning.multilevel import multilevel_partition

    tpwgts = uniform_tpwgts(nparts)
    wg = WeightedGraph.single(split.graph)
    balance = Balance.of(wg.totals, tpwgts, options.ubfactors(1))

    def run_multilevel(seed: int):
        return multilevel_partition(wg, balance, options, tpwgts, seed)[0]

    return run_multilevel
