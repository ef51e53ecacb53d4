"""Contraction of a clustering held in pieces: each coarse vertex goes to the rank that owns
its cluster's label, with its members' weights summed and their edges to other clusters merged
(the rows sorted by neighbour, as the NumPy twin sorts them)."""

from __future__ import annotations

import numpy as np

from gpmetis.backend import exact_bin_sums
from gpmetis.distributed.clustering import LocalGraph, send_to_owners
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph


def contract(comm: Comm, lg: LocalGraph, cmap: np.ndarray, cvtxdist: np.ndarray) -> DistGraph:
    """The coarse graph's piece at this rank (its vertices cvtxdist[rank]..): ``cmap`` each own
    vertex's coarse id (global, int64). Collective."""
    first = int(cvtxdist[comm.rank])
    nlocal = int(cvtxdist[comm.rank + 1]) - first
    coarse, w, _ = send_to_owners(comm, cvtxdist, cmap, lg.vwgt)
    vwgt = exact_bin_sums(coarse - first, nlocal, w)
    ends = lg.halo.extended(comm, cmap)
    src = cmap[lg.src]
    dst = ends[lg.adjncy]
    cut = src != dst
    c, cu, w, _ = send_to_owners(comm, cvtxdist, src[cut], dst[cut], lg.adjwgt[cut])
    pairs, inverse = np.unique((c - first) * int(cvtxdist[-1]) + cu, return_inverse=True)
    weights = exact_bin_sums(inverse.ravel(), len(pairs), w)
    rows, adjncy = np.divmod(pairs, int(cvtxdist[-1]))
    xadj = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=nlocal))))
    return DistGraph(np.asarray(cvtxdist, dtype=np.int64), xadj.astype(np.int64), adjncy,
                     vwgt.reshape(-1, 1), weights)
