"""SPAC edge partitioning: the CUDA split-graph build against its NumPy twin, and the gpu engine's
edge partition against the cpu engine's (run on the device with ``make gpu-test``)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import limits_balance, load_fixture, random_graph, requires_cuda
from test_edgepart import shuffled_rows

from gpmetis.backend import get_backend
from gpmetis.edge_partitioning import partition_edges
from gpmetis.edge_partitioning.split_graph import build_split_graph

pytestmark = [pytest.mark.gpu, requires_cuda]


def _graph(name: str):
    if name == "random-hubs-w":
        return random_graph(6000, 6, seed=5, hubs=12, weighted=True)
    if name == "random-iso-shuffled":
        return shuffled_rows(random_graph(4000, 5, seed=8, isolated=300), seed=3)
    return load_fixture(name)


CASES = ["4elt", "power", "PGPgiantcompo", "random-hubs-w", "random-iso-shuffled"]


@pytest.mark.parametrize("name", CASES)
def test_split_graph_gpu_equals_cpu(name):
    graph = _graph(name)
    built = []
    for engine in ("cpu", "gpu"):
        be = get_backend(engine)
        loads = be.upload(graph.adjwgt, np.int32) if graph.has_adjwgt else None
        split = build_split_graph(be, be.upload(graph.xadj, np.int64),
                                  be.upload(graph.adjncy, np.int32), loads)
        g = split.graph
        built.append([be.asnumpy(a) for a in (g.xadj, g.adjncy, g.adjwgt, g.vwgt, split.src,
                                              split.partner)] + [split.dominant])
    for cpu, gpu in zip(*built):
        np.testing.assert_array_equal(cpu, gpu)


@pytest.mark.parametrize("name,nparts", [("4elt", 8), ("power", 64), ("PGPgiantcompo", 16),
                                         ("random-hubs-w", 12), ("random-iso-shuffled", 7)])
def test_edge_partition_gpu_equals_cpu(name, nparts):
    graph = _graph(name)
    cpu = partition_edges(graph, nparts, engine="cpu")
    gpu = partition_edges(graph, nparts, engine="gpu")
    np.testing.assert_array_equal(cpu.part, gpu.part)
    assert gpu.copies_beyond_one == cpu.copies_beyond_one
    np.testing.assert_array_equal(gpu.part_loads, cpu.part_loads)
    assert gpu.part_loads.max() <= gpu.limit


@pytest.mark.parametrize("nedges,heaviest", [(400, 20), (40, 60)])
def test_weighted_balance_equals_cpu(nedges, heaviest):
    from gpmetis.edge_partitioning.assign import balance_edges

    rng = np.random.default_rng(3)
    part = rng.integers(0, 2, nedges).astype(np.int32)  # parts 0 and 1 full, 2-7 empty
    other = rng.integers(0, 8, nedges).astype(np.int32)
    load = rng.integers(1, heaviest + 1, nedges).astype(np.int64)
    limit = int(1.03 * load.sum() / 8)
    got = []
    for engine in ("cpu", "gpu"):
        be = get_backend(engine)
        got.append(be.asnumpy(balance_edges(be, be.xp.asarray(part), be.xp.asarray(other),
                                            be.xp.asarray(load),
                                            limits_balance(np.full(8, limit)))))
    np.testing.assert_array_equal(got[0], got[1])
