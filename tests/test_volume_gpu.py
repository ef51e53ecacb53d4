"""gpu = cpu for -objtype=vol: the same partition from both engines, and the same volume
refinement from the same start."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import limits_balance, load_fixture, random_graph, requires_cuda

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.refinement.volume import refine_volume

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

pytestmark = [pytest.mark.gpu, requires_cuda]


@pytest.mark.parametrize("name,k", [("add20", 8), ("4elt", 64), ("PGPgiantcompo", 2),
                                    ("polblogs", 64)])
def test_gpu_equals_cpu(name, k):
    graph = load_fixture(name)
    cpu = partition(graph, k, engine="cpu", objtype="vol")
    gpu = partition(graph, k, engine="gpu", objtype="vol")
    assert np.array_equal(cpu.part, gpu.part)
    assert cpu.volume == gpu.volume
    assert cpu.stats["volume_rounds"] == gpu.stats["volume_rounds"]


def test_volume_refinement_twin_with_vertex_sizes():
    graph = random_graph(5000, 8, seed=4, weighted=True, hubs=2)
    nparts = 16
    part = (np.arange(graph.nvtxs) * 7919 % nparts).astype(np.int32)
    vsize = (np.arange(graph.nvtxs) % 4 + 1).astype(np.int64)
    total = int(graph.vwgt.sum())
    limits = np.full(nparts, total // nparts + total // 40)
    out = {}
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        g = DeviceGraph.upload(be, graph)
        got, rounds = refine_volume(be, g, be.asarray(part), limits_balance(limits),
                                    be.asarray(vsize), context=RC)
        out[name] = (be.asnumpy(got), rounds)
    assert out["cpu"][1] > 0
    assert np.array_equal(out["cpu"][0], out["gpu"][0])
    assert out["cpu"][1] == out["gpu"][1]
