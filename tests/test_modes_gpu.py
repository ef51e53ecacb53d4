"""gpu = cpu for -ptype=rb, -contig and -minconn (issue 38): the same partition from both
engines."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import limits_balance, load_fixture, random_graph, requires_cuda
from test_modes import grid

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.coarsening.coarsen import within_parts
from gpmetis.coarsening.weights import WeightedGraph
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.metrics import part_weights
from gpmetis.options import Options
from gpmetis.partitioning.multilevel import fill_empty_halves, multilevel_bisections
from gpmetis.refinement import minconn
from gpmetis.refinement.contiguity import make_contiguous, rebalance_connected
from gpmetis.refinement.jet_refiner import refiner
from gpmetis.refinement.minconn import minimize_connectivity
from gpmetis.refinement.rebalance import rebalance_step

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

pytestmark = [pytest.mark.gpu, requires_cuda]


@pytest.mark.parametrize("name,k,mode", [
    ("4elt", 8, {"ptype": "rb"}),
    ("4elt", 64, {"ptype": "rb"}),
    ("rgg_n_2_15_s0", 256, {"ptype": "rb"}),
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
    _assert_twins(functools.partial(make_contiguous, context=RC), graph, part,
                  limits_balance(np.full(5, total // 5 + total // 50)))


def test_chunk_rebalancing_twin():
    graph = grid(16)
    part = (np.arange(256) % 16 >= 9).astype(np.int32)
    out = []
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        moved = rebalance_connected(be, DeviceGraph.upload(be, graph), be.asarray(part),
                                    limits_balance(np.array([130, 130])), context=RC)
        out.append(be.asnumpy(moved))
    assert np.array_equal(out[0], out[1])
    assert (out[0] != part).sum() == 14


def test_minconn_twin_on_a_random_partition():
    graph = random_graph(3000, 6, seed=13, weighted=True)
    part = (np.arange(3000) * 7919 % 24).astype(np.int32)  # scattered: every part adjacent
    part[:1200] = np.arange(1200) // 50  # and some blocks, so that groups can move
    total = int(graph.vwgt.sum())
    _assert_twins(functools.partial(minimize_connectivity, cut_rounds=RC.minconn_refine_rounds,
                                    context=RC), graph, part,
                  limits_balance(np.full(24, total // 24 + total // 40)))


def test_minconn_twin_with_sorted_tables(monkeypatch):
    # beyond DENSE_PARTS the subdomain graph and the groups' tables come from sorts
    monkeypatch.setattr(minconn, "DENSE_PARTS", 4)
    test_minconn_twin_on_a_random_partition()


def _assert_twins(step, graph, part, balance) -> None:
    """``step(be, g, part, balance) -> (part, rounds)`` gives the same on both engines."""
    out = {}
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        got, rounds = step(be, DeviceGraph.upload(be, graph), be.asarray(part), balance)
        out[name] = (be.asnumpy(got), rounds)
    assert np.array_equal(out["cpu"][0], out["gpu"][0])
    assert out["cpu"][1] == out["gpu"][1]


def _union(graph, npieces: int, be):
    """``graph`` without the edges between its ``npieces`` blocks of consecutive ids, on
    ``be``, and each vertex's block (host int32)."""
    labels = (np.arange(graph.nvtxs) * npieces // graph.nvtxs).astype(np.int32)
    return within_parts(be, DeviceGraph.upload(be, graph), be.asarray(labels)), labels


def test_paired_rebalancing_and_jet_twins():
    # rb's refinement of a depth's pieces: rebalancing's fallback is the partner part
    graph = random_graph(4000, 6, seed=3, weighted=True)
    out = {}
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        g, labels = _union(graph, 4, be)
        rng = np.random.default_rng(7)
        part = (2 * labels + (rng.random(g.nvtxs) < 0.5)).astype(np.int32)
        part[labels == 0] = np.where(rng.random(int((labels == 0).sum())) < 0.8, 0, 1)
        limits = np.full(8, int(1.03 * int(graph.vwgt.sum()) / 8), np.int64)
        limits[3] = int(graph.vwgt.sum())  # the roomiest part, in another pair
        pw = be.asnumpy(part_weights(be, g.vwgt[:, None], be.asarray(part), 8)[:, 0])
        paired = limits_balance(limits, group_size=2)
        moved = rebalance_step(be, g, be.asarray(part), paired, pw)
        best, _ = refiner(be, g, paired, context=RC, finest=True, patience=4)(be.asarray(part))
        out[name] = be.asnumpy(moved), be.asnumpy(best).copy()
        assert np.array_equal(out[name][1] >> 1, labels)
    assert np.array_equal(out["cpu"][0], out["gpu"][0])
    assert np.array_equal(out["cpu"][1], out["gpu"][1])


def test_multilevel_bisections_twin():
    graph = load_fixture("4elt")
    targets = np.array([[0.5, 0.5], [0.3, 0.7], [0.6, 0.4], [0.5, 0.5], [0.45, 0.55]])
    out = {}
    for name in ("cpu", "gpu"):
        be = get_backend(name)
        g, labels = _union(graph, 5, be)
        part, _ = multilevel_bisections(WeightedGraph.single(g), be.asarray(labels),
                                        targets[:, :, None], Options(ptype="rb", engine=name),
                                        seed=5)
        out[name] = be.asnumpy(part)
        assert np.array_equal(out[name] >> 1, labels)
        filled = fill_empty_halves(be, g, be.asarray(part), 10)
        assert np.array_equal(be.asnumpy(filled), out[name])
    assert np.array_equal(out["cpu"], out["gpu"])
