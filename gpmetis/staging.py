"""Copies of large arrays between host and GPU at the speed of pinned memory.

A plain copy from pageable memory moved 7-9 GB/s on the H100 machine (delaunay 20's xadj and
adjncy, 32 MB, 3.6-5.8 ms); STAGE_THREADS threads, each copying its chunks through its own
pinned buffer, 13-18 GB/s (1.8-2.5 ms). Pinning the caller's arrays in place costs as much as
the whole staged copy, but arrays already in pinned memory (CuPy's pinned pool: ``download``
puts its copies there, so a graph read on the GPU keeps its host arrays there) go straight
across, ~50 GB/s (0.64 ms). Chunks of 2 MB spread a 4 MB array over two threads; 1 MB or 16
threads were slower. Each buffer is allocated once per process, when first needed. A download
into a block of the pinned pool took 0.1 ms for a 4 MB partition, against 0.8-0.9 staged and
0.4-0.5 by a plain ``get``. Pinned arrays are made here from CuPy's pinned pool, as
``cupyx.empty_pinned`` makes them: importing ``cupyx`` imports ``cupyx.linalg`` and with it
``scipy.sparse`` (0.44 s on the H100 machine).
"""

from __future__ import annotations

import functools
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

STAGE_CHUNK = 2 << 20  # bytes per pinned buffer
STAGE_THREADS = 8
# Larger downloads go to pageable memory: pinning a new block of that size costs more than
# the pinned copy saves (a graph read on the GPU is downloaded once per process)
PINNED_DOWNLOAD_MAX = 64 << 20
MEMORY_TYPE_HOST = 1  # cudaMemoryTypeHost: a pointer into page-locked host memory


@functools.cache
def _threads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(STAGE_THREADS, thread_name_prefix="gpmetis-staging")


def empty_pinned(shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised C-ordered NumPy array in a block of CuPy's pinned pool (the block goes
    back to the pool when the array is freed)."""
    import cupy

    dtype = np.dtype(dtype)
    memory = cupy.cuda.alloc_pinned_memory(math.prod(shape) * dtype.itemsize)
    return np.ndarray(shape, dtype=dtype, buffer=memory)


@functools.cache
def _buffer(worker: int):
    """Thread ``worker``'s pinned buffer, made on first use (a small array needs few of them)."""
    return empty_pinned((STAGE_CHUNK,), np.uint8)


_lock = threading.Lock()  # one staged copy at a time owns the buffers


def upload(host: np.ndarray):
    """A CuPy copy of the C-contiguous ``host``, ordered on the caller's current stream like
    any copy (the staging buffers are free again when this returns)."""
    import cupy

    if _pinned(host):
        return cupy.asarray(host)
    out = cupy.empty(host.shape, dtype=host.dtype)
    src = host.reshape(-1).view(np.uint8)
    runtime = cupy.cuda.runtime

    def copy_chunk(stage, start: int, size: int, stream, dma_done) -> None:
        dma_done.synchronize()  # the buffer's previous chunk has left
        np.copyto(stage[:size], src[start:start + size])
        runtime.memcpyAsync(out.data.ptr + start, stage.ctypes.data, size,
                            runtime.memcpyHostToDevice, stream.ptr)
        dma_done.record(stream)

    _each_chunk(len(src), copy_chunk)
    return out


def download(device) -> np.ndarray:
    """A NumPy copy of the CuPy array ``device``, once the caller's current stream has reached
    it: in pinned memory (CuPy's pinned pool: the block goes back to the pool when the array is
    freed) up to PINNED_DOWNLOAD_MAX bytes, in pageable memory above."""
    if device.nbytes > PINNED_DOWNLOAD_MAX:
        return device.get()
    out = empty_pinned(device.shape, device.dtype)
    device.get(out=out)
    return out


def _pinned(host: np.ndarray) -> bool:
    """Whether ``host`` lies in page-locked memory that the GPU reads directly."""
    import cupy

    return cupy.cuda.runtime.pointerGetAttributes(host.ctypes.data).type == MEMORY_TYPE_HOST


def _each_chunk(nbytes: int, copy_chunk) -> None:
    """copy_chunk(buffer, start, size, stream, event) for every STAGE_CHUNK bytes of ``nbytes``:
    thread w takes chunks w, w + STAGE_THREADS, ... through its buffer, on the caller's stream,
    and waits until its last copy is done."""
    import cupy

    stream = cupy.cuda.get_current_stream()

    def chunks_of(worker: int) -> None:
        dma_done = cupy.cuda.Event(block=False, disable_timing=True)
        for start in range(worker * STAGE_CHUNK, nbytes, STAGE_THREADS * STAGE_CHUNK):
            copy_chunk(_buffer(worker), start, min(STAGE_CHUNK, nbytes - start), stream,
                       dma_done)
        dma_done.synchronize()

    with _lock:
        list(_threads().map(chunks_of, range(STAGE_THREADS)))  # re-raises a worker's error
