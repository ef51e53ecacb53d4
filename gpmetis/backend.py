"""The two array backends: NumPy (the ``cpu`` engine, reference twin) and CuPy (the ``gpu`` engine).

Nothing here imports CuPy until a GPU backend is asked for, so CPU runs never load CUDA.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from gpmetis.cuda.fatbin import NVCC_FLAGS, kernel_source, prebuilt

WARP_SIZE = 32
WARPS_PER_BLOCK = 8  # as ROW_WARPS in warp_sums.cuh
STAGED_MIN_BYTES = 4 << 20  # arrays from this size move as ``staging`` copies them
NULL = np.uint64(0)  # a kernel's null pointer argument: its optional array is absent
HISTOGRAM_CU = Path(__file__).with_name("histogram.cu")
PREPROCESS_FILE = "gpmetis-nvrtc-preprocess.json"  # beside CuPy's kernel cache
SHARED_BINS = 6144  # bin_sums of up to this many bins sums in shared memory (48 KB a block)
FLOAT_EXACT = 2**53  # float64 holds every integer of at most this magnitude
INT32_EXACT_ITEMS = FLOAT_EXACT >> 31  # this many int32 weights always sum exactly in float64
KEEP_FREE_BYTES = 1 << 30  # the earlier runs' free blocks a run starts with, at most
ADD_AT_BINS = 1 << 18  # exact_bin_sums of int32 ids into up to this many bins sums by np.add.at
INT32_MAX = 2**31 - 1  # the shared-memory histogram kernel counts its items in int32


def exact_bin_sums(ids: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """int64 sums of the integer ``weights`` (None: 1 each) per id 0..n-1 of ``ids`` (every id
    in range), exact wherever every sum fits an int64: by np.add.at in int64, or by np.bincount
    (float64) where that is the faster (more bins than ADD_AT_BINS, or int64 ids) and exact."""
    if weights is None:
        return np.bincount(ids, minlength=n).astype(np.int64, copy=False)
    if n > ADD_AT_BINS or ids.dtype != np.int32:
        sums = _float_sums(ids, n, weights)
        if sums is not None:
            return sums
    sums = np.zeros(n, dtype=np.int64)
    np.add.at(sums, ids, weights.astype(np.int64, copy=False))
    return sums


def _float_sums(ids: np.ndarray, n: int, weights: np.ndarray) -> np.ndarray | None:
    """np.bincount's sums as int64 where no partial sum passed 2^53, so that each is exact;
    else None."""
    if len(ids) < INT32_EXACT_ITEMS and weights.dtype == np.int32:
        return np.bincount(ids, weights=weights, minlength=n).astype(np.int64)
    low = int(weights.min()) if len(weights) else 0
    if low >= 0:
        # a partial sum of nonnegative weights is at most its bin's, and a float64 sum that
        # reaches 2^53 stays there: sums below 2^53 are exact
        sums = np.bincount(ids, weights=weights, minlength=n)
        return sums.astype(np.int64) if not n or sums.max() < FLOAT_EXACT else None
    if max(int(weights.max()), -low) * len(ids) < FLOAT_EXACT:
        return np.bincount(ids, weights=weights, minlength=n).astype(np.int64)
    return None


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a NumPy array, by sorting (see ``Backend.unique``)."""
    a = np.sort(a, axis=None)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if len(a) else a


@functools.cache
def cuda_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
    except Exception:
        return False
    try:
        usable = bool(cupy.cuda.is_available())
    except Exception:
        return False
    if usable:
        keep_preprocessing_on_disk(cupy.cuda.compiler)
    return usable


class PreprocessCache(dict):
    """CuPy's per-process memo of NVRTC's preprocessing of an empty program (part of every
    kernel's cache key, one NVRTC run per option set and process), written to a file beside
    CuPy's kernel cache and read back by the next process, which then loads cached kernels
    without running NVRTC. Entries are keyed as CuPy keys them (architecture, options, NVRTC's
    version): a stale or foreign entry can only miss CuPy's cache, never load a wrong kernel.
    Best effort: an unreadable file is ignored and an unwritable one left as it is."""

    def __init__(self, path: Path) -> None:
        import json

        super().__init__()
        self.path = path
        try:
            entries = json.loads(path.read_text())
            super().update((_as_tuple(env), base) for env, base in entries
                           if isinstance(env, list) and isinstance(base, str))
        except (OSError, ValueError, TypeError):
            pass

    def __setitem__(self, env, base) -> None:
        import json
        import threading

        super().__setitem__(env, base)
        scratch = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            scratch.write_text(json.dumps([[env, base] for env, base in self.items()]))
            os.replace(scratch, self.path)
        except (OSError, TypeError, ValueError):
            scratch.unlink(missing_ok=True)


def _as_tuple(value):
    return tuple(_as_tuple(v) for v in value) if isinstance(value, list) else value


def keep_preprocessing_on_disk(compiler: ModuleType) -> None:
    """Give CuPy's ``compiler`` module a ``PreprocessCache`` as its memo (once per process;
    a CuPy without that memo is left as it is)."""
    memo = getattr(compiler, "_empty_file_preprocess_cache", None)
    if type(memo) is not dict:
        return
    backend = getattr(compiler, "_kernel_cache_backend", None)
    cache_dir = getattr(backend, "_cache_dir", None) or os.environ.get(
        "CUPY_CACHE_DIR", os.path.expanduser("~/.cupy/kernel_cache"))
    cache = PreprocessCache(Path(cache_dir) / PREPROCESS_FILE)
    dict.update(cache, memo)
    compiler._empty_file_preprocess_cache = cache


@dataclass(frozen=True)
class Backend:
    """An array module plus the few operations whose spelling differs between NumPy and CuPy."""

    name: str
    xp: ModuleType

    @property
    def gpu(self) -> bool:
        return self.name == "gpu"

    def asnumpy(self, a) -> np.ndarray:
        """``a`` as a NumPy array (large ones in pinned memory, ``staging``)."""
        if not self.gpu:
            return np.asarray(a)
        if a.nbytes >= STAGED_MIN_BYTES and a.flags.c_contiguous:
            from gpmetis.staging import download

            return download(a)
        return a.get()

    def asarray(self, a, dtype=None):
        return self.xp.asarray(a, dtype=dtype)

    def upload(self, host: np.ndarray, dtype):
        """``host`` as a ``dtype`` array on the backend (large arrays straight from pinned
        memory, else through pinned staging buffers, ``staging``)."""
        host = np.ascontiguousarray(host, dtype=dtype)
        if self.gpu and host.nbytes >= STAGED_MIN_BYTES:
            from gpmetis.staging import upload

            return upload(host)
        return self.xp.asarray(host)

    def array(self, a, dtype):
        """``a`` (a host array or one of this backend's) as a ``dtype`` array of this backend."""
        if type(a).__module__.startswith("cupy"):
            return a.astype(dtype, copy=False)
        return self.upload(a, dtype)

    def synchronize(self) -> None:
        if self.gpu:
            self.xp.cuda.get_current_stream().synchronize()

    def sources(self, xadj, nnz: int):
        """The source vertex (int32) of each of the ``nnz`` adjacency entries of a CSR ``xadj``."""
        n = len(xadj) - 1
        if not self.gpu:
            return np.repeat(np.arange(n, dtype=np.int32), np.diff(xadj))
        src = self.xp.empty(nnz, dtype=self.xp.int32)
        kernel = self.kernel(Path(__file__).with_name("metrics.cu"), "csr_sources")
        self.launch(kernel, nnz, (np.int32(n), np.int64(nnz), xadj, src))
        return src

    def row_entries(self, xadj, rows):
        """(each entry's index among ``rows`` (int32), its index in the adjacency (int64)) of
        the CSR rows ``rows``, row by row."""
        xp = self.xp
        starts = xadj[rows]
        offsets = xp.concatenate((xp.zeros(1, dtype=np.int64), xp.cumsum(xadj[rows + 1] - starts)))
        member = self.sources(offsets, int(offsets[-1]))
        return member, starts[member] + xp.arange(len(member), dtype=np.int64) - offsets[member]

    def unique(self, a):
        """Sorted distinct values of ``a``. NumPy 2's np.unique hashes, ~20x slower than a sort
        on millions of int64 keys."""
        if self.gpu:
            return self.xp.unique(a)
        return sorted_unique(a)

    def counts(self, ids, n: int):
        """How often each of 0..n-1 occurs in ``ids`` (int64; every id in range)."""
        return self.bin_sums(ids, n)

    def bin_sums(self, ids, n: int, weights=None):
        """int64 sums of ``weights`` (int32 or int64; None: 1 each) per id 0..n-1 of ``ids``
        (every id in range), exact wherever every sum fits an int64; on the GPU with no round
        trip to the host and no scratch (cupy.bincount reads the ids' least and greatest back
        first, and CuPy 14's took 270 MB of scratch for 1M ids into 206k bins)."""
        if not self.gpu:
            return exact_bin_sums(ids, n, weights)
        xp = self.xp
        out = xp.zeros(n, dtype=xp.int64)
        int32 = ids.dtype == xp.int32 and (weights is None or weights.dtype == xp.int32)
        if n <= SHARED_BINS and int32 and len(ids) <= INT32_MAX:
            # a partition's parts: per-block sums in shared memory (1M ids into 64 parts by
            # atomics on the parts themselves took 0.36 ms)
            weights = NULL if weights is None else xp.ascontiguousarray(weights)
            self.launch_resident(self.kernel(HISTOGRAM_CU, "bin_sums"), len(ids),
                                 (np.int32(len(ids)), np.int32(n), ids, weights, out),
                                 shared_mem=8 * n)
        else:
            xp.add.at(out, ids, 1 if weights is None else weights.astype(xp.int64))
        return out

    def argsort_stable(self, a):
        return self.xp.argsort(a) if self.gpu else np.argsort(a, kind="stable")

    def lexsort(self, keys: tuple):
        """np.lexsort of ``keys`` (the last the primary one; the keys may differ in dtype)."""
        if not self.gpu:
            return np.lexsort(keys)
        order = self.argsort_stable(keys[0])
        for key in keys[1:]:
            order = order[self.argsort_stable(key[order])]
        return order

    def unique_inverse(self, a):
        """(sorted distinct values of ``a``, each entry's index among them, int64)."""
        if len(a) == 0:
            return a[:0], self.xp.zeros(0, dtype=np.int64)
        values, inverse = self.xp.unique(a, return_inverse=True)
        return values, inverse.reshape(-1)

    def split(self, a, counts) -> list:
        """``a`` cut into consecutive pieces of the host ``counts``."""
        return self.xp.split(a, np.cumsum(counts)[:-1].tolist())

    def launch(self, kernel, n: int, args: tuple, block: int = 256) -> None:
        """Run ``kernel`` with one thread per item for ``n`` items (nothing when n == 0)."""
        if n > 0:
            kernel(((n + block - 1) // block,), (block,), args)

    def launch_blocks(self, kernel, nblocks: int, args: tuple, shared_mem: int = 0,
                      block: int = 256) -> None:
        """Run ``kernel`` with one thread block per item (nothing when nblocks == 0)."""
        if nblocks > 0:
            kernel((nblocks,), (block,), args, shared_mem=shared_mem)

    def launch_resident(self, kernel, n: int, args: tuple, shared_mem: int = 0,
                        block: int = 256) -> None:
        """Run a ``resident_grid.cuh`` kernel over ``n`` items: no more blocks than the GPU holds
        at once, each thread taking every grid-size'th item (nothing when n == 0)."""
        if n > 0:
            grid = min(-(-n // block), _resident_blocks(block))
            kernel((grid,), (block,), args, shared_mem=shared_mem)

    def launch_cooperative(self, kernel, nblocks: int, args: tuple, shared_mem: int = 0,
                           block: int = 256) -> None:
        """Run a kernel that synchronises its whole grid (``GridBarrier``, cuda/grid_sync.cuh)
        as a cooperative launch, which the driver starts only with every block resident:
        ``nblocks`` blocks, or as many as the GPU holds at once with this kernel's registers and
        ``shared_mem`` where that is fewer."""
        grid = min(nblocks, _cooperative_blocks(kernel, block, shared_mem))
        kernel.kernel((grid,), (block,), args, shared_mem=shared_mem,
                      enable_cooperative_groups=True)

    def launch_warps(self, kernel, n: int, args: tuple) -> None:
        """Run ``kernel`` with one warp per item for ``n`` items, in blocks of WARPS_PER_BLOCK
        warps (the kernels of ``warp_sums.cuh``; nothing when n == 0)."""
        self.launch(kernel, n * WARP_SIZE, args, block=WARPS_PER_BLOCK * WARP_SIZE)

    def kernel(self, cu_file: Path, name: str):
        """The compiled CUDA kernel ``name`` from ``cu_file`` (compiled and looked up once per
        process: launches are issued from Python, so each lookup saved counts)."""
        return _kernel(cu_file, name)

    def carve(self, sizes: tuple[int, ...], dtype, *, zeroed: int = 0) -> list:
        """Consecutive arrays of ``sizes`` elements of ``dtype``, views of one allocation (one
        CuPy call instead of one per array, ~5 us of host time each); the first ``zeroed`` of
        them start at zero (one memset)."""
        block = self.xp.empty(sum(sizes), dtype=dtype)
        ends = list(itertools.accumulate(sizes))
        if zeroed:
            block[:ends[zeroed - 1]].fill(0)
        return [block[end - size:end] for size, end in zip(sizes, ends)]

    def peak_memory(self) -> int:
        """The most bytes CuPy's memory pool has held since the run began (``start_run``),
        its cached free blocks included (they stay in the pool until ``release_free_memory``,
        which records the mark first)."""
        if not self.gpu:
            return 0
        return max(_HIGH_WATER[0], int(self.xp.get_default_memory_pool().total_bytes()))

    def start_run(self, keep: int | None = None) -> None:
        """Begin a run's account of GPU memory: the pool's free blocks go back to the device
        where they hold more than ``keep`` bytes (so a run does not allocate among the
        fragments of the process's earlier runs, nor report them as its peak), and
        ``peak_memory`` counts from what the pool holds then (``keep``: KEEP_FREE_BYTES)."""
        if not self.gpu:
            return
        gc.collect()  # (arrays that reference cycles still hold go back to the pool)
        pool = self.xp.get_default_memory_pool()
        if int(pool.free_bytes()) > (KEEP_FREE_BYTES if keep is None else keep):
            pool.free_all_blocks()
        _HIGH_WATER[0] = int(pool.total_bytes())

    def free_memory(self) -> int | None:
        """Bytes the device could still hand out: its free memory and the pool's free blocks
        (None on the cpu backend, which has no such limit)."""
        if not self.gpu:
            return None
        free, _ = self.xp.cuda.runtime.memGetInfo()
        return int(free) + int(self.xp.get_default_memory_pool().free_bytes())

    def release_free_memory(self, above: int = 0) -> None:
        """Give the pool's free blocks back to the device when the pool holds more than
        ``above`` bytes: arrays allocated next come from fresh blocks instead of fragments of
        freed ones."""
        if not self.gpu:
            return
        pool = self.xp.get_default_memory_pool()
        total = int(pool.total_bytes())
        _HIGH_WATER[0] = max(_HIGH_WATER[0], total)
        if total > above:
            pool.free_all_blocks()


_HIGH_WATER = [0]  # the GPU pool's high-water mark before its last release_free_memory


@functools.cache
def _resident_blocks(block: int) -> int:
    import cupy

    attributes = cupy.cuda.Device().attributes
    return attributes["MultiProcessorCount"] * (attributes["MaxThreadsPerMultiProcessor"] // block)


def loop_blocks(n: int, block: int, nwarps: int = 0, nblocks: int = 0) -> int:
    """The blocks a cooperative loop asks for: a thread per item of ``n``, a warp per item of
    ``nwarps`` and a block per item of ``nblocks`` (``launch_cooperative`` caps them)."""
    return max(-(-n // block), -(-nwarps * WARP_SIZE // block), nblocks, 1)


@functools.cache
def _cooperative_blocks(kernel, block: int, shared_mem: int) -> int:
    import cupy

    per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        kernel.kernel.ptr, block, shared_mem)
    return cupy.cuda.Device().attributes["MultiProcessorCount"] * per_sm


@functools.cache
def _kernel(cu_file: Path, name: str):
    return _raw_module(str(cu_file)).get_function(name)


@functools.cache
def _raw_module(path: str):
    import cupy

    source = kernel_source(Path(path))
    fatbin = prebuilt(Path(path), source)
    if fatbin is not None:
        module = cupy.RawModule(path=str(fatbin))
        try:
            module.compile()
            return module
        except cupy.cuda.driver.CUDADriverError:
            pass  # built for other GPUs: compile this one's code from the source
    # One option set for every module: CuPy preprocesses an empty program once per distinct
    # option set (PreprocessCache keeps the results across processes). Headers are pasted
    # in, so that CuPy's on-disk cache, keyed by the source text, sees a change to a header.
    return cupy.RawModule(code=source, options=NVCC_FLAGS)


def backend_of(a) -> Backend:
    """The backend whose arrays ``a`` is one of (CuPy's for a device array, else NumPy's): the
    twins that also run on a rank's GPU in a distributed run take their backend so."""
    return get_backend("gpu" if type(a).__module__.startswith("cupy") else "cpu")


@functools.cache
def get_backend(name: str) -> Backend:
    """``cpu`` -> NumPy, ``gpu`` -> CuPy (raises RuntimeError when CUDA is not usable)."""
    if name == "cpu":
        return Backend("cpu", np)
    if name == "gpu":
        if not cuda_available():
            raise RuntimeError("the gpu engine needs CuPy and a CUDA device; none is usable here")
        import cupy

        return Backend("gpu", cupy)
    raise ValueError(f"unknown backend {name!r}")
