"""The distributed entry point: a graph held in pieces by the ranks (ParMETIS's shape) is
partitioned and each rank gets its own vertices' parts back.

The engine runs on the whole graph gathered at the root (the last step of ParMETIS and
dKaMinPar, where the coarse graph is small), so every rank count gives one process's
partition, bit for bit. docs/architecture.md ("Distributed runs") says what comes next."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.graph import Graph
from gpmetis.partitioning.driver import Result


@dataclass
class DistResult:
    """This rank's vertices' ``part`` (int32) and the whole partition's numbers, the same on
    every rank; ``result`` the root's full ``Result`` and ``graph`` the whole graph (None on
    the other ranks)."""

    part: np.ndarray
    nparts: int
    edgecut: int
    volume: int
    imbalance: float
    engine: str
    seconds: float
    distributed: dict = field(default_factory=dict)
    result: Result | None = None
    graph: Graph | None = None


def as_comm(comm: Any) -> Comm:
    """``comm`` as a ``Comm``: one already, an mpi4py communicator, or None for every rank
    ``mpiexec`` started."""
    if comm is None:
        return Comm.world()
    return comm if isinstance(comm, Comm) else Comm(comm)


def partition_distributed(vtxdist, xadj, adjncy, nparts: int, *, vwgt=None, adjwgt=None,
                          vsize=None, comm: Any = None, options: Any = None,
                          name: str = "graph", **kwargs: Any) -> DistResult:
    """Partition the graph whose piece this rank holds, as ParMETIS_V3_PartKway takes it:
    ``vtxdist`` (ranks + 1 offsets: rank r owns vertices vtxdist[r]..vtxdist[r+1]-1), this
    rank's ``xadj`` (from 0) and ``adjncy`` (global ids, 0-based), its ``vwgt`` ((nlocal,
    ncon) or flat), ``adjwgt`` and ``vsize``. ``options`` and ``kwargs`` as
    ``gpmetis.partition`` takes them. Collective: every rank of ``comm`` (an mpi4py
    communicator, a ``Comm``, or None for all of ``mpiexec``'s) calls it."""
    comm = as_comm(comm)
    piece = DistGraph.of(comm, vtxdist, xadj, adjncy, vwgt, adjwgt, vsize, name=name)
    return partition_pieces(comm, piece, nparts, options, **kwargs)


def partition_pieces(comm: Comm, piece: DistGraph, nparts: int, options: Any = None,
                     **kwargs: Any) -> DistResult:
    """``partition_distributed`` of a ``DistGraph``; collective."""
    from gpmetis.api import partition

    graph = piece.gather(comm)
    result = comm.on_root(lambda: partition(graph, nparts, options, **kwargs))
    numbers = comm.bcast(None if result is None else (
        result.nparts, result.edgecut, result.volume, result.imbalance, result.engine,
        result.seconds, int(result.stats.get("peak_gpu_bytes", 0))))
    part = comm.scatterv(None if result is None else result.part, np.diff(piece.vtxdist),
                         np.int32)
    distributed = {"ranks": comm.size,
                   "vertices": [int(x) for x in np.diff(piece.vtxdist)],
                   "peak_gpu_bytes": [int(x) for x in comm.allgather(
                       numbers[6] if comm.root else 0)]}
    if result is not None:
        result.stats["distributed"] = distributed
    return DistResult(part, *numbers[:6], distributed=distributed, result=result, graph=graph)
