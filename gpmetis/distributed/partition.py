"""The distributed entry point: a graph held in pieces by the ranks (ParMETIS's shape) is
partitioned and each rank gets its own vertices' parts back.

Rank 0 gathers the whole graph and runs the engine on it; the multilevel runs of one
constraint, k-way and the cut (cpu or gpu engine) coarsen and refine on the pieces
(``distributed.multilevel``), every other part of a run (its scores, the modes) is rank 0's.
Every rank count gives one process's partition, bit for bit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import DistGraph
from gpmetis.distributed.multilevel import multilevel_partition
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


class DistributedRun:
    """The ranks' part in a run of a graph they hold in pieces: rank 0 runs the engine on the
    whole graph and calls the ranks into the multilevel runs the pieces take
    (``partitioning.modes.pieces``)."""

    def __init__(self, comm: Comm, piece: DistGraph) -> None:
        self.comm, self.piece = comm, piece

    def multilevel(self, balance, options, tpwgts, seed: int, engine: str) -> np.ndarray:
        """The whole partition (host) of a multilevel run on the pieces, each rank on the
        ``engine`` (on rank 0, which calls)."""
        self.comm.call("multilevel", balance, options, tpwgts, seed, engine)
        try:
            return self.serve(balance, options, tpwgts, seed, engine)
        except Exception as exc:  # the other ranks may wait in the run's collectives
            self.comm.abort(f"gpmetis: error: {exc}", error=exc)

    def serve(self, balance, options, tpwgts, seed: int, engine: str) -> np.ndarray | None:
        """This rank's share of the run; the whole partition on rank 0."""
        part = multilevel_partition(self.comm, self.piece, balance, options, tpwgts, seed,
                                    engine)
        return self.comm.gatherv(part)


def partition_pieces(comm: Comm, piece: DistGraph, nparts: int, options: Any = None,
                     **kwargs: Any) -> DistResult:
    """``partition_distributed`` of a ``DistGraph``; collective. The runs of one constraint,
    k-way and the cut (cpu or gpu engine) coarsen and refine on the pieces; the rest of the run
    is rank 0's, on the gathered graph."""
    from gpmetis.api import partition_inputs
    from gpmetis.partitioning.driver import partition

    graph = piece.gather(comm)
    # the runs take the ranks' own pieces where validation kept the graph as given, else the
    # validated graph's (self loops and repeated neighbours dropped, missing entries added)
    kept = comm.bcast(None if graph is None else not graph.warnings)
    run = DistributedRun(comm, piece if kept else DistGraph.scatter(comm, graph))

    def engine() -> Result:
        _, _, opts = partition_inputs(graph, options)
        return partition(graph, nparts, opts, pieces=run, **kwargs)

    result = comm.root_driven(engine, {"multilevel": run.serve})
    numbers = comm.bcast(None if result is None else (
        result.nparts, result.edgecut, result.volume, result.imbalance, result.engine,
        result.seconds, int(result.stats.get("peak_gpu_bytes", 0))))
    part = comm.scatterv(None if result is None else result.part, np.diff(piece.vtxdist),
                         np.int32)
    distributed = {"ranks": comm.size,
                   "vertices": [int(x) for x in np.diff(piece.vtxdist)],
                   "peak_gpu_bytes": [int(x) for x in comm.allgather(
                       numbers[6] if comm.root else _peak_gpu_bytes(comm))]}
    if result is not None:
        result.stats["distributed"] = distributed
    return DistResult(part, *numbers[:6], distributed=distributed, result=result, graph=graph)


def _peak_gpu_bytes(comm: Comm) -> int:
    """This rank's GPU high-water mark (0 where it used no GPU)."""
    if not comm.gpus:
        return 0
    from gpmetis.backend import get_backend

    return get_backend("gpu").peak_memory()
