"""``part_graph``: pymetis's call, answered by gpmetis's engines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from gpmetis.graph import Graph
from gpmetis.options import Options
from gpmetis.partitioning.driver import partition


class GraphPartition(NamedTuple):
    """pymetis's result shape: the edge cut and each vertex's part."""

    edge_cuts: int
    vertex_part: np.ndarray


def _csr(adjacency, xadj, adjncy) -> tuple[np.ndarray, np.ndarray]:
    if adjacency is not None:
        if xadj is not None or adjncy is not None:
            raise TypeError("pass either adjacency or xadj/adjncy, not both")
        if hasattr(adjacency, "adj_starts"):
            return np.asarray(adjacency.adj_starts), np.asarray(adjacency.adjacent)
        rows = [adjacency[i] for i in range(len(adjacency))] if isinstance(
            adjacency, (Sequence, Mapping)) else list(adjacency)
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        xadj = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=xadj[1:])
        flat = np.concatenate([np.asarray(r, dtype=np.int64) for r in rows]) if len(rows) else []
        return xadj, np.asarray(flat, dtype=np.int64)
    if xadj is None or adjncy is None:
        raise TypeError("pass adjacency, or both xadj and adjncy")
    return np.asarray(xadj), np.asarray(adjncy)


def part_graph(
    nparts: int,
    adjacency=None,
    xadj=None,
    adjncy=None,
    *,
    vweights=None,
    eweights=None,
    tpwgts=None,
    recursive: bool | None = None,
    contiguous: bool | None = None,
    options: Options | Mapping | None = None,
) -> GraphPartition:
    """Partition like ``pymetis.part_graph`` (k-way unless ``recursive=True``).

    ``options`` is an ``Options`` or a mapping of METIS option names (``ufactor``, ``seed``,
    ``engine``, ...). Returns ``(edge_cuts, vertex_part)``.
    """
    xadj, adjncy = _csr(adjacency, xadj, adjncy)
    n = len(xadj) - 1
    vwgt = None
    if vweights is not None:
        vwgt = np.asarray(vweights, dtype=np.int64)
        vwgt = vwgt.reshape(n, -1) if n else vwgt.reshape(0, 1)
    graph = Graph.from_csr(xadj, adjncy, vwgt, eweights)
    if isinstance(options, Mapping):
        options = Options.from_kwargs(**options)
    options = options or Options()
    changes: dict = {}
    if recursive:
        changes["ptype"] = "rb"
    if contiguous:
        changes["contig"] = True
    if tpwgts is not None:
        changes["tpwgts"] = tuple(float(x) for x in tpwgts)
    result = partition(graph, nparts, options.with_(**changes))
    return GraphPartition(result.edgecut, result.part)
