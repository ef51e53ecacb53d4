"""A rank's block of vertices and its halo: the ghost vertices (neighbours another rank owns)
whose values it reads, and what it sends to the ranks that read its own."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpmetis.backend import Backend, backend_of
from gpmetis.distributed.comm import Comm

CHUNK = 1 << 24  # adjacency entries ``Halo.build`` reads at a time (128 MiB as int64)


def owners(vtxdist: np.ndarray, ids):
    """The rank owning each global vertex id (int64, on ``ids``' backend), rank r holding
    [vtxdist[r], vtxdist[r + 1])."""
    xp = backend_of(ids).xp
    return xp.searchsorted(xp.asarray(vtxdist), ids, side="right").astype(np.int64) - 1


@dataclass
class Halo:
    """Rank ``rank``'s view of a graph split by ``vtxdist`` (host int64): local ids
    0..nlocal-1 are its own vertices (global first + i), nlocal.. its ``ghosts`` (global ids,
    increasing, so grouped by owner in rank order); ``send[r]`` the local ids whose values
    rank r reads. Its arrays live on the backend of the adjacency it was built from."""

    vtxdist: np.ndarray
    rank: int
    ghosts: object
    ghost_counts: np.ndarray
    send: list

    @property
    def first(self) -> int:
        return int(self.vtxdist[self.rank])

    @property
    def nlocal(self) -> int:
        return int(self.vtxdist[self.rank + 1] - self.vtxdist[self.rank])

    @classmethod
    def build(cls, comm: Comm, vtxdist: np.ndarray, adjncy, be: Backend | None = None,
              chunk: int = CHUNK) -> tuple[Halo, object]:
        """(the halo, the local adjacency as int32 local ids on ``be``) of this rank's rows
        whose neighbours are the global ids ``adjncy`` (a host array or one of ``be``'s; its
        own backend where None), read ``chunk`` entries at a time so that ``be`` holds no
        int64 copy of it (collective: every rank calls it)."""
        be = be or backend_of(adjncy)
        xp = be.xp
        vtxdist = np.asarray(vtxdist, dtype=np.int64)
        first, last = int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1])
        local = xp.empty(len(adjncy), dtype=np.int32)
        outside, ghost_ids = [xp.zeros(0, dtype=np.int64)], [xp.zeros(0, dtype=np.int64)]
        for start in range(0, len(adjncy), chunk):
            ids = be.array(adjncy[start:start + chunk], np.int64)
            out = xp.flatnonzero((ids < first) | (ids >= last))
            local[start:start + len(ids)] = ids - first
            outside.append(out + start)
            ghost_ids.append(ids[out])
        outside, ghost_ids = xp.concatenate(outside), xp.concatenate(ghost_ids)
        ghosts = be.unique(ghost_ids)
        local[outside] = (last - first) + xp.searchsorted(ghosts, ghost_ids)
        return cls.of_ghosts(comm, vtxdist, ghosts), local

    @classmethod
    def of_ghosts(cls, comm: Comm, vtxdist: np.ndarray, ghosts) -> Halo:
        """The halo of this rank's ``ghosts`` (distinct global ids other ranks own, in
        increasing order), their owners told which of their vertices it reads (collective)."""
        be = backend_of(ghosts)
        first = int(vtxdist[comm.rank])
        ghost_counts = be.asnumpy(be.counts(owners(vtxdist, ghosts), comm.size))
        asked = comm.alltoallv(be.split(ghosts, ghost_counts))
        send = [(ids - first).astype(np.int32) for ids in asked]
        return cls(vtxdist, comm.rank, ghosts, ghost_counts.astype(np.int64), send)

    @property
    def nlow(self) -> int:
        """How many ghosts lower ranks own (their ids lie below this rank's)."""
        return int(self.ghost_counts[:self.rank].sum())

    def exchange(self, comm: Comm, values):
        """The ghosts' values (one per ghost, in ``ghosts`` order) from their owners'
        ``values`` (one per local vertex; collective)."""
        got = comm.alltoallv([values[ids] for ids in self.send], self.ghost_counts)
        return backend_of(values).xp.concatenate(got) if got else values[:0]

    def extended(self, comm: Comm, values):
        """``values`` of the local vertices followed by the ghosts', indexed by local id."""
        return backend_of(values).xp.concatenate((values, self.exchange(comm, values)))

    def laid_out(self, comm: Comm, values):
        """``values`` of the local vertices with the ghosts', in global id order: the ghosts
        lower ranks own, the local vertices, the ghosts higher ranks own (``ordered_ids``'
        layout)."""
        ghosts, low = self.exchange(comm, values), self.nlow
        return backend_of(values).xp.concatenate((ghosts[:low], values, ghosts[low:]))

    def laid_out_columns(self, comm: Comm, *columns) -> list:
        """``laid_out`` of each of ``columns`` (one value per local vertex each, any dtypes),
        in one exchange: their bytes travel packed row by row."""
        be, low = backend_of(columns[0]), self.nlow
        xp = be.xp
        rows = packed_rows(xp, columns, xp.concatenate(self.send))  # the rows sent, by rank
        width = rows.shape[1]
        sent = np.array([len(ids) for ids in self.send], dtype=np.int64)
        got = comm.alltoallv(be.split(rows.reshape(-1), sent * width), self.ghost_counts * width)
        ghosts = unpacked_rows(xp, (xp.concatenate(got) if got else rows[:0]).reshape(-1, width),
                               [c.dtype for c in columns])
        return [xp.concatenate((g[:low], c, g[low:])) for g, c in zip(ghosts, columns,
                                                                      strict=True)]

    def ordered_ids(self, adjncy):
        """The local adjacency ``adjncy`` (``build``'s ids, int32) renumbered into
        ``laid_out``'s layout, where comparing two ids compares the global ones (int32;
        ``adjncy`` itself where the layouts agree)."""
        xp = backend_of(adjncy).xp
        n, low = self.nlocal, self.nlow
        if low == 0:  # no lower ranks' ghosts: the layouts agree
            return adjncy
        ordered = adjncy + np.int32(low)
        at = xp.flatnonzero(adjncy >= n)
        ghost = adjncy[at]
        ordered[at] = xp.where(ghost < n + low, ghost - np.int32(n), ghost)
        return ordered


def packed_rows(xp, arrays, order=None):
    """The 1-D ``arrays`` (one length; taken in ``order`` where given) as the rows of one
    uint8 matrix: column after column of their bytes."""
    n = len(arrays[0]) if order is None else len(order)
    sizes = [a.dtype.itemsize for a in arrays]
    rows = xp.empty((n, sum(sizes)), dtype=np.uint8)
    at = 0
    for a, size in zip(arrays, sizes, strict=True):
        column = xp.ascontiguousarray(a if order is None else a[order])
        rows[:, at:at + size] = column.view(np.uint8).reshape(n, size)
        at += size
    return rows


def unpacked_rows(xp, rows, dtypes: list) -> list:
    """The arrays ``packed_rows`` packed into ``rows``, of ``dtypes``."""
    out, at = [], 0
    for dtype in dtypes:
        size = np.dtype(dtype).itemsize
        out.append(xp.ascontiguousarray(rows[:, at:at + size]).view(dtype).reshape(-1))
        at += size
    return out
