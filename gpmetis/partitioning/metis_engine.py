"""The ``metis`` engine: METIS itself (pymetis, METIS 5.2) in process, every option forwarded."""

from __future__ import annotations

import numpy as np

from gpmetis.errors import OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.options import CTYPES, IPTYPES, OBJTYPES, RTYPES, Options, check_ubvec_ncon


def metis_partition(graph: Graph, nparts: int, options: Options, tpwgts: np.ndarray | None):
    """METIS's partition (int32) of ``graph`` under ``options``."""
    import pymetis

    if options.ondisk:
        raise OptionError("ondisk", "is not supported: the graph is always held in memory")
    if options.ctype == "lp":
        raise OptionError("ctype", "'lp' is gpmetis's own coarsening; METIS has rm and shem")
    ubvec = options.ubvec
    ufactor = options.effective_ufactor
    check_ubvec_ncon(ubvec, graph.ncon)
    if ubvec is not None:
        if len(set(ubvec)) > 1:
            raise OptionError("ubvec", "different imbalances per constraint are not supported yet")
        ufactor = round((ubvec[0] - 1.0) * 1000)
    opts = pymetis.Options(
        objtype=OBJTYPES.index(options.objtype),
        ctype=CTYPES.index(options.effective_ctype("metis")),
        ufactor=ufactor,
        niter=options.niter,
        ncuts=options.runs,
        no2hop=int(options.no2hop),
        minconn=int(options.minconn),
        contig=int(options.contig),
        dbglvl=options.dbglvl,
    )
    if options.seed >= 0:
        opts.seed = options.seed
    if options.iptype is not None:
        opts.iptype = IPTYPES.index(options.iptype)
    if options.rtype is not None:
        opts.rtype = RTYPES.index(options.rtype)
    vweights = graph.vwgt.reshape(-1) if graph.has_vwgt else None
    eweights = graph.adjwgt if graph.has_adjwgt else None
    try:
        result = pymetis.part_graph(
            nparts,
            pymetis.CSRAdjacency(graph.xadj, graph.adjncy),
            vweights=vweights,
            eweights=eweights,
            tpwgts=None if tpwgts is None else tpwgts.reshape(-1).tolist(),
            recursive=options.ptype == "rb",
            options=opts,
        )
    except (RuntimeError, MemoryError) as exc:  # METIS's error codes, as pymetis raises them
        raise PartitionError(f"METIS failed on this graph and options ({exc})") from None
    return np.asarray(result.vertex_part, dtype=np.int32)
