"""Label-propagation clustering (``coarsening/clustering.py``) on a graph held in pieces: the
same clusters as one process, for any number of ranks.

A cluster is labelled by a vertex id, and its weight lives at the rank that owns that vertex.
Each sub-round, a rank refreshes its ghosts' clusters, asks the owners of the clusters its
vertices see for their weights, and picks each active vertex's first choice as one process
does (``first_choices``). The proposals go to the clusters' owners, which approve them as one
process does (``approve_proposals``: the proposals arrive in id order, rank after rank). The
moves then update the weights at the owners."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gpmetis.backend import get_backend
from gpmetis.coarsening.clustering import (
    active,
    approve_proposals,
    cluster_ratings,
    first_choices,
    level_schedule,
)
from gpmetis.context import CoarseningContext
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.distributed.halo import Halo, owners


@dataclass
class LocalGraph:
    """A rank's rows with local neighbour ids (``Halo.build``'s): ``xadj`` int64, ``adjncy``
    int32 (own vertices first, then the halo's ghosts), ``adjwgt`` and ``vwgt`` (int64, one
    constraint) and the halo."""

    xadj: np.ndarray
    adjncy: np.ndarray
    adjwgt: np.ndarray
    vwgt: np.ndarray
    halo: Halo

    @classmethod
    def of(cls, comm: Comm, piece: DistGraph) -> LocalGraph:
        """The local view of ``piece`` (collective: the halo is built)."""
        halo, adjncy = Halo.build(comm, piece.vtxdist, piece.adjncy)
        adjwgt = piece.adjwgt if piece.adjwgt is not None else np.ones(len(adjncy), np.int64)
        vwgt = piece.vwgt[:, 0] if piece.vwgt is not None else np.ones(piece.nlocal, np.int64)
        return cls(piece.xadj, adjncy, adjwgt, vwgt, halo)

    @cached_property
    def src(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.xadj) - 1, dtype=np.int64), np.diff(self.xadj))


def ask_owners(comm: Comm, vtxdist: np.ndarray, ids: np.ndarray, values: np.ndarray
               ) -> np.ndarray:
    """``values`` (indexed by own local id at each rank) of the global ``ids``, from their
    owners (collective)."""
    ids = np.asarray(ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    counts = np.bincount(owners(vtxdist, ids[order]), minlength=comm.size)
    asked = comm.alltoallv(np.split(ids[order], np.cumsum(counts)[:-1]))
    first = vtxdist[comm.rank]
    answers = comm.alltoallv([values[a - first] for a in asked])
    out = np.empty(len(ids), dtype=values.dtype)
    out[order] = np.concatenate(answers) if answers else values[:0]
    return out


def send_to_owners(comm: Comm, vtxdist: np.ndarray, keys: np.ndarray, *columns: np.ndarray):
    """The (key, columns...) rows sent to the owner of each key (a global id), in rank order
    of the senders and each sender's order; returns (keys, columns..., the row counts per
    sender) at this rank (collective)."""
    order = np.argsort(owners(vtxdist, keys), kind="stable")
    counts = np.bincount(owners(vtxdist, keys), minlength=comm.size)
    cuts = np.cumsum(counts)[:-1]
    got = [comm.alltoallv(np.split(a[order], cuts)) for a in (keys, *columns)]
    return (*(np.concatenate(g) for g in got), np.array([len(x) for x in got[0]]))


def lp_clustering(comm: Comm, lg: LocalGraph, maxvwgt: int, seed: int,
                  context: CoarseningContext) -> tuple[np.ndarray, np.ndarray]:
    """(cmap, cvtxdist): each own vertex's cluster as a global coarse id (int64, in the order
    of the clusters' labels, as ``coarsening.clustering.lp_clustering`` numbers them), and the
    coarse vertices each rank owns (those whose label it owns); collective."""
    halo = lg.halo
    vtxdist, first, nlocal = halo.vtxdist, halo.first, halo.nlocal
    n = int(vtxdist[-1])
    seed &= 0xFFFFFFFF
    cluster = np.arange(first, first + nlocal, dtype=np.int64)
    cw = lg.vwgt.astype(np.int64)  # the weight of the cluster labelled by each own vertex
    schedule = level_schedule(get_backend("cpu"), seed, context)
    src = lg.src
    total = 0
    moved = 0
    for _ in range(context.lp_rounds):
        for _ in range(schedule.subrounds):
            moved += _sub_round(comm, lg, src, cluster, cw, maxvwgt, seed, schedule)
            schedule.advance()
        now = int(comm.allreduce_sum(np.array([moved], np.int64))[0])
        if now - total < context.lp_min_round_moves * n:
            break
        total = now
    _group_islands(comm, lg, cluster, maxvwgt)
    return _number_clusters(comm, vtxdist, cluster)


def _sub_round(comm: Comm, lg: LocalGraph, src, cluster, cw, maxvwgt: int, seed: int,
               schedule) -> int:
    """One sub-round at every rank; how many own vertices moved."""
    halo, vtxdist, first = lg.halo, lg.halo.vtxdist, lg.halo.first
    rseed, sub = schedule.current()
    labels = halo.extended(comm, cluster)
    on = active(halo.nlocal, rseed, sub, schedule.subrounds, first)[src]
    vs, cs, r = cluster_ratings(src[on] + first, labels[lg.adjncy[on]], lg.adjwgt[on],
                                int(vtxdist[-1]))
    seen = np.unique(np.concatenate((cs, cluster)))
    weights = ask_owners(comm, vtxdist, seen, cw)
    cw_cs = weights[np.searchsorted(seen, cs)]
    bv, bc, br = first_choices(vs, cs, r, cluster[vs - first], cw_cs, lg.vwgt[vs - first],
                               maxvwgt, seed)
    # proposals to the targets' owners, approved there in id order, answered back
    target, ids, rating, w, counts = send_to_owners(comm, vtxdist, bc, bv, br,
                                                    lg.vwgt[bv - first])
    accepted = approve_proposals(target, rating, w, cw[target - first], maxvwgt)
    np.add.at(cw, target[accepted] - first, w[accepted])
    answers = comm.alltoallv(np.split(accepted.astype(np.int64), np.cumsum(counts)[:-1]))
    # each rank sent its proposals to the owners in owner order: the answers come back so
    order = np.argsort(np.asarray(owners(vtxdist, bc)), kind="stable")
    ok = np.empty(len(bv), dtype=bool)
    ok[order] = np.concatenate(answers).astype(bool) if answers else ok[:0]
    movers, dest = bv[ok] - first, bc[ok]
    old, _, left, _ = send_to_owners(comm, vtxdist, cluster[movers], movers,
                                     lg.vwgt[movers])
    np.subtract.at(cw, old - first, left)
    cluster[movers] = dest
    return len(movers)


def _group_islands(comm: Comm, lg: LocalGraph, cluster, maxvwgt: int) -> None:
    """``coarsening.clustering.group_islands`` over the ranks: the isolated vertices in
    clusters of consecutive ones (in id order, across ranks)."""
    halo = lg.halo
    islands = np.flatnonzero(np.diff(lg.xadj) == 0)
    counts = comm.allgather(len(islands))
    if int(counts.sum()) < 2:
        return
    heaviest = comm.allreduce_max(int(lg.vwgt[islands].max()) if len(islands) else 0)
    per = max(1, maxvwgt // max(heaviest, 1))
    before = int(counts[:comm.rank].sum())
    leaders = (before + np.arange(len(islands), dtype=np.int64)) // per * per
    # the island at each leader's position, asked of the rank holding that position
    bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    ids = (islands + halo.first).astype(np.int64)
    cluster[islands] = ask_owners(comm, bounds, leaders, ids)


def _number_clusters(comm: Comm, vtxdist: np.ndarray, cluster
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(cmap, cvtxdist): the labels renumbered 0..nc-1 in label order over all ranks."""
    first = int(vtxdist[comm.rank])
    nlocal = int(vtxdist[comm.rank + 1]) - first
    labels = np.unique(cluster)
    got, _ = send_to_owners(comm, vtxdist, labels)
    used = np.zeros(nlocal, dtype=bool)
    used[got - first] = True
    counts = comm.allgather(int(used.sum()))
    number = np.cumsum(used) - 1 + int(counts[:comm.rank].sum())
    ids = ask_owners(comm, vtxdist, labels, number)
    return ids[np.searchsorted(labels, cluster)], np.concatenate(([0], np.cumsum(counts)))
