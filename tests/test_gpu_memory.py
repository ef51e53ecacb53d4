"""The GPU memory a run reports: the most CuPy's pool held since the run began, which gives
back the free blocks of the process's earlier runs first; and the memory a run leaves."""

from __future__ import annotations

import gc

import pytest
from conftest import random_graph, requires_cuda

import gpmetis
from gpmetis import backend


@pytest.mark.gpu
@requires_cuda
def test_a_run_starts_without_the_earlier_runs_free_blocks(gpu_be):
    pool = gpu_be.xp.get_default_memory_pool()
    held = gpu_be.xp.empty(256 << 20, dtype=gpu_be.xp.uint8)
    del held  # (its block stays in the pool, free)
    assert pool.free_bytes() >= 256 << 20
    gpu_be.start_run(keep=512 << 20)  # (fewer free bytes than that stay)
    assert pool.free_bytes() >= 256 << 20
    gpu_be.start_run(keep=0)
    assert pool.free_bytes() == 0
    assert gpu_be.peak_memory() == pool.total_bytes()


@pytest.mark.gpu
@requires_cuda
def test_repeated_runs_report_the_same_peak(monkeypatch):
    monkeypatch.setattr(backend, "KEEP_FREE_BYTES", 0)  # (each run from an empty pool)
    graph = random_graph(200_000, 6, seed=5)
    peaks = [gpmetis.partition(graph, 64, engine="gpu").stats["peak_gpu_bytes"]
             for _ in range(3)]
    assert peaks[1] > 0
    assert peaks[2] == peaks[1]  # (the first run also loads what the process keeps)



@pytest.mark.parametrize("mode", [{}, {"ptype": "rb"}, {"objtype": "vol"}, {"minconn": True}])
def test_a_run_leaves_no_arrays_behind(mode):
    """No object of a finished run waits for the garbage collector: one in a reference cycle
    would keep its arrays, on the GPU too, until the collector next runs."""
    graph = random_graph(3_000, 6, seed=3)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # (what the collector finds stays in gc.garbage)
    try:
        gpmetis.partition(graph, 8, engine="cpu", **mode)
        gc.collect()
        cyclic = {type(o).__qualname__ for o in gc.garbage
                  if type(o).__module__.startswith("gpmetis")}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert not cyclic
