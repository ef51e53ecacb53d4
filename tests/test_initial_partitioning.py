"""The initial partition of the coarsest graph: METIS trials (recursive bisection or k-way)."""

import numpy as np
import pytest
from conftest import load_fixture, random_graph

from gpmetis.initial_partitioning import metis_trials
from gpmetis.initial_partitioning.metis_trials import (
    IPTYPE_GROW,
    IPTYPE_RANDOM,
    _trial,
    initial_partition,
    start_workers,
    stop_workers,
)

NPARTS = 16


@pytest.fixture(scope="module")
def graph():
    g = load_fixture("4elt")
    return g.xadj, g.adjncy, g.vwgt[:, 0].astype(np.int64), g.adjwgt


def _cut(graph, part) -> int:
    xadj, adjncy, _, adjwgt = graph
    src = np.repeat(np.arange(len(xadj) - 1), np.diff(xadj))
    return int(adjwgt[part[src] != part[adjncy]].sum()) // 2


def _maxpwgt(graph, ufactor: int = 30) -> np.ndarray:
    return np.full(NPARTS, graph[2].sum() / NPARTS * (1 + ufactor / 1000))


def _run(graph, **kw):
    kw = {"seed": 3, "ntrials": 4, "ufactor": 30, "niter": 10, "recursive": True} | kw
    return initial_partition(*graph, NPARTS, _maxpwgt(graph), None, **kw)


def _trials(graph, recursive: bool, ufactor: int = 30, iptype: int = IPTYPE_GROW):
    return [_trial((*graph, NPARTS, None, 3 + t, ufactor, 10, iptype, recursive))
            for t in range(4)]


def test_bisections_the_winner_is_the_lowest_cut_of_the_trials(graph):
    trials = _trials(graph, recursive=True)
    cuts = [_cut(graph, p) for p in trials]
    assert len(set(cuts)) > 1  # the seeds matter, so choosing among them can go wrong
    part = _run(graph)
    assert _cut(graph, part) == min(cuts)
    np.testing.assert_array_equal(part, trials[cuts.index(min(cuts))])
    assert set(np.unique(part)) == set(range(NPARTS))


def test_kway_the_winner_is_the_lowest_cut_within_the_balance_limit(graph):
    # METIS may go 4.5% over here, the winner must keep within 3%
    trials = _trials(graph, recursive=False, ufactor=45)
    maxpwgt = _maxpwgt(graph)
    fits = [bool((np.bincount(p, graph[2], NPARTS) <= maxpwgt).all()) for p in trials]
    cuts = [_cut(graph, p) for p in trials]
    assert not fits[cuts.index(min(cuts))] and any(fits)  # the lowest cut alone would be wrong
    best = min((c, t) for t, (c, ok) in enumerate(zip(cuts, fits)) if ok)[1]
    part = initial_partition(*graph, NPARTS, maxpwgt, None, seed=3, ntrials=4, ufactor=45,
                             niter=10, recursive=False)
    np.testing.assert_array_equal(part, trials[best])


def test_workers_or_not_the_same_partition(graph, monkeypatch):
    monkeypatch.setattr(metis_trials.os, "cpu_count", lambda: 4)
    stop_workers()
    serial = _run(graph)
    start_workers(4)
    try:
        assert metis_trials._pool is not None
        pooled = _run(graph)
    finally:
        stop_workers()
    np.testing.assert_array_equal(serial, pooled)


def test_random_bisections_are_metis_random_iptype(graph):
    part = _run(graph, ntrials=1, random_bisections=True)
    expected = _trials(graph, recursive=True, iptype=IPTYPE_RANDOM)[0]
    np.testing.assert_array_equal(part, expected)
    assert not np.array_equal(part, _run(graph, ntrials=1))


@pytest.mark.parametrize("nparts,n", [(1, 5), (8, 5), (4, 0)])
def test_trivial_cases(nparts, n):
    xadj = np.zeros(n + 1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    part = initial_partition(xadj, empty, np.ones(n, np.int64), empty, nparts,
                             np.ones(nparts), None, seed=1, ntrials=2, ufactor=30, niter=10,
                             recursive=True)
    assert part.shape == (n,) and part.dtype == np.int32
    assert (part < nparts).all() and len(np.unique(part)) == min(n, nparts)


def test_bisections_unless_coarsening_stalled(monkeypatch):
    from gpmetis import partition
    from gpmetis.graph import Graph
    from gpmetis.partitioning import multilevel

    calls = []

    def spy(*args, **kw):
        calls.append(kw["recursive"])
        return initial_partition(*args, **kw)

    monkeypatch.setattr(multilevel, "initial_partition", spy)
    partition(load_fixture("4elt"), 8, engine="cpu")
    # a star without two-hop matching: one pair per round, so coarsening stops far above its
    # target
    leaves = 6000
    xadj = np.concatenate([[0, leaves], leaves + np.arange(1, leaves + 1)])
    adjncy = np.concatenate([np.arange(1, leaves + 1), np.zeros(leaves, np.int64)])
    star = Graph(xadj=xadj.astype(np.int64), adjncy=adjncy.astype(np.int32),
                 vwgt=np.ones((leaves + 1, 1), np.int64), adjwgt=np.ones(2 * leaves, np.int64))
    partition(star, 2, engine="cpu", no2hop=True)
    # below the coarsening target (taken whole) but dense
    partition(random_graph(1500, 80, seed=4), 2, engine="cpu")
    assert calls == [True, False, False]


def test_dense_graphs_get_fewer_trials(monkeypatch):
    dense = random_graph(1500, 80, seed=4, weighted=True)
    xadj, adjncy = dense.xadj, dense.adjncy
    assert len(adjncy) > metis_trials.DENSE_DEGREE * dense.nvtxs
    seeds = []
    monkeypatch.setattr(metis_trials, "_trial", lambda job: seeds.append(job[6]) or _trial(job))
    stop_workers()  # the trials run here, where the spy sees them
    initial_partition(xadj, adjncy, dense.vwgt[:, 0], dense.adjwgt, 4, np.full(4, 1e9), None,
                      seed=7, ntrials=16, ufactor=30, niter=10, recursive=False)
    assert seeds == [7 + t for t in range(metis_trials.DENSE_TRIALS)]
    seeds.clear()
    sparse = load_fixture("4elt")
    initial_partition(sparse.xadj, sparse.adjncy, sparse.vwgt[:, 0], sparse.adjwgt, 4,
                      np.full(4, 1e9), None, seed=7, ntrials=6, ufactor=30, niter=10,
                      recursive=False)
    assert seeds == [7 + t for t in range(6)]
