"""The problem object and the gpu/cpu engines' runs: the limits are computed once from the
options, and the modes plug into every run through their hooks, in ``engine.MODES`` order."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_fixture

from gpmetis.backend import get_backend
from gpmetis.balance import max_part_weights
from gpmetis.errors import OptionError
from gpmetis.graph import Graph
from gpmetis.options import Options
from gpmetis.partitioning import engine
from gpmetis.partitioning.engine import EngineRun
from gpmetis.partitioning.modes import Mode
from gpmetis.partitioning.modes.contig import CONTIG_IGNORED, Contig
from gpmetis.partitioning.modes.direct import Direct
from gpmetis.partitioning.modes.minconn import Minconn
from gpmetis.partitioning.modes.packing import Packing
from gpmetis.partitioning.modes.strong import Strong
from gpmetis.partitioning.modes.volume import Volume
from gpmetis.partitioning.problem import DEFAULT_SEED, PartitionProblem

CPU = get_backend("cpu")


def two_triangles() -> Graph:
    return Graph.from_csr(np.array([0, 2, 4, 6, 8, 10, 12]),
                          np.array([1, 2, 0, 2, 0, 1, 4, 5, 3, 5, 3, 4]))


def test_problem_limits_from_ubvec_and_targets():
    graph = load_fixture("4elt")
    vwgt = np.stack([np.ones(graph.nvtxs, np.int64), 1 + np.arange(graph.nvtxs) % 3], axis=1)
    two = Graph.from_csr(graph.xadj, graph.adjncy, vwgt)
    options = Options(ubvec=(1.05, 1.2), tpwgts=(0.25, 0.5, 0.75, 0.5))
    problem = PartitionProblem.of(two, 2, options)
    assert problem.ubfactors == (1.05, 1.2) and problem.seed == DEFAULT_SEED
    assert np.allclose(problem.tpwgts, [[0.25, 0.5], [0.75, 0.5]])
    assert np.array_equal(problem.limits,
                          max_part_weights(vwgt.sum(axis=0), problem.tpwgts, [1.05, 1.2]))


def test_problem_of_unit_weights_totals_the_vertices_and_takes_the_seed():
    graph = load_fixture("4elt")
    problem = PartitionProblem.of(graph, 8, Options(ufactor=100, seed=7))
    assert problem.totals.tolist() == [graph.nvtxs] and problem.seed == 7
    assert problem.limits[:, 0].tolist() == [int(1.1 * graph.nvtxs / 8)] * 8


def test_problem_refuses_ubvec_of_another_length():
    with pytest.raises(OptionError, match="ubvec"):
        PartitionProblem.of(load_fixture("4elt"), 4, Options(ubvec=(1.05, 1.1)))


def modes_of(graph: Graph, nparts: int, **options) -> tuple[EngineRun, list[type]]:
    run = EngineRun(CPU, PartitionProblem.of(graph, nparts, Options(**options)))
    return run, [type(mode) for mode in run.modes]


def test_modes_that_apply_follow_the_options():
    graph = load_fixture("4elt")
    assert modes_of(graph, 4)[1] == [Direct, Packing]
    assert modes_of(graph, 64)[1] == [Packing]
    assert modes_of(graph, 4, ptype="rb")[1] == []
    assert modes_of(graph, 64, objtype="vol", contig=True)[1] == [Contig, Volume, Packing]
    run, modes = modes_of(graph, 64, preset="strong")
    assert modes == [Packing, Strong] and run.runs == 1 and run.notes["batched_runs"] == 4
    assert modes_of(graph, 64, preset="strong", minconn=True)[1] == [Minconn]


def test_modes_normalise_what_the_graph_or_ptype_rules_out():
    run, modes = modes_of(two_triangles(), 2, contig=True)
    assert Contig in modes and not run.options.contig
    assert run.notes["contig"] == CONTIG_IGNORED
    run, modes = modes_of(load_fixture("4elt"), 4, ptype="rb", minconn=True)
    assert modes == [Minconn] and not run.options.minconn


class Recorder(Mode):
    """A mode that records its hooks and changes nothing."""

    calls: list = []

    @classmethod
    def applies(cls, run) -> bool:
        return True

    def pipeline(self, seed):
        self.calls.append(("pipeline", seed))

    def candidate(self, seed, part, stats):
        self.calls.append(("candidate", seed))
        return part

    def finish(self, part, stats):
        self.calls.append(("finish",))
        return part

    def combine(self, best, part, seed, stats):
        self.calls.append(("combine", seed))

    def note(self, stats, notes):
        self.calls.append(("note",))


def test_every_run_calls_the_hooks_in_order(monkeypatch):
    monkeypatch.setattr(engine, "MODES", (Recorder,))
    Recorder.calls = []
    problem = PartitionProblem.of(load_fixture("4elt"), 64, Options(ncuts=2, seed=1))
    part, _ = EngineRun(CPU, problem).best()
    second = 1 + engine.CUT_SEED_STRIDE
    assert Recorder.calls == [
        ("pipeline", 1), ("candidate", 1), ("finish",), ("note",),
        ("pipeline", second), ("candidate", second), ("finish",), ("note",),
        ("combine", 1 + engine.COMBINE_SEED),
    ]
    assert part.shape == (problem.graph.nvtxs,)
