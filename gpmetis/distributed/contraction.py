"""Contraction of a clustering held in pieces: each coarse vertex goes to the rank that owns
its cluster's label, with its members' weights summed and their edges to other clusters merged
(the rows sorted by neighbour, as the NumPy twin sorts them)."""

from __future__ import annotations

import numpy as np

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
    nc = int(cvtxdist[-1])
    coarse, w, _ = send_to_owners(comm, cvtxdist, cmap, lg.vwgt)
    vwgt = be.bin_sums(coarse - first, nlocal, w)
    c, cu, w = _coarse_entries(comm, lg, cmap, cvtxdist)
    pairs, inverse = be.unique_inverse((c - first) * nc + cu)
    weights = be.bin_sums(inverse, len(pairs), w)
    rows, adjncy = pairs // nc, pairs % nc
    xadj = xp.concatenate((xp.zeros(1, np.int64), xp.cumsum(be.counts(rows, nlocal))))
    return DistGraph(np.asarray(cvtxdist, dtype=np.int64), xadj, adjncy, vwgt.reshape(-1, 1),
                     weights)


def _coarse_entries(comm: Comm, lg: LocalGraph, cmap, cvtxdist: np.ndarray):
    """(coarse row, coarse neighbour, weight) of the entries between two clusters, received
    at the rank owning the row (collective; the per-entry work arrays end here)."""
    ends = lg.halo.extended(comm, cmap)
    cut = lg.be.xp.flatnonzero(cmap[lg.src] != ends[lg.adjncy])
    c, cu, w, _ = send_to_owners(comm, cvtxdist, cmap[lg.src[cut]], ends[lg.adjncy[cut]],
                                 lg.adjwgt[cut])
    return c, cu, w
