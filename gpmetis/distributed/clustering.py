"""Label-propagation clustering (``coarsening/clustering.py``) on a graph held in pieces: the
same clusters as one process, for any number of ranks.

A cluster is labelled by a vertex id, and its weight lives at the rank that owns that vertex.
Each sub-round, a rank refreshes its ghosts' clusters, numbers the clusters its rows see
locally, asks their owners for their weights, and picks each active vertex's first choice with
one process's ``best_cluster`` (its kernels on a rank with a GPU), whose hashes read the
vertices' and clusters' ids in the whole graph. Only the proposals to clusters another rank
owns travel; each rank approves those to its own clusters with one process's ``approve`` (its
kernels on a GPU) over them laid out in the proposers' id order (the lower ranks', its own,
the higher ranks'). The moves then update the weights at the owners."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from gpmetis.backend import Backend, backend_of
from gpmetis.coarsening.clustering import approve, best_cluster, level_schedule
from gpmetis.context import CoarseningContext
from gpmetis.device_graph import DeviceGraph
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.distributed.halo import Halo, owners, packed_rows, unpacked_rows


@dataclass
class LocalGraph:
    """A rank's rows with local neighbour ids (``Halo.build``'s), on the rank's backend:
    ``xadj`` int64, ``adjncy`` int32 (own vertices first, then the halo's ghosts), ``adjwgt``
    and ``vwgt`` (int32, one constraint; ``adjwgt`` None where every weight is 1 and not in
    memory: the kernels read ones, and ``reload`` makes them) and the halo."""

    xadj: object
    adjncy: object
    adjwgt: object
    vwgt: object
    halo: Halo
    unit_adjwgt: bool = False  # every edge weight is 1: the array can be dropped and rebuilt

    @classmethod
    def of(cls, comm: Comm, piece: DistGraph, be: Backend | None = None) -> LocalGraph:
        """The local view of ``piece`` on ``be`` (its arrays' own backend where None;
        collective: the halo is built)."""
        be = be or backend_of(piece.xadj)
        xp = be.xp
        xadj, adjncy = piece.xadj, piece.adjncy
        if be.gpu and piece.rows_on_gpu is not None:  # (the validation's copies: no upload)
            xadj, adjncy = piece.rows_on_gpu
        halo, adjncy = Halo.build(comm, piece.vtxdist, adjncy, be)
        adjwgt = None if piece.adjwgt is None else be.array(piece.adjwgt, np.int32)
        vwgt = (xp.ones(piece.nlocal, np.int32) if piece.vwgt is None
                else be.array(piece.vwgt[:, 0], np.int32))
        return cls(be.array(xadj, np.int64), adjncy, adjwgt, vwgt, halo,
                   unit_adjwgt=piece.adjwgt is None)

    def drop_unit_adjwgt(self) -> None:
        """Free the edge weights where they are all ones (``reload`` makes them again)."""
        if self.unit_adjwgt:
            self.adjwgt = None

    def reload(self) -> None:
        """The unit edge weights made (where ``of`` or ``drop_unit_adjwgt`` left none)."""
        if self.adjwgt is None:
            self.adjwgt = self.be.xp.ones(len(self.adjncy), dtype=np.int32)

    def with_ghost_rows(self) -> DeviceGraph:
        """One process's graph of the rank's rows plus an empty, weightless row per ghost:
        its vertices are the local ids (own vertices, then ghosts)."""
        xp, nghosts = self.be.xp, len(self.halo.ghosts)
        xadj = xp.concatenate((self.xadj, xp.full(nghosts, self.xadj[-1], dtype=np.int64)))
        vwgt = xp.concatenate((self.vwgt, xp.zeros(nghosts, dtype=np.int32)))
        return DeviceGraph(self.be, xadj, self.adjncy, self.adjwgt, vwgt)

    def piece(self) -> DistGraph:
        """This view as a piece: the rows with their neighbours' global ids (int64)."""
        xp, halo = self.be.xp, self.halo
        ids = xp.concatenate((xp.arange(halo.first, halo.first + halo.nlocal, dtype=np.int64),
                              halo.ghosts.astype(np.int64, copy=False)))
        return DistGraph(halo.vtxdist, self.xadj, ids[self.adjncy], self.vwgt.reshape(-1, 1),
                         self.adjwgt)

    @cached_property
    def be(self) -> Backend:
        return backend_of(self.xadj)


def ask_owners(comm: Comm, vtxdist: np.ndarray, ids, values, *, ascending: bool = False):
    """``values`` (indexed by own local id at each rank) of the global ``ids``, from their
    owners (collective; arrays of one backend; this rank's own ids are looked up here).
    ``ascending``: the ids are in increasing order already (no sort)."""
    be = backend_of(ids)
    xp = be.xp
    ids = ids.astype(np.int64, copy=False)
    first = int(vtxdist[comm.rank])
    if not ascending:
        to = ToOwners(comm, vtxdist, ids)
        (asked,) = to.send(ids)
        return to.reply(values[asked - first])
    bounds = be.asnumpy(xp.searchsorted(ids, xp.asarray(vtxdist[1:-1])))
    counts = np.diff(np.concatenate(([0], bounds, [len(ids)])))
    pieces = be.split(ids, counts)
    mine, pieces[comm.rank] = pieces[comm.rank], ids[:0]
    asked_counts = counts.copy()
    asked_counts[comm.rank] = 0
    asked = comm.alltoallv(pieces)
    answers = comm.alltoallv([values[a - first] for a in asked], asked_counts)
    answers[comm.rank] = values[mine - first]
    return xp.concatenate(answers)


def by_owner(dest, size: int):
    """The stable order of entries by their owner rank ``dest`` (of ``size`` ranks): a sort of
    one-byte keys where the ranks fit, a single radix pass."""
    return backend_of(dest).argsort_stable(dest.astype(np.uint8 if size <= 256 else np.int32))


def send_to_owners(comm: Comm, vtxdist: np.ndarray, keys, *columns):
    """The (key, columns...) rows sent to the owner of each key (a global id), in rank order
    of the senders and each sender's order; returns (keys, columns..., the row counts per
    sender, host) at this rank (collective)."""
    to = ToOwners(comm, vtxdist, keys)
    return (*to.send(keys, *columns), to.received)


class ToOwners:
    """Rows sent to the ranks owning their keys (global ids), which may reply one value per
    row. A rank's rows for itself stay where they are; the others go in one all-to-all, their
    bytes packed row by row."""

    def __init__(self, comm: Comm, vtxdist: np.ndarray, keys) -> None:
        self.comm, self.be = comm, backend_of(keys)
        dest = owners(vtxdist, keys)
        self.mine = dest == comm.rank
        away = self.be.xp.flatnonzero(~self.mine)
        self.all_mine = len(away) == 0  # (the masks are then the identity)
        self.order = away[by_owner(dest[away], comm.size)]  # the others' rows, by owner
        self.counts = self.be.asnumpy(self.be.counts(dest[away], comm.size))
        self.received = None  # rows per sender, host, once sent

    def send(self, *arrays) -> list:
        """``arrays`` (one row each per key) at the keys' owners: the rows from every sender,
        in rank order of the senders and each sender's order (collective)."""
        comm, xp = self.comm, self.be.xp
        rows = packed_rows(xp, arrays, self.order)
        width = rows.shape[1]
        got = comm.alltoallv(self.be.split(rows.reshape(-1), self.counts * width))
        del rows
        own = list(arrays) if self.all_mine else [a[self.mine] for a in arrays]
        self.received = np.array([len(x) // width for x in got], dtype=np.int64)
        self.received[comm.rank] = len(own[0])
        if not int(self.received.sum()) - len(own[0]):
            return own
        lower = int(self.received[:comm.rank].sum())
        others = unpacked_rows(xp, xp.concatenate(got).reshape(-1, width),
                                [a.dtype for a in arrays])
        return [xp.concatenate((o[:lower], m, o[lower:])) for o, m in zip(others, own,
                                                                          strict=True)]

    def reply(self, values):
        """At each sender, the owners' ``values`` (one per row ``send`` delivered here, in
        its order) for its own rows, in their order (collective)."""
        comm, xp, received = self.comm, self.be.xp, self.received
        lower = int(received[:comm.rank].sum())
        wire = values.view(np.uint8) if values.dtype == np.bool_ else values
        pieces = self.be.split(wire, received)
        pieces[comm.rank] = wire[:0]
        back = comm.alltoallv(pieces, self.counts)
        mine = values[lower:lower + int(received[comm.rank])]
        if self.all_mine:
            return mine
        out = xp.empty(len(self.mine), dtype=values.dtype)
        out[self.mine] = mine
        out[self.order] = xp.concatenate(back).view(values.dtype)
        return out


def lp_clustering(comm: Comm, lg: LocalGraph, maxvwgt: int, seed: int,
                  context: CoarseningContext):
    """(cmap, cvtxdist): each own vertex's cluster as a global coarse id (int64, in the order
    of the clusters' labels, as ``coarsening.clustering.lp_clustering`` numbers them), and the
    coarse vertices each rank owns (those whose label it owns, host); collective."""
    halo, be = lg.halo, lg.be
    xp = be.xp
    vtxdist, first, nlocal = halo.vtxdist, halo.first, halo.nlocal
    n = int(vtxdist[-1])
    seed &= 0xFFFFFFFF
    cluster = xp.arange(first, first + nlocal, dtype=np.int64)
    # the weight of the cluster labelled by each own vertex (approvals keep it within maxvwgt)
    cw = lg.vwgt.copy()
    schedule = level_schedule(be, seed, context)
    g = DeviceGraph(be, lg.xadj, lg.adjncy, lg.adjwgt, lg.vwgt)
    choice = (xp.empty(nlocal, dtype=np.int32), xp.empty(nlocal, dtype=np.int32))
    total = 0
    moved = 0
    for _ in range(context.lp_rounds):
        for _ in range(schedule.subrounds):
            moved += _sub_round(comm, lg, g, cluster, cw, maxvwgt, seed, schedule, choice)
            schedule.advance()
        now = int(comm.allreduce_sum(np.array([moved], np.int64))[0])
        if now - total < context.lp_min_round_moves * n:
            break
        total = now
    _group_islands(comm, lg, cluster, maxvwgt)
    return _number_clusters(comm, vtxdist, cluster)


def _sub_round(comm: Comm, lg: LocalGraph, g: DeviceGraph, cluster, cw, maxvwgt: int,
               seed: int, schedule, choice: tuple) -> int:
    """One sub-round at every rank; how many own vertices moved. ``g``: the rank's rows as
    ``best_cluster`` takes them; ``choice``: its (dest, rating) arrays."""
    be = lg.be
    xp = be.xp
    halo, vtxdist, first = lg.halo, lg.halo.vtxdist, lg.halo.first
    local, others, weights = _local_clusters(comm, halo, cluster, cw)
    dest, rating = choice
    n = halo.nlocal
    # the hashes read the labels' low 32 bits
    labels = xp.concatenate((xp.arange(n, dtype=np.uint32) + np.uint32(first & 0xFFFFFFFF),
                             others.astype(np.uint32)))
    best_cluster(be, g, local, weights, maxvwgt, seed, schedule, dest, rating, id_base=first,
                 labels=labels)
    del labels
    # the proposals to clusters other ranks own go to them; those to this rank's stay in place
    away = xp.flatnonzero(dest >= n)
    target = others[dest[away] - n]
    proposals = ToOwners(comm, vtxdist, target)
    got, got_rating, got_w = proposals.send(target, rating[away], lg.vwgt[away])
    accepted, mine = _approve_in_id_order(be, comm.rank, proposals.received, dest, rating,
                                          lg.vwgt, away, (got - first, got_rating, got_w), cw,
                                          maxvwgt)
    ok = proposals.reply(xp.concatenate((accepted[:mine.start], accepted[mine.stop:]))
                         .astype(bool))
    here = xp.flatnonzero(accepted[mine])
    movers = xp.concatenate((here, away[ok]))
    # the movers' weights leave their clusters, at the clusters' owners
    old, left, _ = send_to_owners(comm, vtxdist, cluster[movers], lg.vwgt[movers])
    xp.add.at(cw, old - first, -left)
    cluster[movers] = xp.concatenate((dest[here].astype(np.int64) + first, target[ok]))
    return len(movers)


def _approve_in_id_order(be: Backend, rank: int, received: np.ndarray, dest, rating, vwgt,
                         away, delivered: tuple, cw, maxvwgt: int):
    """(accepted, mine): one process's ``approve`` of the proposals to this rank's clusters,
    laid out in the proposers' global id order (the lower ranks' ``delivered``, then this
    rank's rows, those in ``away`` proposing elsewhere left out, then the higher ranks'), so
    that its ties by position are those by id; ``mine`` the slice of the own rows. The
    accepted proposals' weights are added to ``cw``."""
    xp = be.xp
    lower = int(received[:rank].sum())
    if len(away):
        dest = dest.copy()
        dest[away] = -1
    if len(delivered[0]):
        target = delivered[0].astype(np.int32)
        dest, rating, vwgt = (xp.concatenate((d[:lower], o, d[lower:])) for d, o in
                              zip((target, *delivered[1:]), (dest, rating, vwgt), strict=True))
    accepted = approve(be, dest, rating, vwgt, cw, maxvwgt)
    hit = xp.flatnonzero(accepted)
    xp.add.at(cw, dest[hit], vwgt[hit])
    return accepted, slice(lower, lower + len(cw))


def _local_clusters(comm: Comm, halo: Halo, cluster, cw):
    """(each own vertex's and ghost's cluster as a local id, int32; the labels of the local
    clusters past nlocal; each local cluster's weight, int32) for ``best_cluster``: the labels
    this rank owns are clusters 0..nlocal-1, the others it sees follow in label order, their
    weights asked of their owners (collective). Only the labels enter the choices, so any
    numbering gives one process's."""
    be = backend_of(cluster)
    xp = be.xp
    first, nlocal = halo.first, halo.nlocal
    labels = halo.extended(comm, cluster)
    local = labels - first
    foreign = xp.flatnonzero((local < 0) | (local >= nlocal))
    others, index = be.unique_inverse(labels[foreign])
    local = local.astype(np.int32)
    local[foreign] = nlocal + index
    weights = xp.concatenate((cw, ask_owners(comm, halo.vtxdist, others, cw, ascending=True)))
    return local, others, weights


def _group_islands(comm: Comm, lg: LocalGraph, cluster, maxvwgt: int) -> None:
    """``coarsening.clustering.group_islands`` over the ranks: the isolated vertices in
    clusters of consecutive ones (in id order, across ranks)."""
    halo, xp = lg.halo, lg.be.xp
    islands = xp.flatnonzero(xp.diff(lg.xadj) == 0)
    counts = comm.allgather(len(islands))
    if int(counts.sum()) < 2:
        return
    heaviest = comm.allreduce_max(int(lg.vwgt[islands].max()) if len(islands) else 0)
    per = max(1, maxvwgt // max(heaviest, 1))
    before = int(counts[:comm.rank].sum())
    leaders = (before + xp.arange(len(islands), dtype=np.int64)) // per * per
    # the island at each leader's position, asked of the rank holding that position
    bounds = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    ids = (islands + halo.first).astype(np.int64)
    cluster[islands] = ask_owners(comm, bounds, leaders, ids, ascending=True)


def _number_clusters(comm: Comm, vtxdist: np.ndarray, cluster):
    """(cmap, cvtxdist): the labels renumbered 0..nc-1 in label order over all ranks."""
    be = backend_of(cluster)
    xp = be.xp
    first = int(vtxdist[comm.rank])
    nlocal = int(vtxdist[comm.rank + 1]) - first
    labels = be.unique(cluster)
    got, _ = send_to_owners(comm, vtxdist, labels)
    used = xp.zeros(nlocal, dtype=bool)
    used[got - first] = True
    counts = comm.allgather(int(used.sum()))
    number = xp.cumsum(used) - 1 + int(counts[:comm.rank].sum())
    ids = ask_owners(comm, vtxdist, labels, number, ascending=True)
    return ids[xp.searchsorted(labels, cluster)], np.concatenate(([0], np.cumsum(counts)))
