"""Partition quality metrics with METIS's definitions, vectorised for both backends."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from gpmetis.backend import INT32_MAX, NULL, Backend, get_backend

PAIR_CHUNK = 1 << 21  # adjacency entries per row range of the boundary pairs (compute_metrics)


def edgecut(be: Backend, src, adjncy, adjwgt, part) -> int:
    """Sum of the weights of edges whose ends lie in different parts."""
    cut = be.xp.sum(adjwgt * (part[src] != part[adjncy]), dtype=be.xp.int64)
    return int(cut) // 2


def part_weights(be: Backend, vwgt, part, nparts: int):
    """(nparts, ncon) int64 sums of vertex weights per part, exact while each constraint's
    total fits an int64."""
    return be.xp.stack([be.bin_sums(part, nparts, vwgt[:, c]) for c in range(vwgt.shape[1])],
                       axis=1)


def cut_edges(be: Backend, xadj, adjncy, part):
    """The bool mask of the adjacency entries whose ends lie in different parts (on the GPU
    without a per-entry source array)."""
    if not be.gpu:
        return part[be.sources(xadj, len(adjncy))] != part[adjncy]
    nnz = len(adjncy)
    cut = be.xp.empty(nnz, dtype=be.xp.bool_)
    be.launch(be.kernel(Path(__file__).with_name("metrics.cu"), "cut_edges"), nnz,
              (np.int32(len(xadj) - 1), np.int64(nnz), xadj, adjncy, part, cut))
    return cut


def cut_entry_chunks(be: Backend, xadj, nnz: int, cut):
    """Per range of whole rows (about PAIR_CHUNK adjacency entries each): (at, src), the int64
    positions of the range's cut entries (mask ``cut``) and their rows. Working memory follows
    the range, not the graph (rmat 20's 10M cut entries had made int64 arrays of them all)."""
    xp = be.xp
    marks = xp.arange(0, nnz, PAIR_CHUNK, dtype=xp.int64)
    rows = xp.concatenate((xp.searchsorted(xadj, marks, side="right") - 1,
                           xp.asarray([len(xadj) - 1], dtype=xp.int64)))
    bounds = be.asnumpy(xadj[rows]).tolist()
    for e0, e1 in zip(bounds[:-1], bounds[1:]):
        if e0 < e1:  # marks inside one long row give empty ranges
            at = xp.flatnonzero(cut[e0:e1]) + e0
            yield at, xp.searchsorted(xadj, at, side="right") - 1


def connected_components(be: Backend, xadj, adjncy, part=None):
    """Component label of every vertex: the smallest vertex id in its component, over all edges,
    or with ``part`` over the edges whose ends share a part (the parts' components)."""
    n = len(xadj) - 1
    if be.gpu:
        return _components_cuda(be, n, xadj, adjncy, part)
    src = be.sources(xadj, len(adjncy))
    keep = src < adjncy
    if part is not None:
        keep &= part[src] == part[adjncy]
    return edge_list_components(n, src[keep], adjncy[keep].astype(np.int32, copy=False))


def edge_list_components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Hook-and-shortcut over the edge list (src, dst: int32, src < dst): each round hooks the
    larger label of every unsettled edge onto the smaller one, then jumps pointers until every
    label is a root; settled edges are dropped. The first round needs no gather: every vertex
    is its own label, and every edge is unsettled."""
    label = np.arange(n, dtype=np.int32)
    lu, lv = src, dst
    while len(src):
        open_ = lu != lv
        if not open_.all():
            if not open_.any():
                break
            src, dst, lu, lv = src[open_], dst[open_], lu[open_], lv[open_]
        np.minimum.at(label, np.maximum(lu, lv), np.minimum(lu, lv))
        while True:
            jumped = label[label]
            if (jumped == label).all():
                break
            label = jumped
        lu, lv = label[src], label[dst]
    return label


def _components_cuda(be: Backend, n: int, xadj, adjncy, part):
    """The same labels from one union-find pass over the CSR rows and one pass that points every
    vertex at its root (no edge list, no round trips)."""
    xp = be.xp
    cu_file = Path(__file__).with_name("metrics.cu")
    label = xp.arange(n, dtype=xp.int32)
    use_part = part is not None
    part_arg = part if use_part else label
    be.launch(be.kernel(cu_file, "components_union"), n,
              (np.int32(n), xadj, adjncy, part_arg, np.int32(use_part), label))
    be.launch(be.kernel(cu_file, "components_compress"), n, (np.int32(n), label))
    return label


def count_components(be: Backend, xadj, adjncy) -> int:
    label = connected_components(be, xadj, adjncy)
    return int((label == be.xp.arange(len(xadj) - 1)).sum())


def _joined_components(be: Backend, xadj, adjncy, label, roots) -> int:
    """The number of components of the whole graph, from ``label`` (the parts' components,
    ``roots`` where a vertex is its own label): the parts' components that the cut edges join,
    a graph of as many edges as the cut (on the host)."""
    lu, lv = label[be.sources(xadj, len(adjncy))], label[adjncy]
    keep = lu < lv
    joined = edge_list_components(len(label), lu[keep], lv[keep])
    return int((roots & (joined == np.arange(len(label), dtype=np.int32))).sum())


ROW_SCAN_DEGREE = 64  # rows up to this long are scanned by boundary_rows (work: degree^2)
ROW_SCAN_PARTS = 4096  # ... and nparts up to this: its (part, part) table has nparts^2 bytes


def boundary_counts(be: Backend, xadj, adjncy, adjwgt, part, nparts: int, vsize):
    """``boundary_pairs``' (twice the edgecut, volume, sorted part pair keys), by the GPU's row
    scan where it applies, else by ``boundary_pairs``' sorts."""
    counted = _boundary_by_rows(be, xadj, adjncy, adjwgt, part, nparts, vsize) if be.gpu else None
    return counted or boundary_pairs(be, xadj, adjncy, adjwgt, part, nparts, vsize)


def _boundary_by_rows(be: Backend, xadj, adjncy, adjwgt, part, nparts: int, vsize):
    """``boundary_pairs``' counts, row by row on the GPU in one pass with no array per vertex
    (CuPy's sort, slow to load at its first use in a process, is left out), or None where a
    row is longer than ROW_SCAN_DEGREE, nparts above ROW_SCAN_PARTS or a dtype not the
    engine's."""
    xp = be.xp
    n = len(xadj) - 1
    dtypes = (xadj.dtype, adjncy.dtype, adjwgt.dtype, part.dtype)
    if nparts > ROW_SCAN_PARTS or n > INT32_MAX or dtypes != (xp.int64, xp.int32, xp.int32,
                                                               xp.int32):
        return None
    adjacent = xp.zeros(nparts * nparts, dtype=xp.uint8)
    totals = xp.zeros(3, dtype=xp.int64)  # a row too long, the cut entries' weight, volume
    be.launch(be.kernel(Path(__file__).with_name("metrics.cu"), "boundary_rows"), n,
              (np.int32(n), xadj, adjncy, adjwgt, part, np.int32(nparts),
               np.int32(ROW_SCAN_DEGREE), NULL if vsize is None else vsize.astype(xp.int64),
               adjacent, totals))
    too_long, cut, volume = (int(x) for x in be.asnumpy(totals))
    if too_long:
        return None
    return cut, volume, xp.flatnonzero(adjacent).astype(xp.int64)


def boundary_pairs(be: Backend, xadj, adjncy, adjwgt, part, nparts: int, vsize):
    """(the cut entries' weight: twice the edgecut, volume, the sorted distinct keys
    part * nparts + other part of the parts a cut edge joins) of the rows of ``xadj`` (their
    ``vsize``), from the distinct (vertex, other part) and (part, other part) pairs of the cut
    entries, range by range of rows. ``part`` covers every vertex ``adjncy`` names, which may
    be more than the rows."""
    xp = be.xp
    cut_mask = cut_edges(be, xadj, adjncy, part)
    cut = volume = 0
    part_pairs = xp.zeros(0, dtype=xp.int64)
    for at, src in cut_entry_chunks(be, xadj, len(adjncy), cut_mask):
        cut += int(xp.sum(adjwgt[at], dtype=xp.int64))
        # a (vertex, other part) pair is METIS's unit of communication volume
        pairs = be.unique(src * nparts + part[adjncy[at]])
        owners = pairs // nparts
        volume += int(xp.sum(vsize[owners], dtype=xp.int64)) if vsize is not None else len(pairs)
        found = be.unique(part[owners].astype(xp.int64) * nparts + pairs % nparts)
        part_pairs = be.unique(xp.concatenate((part_pairs, found)))
        del at, src, pairs, owners
    return cut, volume, part_pairs


def subdomain_degrees(be: Backend, part_pairs, nparts: int) -> np.ndarray:
    """How many other parts each part shares a cut edge with (host int64), from
    ``boundary_pairs``' keys."""
    return be.asnumpy(be.counts((part_pairs // nparts).astype(be.xp.int32), nparts))


@dataclass
class PartitionMetrics:
    """What METIS's ``gpmetis`` reports about a partition (plus imbalance for tests)."""

    edgecut: int
    volume: int
    pwgts: list[list[int]]
    imbalance: list[float]
    vertex_bound: list[float]
    overweight_pid: int
    overweight_actual: int
    overweight_desired: int
    overweight_ratio: float
    maxndom: int
    minndom: int
    avgndom: float
    ncomponents: int | None  # of the whole graph; computed only when a part is not contiguous
    part_components: int
    noncontiguous: int
    max_part_components: int
    max_components_pid: int

    def as_dict(self) -> dict:
        return asdict(self)


def compute_metrics(
    xadj,
    adjncy,
    vwgt,
    adjwgt,
    part,
    nparts: int,
    tpwgts: np.ndarray,
    vsize=None,
    be: Backend | None = None,
) -> PartitionMetrics:
    """All report metrics for ``part``; arrays may live on either backend."""
    be = be or get_backend("cpu")
    xp = be.xp
    n = len(xadj) - 1
    part = part.astype(xp.int32)
    cut, volume, pairs = boundary_counts(be, xadj, adjncy, adjwgt, part, nparts, vsize)
    cut //= 2
    ndom = subdomain_degrees(be, pairs, nparts)

    pw = be.asnumpy(part_weights(be, vwgt, part, nparts))
    heaviest = be.asnumpy(vwgt.max(axis=0)) if n else np.zeros(pw.shape[1], dtype=np.int64)
    label = connected_components(be, xadj, adjncy, part)
    roots = label == xp.arange(n, dtype=xp.int32)
    comps_per_part = be.asnumpy(be.counts(part[roots], nparts))
    if int(comps_per_part.sum()) == nparts:
        ncomponents = None
    elif be.gpu:
        del label
        ncomponents = count_components(be, xadj, adjncy)
    else:
        ncomponents = _joined_components(be, xadj, adjncy, label, roots)
    return assemble_metrics(cut, volume, ndom, pw, heaviest, comps_per_part, ncomponents,
                            tpwgts)


def assemble_metrics(cut: int, volume: int, ndom: np.ndarray, pw: np.ndarray,
                     heaviest: np.ndarray, comps_per_part: np.ndarray, ncomponents: int | None,
                     tpwgts: np.ndarray) -> PartitionMetrics:
    """The report's metrics from what was counted: the edgecut, volume, each part's subdomain
    degree, (nparts, ncon) part weights, each constraint's heaviest vertex, each part's
    components and the graph's (None where every part is connected)."""
    nparts = len(pw)
    total = pw.sum(axis=0)
    safe_total = np.maximum(total, 1)
    ratios = pw / (tpwgts * safe_total)
    imbalance = ratios.max(axis=0)
    # in float64: NPARTS * weight may pass int64
    vertex_bound = nparts * np.asarray(heaviest, dtype=np.float64) / safe_total
    k = int(np.argmax(ratios[:, 0]))
    return PartitionMetrics(
        edgecut=cut,
        volume=volume,
        pwgts=pw.tolist(),
        imbalance=[float(x) for x in imbalance],
        vertex_bound=[float(x) for x in vertex_bound],
        overweight_pid=k,
        overweight_actual=int(pw[k, 0]),
        overweight_desired=int(total[0] * tpwgts[k, 0]),
        overweight_ratio=float(ratios[k, 0]),
        maxndom=int(ndom.max()),
        minndom=int(ndom.min()),
        avgndom=float(ndom.mean()),
        ncomponents=ncomponents,
        part_components=int(comps_per_part.sum()),
        noncontiguous=int((comps_per_part > 1).sum()),
        max_part_components=int(comps_per_part.max()),
        max_components_pid=int(np.argmax(comps_per_part)),
    )


def constraint_weights(be: Backend, weights, part, nparts: int):
    """(ncon, nparts) int64 part weights on ``be`` of the (ncon, n) ``weights``."""
    return be.xp.stack([be.bin_sums(part, nparts, w) for w in weights])
