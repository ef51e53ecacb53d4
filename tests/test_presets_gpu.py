"""The presets' steps on the gpu engine against the cpu engine: -preset=strong (its runs at once
over copies of the graph, rebalancing kept within each copy's group of parts, V-cycles that
coarsen within two partitions), coarsening within labels, whole-component placement, the
direct candidate of small inputs (METIS's k-way trials on the input, then Jet).

Run on the device with ``make gpu-test``; skipped (with the reason) where CUDA is not usable.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import grid_components, limits_balance, load_fixture, random_graph, requires_cuda

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.balance import Balance, max_part_weights, uniform_tpwgts
from gpmetis.coarsening.coarsen import coarsen
from gpmetis.coarsening.weights import WeightedGraph
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import connected_components, part_weights
from gpmetis.options import Options
from gpmetis.partitioning.components import packed_start
from gpmetis.partitioning.multilevel import (
    disjoint_copies,
    multilevel_copies,
    multilevel_partition,
)
from gpmetis.refinement.jet_refiner import refiner
from gpmetis.refinement.rebalance import rebalance_step

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

pytestmark = [pytest.mark.gpu, requires_cuda]


def _graph(name):
    if name == "random-iso":  # components and isolated vertices, grouped within their labels
        return random_graph(4000, 3, seed=9, isolated=400, components=12)
    if name == "components":
        return grid_components((2, 255), (3, 3), 54)
    return load_fixture(name)


@pytest.mark.parametrize("name", ["3elt", "data", "power", "polblogs", "random-iso", "components"])
@pytest.mark.parametrize("nparts", [2, 8, 64])
def test_strong_gpu_equals_cpu(name, nparts):
    graph = _graph(name)
    cpu = partition(graph, nparts, engine="cpu", seed=5, preset="strong")
    gpu = partition(graph, nparts, engine="gpu", seed=5, preset="strong")
    assert np.array_equal(cpu.part, gpu.part)
    assert gpu.edgecut == cpu.edgecut
    assert gpu.stats.get("batched_runs") == cpu.stats.get("batched_runs")


@pytest.mark.parametrize("name,nparts", [("4elt", 8), ("polblogs", 8), ("random-iso", 64),
                                         ("power", 256)])
def test_multilevel_copies_gpu_equals_cpu(name, nparts):
    # strong's batched runs: the union's coarsening, each copy's METIS trials, Jet with group
    # rebalancing, the copies' scores
    graph = _graph(name)
    results = []
    for engine in ("cpu", "gpu"):
        be = get_backend(engine)
        g = DeviceGraph.upload(be, graph)
        tpwgts = uniform_tpwgts(nparts, 1)
        balance = Balance.of([g.total_vwgt], tpwgts, [1.03])
        parts, _ = multilevel_copies(g, balance, Options(engine=engine), tpwgts, [3, 4, 5, 6])
        results.append([be.asnumpy(p) for p in parts])
    for cpu, gpu in zip(*results):
        assert np.array_equal(cpu, gpu)


@pytest.mark.parametrize("ncopies,nparts", [(3, 4), (4, 64)])
def test_group_rebalancing_and_jet_twins(ncopies, nparts):
    # rebalancing within each copy's group of nparts parts: the fallback is the roomiest other
    # part of the vertex's group, never the roomiest part of all (in the last copy here)
    graph = random_graph(3000, 6, seed=5, weighted=True)
    total = ncopies * nparts
    out = {}
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        union, labels = disjoint_copies(DeviceGraph.upload(be, graph), ncopies)
        labels = be.asnumpy(labels)
        rng = np.random.default_rng(5)
        part = (labels * nparts + rng.integers(0, nparts, union.nvtxs)).astype(np.int32)
        copy0 = np.flatnonzero(labels == 0)
        part[copy0] = np.where(rng.random(len(copy0)) < 0.7, 0, part[copy0])
        limits = np.full(total, int(1.03 * int(graph.vwgt.sum()) / nparts), np.int64)
        limits[-1] = ncopies * int(graph.vwgt.sum())
        pw = be.asnumpy(part_weights(be, union.vwgt[:, None], be.asarray(part), total)[:, 0])
        grouped = limits_balance(limits, group_size=nparts)
        moved = rebalance_step(be, union, be.asarray(part), grouped, pw)
        best, _ = refiner(be, union, grouped, context=RC, finest=True, patience=4)(be.asarray(part))
        out[name] = be.asnumpy(moved), be.asnumpy(best).copy()
        assert np.array_equal(out[name][0] // nparts, labels)
        assert np.array_equal(out[name][1] // nparts, labels)
    assert np.array_equal(out["cpu"][0], out["gpu"][0])
    assert np.array_equal(out["cpu"][1], out["gpu"][1])


@pytest.mark.parametrize("name,nparts", [("uk", 2), ("data", 8), ("random-iso", 8)])
def test_direct_candidate_gpu_equals_cpu(name, nparts):
    graph = _graph(name)
    parts = []
    for engine in ("cpu", "gpu"):
        be = get_backend(engine)
        g = DeviceGraph.upload(be, graph)
        tpwgts = uniform_tpwgts(nparts, 1)
        part, _ = multilevel_partition(WeightedGraph.single(g),
                                       Balance.of([g.total_vwgt], tpwgts, [1.03]),
                                       Options(engine=engine), tpwgts, 7, direct=True)
        parts.append(be.asnumpy(part))
    assert np.array_equal(parts[0], parts[1])
    cpu = partition(graph, nparts, engine="cpu")  # the default preset keeps the better one
    gpu = partition(graph, nparts, engine="gpu")
    assert np.array_equal(cpu.part, gpu.part)


@pytest.mark.parametrize("name", ["4elt", "random-iso"])
@pytest.mark.parametrize("ctype", ["lp", "shem"])
def test_coarsening_within_labels_gpu_equals_cpu(name, ctype):
    graph = _graph(name)
    labels = (np.arange(graph.nvtxs) * 5 // graph.nvtxs).astype(np.int32)
    results = []
    for engine in ("cpu", "gpu"):
        be = get_backend(engine)
        g = DeviceGraph.upload(be, graph)
        levels = coarsen(be, g, DEFAULT.coarsening.target(8), 3, ctype, True,
                         within=be.asarray(labels), context=DEFAULT.coarsening)
        results.append(([be.asnumpy(lvl.cmap) for lvl in levels[:-1]],
                        be.asnumpy(levels[-1].part)))
    (cpu_maps, cpu_part), (gpu_maps, gpu_part) = results
    assert len(cpu_maps) == len(gpu_maps)
    for a, b in zip(cpu_maps, gpu_maps):
        assert np.array_equal(a, b)
    assert np.array_equal(cpu_part, gpu_part)


@pytest.mark.parametrize("name", ["components", "random-iso", "polblogs"])
def test_packed_start_gpu_equals_cpu(name):
    graph = _graph(name)
    nparts = 2 if name == "components" else 4  # where the largest component fits a part
    starts = []
    for engine in ("cpu", "gpu"):
        be = get_backend(engine)
        g = DeviceGraph.upload(be, graph)
        tpwgts = uniform_tpwgts(nparts, 1)
        maxpwgt = max_part_weights(np.array([g.total_vwgt]), tpwgts, [1.03])[:, 0]
        start = packed_start(g, maxpwgt, tpwgts,
                             connected_components(be, g.xadj, g.adjncy), DEFAULT.packing)
        starts.append(None if start is None else be.asnumpy(start))
    if starts[0] is None:
        assert starts[1] is None
    else:
        assert np.array_equal(starts[0], starts[1])
