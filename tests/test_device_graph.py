"""DeviceGraph's degree tiers and work tables, on the cpu backend (the GPU kernels that use
them are compared with their twins in test_gpu_twins.py)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from conftest import load_fixture, random_graph, requires_cuda

from gpmetis.backend import Backend, get_backend
from gpmetis.device_graph import (
    HEAVY_DEGREE,
    NO_DEGREE_LIMIT,
    SCAN_DEGREE,
    TABLE_SLACK,
    WARP_DEGREE,
    DeviceGraph,
)

CPU = get_backend("cpu")


def _degrees(g: DeviceGraph) -> np.ndarray:
    return np.diff(g.xadj)


def test_the_warp_split_gives_a_meshs_long_rows_to_warps_and_its_short_ones_to_threads():
    g = DeviceGraph.upload(CPU, load_fixture("delaunay_n15"))
    deg = _degrees(g)
    assert WARP_DEGREE < deg.max() <= SCAN_DEGREE
    max_degree, mid, heavy = g.warp_split()
    assert max_degree == WARP_DEGREE and heavy is None
    assert np.array_equal(mid, np.flatnonzero(deg > WARP_DEGREE))
    grid = DeviceGraph.upload(CPU, random_graph(1000, 4, seed=1))
    assert _degrees(grid).max() <= WARP_DEGREE
    assert grid.warp_split() == (NO_DEGREE_LIMIT, None, None)


@pytest.mark.parametrize("enabled", [True, False])
def test_graphs_with_long_rows_split_them_between_threads_warps_and_blocks(enabled):
    g = DeviceGraph.upload(CPU, random_graph(4000, 40, seed=3, hubs=4))
    deg = _degrees(g)
    assert deg.max() > HEAVY_DEGREE and ((deg > WARP_DEGREE) & (deg <= HEAVY_DEGREE)).any()
    max_degree, mid, heavy = g.warp_split(enabled)
    if not enabled:
        assert (max_degree, mid, heavy) == (NO_DEGREE_LIMIT, None, None)
        return
    assert max_degree == WARP_DEGREE
    assert np.array_equal(mid, np.flatnonzero((deg > WARP_DEGREE) & (deg <= HEAVY_DEGREE)))
    assert np.array_equal(heavy, np.flatnonzero(deg > HEAVY_DEGREE))
    # the threads take no row longer than SCAN_DEGREE, so they need no hash table
    assert len(g.row_hash_tables(max_degree)[0]) == 1
    assert len(g.row_hash_tables()[0]) == g.nnz


def test_heavy_rows_get_tables_of_table_slack_slots_per_entry_which_are_released():
    g = DeviceGraph.upload(CPU, random_graph(3000, 6, seed=5, hubs=6))
    heavy = g.degree_tiers()[2]
    hoff, tkeys, tvals = g.heavy_row_tables()
    assert np.array_equal(np.diff(hoff), TABLE_SLACK * _degrees(g)[heavy])
    assert len(tkeys) == len(tvals) == hoff[-1]
    assert g.heavy_row_tables()[1] is tkeys  # kept for the level's lifetime
    assert g.release_row_hash_tables() == tkeys.nbytes + tvals.nbytes + hoff.nbytes
    assert g.heavy_row_tables()[1] is not tkeys
    mesh = DeviceGraph.upload(CPU, load_fixture("delaunay_n15"))
    assert mesh.heavy_row_tables() is None


def test_degree_range_is_the_shortest_and_longest_row():
    g = DeviceGraph.upload(CPU, random_graph(3000, 4, seed=9, isolated=200))
    assert g.degree_range == (0, _degrees(g).max()) and g.max_degree == _degrees(g).max()
    mesh = DeviceGraph.upload(CPU, load_fixture("delaunay_n15"))
    assert mesh.degree_range == (_degrees(mesh).min(), _degrees(mesh).max())
    assert mesh.degree_range[0] > 0


def test_a_cooperative_loop_asks_for_a_thread_per_vertex_a_warp_per_mid_row_a_block_per_hub():
    from gpmetis.backend import loop_blocks

    assert loop_blocks(1000, 256) == 4
    assert loop_blocks(1000, 256, nwarps=100) == 13  # 100 warps of 32 threads in 256-blocks
    assert loop_blocks(1000, 256, nwarps=100, nblocks=64) == 64
    assert loop_blocks(0, 256) == 1


def test_id_lists_go_to_kernels_with_their_lengths_and_missing_ones_as_an_empty_slot():
    g = DeviceGraph.upload(CPU, random_graph(4000, 40, seed=3, hubs=4))
    _, mid, heavy = g.degree_tiers()
    args = g.id_list_args(mid, None, heavy)
    assert len(args) == 6
    assert args[0] is mid and args[1] == len(mid) and args[1].dtype == np.int32
    assert len(args[2]) == 1 and args[3] == 0 and args[3].dtype == np.int32
    assert args[4] is heavy and args[5] == len(heavy)


def test_dropping_unit_edge_weights_frees_the_work_arrays_but_keeps_the_degree_lists():
    g = DeviceGraph.upload(CPU, random_graph(4000, 40, seed=3, hubs=4))
    assert g.unit_adjwgt
    _, mid, heavy = g.degree_tiers()
    tkeys = g.row_hash_tables()[0]
    g.drop_unit_adjwgt()
    assert g.adjwgt is None
    _, mid_after, heavy_after = g.degree_tiers()
    assert mid_after is mid and heavy_after is heavy
    assert g.row_hash_tables()[0] is not tkeys
    g.reload()
    assert np.array_equal(g.adjwgt, np.ones(g.nnz, np.int32))


@pytest.mark.parametrize("zeroed", [0, 2, 3])
def test_carved_arrays_are_consecutive_views_of_one_block_zeroed_as_asked(zeroed):
    # memory as a reused block may hand it out
    dirty = types.SimpleNamespace(empty=lambda size, dtype: np.full(size, 9, dtype=dtype))
    be = Backend("cpu", dirty)
    a, b, c = be.carve((3, 0, 5), np.int64, zeroed=zeroed)
    assert [len(a), len(b), len(c)] == [3, 0, 5] and a.dtype == c.dtype == np.int64
    assert (a == 0).all() == (zeroed >= 1) and (c == 0).all() == (zeroed == 3)
    assert a.base is c.base is not None and np.shares_memory(a.base, c)
    c[0] = 7
    assert a.base[3] == 7  # c starts where a ends


def _shuffled_rows(graph) -> DeviceGraph:
    """``graph`` on the cpu backend with each row's entries in a random order."""
    g = DeviceGraph.upload(CPU, graph)
    order = np.random.default_rng(3).random(g.nnz) + CPU.sources(g.xadj, g.nnz)
    order = np.argsort(order)
    return DeviceGraph(CPU, g.xadj, g.adjncy[order], g.adjwgt[order], g.vwgt)


def test_to_host_sorts_every_row_by_neighbour_and_keeps_each_edges_weight():
    graph = random_graph(500, 6, seed=5, weighted=True, hubs=1)
    xadj, adjncy, vwgt, adjwgt = _shuffled_rows(graph).to_host()
    expected = DeviceGraph.upload(CPU, graph)
    src = CPU.sources(xadj, len(adjncy))
    assert (np.diff(src * graph.nvtxs + adjncy) > 0).all()
    order = np.lexsort((expected.adjncy, CPU.sources(expected.xadj, expected.nnz)))
    for got, want in ((xadj, expected.xadj), (adjncy, expected.adjncy[order]),
                      (adjwgt, expected.adjwgt[order]), (vwgt, expected.vwgt)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("host_sort_entries", [0, 1 << 30])
def test_gpu_to_host_sorts_on_the_device_or_the_host_alike(monkeypatch, host_sort_entries):
    from gpmetis import device_graph

    monkeypatch.setattr(device_graph, "HOST_SORT_ENTRIES", host_sort_entries)
    gpu = get_backend("gpu")
    shuffled = _shuffled_rows(random_graph(2000, 6, seed=8, weighted=True, hubs=2))
    on_gpu = DeviceGraph(gpu, *(gpu.xp.asarray(a) for a in (
        shuffled.xadj, shuffled.adjncy, shuffled.adjwgt, shuffled.vwgt)))
    for got, want in zip(on_gpu.to_host(), shuffled.to_host()):
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, want)
