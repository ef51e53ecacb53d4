"""gpu = cpu for -ptype=rb, -contig and -minconn (issue 38): the same partition from both
engines."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_fixture, random_graph, requires_cuda
from test_modes import grid

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.contiguity import make_contiguous, rebalance_connected
from gpmetis.refinement.minconn import minimize_connectivity

pytestmark = [pytest.mark.gpu, requires_cuda]


@pytest.mark.parametrize("name,k,mode", [
    ("4elt", 8, {"ptype": "rb"}),
    ("add20", 13, {"ptype": "rb", "tpwgts": tuple(np.arange(1, 14) / 91)}),
    ("add20", 8, {"contig": True}),
    ("4elt", 64, {"contig": True}),
    ("airfoil1", 64, {"contig": True}),  # its rebalancing moves one chunk
    ("power", 16, {"contig": True, "ptype": "rb"}),
    ("add20", 64, {"minconn": True}),
    ("rgg_n_2_15_s0", 64, {"minconn": True}),
    ("data", 64, {"minconn": True, "contig": True}),
    ("hep-th", 8, {"minconn": True}),
])
def test_gpu_equals_cpu(name, k, mode):
    graph = load_fixture(name)
    cpu = partition(graph, k, engine="cpu", **mode)
    gpu = partition(graph, k, engine="gpu", **mode)
    assert np.array_equal(cpu.part, gpu.part)
    assert cpu.edgecut == gpu.edgecut


def test_contiguity_twin_on_a_random_partition():
    graph = random_graph(3000, 6, seed=11, weighted=True)
    part = (np.arange(3000) * 7919 % 5).astype(np.int32)  # scattered: many pieces per part
    total = int(graph.vwgt.sum())
    _assert_twins(make_contiguous, graph, part, 5, np.full(5, total // 5 + total // 50))


def test_chunk_rebalancing_twin():
    graph = grid(16)
    part = (np.arange(256) % 16 >= 9).astype(np.int32)
    out = []
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        moved = rebalance_connected(be, DeviceGraph.upload(be, graph), be.asarray(part), 2,
                                    np.array([130, 130]))
        out.append(be.asnumpy(moved))
    assert np.array_equal(out[0], out[1])
    assert (out[0] != part).sum() == 14


def test_minconn_twin_on_a_random_partition():
    graph = random_graph(3000, 6, seed=13, weighted=True)
    part = (np.arange(3000) * 7919 % 24).astype(np.int32)  # scattered: every part adjacent
    part[:1200] = np.arange(1200) // 50  # and some blocks, so that groups can move
    total = int(graph.vwgt.sum())
    _assert_twins(minimize_connectivity, graph, part, 24, np.full(24, total // 24 + total // 40))


def _assert_twins(step, graph, part, nparts: int, limits) -> None:
    """``step(be, g, part, nparts, limits) -> (part, rounds)`` gives the same on both engines."""
    out = {}
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        got, rounds = step(be, DeviceGraph.upload(be, graph), be.asarray(part), nparts, limits)
        out[name] = (be.asnumpy(got), rounds)
    assert np.array_equal(out["cpu"][0], out["gpu"][0])
    assert out["cpu"][1] == out["gpu"][1]
