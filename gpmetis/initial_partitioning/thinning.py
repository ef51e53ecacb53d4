"""Thinning a dense coarsest graph before METIS: each vertex keeps its heaviest edges.

Power-law graphs coarsen into a few thousand vertices with hundreds of edges each, where a
METIS trial takes most of a second; the heaviest edges carry the structure the initial
partition needs, and the refinement of the coarsest level sees every edge again. An edge stays
when it is among the ``degree`` heaviest of either end (ties broken by a seeded symmetric
hash), so the thinned graph is symmetric and no vertex keeps fewer than ``min(degree, its
degree)`` edges.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpmetis.backend import Backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.edge_hash import edge_hash

CU_FILE = Path(__file__).with_name("thinning.cu")


def heaviest_edges(be: Backend, g: DeviceGraph, degree: int, seed: int) -> DeviceGraph:
    """The subgraph of ``g`` (same vertices and weights) with the edges among the ``degree``
    heaviest of either end; rows keep their order."""
    xp = be.xp
    keep = _keep_cuda(be, g, degree, seed) if be.gpu else _keep_numpy(g, degree, seed)
    kept = xp.flatnonzero(keep)
    before = xp.zeros(g.nnz + 1, dtype=xp.int64)
    xp.cumsum(keep, dtype=xp.int64, out=before[1:])
    return DeviceGraph(be, before[g.xadj], g.adjncy[kept], g.adjwgt[kept], g.vwgt)


def _keep_cuda(be: Backend, g: DeviceGraph, degree: int, seed: int):
    xp = be.xp
    threshold = xp.empty(g.nvtxs, dtype=xp.uint64)
    keep = xp.empty(g.nnz, dtype=xp.bool_)
    rows = (g.xadj, g.adjncy, g.adjwgt)
    be.launch_blocks(be.kernel(CU_FILE, "row_thresholds"), g.nvtxs,
                     (*rows, np.int64(degree), np.uint32(seed), threshold))
    be.launch_blocks(be.kernel(CU_FILE, "keep_heaviest"), g.nvtxs,
                     (*rows, np.uint32(seed), threshold, keep))
    return keep


def _keep_numpy(g: DeviceGraph, degree: int, seed: int) -> np.ndarray:
    src, adjncy = g.src, g.adjncy
    key = (g.adjwgt.astype(np.uint64) << np.uint64(32)) | edge_hash(src, adjncy, seed)
    ascending = key[np.lexsort((key, src))]  # rows in order, each row's keys ascending
    threshold = np.zeros(g.nvtxs, dtype=np.uint64)
    long_rows = np.flatnonzero(np.diff(g.xadj) > degree)
    threshold[long_rows] = ascending[g.xadj[long_rows + 1] - degree]
    return (key >= threshold[src]) | (key >= threshold[adjncy])
