"""The graph of one multilevel level, resident on the engine's backend."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from gpmetis.backend import NULL, Backend, get_backend
from gpmetis.errors import PartitionError
from gpmetis.graph import Graph

CU_FILE = Path(__file__).with_name("device_graph.cu")
HEAVY_DEGREE = 256
WARP_DEGREE = 16  # rows longer than this, up to HEAVY_DEGREE, get a warp where a kernel has one
SCAN_DEGREE = 64  # as in row_sums.cuh: rows up to this long are rescanned, not hashed
# slots per entry of heavy_row_tables: at most half full, a hub's linear probes stay short (a
# table as long as the row fills up when its neighbours are all in distinct clusters)
TABLE_SLACK = 2
NO_DEGREE_LIMIT = np.int64(2**62)
HOST_SORT_ENTRIES = 1 << 16  # to_host sorts the rows of graphs up to this many entries on the host
DEGREE_LISTS = ("mid", "heavy")  # the _scratch names of the degree lists


@dataclass
class DeviceGraph:
    """CSR arrays on one backend: xadj int64, adjncy/adjwgt/vwgt int32 (ncon = 1). Rows need
    not be sorted. ``unit_adjwgt``: every edge weight is 1 (the array can be rebuilt)."""

    be: Backend
    xadj: object
    adjncy: object
    adjwgt: object
    vwgt: object
    unit_adjwgt: bool = False

    def __post_init__(self) -> None:
        self._scratch: dict = {}
        self._host: tuple | None = None

    @property
    def nbytes(self) -> int:
        arrays = self._host or (self.xadj, self.adjncy, self.adjwgt, self.vwgt)
        return sum(int(a.nbytes) for a in arrays if a is not None)

    @property
    def offloaded(self) -> bool:
        return self._host is not None

    def offload(self) -> None:
        """Move the CSR arrays to host memory, freeing their GPU copies, until ``reload``
        (nothing to do on the cpu backend)."""
        if not self.be.gpu or self._host is not None:
            return
        self._host = tuple(self.be.asnumpy(a) for a in (self.xadj, self.adjncy, self.adjwgt,
                                                         self.vwgt))
        self.xadj = self.adjncy = self.adjwgt = self.vwgt = None
        self._scratch.clear()

    def release_scratch(self) -> None:
        """Free the work arrays of ``scratch`` and the degree lists (made again on next use)."""
        self._scratch.clear()

    def drop_unit_adjwgt(self) -> None:
        """Free the edge weights until ``reload`` when they are all ones (rebuilt, not copied)."""
        if self.unit_adjwgt and self.adjwgt is not None:
            self.adjwgt = None
            # the work arrays go; the degree lists (small, and a sync each to make) stay
            self._scratch = {name: self._scratch[name] for name in DEGREE_LISTS
                             if name in self._scratch}

    @property
    def adjwgt_arg(self):
        """``adjwgt`` as a kernel argument: NULL where the weights are all ones and not in
        memory (the kernels that take it then read 1)."""
        return NULL if self.adjwgt is None else self.adjwgt

    def reload(self) -> None:
        """Bring offloaded or dropped arrays back."""
        if self.adjwgt is None and self._host is None:
            self.adjwgt = self.be.xp.ones(self.nnz, dtype=self.be.xp.int32)
        if self._host is None:
            return
        self.xadj, self.adjncy, self.adjwgt, self.vwgt = (
            self.be.upload(a, a.dtype) for a in self._host)
        self._host = None

    @cached_property
    def src(self):
        """The source vertex (int32) of every adjacency entry, for the vectorised NumPy twins
        (the CUDA kernels walk rows instead, so the gpu engine never builds it)."""
        return self.be.sources(self.xadj, len(self.adjncy))

    def scratch(self, name: str, size: int, dtype):
        """A work array kept for this level's lifetime (contents undefined between uses)."""
        buf = self._scratch.get(name)
        if buf is None or len(buf) < size or buf.dtype != dtype:
            buf = self.be.xp.empty(size, dtype=dtype)
            self._scratch[name] = buf
        return buf[:size]

    @cached_property
    def degree_range(self) -> tuple[int, int]:
        """(the shortest row's length, the longest's), with one round trip and no per-vertex
        temporary on the GPU."""
        if not self.nvtxs:
            return 0, 0
        if not self.be.gpu:
            degree = np.diff(self.xadj)
            return int(degree.min()), int(degree.max())
        out = self.be.xp.zeros(2, dtype=self.be.xp.uint64)
        self.be.launch(self.be.kernel(CU_FILE, "row_degree_range"), self.nvtxs,
                       (np.int32(self.nvtxs), self.xadj, out))
        return decode_degree_range(*(int(x) for x in out.get()))

    def know_degrees(self, degree_range: tuple[int, int], mid, heavy) -> None:
        """Take ``degree_range`` and the degree lists of ``degree_tiers`` (int32 ids, None where
        empty) as found by the kernel that made the rows, instead of finding them anew."""
        self.__dict__["degree_range"] = degree_range  # the cached_property's slot
        self._scratch["mid"], self._scratch["heavy"] = mid, heavy

    @property
    def max_degree(self) -> int:
        """The longest row's length."""
        return self.degree_range[1]

    def row_hash_tables(self, max_degree: int = NO_DEGREE_LIMIT):
        """(tkeys, tvals): int32 scratch of one slot per adjacency entry, where thread-per-vertex
        kernels that take rows of up to ``max_degree`` entries gather a long row's neighbouring
        parts (one slot only when none of those rows is longer than SCAN_DEGREE)."""
        table = self.nnz if min(self.max_degree, max_degree) > SCAN_DEGREE else 1
        xp = self.be.xp
        return self.scratch("tkeys", table, xp.int32), self.scratch("tvals", table, xp.int32)

    def heavy_row_tables(self):
        """(hoff, tkeys, tvals) for block-per-vertex kernels over ``degree_tiers``' heavy rows:
        the i-th gets the int32 slots [hoff[i], hoff[i + 1]) (int64 offsets), TABLE_SLACK per
        entry; None when there are no heavy rows."""
        heavy = self.degree_tiers()[2]
        if heavy is None:
            return None
        if "heavy_tables" not in self._scratch:
            xp = self.be.xp
            hoff = xp.zeros(len(heavy) + 1, dtype=xp.int64)
            xp.cumsum(TABLE_SLACK * (self.xadj[heavy + 1] - self.xadj[heavy]), out=hoff[1:])
            size = int(hoff[-1])
            if 2 * (size * 4 * 2) > self.nbytes:  # tkeys and tvals: half the graph's bytes
                # tables that rival the graph (hubs) come from fresh device memory: the pool's
                # freed blocks would not hold them and would stay on top of them
                self.be.release_free_memory()
            self._scratch["heavy_tables"] = (hoff, xp.empty(size, dtype=xp.int32),
                                             xp.empty(size, dtype=xp.int32))
        return self._scratch["heavy_tables"]

    def release_row_hash_tables(self) -> int:
        """Free ``row_hash_tables`` and ``heavy_row_tables`` (made again on next use); returns
        their bytes."""
        freed = 0
        for name in ("tkeys", "tvals", "heavy_tables"):
            arrays = self._scratch.pop(name, None)
            arrays = arrays if isinstance(arrays, tuple) else (arrays,)
            freed += sum(int(a.nbytes) for a in arrays if a is not None)
        return freed

    def degree_tiers(self):
        """(max_degree, mid, heavy): thread-per-vertex kernels take vertices of degree <=
        max_degree (at most WARP_DEGREE), warp-per-vertex kernels the int32 ids in ``mid``,
        block-per-vertex kernels those in ``heavy`` (degree > HEAVY_DEGREE); lists that would be
        empty are None."""
        mid = self._degree_list("mid", WARP_DEGREE, HEAVY_DEGREE)
        heavy = self._degree_list("heavy", HEAVY_DEGREE, None)
        if mid is None and heavy is None:
            return NO_DEGREE_LIMIT, None, None
        return np.int64(WARP_DEGREE), mid, heavy

    def warp_split(self, enabled: bool = True):
        """``degree_tiers`` for kernels that have a warp version (a thread rescans a row of
        up to SCAN_DEGREE entries in O(degree^2) loads, a warp sums it in shared memory); with
        ``enabled`` False, threads take every row: (NO_DEGREE_LIMIT, None, None)."""
        return self.degree_tiers() if enabled else (NO_DEGREE_LIMIT, None, None)

    def id_list_args(self, *lists) -> tuple:
        """Kernel arguments for id lists such as ``degree_tiers``' mid and heavy: each list and
        its length (int32), or a one-slot placeholder and 0 where the list is None."""
        xp = self.be.xp
        unused = self.scratch("dummy32", 1, xp.int32)
        return tuple(x for ids in lists
                     for x in ((unused, np.int32(0)) if ids is None else (ids, np.int32(len(ids)))))

    def _degree_list(self, name: str, low: int, high: int | None):
        """The int32 ids of the vertices of degree in (low, high] (high None: no bound), None when
        there are none; kept for the level's lifetime."""
        if name not in self._scratch:
            ids = None
            if self.max_degree > low:  # the flags only when some row qualifies
                ids = self.be.xp.flatnonzero(self._rows_in_degree_range(low, high)).astype(
                    self.be.xp.int32)
                ids = ids if len(ids) else None
            self._scratch[name] = ids
        return self._scratch[name]

    def _rows_in_degree_range(self, low: int, high: int | None):
        """Whether each row has more than ``low`` entries and at most ``high`` (None: no bound):
        bool on the cpu backend, uint8 from one kernel on the GPU."""
        if not self.be.gpu:
            deg = np.diff(self.xadj)
            return deg > low if high is None else (deg > low) & (deg <= high)
        keep = self.be.xp.empty(self.nvtxs, dtype=self.be.xp.uint8)
        self.be.launch(self.be.kernel(CU_FILE, "rows_in_degree_range"), self.nvtxs,
                       (np.int32(self.nvtxs), self.xadj, np.int64(low),
                        np.int64(high or 0), np.int32(high is not None), keep))
        return keep

    @property
    def nvtxs(self) -> int:
        return len(self.xadj) - 1

    @property
    def nnz(self) -> int:
        return len(self.adjncy)

    @property
    def total_vwgt(self) -> int:
        return int(self.vwgt.sum(dtype=self.be.xp.int64))

    @property
    def total_adjwgt(self) -> int:
        """The edge weights' total, each edge counted in both directions."""
        if self.adjwgt is None or self.unit_adjwgt:
            return self.nnz
        return int(self.adjwgt.sum(dtype=self.be.xp.int64))

    @classmethod
    def upload(cls, be: Backend, graph: Graph) -> DeviceGraph:
        """Copy ``graph`` to the backend, its weights as int32 (``gpmetis.limits`` checked that
        they fit). Weights the graph does not have (all ones) are made on the backend instead of
        copied."""
        if graph.ncon != 1:
            raise PartitionError("the gpu and cpu engines handle one constraint; use -engine=metis")
        n, nnz = graph.nvtxs, len(graph.adjncy)
        vwgt = graph.vwgt[:, 0]
        ones = be.xp.ones
        if be.gpu and graph.device is not None:  # read on this GPU: taken over, not copied
            xadj, adjncy, adjwgt = graph.device
            graph.device = None
            adjwgt = adjwgt.astype(np.int32) if adjwgt is not None else None
        else:
            xadj, adjncy = be.upload(graph.xadj, np.int64), be.upload(graph.adjncy, np.int32)
            adjwgt = be.upload(graph.adjwgt, np.int32) if graph.has_adjwgt else None
        return cls(
            be,
            xadj,
            adjncy,
            adjwgt if adjwgt is not None else ones(nnz, np.int32),
            be.upload(vwgt, np.int32) if graph.has_vwgt else ones(n, np.int32),
            unit_adjwgt=adjwgt is None,
        )

    def to_host(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(xadj, adjncy, vwgt, adjwgt) as NumPy arrays with every row sorted by neighbour id.
        A graph of at most HOST_SORT_ENTRIES entries (a coarsest graph) is sorted on the host:
        CuPy's sort loads slowly at its first use in a process."""
        arrays = (self.xadj, self.adjncy, self.vwgt, self.adjwgt)
        be = self.be
        if self.nnz <= HOST_SORT_ENTRIES:
            be = get_backend("cpu")
            arrays = tuple(self.be.asnumpy(a) for a in arrays)
        xadj, adjncy, vwgt, adjwgt = arrays
        src = be.sources(xadj, self.nnz).astype(be.xp.int64)
        order = be.argsort_stable(src * max(self.nvtxs, 1) + adjncy)
        return tuple(be.asnumpy(a) for a in (xadj, adjncy[order], vwgt, adjwgt[order]))


def decode_degree_range(longest: int, shortest_complement: int) -> tuple[int, int]:
    """(the shortest row's length, the longest's) from the two uint64 that block_degree_range
    (block_reduce.cuh) leaves: the longest, and the shortest's complement."""
    return (1 << 64) - 1 - shortest_complement, longest
