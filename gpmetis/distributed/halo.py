"""A rank's block of vertices and its halo: the ghost vertices (neighbours another rank owns)
whose values it reads, and what it sends to the ranks that read its own."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpmetis.distributed.comm import Comm


def owners(vtxdist: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The rank owning each global vertex id (int64), rank r holding [vtxdist[r],
    vtxdist[r + 1])."""
    return np.searchsorted(vtxdist, ids, side="right").astype(np.int64) - 1


@dataclass
class Halo:
    """Rank ``rank``'s view of a graph split by ``vtxdist``: local ids 0..nlocal-1 are its own
    vertices (global first + i), nlocal.. its ``ghosts`` (global ids, increasing, so grouped by
    owner in rank order); ``send[r]`` the local ids whose values rank r reads."""

    vtxdist: np.ndarray
    rank: int
    ghosts: np.ndarray
    ghost_counts: np.ndarray
    send: list[np.ndarray]

    @property
    def first(self) -> int:
        return int(self.vtxdist[self.rank])

    @property
    def nlocal(self) -> int:
        return int(self.vtxdist[self.rank + 1] - self.vtxdist[self.rank])

    @classmethod
    def build(cls, comm: Comm, vtxdist: np.ndarray, adjncy: np.ndarray
              ) -> tuple[Halo, np.ndarray]:
        """(the halo, the local adjacency as int32 local ids) of this rank's rows whose
        neighbours are the global ids ``adjncy`` (collective: every rank calls it)."""
        vtxdist = np.asarray(vtxdist, dtype=np.int64)
        first, last = int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1])
        adjncy = np.asarray(adjncy, dtype=np.int64)
        own = (adjncy >= first) & (adjncy < last)
        ghosts = np.unique(adjncy[~own])
        ghost_counts = np.bincount(owners(vtxdist, ghosts), minlength=comm.size)
        asked = comm.alltoallv(np.split(ghosts, np.cumsum(ghost_counts)[:-1]))
        send = [(ids - first).astype(np.int32) for ids in asked]
        local = np.where(own, adjncy - first,
                         (last - first) + np.searchsorted(ghosts, adjncy)).astype(np.int32)
        return cls(vtxdist, comm.rank, ghosts, ghost_counts.astype(np.int64), send), local

    def exchange(self, comm: Comm, values: np.ndarray) -> np.ndarray:
        """The ghosts' values (one per ghost, in ``ghosts`` order) from their owners'
        ``values`` (one per local vertex; collective)."""
        got = comm.alltoallv([values[ids] for ids in self.send])
        return np.concatenate(got) if got else values[:0]

    def extended(self, comm: Comm, values: np.ndarray) -> np.ndarray:
        """``values`` of the local vertices followed by the ghosts', indexed by local id."""
        return np.concatenate((values, self.exchange(comm, values)))
