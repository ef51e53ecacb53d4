"""The ``metis`` engine: METIS itself (pymetis's METIS 5.2) in process, every option forwarded."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import get_backend
from gpmetis.balance import Balance
from gpmetis.device_graph import DeviceGraph
from gpmetis.errors import OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.metrics import connected_components
from gpmetis.options import CTYPES, IPTYPES, OBJTYPES, RTYPES, Options, check_ubvec_ncon
from gpmetis.partitioning import metis_ncon
from gpmetis.partitioning.modes.contig import CONTIG_IGNORED
from gpmetis.partitioning.problem import PartitionProblem
from gpmetis.refinement.contiguity import (
    fill_empty_parts_connected,
    main_components,
    make_contiguous,
)
from gpmetis.refinement.rebalance import fill_empty_parts

CPU = get_backend("cpu")


def metis_index(a: np.ndarray | None) -> np.ndarray | None:
    """``a`` as a contiguous array of the integer width of pymetis's METIS (its idx_t; None
    stays None): pymetis passes such arrays as they are and converts any other element by
    element, which costs more than METIS's own run on a small graph."""
    if a is None:
        return None
    import pymetis

    return np.ascontiguousarray(a, dtype=pymetis.zero_copy_dtype())


def metis_partition(problem: PartitionProblem, options: Options):
    """METIS's partition (int32) of the problem's graph under ``options``: through pymetis, or
    where pymetis cannot pass what the graph holds (several constraints, vertex sizes), through
    METIS's own entry points in pymetis's module (``partitioning.metis_ncon``). Targets are
    passed only where -tpwgts gave them (METIS's own uniform ones otherwise)."""
    import pymetis

    graph, nparts = problem.graph, problem.nparts
    tpwgts = None if options.tpwgts is None else problem.tpwgts

    if options.ondisk:
        raise OptionError("ondisk", "is not supported: the graph is always held in memory")
    if options.ctype == "lp":
        raise OptionError("ctype", "'lp' is gpmetis's own coarsening; METIS has rm and shem")
    check_ubvec_ncon(options.ubvec, graph.ncon)
    settings = {
        "objtype": OBJTYPES.index(options.objtype),
        "ctype": CTYPES.index(options.effective_ctype("metis")),
        "ufactor": options.trial_ufactor,
        "niter": options.niter,
        "ncuts": options.runs,
        "no2hop": int(options.no2hop),
        "minconn": int(options.minconn),
        "contig": int(options.contig),
        "dbglvl": options.dbglvl,
    }
    if options.seed >= 0:
        settings["seed"] = options.seed
    if options.iptype is not None:
        settings["iptype"] = IPTYPES.index(options.iptype)
    if options.rtype is not None:
        settings["rtype"] = RTYPES.index(options.rtype)
    if graph.ncon > 1 or graph.vsize is not None:
        part, _ = metis_ncon.part_graph(
            graph.xadj, graph.adjncy, graph.adjwgt if graph.has_adjwgt else None, graph.vwgt.T,
            nparts, tpwgts, None if options.ubvec is None else np.asarray(options.ubvec),
            options=settings, recursive=options.ptype == "rb", vsize=graph.vsize)
        return part
    vweights = graph.vwgt.reshape(-1) if graph.has_vwgt else None
    eweights = graph.adjwgt if graph.has_adjwgt else None
    try:
        result = pymetis.part_graph(
            nparts,
            pymetis.CSRAdjacency(metis_index(graph.xadj), metis_index(graph.adjncy)),
            vweights=metis_index(vweights),
            eweights=metis_index(eweights),
            tpwgts=None if tpwgts is None else tpwgts.reshape(-1).tolist(),
            recursive=options.ptype == "rb",
            options=pymetis.Options(**settings),
        )
    except (RuntimeError, MemoryError) as exc:  # METIS's error codes, as pymetis raises them
        raise PartitionError(f"METIS failed on this graph and options ({exc})") from None
    return np.asarray(result.vertex_part, dtype=np.int32)


def metis_engine(problem: PartitionProblem) -> tuple[np.ndarray, dict]:
    """(part, stats) of the metis engine: METIS's partition, with one vertex moved into each
    part it left empty (n >= nparts: no empty part is our contract, not METIS's) and, under
    -contig on a connected graph, every part connected (METIS's recursive bisection ignores
    -contig, and its k-way -contig can leave a part split). On a graph of several components
    -contig is ignored, as METIS 5.1's gpmetis does (METIS itself refuses it)."""
    graph, nparts, options = problem.graph, problem.nparts, problem.options
    stats: dict = {}
    if options.contig and bool(connected_components(CPU, graph.xadj, graph.adjncy).any()):
        options, stats = options.with_(contig=False), {"contig": CONTIG_IGNORED}
    part = metis_partition(problem, options)
    host = None
    if graph.nvtxs >= nparts and not np.bincount(part, minlength=nparts).all():
        host = _host_graph(graph)
        if options.contig:  # the vertex that fills a part must not split its own
            part = fill_empty_parts_connected(CPU, host, part, nparts,
                                              options.context.refinement.contig_fill_tries)
        else:
            part = fill_empty_parts(CPU, host, part, nparts)
    if options.contig:
        host = _host_graph(graph) if host is None else host
        label = connected_components(CPU, host.xadj, host.adjncy, part)
        if not bool(main_components(CPU, host, part, label).all()):
            weights = None if graph.ncon == 1 else np.ascontiguousarray(graph.vwgt.T)
            balance = Balance(problem.limits.T.copy(), problem.totals)
            part = make_contiguous(CPU, host, part, balance,
                                   context=options.context.refinement, weights=weights)[0]
    return part, stats


def _host_graph(graph: Graph) -> DeviceGraph:
    return DeviceGraph(CPU, graph.xadj, graph.adjncy, graph.adjwgt, graph.vwgt[:, 0])
