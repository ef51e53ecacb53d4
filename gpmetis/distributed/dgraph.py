"""A graph held in pieces, in ParMETIS's shape: rank r owns the vertices [vtxdist[r],
vtxdist[r + 1]) with their rows (local ``xadj``, neighbours as global ids in ``adjncy``) and
weights."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpmetis.distributed.comm import Comm
from gpmetis.errors import GpmetisError, InputError, PartitionError
from gpmetis.graph import Graph

INT32_MAX = np.iinfo(np.int32).max  # one process's graph numbers its vertices in int32


@dataclass
class DistGraph:
    """This rank's piece: ``xadj`` (nlocal + 1, int64, from 0), ``adjncy`` (int64 global ids),
    ``vwgt`` (nlocal, ncon) int64 or None for ones, ``adjwgt`` int64 or None, ``vsize``."""

    vtxdist: np.ndarray
    xadj: np.ndarray
    adjncy: np.ndarray
    vwgt: np.ndarray | None = None
    adjwgt: np.ndarray | None = None
    vsize: np.ndarray | None = None
    name: str = "graph"
    # read from a METIS file: (its header's 0-based line, this rank's comment lines, 0-based)
    lines: tuple[int, np.ndarray] | None = None
    # (xadj, adjncy) as int64 on this rank's GPU: the validation's copies of clean rows, which
    # the local view takes instead of uploading the rows again
    rows_on_gpu: tuple | None = None

    @classmethod
    def of(cls, comm: Comm, vtxdist, xadj, adjncy, vwgt=None, adjwgt=None, vsize=None, *,
           name: str = "graph") -> DistGraph:
        """This rank's piece from ParMETIS-style arrays, its shapes checked (InputError naming
        the rank); the whole graph is validated where it is gathered. Collective."""
        error = None
        try:
            piece = cls._checked(comm, vtxdist, xadj, adjncy, vwgt, adjwgt, vsize, name)
        except GpmetisError as exc:
            error, piece = exc, None
        comm.agree(error)
        if not np.array_equal(comm.bcast(piece.vtxdist), piece.vtxdist):
            error = InputError(f"{name} (rank {comm.rank})", "vtxdist differs from rank 0's")
        comm.agree(error)
        kinds = (vwgt is not None) + 2 * (adjwgt is not None) + 4 * (vsize is not None)
        if len(set(comm.allgather(kinds).tolist())) > 1:
            raise InputError(name, "the ranks differ in which of vwgt, adjwgt and vsize they "
                                   "give; every rank must give the same ones")
        return piece

    @classmethod
    def _checked(cls, comm: Comm, vtxdist, xadj, adjncy, vwgt, adjwgt, vsize,
                 name: str) -> DistGraph:
        vtxdist = np.asarray(vtxdist, dtype=np.int64)
        where = f"{name} (rank {comm.rank})"
        if vtxdist.shape != (comm.size + 1,) or vtxdist[0] != 0 or (np.diff(vtxdist) < 0).any():
            raise InputError(where, f"vtxdist must be {comm.size + 1} increasing offsets from 0")
        nlocal = int(vtxdist[comm.rank + 1] - vtxdist[comm.rank])
        xadj = _integers(xadj, "xadj", where)
        if xadj.shape != (nlocal + 1,) or xadj[0] != 0:
            raise InputError(where, f"xadj must hold {nlocal + 1} offsets from 0 (the rank's "
                                    f"{nlocal} vertices)")
        adjncy = _integers(adjncy, "adjncy", where)
        if adjncy.shape != (xadj[-1],):
            raise InputError(where, f"adjncy has {adjncy.size} entries; xadj says {xadj[-1]}")
        if vwgt is not None:
            vwgt = _integers(vwgt, "vwgt", where)
            if vwgt.ndim == 1 and nlocal and vwgt.size and vwgt.size % nlocal == 0:
                vwgt = vwgt.reshape(nlocal, -1)  # flat: ncon per vertex
            elif vwgt.ndim == 1 and not vwgt.size and not nlocal:
                vwgt = vwgt.reshape(0, 0)  # no vertex: the ranks with vertices say ncon
            if vwgt.ndim != 2 or vwgt.shape[0] != nlocal or (nlocal and vwgt.shape[1] < 1):
                raise InputError(where, f"vwgt must have shape ({nlocal}, ncon) for the "
                                        f"rank's {nlocal} vertices, not {vwgt.shape}")
        arrays = {"adjwgt": (adjwgt, len(adjncy)), "vsize": (vsize, nlocal)}
        for what, (a, length) in arrays.items():
            if a is not None and np.shape(a) != (length,):
                raise InputError(where, f"{what} has shape {np.shape(a)}, not ({length},)")
        return cls(vtxdist, xadj, adjncy, vwgt,
                   None if adjwgt is None else _integers(adjwgt, "adjwgt", where),
                   None if vsize is None else _integers(vsize, "vsize", where), name)

    @property
    def nlocal(self) -> int:
        return len(self.xadj) - 1

    def check_gatherable(self) -> None:
        """PartitionError where the whole graph has more vertices than one process's
        ``Graph`` numbers (int32 ids): the steps that read it cannot run."""
        n = int(self.vtxdist[-1])
        if n > INT32_MAX:
            raise PartitionError(
                f"{self.name}: {n} vertices: this run reads the whole graph in one process, "
                f"which holds at most {INT32_MAX}; past that only the multilevel run on the "
                "pieces runs (one constraint, -ptype=kway, -objtype=cut, no -contig, one "
                "component or components too heavy to pack)")

    def gather(self, comm: Comm) -> Graph | None:
        """The whole graph on the root (None on the other ranks), from pieces that meet
        ``Graph``'s guarantees (``distributed.validation.validate``'s, or a run's levels);
        ``check_gatherable``'s PartitionError on every rank where it has too many vertices.
        Collective."""
        self.check_gatherable()
        degrees = comm.gatherv(np.diff(self.xadj))
        adjncy = comm.gatherv(self.adjncy)
        vwgt = None if self.vwgt is None else comm.gatherv(self.vwgt.ravel())
        adjwgt = None if self.adjwgt is None else comm.gatherv(self.adjwgt)
        vsize = None if self.vsize is None else comm.gatherv(self.vsize)
        ncon = 1 if self.vwgt is None else self.vwgt.shape[1]
        if not comm.root:
            return None
        n = len(degrees)
        xadj = np.zeros(n + 1, np.int64)
        np.cumsum(degrees, out=xadj[1:])
        return Graph(xadj, adjncy.astype(np.int32),
                     np.ones((n, 1), np.int64) if vwgt is None else vwgt.reshape(n, ncon),
                     np.ones(len(adjncy), np.int64) if adjwgt is None else adjwgt, vsize,
                     self.name, has_vwgt=vwgt is not None, has_adjwgt=adjwgt is not None)

    @classmethod
    def scatter(cls, comm: Comm, graph: Graph | None) -> DistGraph:
        """Pieces of the root's ``graph`` (None elsewhere): consecutive blocks of about equal
        vertices plus adjacency entries, so that each rank's share of the work is alike."""
        head = None if graph is None else (
            block_bounds(graph.xadj, comm.size), graph.ncon, graph.has_vwgt,
            graph.has_adjwgt, graph.vsize is not None, graph.name)
        vtxdist, ncon, has_vwgt, has_adjwgt, has_vsize, name = comm.bcast(head)
        entries = comm.bcast(None if graph is None else graph.xadj[vtxdist])
        counts, entry_counts = np.diff(vtxdist), np.diff(entries)

        def piece(field: str, sizes: np.ndarray, flag: bool = True):
            if not flag:
                return None
            a = None if graph is None else np.ravel(getattr(graph, field))
            return comm.scatterv(a, sizes, np.int64)

        degrees = comm.scatterv(None if graph is None else np.diff(graph.xadj), counts,
                                np.int64)
        vwgt = piece("vwgt", counts * ncon, has_vwgt)
        return cls(vtxdist, np.concatenate(([0], np.cumsum(degrees))).astype(np.int64),
                   piece("adjncy", entry_counts),
                   None if vwgt is None else vwgt.reshape(-1, ncon),
                   piece("adjwgt", entry_counts, has_adjwgt),
                   piece("vsize", counts, has_vsize), name)


def block_bounds(xadj: np.ndarray, size: int) -> np.ndarray:
    """vtxdist (size + 1, int64) cutting the vertices into ``size`` consecutive blocks of
    about equal vertices plus adjacency entries."""
    n = len(xadj) - 1
    work = np.arange(n + 1, dtype=np.int64) + xadj  # vertices plus entries before each vertex
    goals = (np.arange(size + 1, dtype=np.float64) * (work[-1] / max(size, 1)))
    bounds = np.searchsorted(work, goals, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n
    return np.maximum.accumulate(bounds)


def _integers(a, what: str, where: str) -> np.ndarray:
    """``a`` as int64, InputError where it holds other than integers (an empty array may be
    of any type)."""
    arr = np.asarray(a)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise InputError(where, f"{what} must hold integers, not {arr.dtype}")
    return arr.astype(np.int64, copy=False)
