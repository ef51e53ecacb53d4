"""The split graph of SPAC edge partitioning, built on the engine's backend from the CSR alone.

Every CSR slot i (the entry of edge {u, v} in row u) is a vertex of the split graph, weighing
the edge's load (its input weight, 1 when the graph has none). The slots of a row form a path
of weight-1 chain edges, and the two slots of an edge are joined by a dominant edge. A k-way
partition of the split graph that cuts no dominant edge is an edge partition whose vertex copies
beyond one are at most the chain edges cut; the multilevel engine minimises those.

``build_split_graph`` runs one CUDA kernel on the gpu backend and its NumPy twin on the cpu
backend; both give the same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.errors import PartitionError

CU_FILE = Path(__file__).with_name("split_graph.cu")
INT32_MAX = np.iinfo(np.int32).max
DOMINANT_WEIGHT = 1000  # SPAC's weight of an edge's two slots' join


@dataclass
class SplitGraph:
    """The split graph (``graph``: 2m vertices, one per slot of the input's CSR, on the input's
    backend) and what maps it back: ``src`` (int32) the input vertex of each slot, ``partner``
    (int32) the slot of the same edge in the other endpoint's row, ``dominant`` the dominant
    edges' weight."""

    graph: DeviceGraph
    src: object
    partner: object
    dominant: int

    @property
    def nslots(self) -> int:
        return len(self.src)


def partner_slots(be: Backend, src, adjncy, n: int):
    """int32: for each slot (u, v), the slot (v, u). Rows need not be sorted; the input must be
    symmetric without duplicate edges (``Graph``'s guarantee). One sort of the slots by their
    edge's (lower, higher) endpoint key puts the two slots of every edge side by side."""
    xp = be.xp
    nslots = len(adjncy)
    lo = xp.minimum(src, adjncy).astype(xp.int64)
    hi = xp.maximum(src, adjncy).astype(xp.int64)
    order = be.argsort_stable(lo * max(n, 1) + hi).astype(xp.int32)
    partner = xp.empty(nslots, dtype=xp.int32)
    partner[order[0::2]] = order[1::2]
    partner[order[1::2]] = order[0::2]
    return partner


def build_split_graph(be: Backend, xadj, adjncy, loads=None) -> SplitGraph:
    """The split graph of the CSR (``xadj`` int64, ``adjncy`` int32, on ``be``); ``loads``
    (int32, one per slot, equal on an edge's two slots) are the slot vertices' weights, None
    for unit loads. PartitionError where 2m passes 2^31 - 1 (the engines' int32 vertex ids)."""
    xp = be.xp
    n, nslots = len(xadj) - 1, len(adjncy)
    if nslots > INT32_MAX:
        raise PartitionError(
            f"the split graph would have {nslots} vertices (2m), beyond the engines' 32-bit "
            "vertex ids")
    degree = xadj[1:] - xadj[:-1]
    nonempty = degree > 0
    nonempty_before = xp.zeros(n, dtype=xp.int32)
    if n > 1:
        xp.cumsum(nonempty[:-1], dtype=xp.int32, out=nonempty_before[1:])
    chain_edges = nslots - int(nonempty.sum())
    nentries = nslots + 2 * chain_edges
    dominant = DOMINANT_WEIGHT
    src = be.sources(xadj, nslots)
    partner = partner_slots(be, src, adjncy, n)
    sxadj = xp.empty(nslots + 1, dtype=xp.int64)
    sadjncy = xp.empty(nentries, dtype=xp.int32)
    sadjwgt = xp.empty(nentries, dtype=xp.int32)
    if be.gpu:
        be.launch(be.kernel(CU_FILE, "split_graph_build"), nslots,
                  (np.int64(nslots), xadj, src, partner, nonempty_before, np.int32(dominant),
                   sxadj, sadjncy, sadjwgt))
    else:
        _build_numpy(xadj, src, partner, nonempty_before, dominant, sxadj, sadjncy, sadjwgt)
    vwgt = xp.ones(nslots, dtype=xp.int32) if loads is None else loads.astype(xp.int32)
    graph = DeviceGraph(be, sxadj, sadjncy, sadjwgt, vwgt)
    return SplitGraph(graph, src, partner, dominant)


def _build_numpy(xadj, src, partner, nonempty_before, dominant: int, sxadj, sadjncy,
                 sadjwgt) -> None:
    """The NumPy twin of ``split_graph_build``: the same rows, written by slot-wide arrays."""
    nslots = len(src)
    slot = np.arange(nslots, dtype=np.int64)
    has_prev = slot > xadj[src]
    has_next = slot + 1 < xadj[src.astype(np.int64) + 1]
    at = 3 * slot - 2 * nonempty_before[src].astype(np.int64) - has_prev
    sxadj[0] = 0
    sxadj[1:] = at + 1 + has_prev + has_next
    sadjncy[at] = partner
    sadjwgt[at] = dominant
    prev_at = at[has_prev] + 1
    sadjncy[prev_at] = slot[has_prev] - 1
    sadjwgt[prev_at] = 1
    next_at = at[has_next] + 1 + has_prev[has_next]
    sadjncy[next_at] = slot[has_next] + 1
    sadjwgt[next_at] = 1
