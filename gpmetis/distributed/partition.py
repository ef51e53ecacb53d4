"""The distributed entry point: a graph held in pieces by the ranks (ParMETIS's shape) is
partitioned and each rank gets its own vertices' parts back.

The ranks validate their pieces where they lie (``distributed.validation``); rank 0 runs the
engine on a ``PiecesGraph``: the graph's shape and totals, its arrays gathered only where a
mode reads them. The multilevel runs of one constraint, k-way and the cut (cpu or gpu engine)
coarsen and refine on the pieces (``distributed.multilevel``), and the runs of one constraint
count their states, components and metrics there (``distributed.metrics``); the modes that
read the whole graph run at rank 0. Every rank count gives one process's partition, bit for
bit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gpmetis.backend import cuda_available, get_backend
from gpmetis.distributed import metrics as dist_metrics
from gpmetis.distributed.clustering import LocalGraph
from gpmetis.distributed.comm import Comm
from gpmetis.distributed.dgraph import INT32_MAX, DistGraph
from gpmetis.distributed.multilevel import multilevel_partition
from gpmetis.distributed.validation import Shape, validate
from gpmetis.errors import GpmetisError
from gpmetis.graph import Graph
from gpmetis.metrics import PartitionMetrics
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


class PiecesGraph(Graph):
    """The graph the ranks hold in pieces, as rank 0's run reads it: its shape, kinds of
    weights, exact totals, heaviest vertex and degree, and warnings are the whole graph's;
    its arrays are gathered at their first read (``gather``, a collective that the ranks
    serve during the run), for the modes that read the whole graph."""

    def __init__(self, shape: Shape, name: str, gather: Callable[[], Graph]) -> None:
        self.shape, self.name, self._gather, self._whole = shape, name, gather, None
        self.has_vwgt, self.has_adjwgt = shape.has_vwgt, shape.has_adjwgt
        self.warnings, self.device = list(shape.warnings), None
        # Graph's cached properties, known without the arrays
        self.weight_totals = shape.weight_totals
        self.heaviest_vertex, self.heaviest_degree = shape.heaviest_vertex, shape.heaviest_degree
        self.max_vwgt = shape.max_vwgt

    def __eq__(self, other: object) -> bool:  # the same graph: comparing arrays would gather
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return (f"PiecesGraph({self.name!r}, nvtxs={self.nvtxs}, nedges={self.nedges}, "
                f"ncon={self.ncon})")

    @property
    def gathered(self) -> bool:
        """Whether a mode read the arrays (and rank 0 gathered them)."""
        return self._whole is not None

    def _arrays(self) -> Graph:
        if self._whole is None:
            self._whole = self._gather()
        return self._whole

    nvtxs = property(lambda self: self.shape.nvtxs)
    nedges = property(lambda self: self.shape.nnz // 2)
    ncon = property(lambda self: self.shape.ncon)
    xadj = property(lambda self: self._arrays().xadj)
    adjncy = property(lambda self: self._arrays().adjncy)
    vwgt = property(lambda self: self._arrays().vwgt)
    adjwgt = property(lambda self: self._arrays().adjwgt)
    vsize = property(lambda self: self._arrays().vsize if self.shape.has_vsize else None)


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
    whole graph and calls the ranks into what the pieces count (``partitioning.modes.pieces``
    and ``partitioning.schemes.PiecesScheme``): the multilevel runs, the states, the
    components and the metrics. Each rank keeps the local view of its piece on the engine's
    backend for them all."""

    def __init__(self, comm: Comm, piece: DistGraph) -> None:
        self.comm, self.piece = comm, piece
        self.running = True  # the ranks serve rank 0's calls until the run ends
        self._views: dict[str, LocalGraph] = {}
        # the last multilevel run's part: this rank's share, and a copy of the whole one at
        # rank 0 (both on the engine's backend), so that its state or metrics send nothing
        self._last: tuple = (None, None)
        self.handlers = {"whole": self._whole, "multilevel": self.serve, "state": self._state,
                         "metrics": self._metrics, "ncomponents": self._ncomponents,
                         "components": self._components,
                         "heaviest_component": self._heaviest_component}

    def local(self, engine: str) -> LocalGraph:
        """This rank's piece on the ``engine``'s backend (its GPU's with the gpu engine)."""
        if engine not in self._views:
            if engine == "gpu":
                self.comm.use_gpus()
            self._views = {engine: LocalGraph.of(self.comm, self.piece, get_backend(engine))}
            self._drop_rows_on_gpu()  # (the view holds what it reads of them)
        return self._views[engine]

    def _drop_rows_on_gpu(self) -> None:
        """The validation's copies of the rows on the GPU go: the local view took them, or
        the run reads the whole graph instead."""
        self.piece = replace(self.piece, rows_on_gpu=None)

    def close(self) -> None:
        """The run has ended: the local views go (the result's graph keeps this run), and
        rank 0 may gather no more."""
        self.running = False
        self._views, self._last = {}, (None, None)
        self._drop_rows_on_gpu()

    def whole(self) -> Graph:
        """The whole graph, gathered at rank 0 (which calls) during the run."""
        if not self.running:
            raise GpmetisError(f"{self.piece.name}: the run has ended; the ranks no longer "
                               "hold the graph for rank 0 to gather")
        self.piece.check_gatherable()  # (before the ranks are called in)
        self.comm.call("whole")
        return self._on_root(self._whole)

    def _whole(self) -> Graph | None:
        self._drop_rows_on_gpu()
        return self.piece.gather(self.comm)

    def multilevel(self, balance, options, tpwgts, seed: int, engine: str):
        """(the whole partition (int32, on the ``engine``'s backend) of a multilevel run on the
        pieces, each rank on the ``engine``, the run's ``RunStats``) on rank 0, which calls."""
        self.comm.call("multilevel", balance, options, tpwgts, seed, engine)
        return self._on_root(self.serve, balance, options, tpwgts, seed, engine)

    def serve(self, balance, options, tpwgts, seed: int, engine: str):
        """This rank's share of the run; (the whole partition, the run's stats) at rank 0."""
        local = self.local(engine)
        part, stats = multilevel_partition(self.comm, self.piece, balance, options, tpwgts,
                                           seed, engine, local=local)
        whole = self.comm.gather_at_root(part)
        # (a copy at rank 0: the driver may change the part it is handed)
        self._last = (part, None if whole is None else whole.copy())
        return whole, stats

    def state(self, part, nparts: int, engine: str) -> tuple[int, np.ndarray]:
        """(edgecut, part weights) of the whole ``part`` (rank 0's, which calls)."""
        return self._call("state", part, nparts, engine)

    def metrics(self, part, nparts: int, tpwgts: np.ndarray, engine: str) -> PartitionMetrics:
        """``compute_metrics`` of the whole ``part`` (rank 0's, which calls)."""
        return self._call("metrics", part, nparts, tpwgts, engine)

    def ncomponents(self, engine: str) -> int:
        """How many connected components the graph has (on rank 0, which calls)."""
        return self._call("ncomponents", None, engine)

    def heaviest_component(self, engine: str) -> int:
        """The weight of the graph's heaviest connected component (on rank 0, which calls)."""
        return self._call("heaviest_component", None, engine)

    def components(self, engine: str) -> np.ndarray:
        """Each vertex's component label (its smallest vertex: int32, int64 past 2^31 - 1
        vertices; host; on rank 0, which calls)."""
        return self._call("components", None, engine)

    def _call(self, name: str, part, *args):
        """Rank 0 calls the ranks into ``name`` with its ``part`` scattered, then runs it."""
        self.comm.call(name, None, *args)
        return self._on_root(self.handlers[name], part, *args)

    def _on_root(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # the other ranks may wait in the call's collectives
            self.comm.abort(f"gpmetis: error: {exc}", error=exc)

    def _share(self, part, be) -> object:
        """This rank's vertices' parts of rank 0's whole ``part`` (None elsewhere): the last
        multilevel run's share where ``part`` is that run's partition, else scattered."""
        mine, whole = self._last
        last = self.comm.bcast(None if part is None else (
            whole is not None and bool(be.xp.array_equal(be.asarray(part), whole))))
        if last:
            return mine
        whole = None if part is None else be.asnumpy(part)
        return be.upload(self.comm.scatterv(whole, np.diff(self.piece.vtxdist), np.int32),
                         np.int32)

    def _state(self, part, nparts: int, engine: str):
        lg = self.local(engine)
        return dist_metrics.state(self.comm, lg, self._share(part, lg.be), nparts)

    def _metrics(self, part, nparts: int, tpwgts: np.ndarray, engine: str):
        lg = self.local(engine)
        vsize = None if self.piece.vsize is None else lg.be.upload(self.piece.vsize, np.int64)
        return dist_metrics.metrics(self.comm, lg, self._share(part, lg.be), nparts, tpwgts,
                                    vsize)

    def _ncomponents(self, part, engine: str) -> int:
        return dist_metrics.count_components(self.comm, self.local(engine))

    def _heaviest_component(self, part, engine: str) -> int:
        return dist_metrics.heaviest_component(self.comm, self.local(engine))

    def _components(self, part, engine: str):
        labels = dist_metrics.components(self.comm, self.local(engine))
        wide = int(self.piece.vtxdist[-1]) > INT32_MAX  # (labels are vertex ids)
        return self.comm.gatherv(labels.astype(np.int64 if wide else np.int32))


def partition_pieces(comm: Comm, piece: DistGraph, nparts: int, options: Any = None,
                     **kwargs: Any) -> DistResult:
    """``partition_distributed`` of a ``DistGraph``; collective. The runs of one constraint,
    k-way and the cut (cpu or gpu engine) coarsen and refine on the pieces; the rest of the run
    is rank 0's, on the gathered graph."""
    from gpmetis.api import partition_inputs
    from gpmetis.partitioning.driver import partition

    try:
        gpus = _checks_on_gpus(comm, piece, options, kwargs)
        if gpus:  # (each rank on its GPU before CuPy touches one)
            comm.use_gpus()
            get_backend("gpu").start_run()
        piece, shape = validate(comm, piece, gpu=gpus)
    except GpmetisError:  # every rank raises it
        raise
    except Exception as exc:  # this rank's alone: the others may wait in a collective
        if comm.size == 1:
            raise
        comm.abort(f"gpmetis: error: rank {comm.rank}: {type(exc).__name__}: {exc}", error=exc)
    run = DistributedRun(comm, piece)
    vtxdist = piece.vtxdist
    graph = PiecesGraph(shape, piece.name, run.whole) if comm.root else None
    del piece  # (the run holds it, and drops its rows on the GPU once they are read)

    def engine() -> Result:
        _, _, opts = partition_inputs(graph, options)
        return partition(graph, nparts, opts, pieces=run, **kwargs)

    try:
        result = comm.root_driven(engine, run.handlers)
    finally:
        run.close()
    numbers = comm.bcast(None if result is None else (
        result.nparts, result.edgecut, result.volume, result.imbalance, result.engine,
        result.seconds, int(result.stats.get("peak_gpu_bytes", 0))))
    part = comm.scatterv(None if result is None else result.part, np.diff(vtxdist), np.int32)
    distributed = {"ranks": comm.size,
                   "vertices": [int(x) for x in np.diff(vtxdist)],
                   "peak_gpu_bytes": [int(x) for x in comm.allgather(
                       numbers[6] if comm.root else _peak_gpu_bytes(comm))]}
    if result is not None:
        result.stats["distributed"] = distributed
    return DistResult(part, *numbers[:6], distributed=distributed, result=result, graph=graph)


def _checks_on_gpus(comm: Comm, piece: DistGraph, options: Any, kwargs: dict) -> bool:
    """Whether the validation judges the entries on the ranks' GPUs: where every rank has one
    and the run names the gpu engine, or ``auto`` with a graph it gives to a GPU (smaller ones
    never load CUDA), as rank 0's options say (its driver chooses the engine). Options that do
    not parse leave it to the host (the run names them). Collective."""
    from gpmetis.options import AUTO_GPU_MIN_SIZE
    from gpmetis.pymetis_compat import run_options

    engine = None
    if comm.root:
        try:
            engine = kwargs.get("engine") or run_options(options)[0].engine
        except Exception:
            engine = None
    engine = comm.bcast(engine)
    if engine == "auto":
        nnz = int(comm.allreduce_sum(np.array([len(piece.adjncy)], np.int64))[0])
        engine = "gpu" if int(piece.vtxdist[-1]) + nnz // 2 >= AUTO_GPU_MIN_SIZE else None
    gpus = comm.allreduce_sum(np.array([int(engine == "gpu" and cuda_available())], np.int64))
    return int(gpus[0]) == comm.size


def _peak_gpu_bytes(comm: Comm) -> int:
    """This rank's GPU high-water mark (0 where it used no GPU)."""
    if not comm.gpus:
        return 0
    return get_backend("gpu").peak_memory()
