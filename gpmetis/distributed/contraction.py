"""Contraction of a clustering held in pieces: each coarse vertex goes to the rank that owns
its cluster's label, with its members' weights summed and their edges to other clusters merged.

A rank contracts its own rows with one process's ``contract`` (its kernels on a GPU), the
clusters it sees numbered locally in label order; only the partial rows of clusters another
rank owns travel, and only the rows they reach are merged again at their owner. On the cpu
engine every row is sorted by neighbour, as the NumPy twin sorts them."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import Backend
from gpmetis.coarsening.contraction import contract as contract_rows
from gpmetis.device_graph import DeviceGraph
from gpmetis.distributed.clustering import LocalGraph, send_to_owners
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph


def contract(comm: Comm, lg: LocalGraph, cmap, cvtxdist: np.ndarray) -> DistGraph:
    """The coarse graph's piece at this rank (its vertices cvtxdist[rank].., its arrays on
    ``lg``'s backend): ``cmap`` each own vertex's coarse id (global, int64). Collective."""
    be = lg.be
    xp = be.xp
    first = int(cvtxdist[comm.rank])
    nlocal = int(cvtxdist[comm.rank + 1]) - first
    # the clusters of the rank's vertices and ghosts, in label order: ``seen[c]`` is local c's
    seen, local = be.unique_inverse(lg.halo.extended(comm, cmap))
    rows = _local_rows(be, lg, local.astype(np.int32), len(seen))
    lo, hi = (int(x) for x in be.asnumpy(xp.searchsorted(seen, xp.asarray(
        [first, first + nlocal], dtype=seen.dtype))))
    xl, xh = (int(x) for x in be.asnumpy(rows.xadj[xp.asarray([lo, hi])]))
    # the partial rows of the clusters other ranks own go to their owners
    away = xp.concatenate((xp.arange(lo, dtype=np.int64), xp.arange(hi, len(seen))))
    got, got_w, _ = send_to_owners(comm, cvtxdist, seen[away], rows.vwgt[away])
    src, adjncy, adjwgt = (xp.concatenate((a[:xl], a[xh:]))
                           for a in (rows.src, rows.adjncy, rows.adjwgt))
    r, nbr, w, _ = send_to_owners(comm, cvtxdist, seen[src], seen[adjncy], adjwgt)
    vwgt = be.bin_sums(got - first, nlocal, got_w)
    vwgt[seen[lo:hi] - first] += rows.vwgt[lo:hi]
    xadj, adjncy, adjwgt = _owned_rows(be, rows, seen, (xl, xh), r - first, nbr, w, nlocal,
                                       first, int(cvtxdist[-1]))
    return DistGraph(np.asarray(cvtxdist, dtype=np.int64), xadj, adjncy, vwgt.reshape(-1, 1),
                     adjwgt)


def _local_rows(be: Backend, lg: LocalGraph, local, nc: int) -> DeviceGraph:
    """One process's contraction of the rank's rows plus an empty, weightless row per ghost
    into the ``nc`` clusters ``local`` (int32, one per own vertex and ghost)."""
    xp = be.xp
    nghosts = len(local) - len(lg.vwgt)
    xadj = xp.concatenate((lg.xadj, xp.full(nghosts, lg.xadj[-1], dtype=np.int64)))
    vwgt = xp.concatenate((lg.vwgt, xp.zeros(nghosts, dtype=np.int32)))
    if nc == 0:
        return DeviceGraph(be, xadj[:1], lg.adjncy, lg.adjwgt, vwgt)
    return contract_rows(be, DeviceGraph(be, xadj, lg.adjncy, lg.adjwgt, vwgt), local, nc)


def _owned_rows(be: Backend, rows: DeviceGraph, seen, span: tuple, r, nbr, w,
                nlocal: int, first: int, nc: int):
    """(xadj, adjncy, adjwgt) of the ``nlocal`` coarse rows this rank owns (global ids from
    ``first``): the local rows' entries span[0]..span[1]-1 (``seen``: the local rows' coarse
    ids), and where rows received entries (``r``, row among the owned; ``nbr``, global;
    ``w``), those rows merged whole with them, sorted by neighbour."""
    xp = be.xp
    xl, xh = span
    src = rows.src[xl:xh]
    row = seen[src] - first
    entry_nbr, entry_w = seen[rows.adjncy[xl:xh]], rows.adjwgt[xl:xh]
    touched = xp.zeros(nlocal, dtype=bool)
    touched[r] = True
    mixed = touched[row]
    kept = xp.flatnonzero(~mixed)
    keys = xp.concatenate((row[mixed] * nc + entry_nbr[mixed], r * nc + nbr))
    pairs, inverse = be.unique_inverse(keys) if len(keys) else (keys, keys)
    merged_w = be.bin_sums(inverse, len(pairs), xp.concatenate((entry_w[mixed], w)))
    merged_row, merged_nbr = pairs // nc, pairs % nc
    deg = be.counts(row[kept], nlocal) + be.counts(merged_row, nlocal)
    xadj = xp.concatenate((xp.zeros(1, dtype=np.int64), xp.cumsum(deg)))
    adjncy = xp.empty(int(xadj[-1]), dtype=np.int64)
    adjwgt = xp.empty(len(adjncy), dtype=np.int64)
    # a kept row's entries keep their order; a merged row's come sorted by neighbour
    at = xadj[row[kept]] + (kept + xl - rows.xadj[src[kept]])
    adjncy[at], adjwgt[at] = entry_nbr[kept], entry_w[kept]
    at = (xadj[merged_row] + xp.arange(len(pairs), dtype=np.int64)
          - xp.searchsorted(merged_row, merged_row))
    adjncy[at], adjwgt[at] = merged_nbr, merged_w
    return xadj, adjncy, adjwgt
