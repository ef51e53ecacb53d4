"""GPU start-up overlapped with reading the input.

Importing CuPy, creating the CUDA context and loading the kernels (CuPy's and ours, from its
on-disk cache) cost about a second in a fresh process. When the gpu engine will run, the METIS
workers are forked first, while the process is still small; then

- a plain (uncompressed) file is mapped by a thread while CUDA starts and then parsed on the
  GPU (``io.metis_gpu`` for a METIS file, ``io.mtx_gpu`` for a Matrix Market one; the CPU
  reader takes over where their fast paths do not apply);
- a compressed file is read by a forked child (a thread would fight the warm-up for the GIL)
  while a thread warms the GPU up by running the engine's phases on a small grid. ``wait``
  joins that thread before the engine starts, so CUDA is only ever used by one thread at a
  time.

Once the forks are done, a thread creates the CUDA context through the driver (``ctypes``
releases the GIL) while CuPy is imported. What the command's CuPy would load without using
is left out: SciPy (for ``cupyx``), cuTENSOR (which CuPy's import preloads) and CUB's
reduction kernels.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import TYPE_CHECKING

from gpmetis.context import DEFAULT
from gpmetis.options import AUTO_GPU_MIN_SIZE

if TYPE_CHECKING:
    from gpmetis.backend import Backend
    from gpmetis.graph import Graph
    from gpmetis.io.forked import PendingGraph
    from gpmetis.metrics import PartitionMetrics
    from gpmetis.options import Options

_started = False
_thread: threading.Thread | None = None
WARM_GRID = 32
WARM_PARTS = 4


def start(path: str | os.PathLike, options: Options) -> PendingGraph | GpuRead | None:
    """When ``options`` will run the gpu engine on the graph in ``path`` (``auto``: when its
    header announces a graph large enough for the GPU), start reading it and warming the GPU up, and
    return the pending graph; None otherwise (then read it as usual: nothing was started and
    no module of the gpu path was imported)."""
    global _started, _thread
    if _started or options.engine not in ("gpu", "auto"):
        return None
    from gpmetis.io.source import COMPRESSED_SUFFIXES, rereadable

    if not rereadable(path):  # a stream is read once, by the plain reader
        return None
    if options.engine == "auto":
        from gpmetis.io.peek import peek_size

        if (peek_size(path) or 0) < AUTO_GPU_MIN_SIZE:
            return None
    from gpmetis.initial_partitioning.workers import start_workers
    from gpmetis.io.forked import PendingGraph

    _started = True
    workers = options.context.initial.trials  # one for each of the run's METIS trials
    name = os.fspath(path)
    keep_scipy_from_cupyx()
    if not name.lower().endswith(COMPRESSED_SUFFIXES):
        start_workers(workers)  # forks before any thread
        start_cuda_context()
        return GpuRead(name, options.symmetrize)
    pending = PendingGraph(name, options.symmetrize)  # forks before any thread
    start_workers(workers)
    start_cuda_context()
    _thread = threading.Thread(target=_warm, name="gpmetis-gpu-warmup", daemon=True)
    _thread.start()
    return pending


def start_cuda_context() -> threading.Thread:
    """Start a thread that creates device 0's primary CUDA context, the one CuPy's first call
    would create (~0.2 s), through the driver API: ``ctypes`` calls release the GIL, so it
    overlaps CuPy's import. Best effort: where it fails, CuPy creates the context itself.
    Call it after the process's forks: a child forked during driver calls could inherit held
    locks."""

    def create() -> None:
        try:
            driver = ctypes.CDLL("libcuda.so.1")
            device, context = ctypes.c_int(), ctypes.c_void_p()
            if driver.cuInit(0) == 0 and driver.cuDeviceGet(ctypes.byref(device), 0) == 0:
                driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
        except (OSError, AttributeError):  # no driver library, or not this API
            pass

    thread = threading.Thread(target=create, name="gpmetis-cuda-context", daemon=True)
    thread.start()
    return thread


class _NoScipyForCupyx:
    """A meta path finder that fails imports of SciPy made by ``cupyx`` modules, as if SciPy
    were not installed; every other importer gets SciPy as usual."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        if name != "scipy" and not name.startswith("scipy."):
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(
                ("importlib", "_frozen_importlib")):
            frame = frame.f_back
        importer = frame.f_globals.get("__name__", "") if frame is not None else ""
        if importer == "cupyx" or importer.startswith("cupyx."):
            raise ModuleNotFoundError(f"No module named {name!r} (for cupyx)", name=name)
        return None


def keep_scipy_from_cupyx() -> None:
    """Make this process's ``cupyx`` (which CuPy imports at its first kernel) run without
    SciPy: it imports ``scipy.sparse`` only for SciPy's warning classes and defines its own
    when SciPy is missing, and that import (~0.3 s, NumPy's submodules with it) is what a gpu
    run would spend on SciPy. Only the command calls it; nothing of SciPy is used here."""
    if not any(isinstance(f, _NoScipyForCupyx) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoScipyForCupyx())


def keep_cutensor_unloaded() -> None:
    """Make the command's CuPy run as one installed without cuTENSOR: CuPy's import loads that
    library (its preload, then its library gateway) with the cuBLAS libraries it needs, and
    gpmetis never calls it. ``cuda.pathfinder`` answers CuPy's preload with nothing and any
    other request for cuTENSOR as not found; every other library loads as before. Only the
    command calls it, before importing CuPy (once CuPy is imported, nothing changes);
    ``CUPY_ACCELERATORS`` naming cutensor keeps it."""
    if "cupy" in sys.modules or "cutensor" in os.environ.get("CUPY_ACCELERATORS", ""):
        return
    try:
        import cuda.pathfinder as pathfinder
    except ImportError:
        return
    load = pathfinder.load_nvidia_dynamic_lib
    if getattr(load, "keeps_cutensor_unloaded", False):
        return

    def load_all_but_cutensor(libname: str):
        if libname != "cutensor":
            return load(libname)
        if sys._getframe(1).f_globals.get("__name__") == "cupy._environment":
            return None  # the preload: CuPy's own search for the library would follow a miss
        raise pathfinder.DynamicLibNotFoundError("cuTENSOR is not used by gpmetis")

    load_all_but_cutensor.keeps_cutensor_unloaded = True
    pathfinder.load_nvidia_dynamic_lib = load_all_but_cutensor


def reduce_without_cub() -> None:
    """Make this process's CuPy reduce (sum, max, any) with its own kernels rather than CUB's
    block reductions, unless ``CUPY_ACCELERATORS`` chooses: each CUB reduction is a module
    with initialized device globals, which the driver takes milliseconds to load, more than
    a run's reductions gain from CUB. Only the command calls it (an API caller's CuPy is left
    as it is)."""
    if "CUPY_ACCELERATORS" in os.environ:
        return
    import cupy

    setter = getattr(cupy._core, "set_reduction_accelerators", None)
    if setter is not None:
        setter([])


class GpuRead:
    """A plain graph file being mapped by a thread; ``result()`` starts CUDA meanwhile, then
    parses it on the GPU. The graph (or InputError) is the one ``read_graph`` gives."""

    def __init__(self, path: str, symmetrize: bool) -> None:
        self.path, self.symmetrize = path, symmetrize
        self._data = None
        self._mapper = threading.Thread(target=self._map, name="gpmetis-map", daemon=True)
        self._mapper.start()

    def _map(self) -> None:
        from gpmetis.io.source import read_bytes

        try:
            self._data = read_bytes(self.path)
        except Exception:  # noqa: BLE001 - read_graph reports it below
            self._data = None

    def result(self) -> Graph:
        from gpmetis.backend import cuda_available, get_backend
        from gpmetis.io import read_graph
        from gpmetis.io.source import is_matrix_market

        graph = None
        keep_cutensor_unloaded()
        usable = cuda_available()
        if usable:
            reduce_without_cub()
        self._mapper.join()
        data, self._data = self._data, None
        if usable and data is not None:
            # read_graph's choice of format: the name, else the banner
            if self.path.lower().endswith(".mtx") or is_matrix_market(data):
                from gpmetis.io.mtx_gpu import read_matrix_market_gpu

                graph = read_matrix_market_gpu(get_backend("gpu"), data, self.path)
            else:
                from gpmetis.io.metis_gpu import read_metis_gpu

                graph = read_metis_gpu(get_backend("gpu"), data, self.path)
        del data
        return graph or read_graph(self.path, symmetrize=self.symmetrize)


def wait() -> None:
    """Return once a started warm-up has finished."""
    if _thread is not None:
        _thread.join()


def _warm() -> None:
    from gpmetis.backend import cuda_available, get_backend

    try:
        keep_cutensor_unloaded()
        if cuda_available():
            reduce_without_cub()
            run_phases_on_grid(get_backend("gpu"))
    except Exception:  # noqa: BLE001 - best effort: the real run reports any CUDA problem
        pass


def run_phases_on_grid(be: Backend) -> PartitionMetrics:
    """Coarsening, refinement (with rebalancing), the empty-part fill and the metrics of the
    engine on ``be``, run on a small grid; returns the metrics of the partition it ends with."""
    import numpy as np

    from gpmetis.balance import Balance
    from gpmetis.coarsening.coarsen import coarsen
    from gpmetis.device_graph import DeviceGraph
    from gpmetis.graph import Graph
    from gpmetis.metrics import compute_metrics
    from gpmetis.refinement.jet_refiner import refine
    from gpmetis.refinement.rebalance import fill_empty_parts

    side = WARM_GRID
    ids = np.arange(side * side).reshape(side, side)
    pairs = np.concatenate([np.stack([ids[:, :-1].ravel(), ids[:, 1:].ravel()], 1),
                            np.stack([ids[:-1].ravel(), ids[1:].ravel()], 1)])
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order = np.lexsort((dst, src))
    xadj = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=side * side))])
    grid = Graph.from_csr(xadj, dst[order])
    g = DeviceGraph.upload(be, grid)
    for ctype in ("lp", "shem"):  # clusters, and the pairs that take over from them
        # (the default's coarsening: every context launches the same kernels)
        coarsening = DEFAULT.coarsening
        coarsen(be, DeviceGraph.upload(be, grid), coarsening.target(WARM_PARTS), 1, ctype, True,
                context=coarsening)
    # a skewed start (two thirds of the grid in one part, the last part empty) runs label
    # propagation, rebalancing and the empty-part fill
    n = g.nvtxs
    part = be.xp.asarray(np.minimum(np.arange(n) * 2 * (WARM_PARTS - 1) // n, WARM_PARTS - 2)
                         .astype(np.int32))
    balance = Balance(np.full((1, WARM_PARTS), int(1.03 * n / WARM_PARTS), np.int64),
                      np.array([n], dtype=np.int64))
    part, _ = refine(be, g, part, balance, context=DEFAULT.refinement, finest=True, patience=2)
    part = fill_empty_parts(be, g, part, WARM_PARTS)
    metrics = compute_metrics(g.xadj, g.adjncy, g.vwgt[:, None], g.adjwgt, part, WARM_PARTS,
                              np.full((WARM_PARTS, 1), 1 / WARM_PARTS), None, be)
    be.synchronize()
    return metrics
