"""METIS's modes combined with multi-constraint graphs on the cpu engine (the gpu engine's twin;
issue 38): -contig checked by scipy's components, -minconn by the subdomain degrees recomputed
from the cut edges, both by every constraint's limit, -ptype=rb by every bisection's limit in
every constraint."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import limits_balance, load_fixture, requires_cuda
from test_modes import check_bisections, grid, part_components
from test_multiconstraint import assert_balanced, part_weights, power_law_graph, with_weights

from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.balance import Balance, uniform_tpwgts
from gpmetis.coarsening.weights import upload
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.graph import Graph
from gpmetis.refinement.contiguity import make_contiguous
from gpmetis.refinement.ncon import rebalance_step
from gpmetis.refinement.ncon_refiner import refine

RC = DEFAULT.refinement  # the refinement's tuning constants, as every preset has them

CPU = get_backend("cpu")


@pytest.mark.parametrize("ncon,nparts", [(2, 8), (3, 64)])
def test_contig_of_a_multi_constraint_graph_on_the_cpu_engine(ncon, nparts):
    graph = with_weights(load_fixture("4elt"), ncon)
    plain = partition(graph, nparts, engine="cpu")
    result = partition(graph, nparts, engine="cpu", contig=True)
    assert result.engine == "cpu" and result.warnings == []
    assert "contig" not in result.stats and "contig_rounds" in result.stats  # honoured
    assert (part_components(graph, result.part, nparts) == 1).all()
    assert result.metrics.part_components == nparts
    assert_balanced(graph, result.part, nparts, [1.03] * ncon)
    assert result.edgecut <= 1.1 * plain.edgecut


@pytest.mark.parametrize("name,ncon,nparts", [("4elt", 2, 8), ("crack", 3, 8), ("uk", 2, 13)])
def test_rb_of_a_multi_constraint_graph_on_the_cpu_engine(name, ncon, nparts):
    graph = with_weights(load_fixture(name), ncon)
    result = partition(graph, nparts, engine="cpu", ptype="rb")
    assert result.engine == "cpu" and result.warnings == []
    pw = part_weights(graph, result.part, nparts)
    tpwgts = uniform_tpwgts(nparts, ncon)
    for c in range(ncon):  # every node of the bisection tree, each constraint
        check_bisections(pw[:, c], tpwgts[:, c], 1.001)
    assert np.bincount(result.part, minlength=nparts).min() > 0


def max_subdomain_degree(graph: Graph, part: np.ndarray, nparts: int) -> int:
    src = np.repeat(np.arange(graph.nvtxs), np.diff(graph.xadj))
    a, b = part[src].astype(np.int64), part[graph.adjncy]
    pairs = np.unique(a[a != b] * nparts + b[a != b])
    return int(np.bincount(pairs // nparts, minlength=nparts).max())


@pytest.mark.parametrize("name,ncon", [("4elt", 2), ("uk", 3)])
def test_minconn_of_a_multi_constraint_graph_on_the_cpu_engine(name, ncon):
    graph = with_weights(load_fixture(name), ncon)
    plain = partition(graph, 64, engine="cpu")
    result = partition(graph, 64, engine="cpu", minconn=True)
    assert result.engine == "cpu" and result.warnings == []
    assert result.stats["minconn_rounds"]["elimination"] >= 1
    assert_balanced(graph, result.part, 64, [1.03] * ncon)
    assert max_subdomain_degree(graph, result.part, 64) < max_subdomain_degree(graph,
                                                                               plain.part, 64)
    assert result.edgecut <= 1.05 * plain.edgecut


def test_contig_of_a_disconnected_multi_constraint_graph_is_ignored_as_in_metis():
    base = load_fixture("4elt")
    n = base.nvtxs
    # two copies of the graph side by side
    xadj = np.concatenate([base.xadj, base.xadj[1:] + base.xadj[-1]])
    adjncy = np.concatenate([base.adjncy, base.adjncy + n])
    graph = with_weights(Graph.from_csr(xadj, adjncy, None, None), 2)
    result = partition(graph, 4, engine="cpu", contig=True)
    assert result.part.tolist() == partition(graph, 4, engine="cpu").part.tolist()
    assert [w for w in result.warnings if "not connected" in w and "ignored" in w]


def test_make_contiguous_checks_every_constraint():
    # three vertical bands of a 12 x 12 grid; band 0 weighs 2 a vertex in constraint 1, over
    # its limit there only (a single-constraint view of constraint 0 sees nothing to do), and
    # a piece of part 2 sits inside part 1
    graph = grid(12)
    column = np.arange(144) % 12
    part = (column // 4).astype(np.int32)
    part[[5 * 12 + 5, 5 * 12 + 6]] = 2
    weights = np.stack([np.ones(144, np.int32), np.where(column < 4, 2, 1).astype(np.int32)])
    limits = np.array([[60, 60, 60], [70, 70, 70]])
    g = DeviceGraph.upload(CPU, graph)
    out, (merges, rebalances) = make_contiguous(CPU, g, part, limits_balance(limits), context=RC,
                                                weights=weights)
    assert merges >= 1 and rebalances >= 1
    assert (part_components(graph, out, 3) == 1).all()
    pw = np.stack([np.bincount(out, weights=w, minlength=3) for w in weights])
    assert (pw <= limits).all(), pw


def test_rebalancing_under_contig_moves_only_to_adjacent_parts():
    graph = with_weights(power_law_graph(4096, 8, seed=5), 2)
    wg = upload(CPU, graph, 16, DEFAULT.coarsening)
    g = wg.graph
    balance = Balance.of(wg.totals, uniform_tpwgts(16, 2), [1.03, 1.03], adjacent_only=True)
    part = (np.arange(graph.nvtxs) * 16 // graph.nvtxs).astype(np.int32)
    part[: graph.nvtxs // 5] = 0  # part 0 far over in both constraints
    pw = part_weights(graph, part, 16).T
    moved = rebalance_step(CPU, g, wg.weights, part, balance, pw)
    movers = np.flatnonzero(moved != part)
    assert len(movers)
    src = np.repeat(np.arange(graph.nvtxs), np.diff(graph.xadj))
    touches = set(zip(src.tolist(), part[graph.adjncy].tolist()))
    assert all((v, moved[v]) in touches for v in movers.tolist())
    # the same step free to use each constraint's roomiest part sends some vertex elsewhere
    free = rebalance_step(CPU, g, wg.weights, part,
                          Balance(balance.limits, balance.totals), pw)
    assert any((v, free[v]) not in touches for v in np.flatnonzero(free != part).tolist())


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("ncon,nparts", [(2, 8), (3, 64)])
@pytest.mark.parametrize("mode,rounds", [({"contig": True}, "contig_rounds"),
                                         ({"minconn": True}, "minconn_rounds"),
                                         ({"ptype": "rb"}, None)])
def test_gpu_engine_equals_cpu_engine_for_modes(mode, rounds, ncon, nparts):
    for graph in (with_weights(load_fixture("4elt"), ncon),
                  with_weights(power_law_graph(16384, 16, seed=4), ncon)):
        gpu = partition(graph, nparts, engine="gpu", seed=3, **mode)
        cpu = partition(graph, nparts, engine="cpu", seed=3, **mode)
        assert np.array_equal(gpu.part, cpu.part)
        if rounds is not None:
            assert rounds in cpu.stats and gpu.stats[rounds] == cpu.stats[rounds]


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("name", ["4elt", "power-law"])
def test_gpu_refinement_loop_moving_to_adjacent_parts_only_equals_cpu_loop(name):
    base = load_fixture("4elt") if name == "4elt" else power_law_graph(8192, 16, seed=3)
    graph = with_weights(base, 2)
    gpu = get_backend("gpu")
    wc, wg = (upload(be, graph, 16, DEFAULT.coarsening) for be in (CPU, gpu))
    balance = Balance.of(wc.totals, uniform_tpwgts(16, 2), [1.03] * 2, adjacent_only=True)
    rng = np.random.default_rng(7)
    start = np.arange(graph.nvtxs) * 16 // graph.nvtxs
    part = np.where(rng.random(graph.nvtxs) < 0.4, 0, start).astype(np.int32)
    part_c, its_c = refine(CPU, wc.graph, wc.weights, part, balance, context=RC, finest=True,
                           patience=6)
    part_g, its_g = refine(gpu, wg.graph, wg.weights, gpu.xp.asarray(part), balance,
                           context=RC, finest=True, patience=6)
    assert its_c == its_g
    assert np.array_equal(part_c, part_g.get())
