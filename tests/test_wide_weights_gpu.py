"""gpu = cpu on graphs whose weight totals pass 2^31: the same partition from both engines in
every mode, and the kernels' sums of many weights exact."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import limits_balance, requires_cuda
from test_wide_weights import WIDE_CASES, wide_graph

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.coarsening.contraction import outside_degrees
from gpmetis.device_graph import DeviceGraph
from gpmetis.edge_partitioning import partition_edges
from gpmetis.graph import Graph
from gpmetis.refinement.jet import partition_state

pytestmark = [pytest.mark.gpu, requires_cuda]


@pytest.mark.parametrize("name,nparts,ncon,mode", WIDE_CASES)
def test_gpu_equals_cpu_past_int32(name, nparts, ncon, mode):
    graph = wide_graph(name, ncon, vsize=mode.get("objtype") == "vol")
    cpu = partition(graph, nparts, engine="cpu", **mode)
    gpu = partition(graph, nparts, engine="gpu", **mode)
    assert np.array_equal(cpu.part, gpu.part)
    assert cpu.edgecut == gpu.edgecut and cpu.metrics.pwgts == gpu.metrics.pwgts


def test_gpu_equals_cpu_where_coarsening_stops_early():
    graph = wide_graph("4elt", edge_scale=140_000_000)
    cpu = partition(graph, 4, engine="cpu")
    gpu = partition(graph, 4, engine="gpu")
    assert np.array_equal(cpu.part, gpu.part)


def test_edge_partitioning_gpu_equals_cpu_on_heavy_loads():
    graph = wide_graph("4elt")
    cpu = partition_edges(graph, 8, engine="cpu")
    gpu = partition_edges(graph, 8, engine="gpu")
    assert np.array_equal(cpu.part, gpu.part)


def test_score_sums_part_weights_past_int32():
    # a path of 2^16 vertices of weight 2^30: each block's part weights pass 2^31
    n = 1 << 16
    xadj = np.r_[0, np.cumsum(np.r_[1, np.full(n - 2, 2), 1])].astype(np.int64)
    v = np.arange(n)
    adjncy = np.stack([v - 1, v + 1], axis=1).ravel()
    adjncy = adjncy[(adjncy >= 0) & (adjncy < n)].astype(np.int32)
    graph = Graph.from_csr(xadj, adjncy, np.full(n, 2**30, np.int64))
    part = (v * 2 // n).astype(np.int32)
    balance = limits_balance(np.full(2, 2**46))
    cpu_be, gpu_be = get_backend("cpu"), get_backend("gpu")
    cpu = partition_state(cpu_be, DeviceGraph.upload(cpu_be, graph), part, balance)
    gg = DeviceGraph.upload(gpu_be, graph)
    gpu = partition_state(gpu_be, gg, gpu_be.xp.asarray(part), balance)
    assert cpu[0] == gpu[0] == 1
    assert list(cpu[1]) == list(gpu[1]) == [2**45, 2**45]


def test_outside_degrees_twin():
    graph = wide_graph("add20", edge_scale=20_000_000)
    cmap = (np.arange(graph.nvtxs) // 3).astype(np.int32)
    cpu_be, gpu_be = get_backend("cpu"), get_backend("gpu")
    cpu = outside_degrees(cpu_be, DeviceGraph.upload(cpu_be, graph), cmap)
    gpu = outside_degrees(gpu_be, DeviceGraph.upload(gpu_be, graph), gpu_be.xp.asarray(cmap))
    assert np.array_equal(cpu, gpu.get())
    assert int(cpu.max()) > 2**31  # add20's hubs: past int32, summed in int64
    assert int(cpu.sum()) == int(graph.adjwgt[cmap[graph.sources()] != cmap[graph.adjncy]].sum())
