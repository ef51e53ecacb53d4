"""What a run reads of a whole partition, counted on the pieces: the score's state, the
report's metrics (``metrics.compute_metrics``'s, equal for any number of ranks), the
connected components and the heaviest one's weight, so that no rank needs the whole graph
for them.

Components: each rank labels the components of its own rows (one process's
``connected_components``, the ghosts left out), then the pairs of labels its cut entries join
go to rank 0, which joins them (a graph of as many edges as the distinct pairs) and sends back
each joined label's smallest."""

from __future__ import annotations

import numpy as np

from gpmetis.distributed.clustering import LocalGraph, send_to_owners
from gpmetis.distributed.comm import Comm
from gpmetis.metrics import (
    PartitionMetrics,
    assemble_metrics,
    boundary_counts,
    connected_components,
    edge_list_components,
    part_weights,
    subdomain_degrees,
)
from gpmetis.refinement.jet import state_sums


def components(comm: Comm, lg: LocalGraph, part=None):
    """Each own vertex's component label: the smallest vertex id (global, int64) of its
    component over all edges, or with ``part`` (one per own vertex) over the edges whose ends
    share a part. Collective. (Its arrays are made in place where it can: a few per vertex.)"""
    be, halo = lg.be, lg.halo
    xp = be.xp
    n, nghosts = halo.nlocal, len(halo.ghosts)
    # the rank's rows, each ghost a vertex of its own (no row) in a part no row is in
    ends = xp.full(n + nghosts, -1, dtype=np.int32)
    ends[:n] = 0 if part is None else part
    xadj = xp.concatenate((lg.xadj, xp.full(nghosts, lg.xadj[-1], dtype=np.int64)))
    label = connected_components(be, xadj, lg.adjncy, ends)[:n].astype(np.int64)
    label += halo.first
    del xadj
    own = ends[:n]
    # the labels the cut entries join, each pair once
    at = xp.flatnonzero(lg.adjncy >= n)
    src = xp.searchsorted(lg.xadj, at, side="right") - 1
    ghost = lg.adjncy[at] - n
    if part is not None:  # the cut entries within a part
        keep = own[src] == halo.exchange(comm, own)[ghost]
        src, ghost = src[keep], ghost[keep]
    del ends, own
    a, b = label[src], halo.exchange(comm, label)[ghost]
    others, b = be.unique_inverse(b)
    pairs = be.unique((a - halo.first) * len(others) + b)
    a = be.asnumpy(pairs // max(len(others), 1) + halo.first)
    b = be.asnumpy(others[pairs % max(len(others), 1)])
    a, b = comm.gatherv(a), comm.gatherv(b)
    ids, roots = (be.asarray(x) for x in comm.bcast(comm.on_root(lambda: _joined(a, b))))
    if len(ids) == 0:
        return label
    at = xp.searchsorted(ids, label)
    xp.minimum(at, len(ids) - 1, out=at)
    joined = ids[at] == label
    label[joined] = roots[at[joined]]
    return label


def heaviest_component(comm: Comm, lg: LocalGraph) -> int:
    """The weight of the heaviest connected component (on every rank; collective): each
    rank's share of its vertices' components, summed at the ranks owning their labels."""
    be, halo = lg.be, lg.halo
    labels, index = be.unique_inverse(components(comm, lg))
    label, weight, _ = send_to_owners(comm, halo.vtxdist, labels,
                                      be.bin_sums(index, len(labels), lg.vwgt))
    sums = be.bin_sums(label - halo.first, halo.nlocal, weight)
    return comm.allreduce_max(int(sums.max()) if halo.nlocal else 0)


def count_components(comm: Comm, lg: LocalGraph) -> int:
    """How many connected components the whole graph has (on every rank; collective)."""
    first = lg.halo.first
    roots = components(comm, lg) == lg.be.xp.arange(first, first + lg.halo.nlocal)
    return int(comm.allreduce_sum(np.array([int(roots.sum())], np.int64))[0])


def _joined(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the labels the pairs (a, b) name, sorted; each one's smallest joined label), where
    they differ."""
    ids, index = np.unique(np.concatenate((a, b)), return_inverse=True)
    lo, hi = np.minimum(index[:len(a)], index[len(a):]), np.maximum(index[:len(a)],
                                                                     index[len(a):])
    root = edge_list_components(len(ids), lo.astype(np.int32), hi.astype(np.int32))
    moved = root != np.arange(len(ids))
    return ids[moved], ids[root[moved]]


def state(comm: Comm, lg: LocalGraph, part, nparts: int) -> tuple[int, np.ndarray]:
    """(edgecut, part weights as int64 host array) of the partition whose parts of the own
    vertices are ``part``; collective."""
    lg.reload()
    total = comm.allreduce_sum(state_sums(lg.be, lg.with_ghost_rows(),
                                          lg.halo.extended(comm, part), nparts))
    return int(total[0]) // 2, total[1:]


def metrics(comm: Comm, lg: LocalGraph, part, nparts: int, tpwgts: np.ndarray,
            vsize=None) -> PartitionMetrics | None:
    """``compute_metrics`` of the whole partition (on rank 0; None elsewhere): ``part`` the
    own vertices' parts, ``vsize`` their sizes. Collective."""
    be, halo = lg.be, lg.halo
    xp = be.xp
    lg.reload()
    part = part.astype(np.int32, copy=False)
    cut, volume, pairs = boundary_counts(be, lg.xadj, lg.adjncy, lg.adjwgt,
                                         halo.extended(comm, part), nparts, vsize)
    pw = part_weights(be, lg.vwgt[:, None], part, nparts)[:, 0]
    own = xp.arange(halo.first, halo.first + halo.nlocal, dtype=np.int64)
    comps = be.counts(part[components(comm, lg, part) == own], nparts)
    counts = comm.allreduce_sum(be.asnumpy(xp.concatenate((
        xp.asarray([cut, volume], dtype=np.int64), pw, comps))))
    heaviest = comm.allreduce_max(int(lg.vwgt.max()) if halo.nlocal else 0)
    ndom = comm.gatherv(be.asnumpy(pairs))
    comps = counts[2 + nparts:]
    ncomponents = None
    if int(comps.sum()) != nparts:
        ncomponents = count_components(comm, lg)
    if not comm.root:
        return None
    return assemble_metrics(int(counts[0]) // 2, int(counts[1]),
                            subdomain_degrees(be, be.asarray(np.unique(ndom)), nparts),
                            counts[2:2 + nparts].reshape(-1, 1), np.array([heaviest]), comps,
                            ncomponents, tpwgts)
