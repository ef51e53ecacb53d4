"""The ``metis`` engine: METIS itself (pymetis's METIS 5.2) in process, every option forwarded."""

from __future__ import annotations

import numpy as np

from gpmetis.errors import OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.options import CTYPES, IPTYPES, OBJTYPES, RTYPES, Options, check_ubvec_ncon


def metis_index(a: np.ndarray | None) -> np.ndarray | None:
    """``a`` as a contiguous array of the integer width of pymetis's METIS (its idx_t; None
    stays None): pymetis passes such arrays as they are and converts any other element by
    element, which costs more than METIS's own run on a small graph."""
    if a is None:
        return None
    import pymetis

    return np.ascontiguousarray(a, dtype=pymetis.zero_copy_dtype())


def metis_partition(graph: Graph, nparts: int, options: Options, tpwgts: np.ndarray | None):
    """METIS's partition (int32) of ``graph`` under ``options``: through pymetis, or where
    pymetis cannot pass what the graph holds (several constraints, vertex sizes), through
    METIS's own entry points in pymetis's module (``multiconstraint.metis_ncon``)."""
    import pymetis

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
        from gpmetis.multiconstraint import metis_ncon

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
