"""Contraction of a clustering held in pieces: each coarse vertex goes to the rank that owns
its cluster's label, with its members' weights summed and their edges to other clusters merged.

A rank contracts its rows with one process's ``contract`` (its kernels on a GPU), the clusters
it sees numbered locally in label order. Only the members of clusters another rank owns travel
first, as their weights and their edges' coarse ends; their owner adds them to its coarse rows
with a second ``contract`` of those rows plus a stand-in vertex per record. On the cpu engine
every row is sorted by neighbour, as the NumPy twin sorts them."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend
from gpmetis.coarsening.contraction import contract as contract_rows
from gpmetis.coarsening.contraction import outside_degrees
from gpmetis.device_graph import DeviceGraph
from gpmetis.distributed.clustering import LocalGraph, send_to_owners
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.halo import Halo
from gpmetis.limits import VERTEX_MAX


def contract(comm: Comm, lg: LocalGraph, cmap, cvtxdist: np.ndarray) -> LocalGraph:
    """The coarse graph's local view at this rank (its vertices cvtxdist[rank].., on ``lg``'s
    backend): ``cmap`` each own vertex's coarse id (global, int64). Collective."""
    be = lg.be
    xp = be.xp
    first, last = int(cvtxdist[comm.rank]), int(cvtxdist[comm.rank + 1])
    ends = lg.halo.extended(comm, cmap)  # the coarse ids of the own vertices and the ghosts
    away = xp.flatnonzero((cmap < first) | (cmap >= last))
    c, cw, _ = send_to_owners(comm, cvtxdist, cmap[away], lg.vwgt[away])
    member, entry = be.row_entries(lg.xadj, away)
    weights = xp.ones(len(entry), np.int32) if lg.adjwgt is None else lg.adjwgt[entry]
    r, ru, rw, _ = send_to_owners(comm, cvtxdist, cmap[away[member]], ends[lg.adjncy[entry]],
                                  weights)
    seen, local = be.unique_inverse(ends)
    del ends
    rows = _local_rows(be, lg, local.astype(np.int32), len(seen))
    del local
    if len(c) or len(r):
        be.release_free_memory()  # (the records' graph from fresh blocks: it copies the rows)
        seen, g, merged = _with_records(be, seen, rows, (c, cw), (r, ru, rw))
        del rows, c, cw, r, ru, rw  # the second contraction's input holds them all
        be.release_free_memory()  # (its arrays from fresh blocks, not the first's fragments)
        rows = contract_rows(be, g, merged, len(seen))
        del g, merged
    lo, hi = (int(x) for x in be.asnumpy(xp.searchsorted(seen, xp.asarray(
        [first, last], dtype=seen.dtype))))
    return _owned_view(comm, rows, seen, lo, hi, np.asarray(cvtxdist, dtype=np.int64))


def coarse_sums_fit(comm: Comm, lg: LocalGraph, cmap, cvtxdist: np.ndarray) -> bool:
    """``coarsening.coarse_sums_fit`` over the ranks: whether every coarse vertex of ``cmap``
    (each own vertex's global coarse id) weighs at most 2^31-1, and its edges together, as
    the local views' int32 weights need. Collective."""
    be = lg.be
    xp = be.xp
    nlocal, first = lg.halo.nlocal, int(cvtxdist[comm.rank])
    seen, local = be.unique_inverse(lg.halo.extended(comm, cmap))
    local = local.astype(np.int32)
    own = local[:nlocal]
    degrees = outside_degrees(be, lg.with_ghost_rows(), local)[:nlocal]
    # this rank's share of each of its vertices' clusters, summed at the clusters' owners
    used = xp.flatnonzero(be.counts(own, len(seen)))
    shares = [be.bin_sums(own, len(seen), w)[used] for w in (lg.vwgt, degrees)]
    label, vwgt, degree, _ = send_to_owners(comm, cvtxdist, seen[used], *shares)
    owned = (label - first).astype(np.int32)
    n = int(cvtxdist[comm.rank + 1]) - first
    heaviest = max((int(be.bin_sums(owned, n, w).max()) for w in (vwgt, degree)), default=0
                   ) if n else 0
    return comm.allreduce_max(heaviest) <= VERTEX_MAX


def _local_rows(be: Backend, lg: LocalGraph, local, nc: int) -> DeviceGraph:
    """One process's contraction of the rank's rows plus an empty, weightless row per ghost
    into the ``nc`` clusters ``local`` (int32, one per own vertex and ghost)."""
    g = lg.with_ghost_rows()
    if nc == 0:  # no vertex and no ghost: nothing to contract (and no weights made)
        return DeviceGraph(be, g.xadj, g.adjncy, be.xp.zeros(0, dtype=np.int32), g.vwgt)
    return contract_rows(be, g, local, nc)


def _with_records(be: Backend, seen, rows: DeviceGraph, weights: tuple, edges: tuple):
    """(coarse ids, graph, cmap): the contracted ``rows`` (whose vertices are the coarse ids
    ``seen``) with the records other ranks sent, for one process's ``contract`` to merge into
    the coarse rows of the returned ids. ``weights``: (cluster, weight) of their members;
    ``edges``: (cluster, coarse neighbour, weight) of their members' edges. Each record is a
    vertex: a weight its own, an edge a vertex with one entry to a weightless one in the
    neighbour's cluster."""
    xp = be.xp
    (c, cw), (r, ru, rw) = weights, edges
    n, nnz, nw, ne = len(seen), int(rows.xadj[-1]), len(c), len(r)
    merged = be.unique(xp.concatenate((seen, c, r, ru)))
    cmap = xp.searchsorted(merged, xp.concatenate((seen, c, r, ru))).astype(np.int32)
    xadj = xp.concatenate((rows.xadj, xp.full(nw, nnz, dtype=np.int64),
                           nnz + xp.arange(1, ne + 1, dtype=np.int64),
                           xp.full(ne, nnz + ne, dtype=np.int64)))
    adjncy = xp.concatenate((rows.adjncy, xp.arange(n + nw + ne, n + nw + 2 * ne,
                                                    dtype=np.int32)))
    vwgt = xp.concatenate((rows.vwgt, cw.astype(np.int32), xp.zeros(2 * ne, dtype=np.int32)))
    g = DeviceGraph(be, xadj, adjncy, xp.concatenate((rows.adjwgt, rw.astype(np.int32))), vwgt)
    return merged, g, cmap


def _owned_view(comm: Comm, rows: DeviceGraph, seen, lo: int, hi: int,
                cvtxdist: np.ndarray) -> LocalGraph:
    """The local view of the coarse rows lo..hi-1 (this rank's coarse vertices, all of
    them) of ``rows``, whose vertices are the coarse ids ``seen``; collective."""
    be = rows.be
    xp = be.xp
    xl, xh = (int(x) for x in be.asnumpy(rows.xadj[xp.asarray([lo, hi])]))
    adjncy = rows.adjncy[xl:xh]
    # the neighbours other ranks own, in id order, after the own vertices
    ghost = xp.zeros(len(seen), dtype=bool)
    ghost[adjncy] = True
    ghost[lo:hi] = False
    ghost = xp.flatnonzero(ghost)
    renumber = xp.empty(len(seen), dtype=np.int32)
    renumber[lo:hi] = xp.arange(hi - lo, dtype=np.int32)
    renumber[ghost] = xp.arange(hi - lo, hi - lo + len(ghost), dtype=np.int32)
    return LocalGraph(rows.xadj[lo:hi + 1] - xl, renumber[adjncy], rows.adjwgt[xl:xh],
                      rows.vwgt[lo:hi], Halo.of_ghosts(comm, cvtxdist, seen[ghost]))
