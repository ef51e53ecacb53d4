"""The initial partition of the coarsest graph: METIS trials (recursive bisection or k-way)."""

from dataclasses import replace

import numpy as np
import pytest
from conftest import load_fixture, random_graph

from gpmetis.backend import get_backend
from gpmetis.context import DEFAULT
from gpmetis.device_graph import DeviceGraph
from gpmetis.edge_hash import edge_hash
from gpmetis.errors import PartitionError
from gpmetis.initial_partitioning import metis_trials, workers
from gpmetis.initial_partitioning.metis_trials import (
    IPTYPE_GROW,
    IPTYPE_RANDOM,
    induced_subgraphs,
    initial_partition,
    metis_trial,
)
from gpmetis.initial_partitioning.thinning import heaviest_edges
from gpmetis.initial_partitioning.workers import start_workers, stop_workers

INITIAL = DEFAULT.initial
NPARTS = 16
TARGET = 40 * NPARTS  # 4elt (15,606 vertices) is far above it: taken as coarsening stalled
SMALL_TARGET = 20_000  # 4elt is below it: split by bisections


def _device(g) -> DeviceGraph:
    return DeviceGraph.upload(get_backend("cpu"), g)


@pytest.fixture(scope="module")
def fixture4elt():
    return _device(load_fixture("4elt"))


@pytest.fixture(scope="module")
def graph(fixture4elt):
    """4elt as the host arrays METIS sees (rows sorted)."""
    return fixture4elt.to_host()


def _cut(graph, part) -> int:
    xadj, adjncy, _, adjwgt = graph
    src = np.repeat(np.arange(len(xadj) - 1), np.diff(xadj))
    return int(adjwgt[part[src] != part[adjncy]].sum()) // 2


def _maxpwgt(graph, ufactor: int = 30) -> np.ndarray:
    return np.full(NPARTS, graph[2].sum() / NPARTS * (1 + ufactor / 1000))


def _run(dg, graph, **kw):
    kw = {"seed": 3, "ntrials": 4, "ufactor": 30, "niter": 10, "target": SMALL_TARGET,
          "context": INITIAL} | kw
    return initial_partition(dg, _maxpwgt(graph), None, **kw)


def _trials(graph, recursive: bool, ufactor: int = 30, iptype: int = IPTYPE_GROW,
            nparts: int = NPARTS):
    return [metis_trial((*graph, nparts, None, 3 + t, ufactor, 10, iptype, recursive))[0]
            for t in range(4)]


def _lowest(parts, graph):
    cuts = [_cut(graph, p) for p in parts]
    assert len(set(cuts)) > 1  # the seeds matter, so choosing among them can go wrong
    return parts[cuts.index(min(cuts))]


def _brute_induced(graph, vertices):
    """The subgraph METIS would split on, by brute force."""
    xadj, adjncy, vwgt, adjwgt = graph
    number = {v: i for i, v in enumerate(vertices)}
    rows = [[(number[u], w) for u, w in zip(adjncy[xadj[v]:xadj[v + 1]],
                                            adjwgt[xadj[v]:xadj[v + 1]]) if u in number]
            for v in vertices]
    sub_xadj = np.cumsum([0] + [len(row) for row in rows])
    entries = np.array([e for row in rows for e in row]).reshape(-1, 2)
    return sub_xadj, entries[:, 0], vwgt[vertices], entries[:, 1]


def test_induced_subgraphs_of_a_round_s_pieces_equal_brute_force(graph):
    xadj, adjncy, vwgt, _ = graph
    host = (xadj, adjncy, vwgt, np.arange(len(adjncy)) % 97 + 1)  # each entry's own weight
    src = np.repeat(np.arange(len(vwgt)), np.diff(xadj))
    label = np.random.default_rng(5).integers(0, 6, len(vwgt))  # label 5: in no piece
    pieces = [np.flatnonzero(label == p) for p in (3, 0, 4, 1, 2)]
    subgraphs = induced_subgraphs(host, src, pieces)
    assert len(subgraphs) == len(pieces)
    for vertices, sub in zip(pieces, subgraphs):
        expected = _brute_induced(host, vertices)
        assert len(expected[1]) > 0
        for a, b in zip(sub, expected):
            np.testing.assert_array_equal(a, b)
    assert induced_subgraphs(host, src, [np.arange(len(vwgt))]) == [host]


def test_induced_subgraphs_past_16_bit_piece_numbers():
    # a path of 80,000 vertices cut into 40,000 pairs: each pair's subgraph is its one edge
    n = 80_000
    src = np.repeat(np.arange(n), [1] + [2] * (n - 2) + [1])
    xadj = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n))))
    vertices = np.arange(n)
    adjncy = np.stack([vertices - 1, vertices + 1], axis=1).reshape(-1)[1:-1].astype(np.int32)
    adjwgt = (adjncy + src).astype(np.int32)  # an edge's weight: its ends' sum
    host = (xadj, adjncy, np.ones(n, dtype=np.int32), adjwgt)
    pieces = [np.array([v, v + 1]) for v in range(0, n, 2)]
    subgraphs = induced_subgraphs(host, src, pieces)
    for v, (sub_xadj, sub_adjncy, sub_vwgt, sub_adjwgt) in zip(range(0, n, 2), subgraphs):
        assert sub_xadj.tolist() == [0, 1, 2] and sub_adjncy.tolist() == [1, 0]
        assert sub_adjwgt.tolist() == [2 * v + 1] * 2 and sub_vwgt.tolist() == [1, 1]


def _recorded(monkeypatch) -> list:
    calls = []

    def record(args):
        calls.append((args, metis_trial(args)))
        return calls[-1][1]

    monkeypatch.setattr(metis_trials, "metis_trial", record)
    stop_workers()
    return calls


def test_bisections_without_a_tree_the_winner_is_the_lowest_cut_trial(fixture4elt, graph,
                                                                        monkeypatch):
    monkeypatch.setattr(metis_trials, "bisection_rounds", lambda nparts, piece_parts: 0)
    part = _run(fixture4elt, graph)
    np.testing.assert_array_equal(part, _lowest(_trials(graph, recursive=True), graph))
    assert set(np.unique(part)) == set(range(NPARTS))


def test_bisection_tree_each_piece_takes_its_lowest_cut_trial(fixture4elt, graph, monkeypatch):
    assert metis_trials.bisection_rounds(NPARTS, INITIAL.piece_parts) == 1
    calls = _recorded(monkeypatch)
    part = _run(fixture4elt, graph)
    # round one: four bisections of the whole graph, the lowest cut splits it
    assert [args[4:7] for args, _ in calls[:4]] == [(2, None, 3 + t) for t in range(4)]
    sides = _lowest(_trials(graph, recursive=True, nparts=2), graph)
    np.testing.assert_array_equal(part >= NPARTS // 2, sides == 1)
    # round two: two trials per half into 8 parts, on the half's subgraph
    total = _cut(graph, sides)
    for side in (0, 1):
        sub = _brute_induced(graph, np.flatnonzero(sides == side))
        rounds = [args for args, _ in calls[4 + 2 * side:6 + 2 * side]]
        assert [args[4:7] for args in rounds] == [(8, None, 3), (8, None, 4)]
        for a, b in zip(rounds[0][:4], sub):
            np.testing.assert_array_equal(a, b)
        trials = [metis_trial((*sub, 8, None, 3 + t, 30, 10, IPTYPE_GROW, True))[0] for t in (0, 1)]
        best = _lowest(trials, sub)
        np.testing.assert_array_equal(part[sides == side], 8 * side + best)
        total += _cut(sub, best)
    assert len(calls) == 8
    assert _cut(graph, part) == total  # the pieces' cuts add up to the whole's
    # METIS's own cuts, which chose the winners, are the partitions' cuts
    assert all(cut == _cut(args[:4], p) for args, (p, cut) in calls)


def test_the_tree_bisects_until_each_piece_has_at_most_piece_parts_parts():
    assert [metis_trials.bisection_rounds(k, 32) for k in (2, 8, 32, 33, 64, 128, 256, 1000)] == [
        1, 1, 1, 1, 1, 2, 3, 5]
    assert all(32 * 2 ** metis_trials.bisection_rounds(k, 32) >= k for k in range(33, 3000))


def test_deeper_trees_halve_the_trials_per_piece_each_round(fixture4elt, graph, monkeypatch):
    calls = _recorded(monkeypatch)
    # pieces of 2 parts: 16 parts take 3 rounds, then pairs
    part = _run(fixture4elt, graph, context=replace(INITIAL, piece_parts=2))
    # rounds of 4, 2 x 2, 4 x 1 bisections, then 8 pieces of one trial into their 2 parts
    assert [args[4] for args, _ in calls] == [2] * 20
    assert [args[6] for args, _ in calls[:8]] == [3, 4, 5, 6, 3, 4, 3, 4]
    assert [args[6] for args, _ in calls[8:]] == [3] * 12
    assert set(np.unique(part)) == set(range(NPARTS))
    # each of the last round's trials split its piece into the two parts it was given
    pieces = [np.flatnonzero(part // 2 == piece) for piece in range(8)]
    assert sum(len(p) for p in pieces) == len(part)
    for (args, (best, _)), piece in zip(calls[12:], pieces):
        assert len(args[2]) == len(piece)
        np.testing.assert_array_equal(part[piece] % 2, best)


def test_bisection_tree_odd_parts_and_target_weights(fixture4elt, graph, monkeypatch):
    calls = _recorded(monkeypatch)
    tpwgts = np.array([0.2, 0.3, 0.5])
    part = initial_partition(fixture4elt, np.full(3, np.inf), tpwgts, seed=3, ntrials=2,
                             ufactor=30, niter=10, target=SMALL_TARGET, context=INITIAL)
    bisections, rest = calls[:2], calls[2:]
    assert all(args[4] == 2 and args[5] == pytest.approx([0.2, 0.8]) for args, _ in bisections)
    # the first side is part 0 whole; the second is split in two by one trial
    assert len(rest) == 1 and rest[0][0][4] == 2
    assert rest[0][0][5] == pytest.approx([0.375, 0.625])
    weights = np.bincount(part, graph[2], 3) / graph[2].sum()
    np.testing.assert_allclose(weights, tpwgts, atol=0.02)


def test_kway_the_winner_is_the_lowest_cut_within_the_balance_limit(fixture4elt, graph):
    # METIS may go 4.5% over here, the winner must keep within 3%
    trials = _trials(graph, recursive=False, ufactor=45)
    maxpwgt = _maxpwgt(graph)
    fits = [bool((np.bincount(p, graph[2], NPARTS) <= maxpwgt).all()) for p in trials]
    cuts = [_cut(graph, p) for p in trials]
    assert not fits[cuts.index(min(cuts))] and any(fits)  # the lowest cut alone would be wrong
    best = min((c, t) for t, (c, ok) in enumerate(zip(cuts, fits)) if ok)[1]
    part = initial_partition(fixture4elt, maxpwgt, None, seed=3, ntrials=4,
                             ufactor=45, niter=10, target=TARGET, context=INITIAL)
    np.testing.assert_array_equal(part, trials[best])


@pytest.mark.parametrize("nparts,tpwgts", [(16, None), (3, None), (5, [0.1, 0.3, 0.2, 0.3, 0.1])])
def test_workers_or_not_the_same_partition(fixture4elt, graph, monkeypatch, nparts, tpwgts):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 4)

    def run():
        return initial_partition(fixture4elt, np.full(nparts, np.inf),
                                 None if tpwgts is None else np.array(tpwgts), seed=3,
                                 ntrials=4, ufactor=30, niter=10, target=SMALL_TARGET,
                                 context=INITIAL)

    stop_workers()
    serial = run()
    start_workers(4)
    try:
        assert workers._workers is not None
        pooled = run()
    finally:
        stop_workers()
    np.testing.assert_array_equal(serial, pooled)
    assert set(np.unique(serial)) == set(range(nparts))


def test_pieces_with_no_more_vertices_than_parts_get_a_part_each():
    # two triangles joined by one edge, into 6 parts: each side of the bisection has 3
    # vertices for its 3 parts
    edges = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)]
    rows = [[] for _ in range(6)]
    for a, b in edges:
        rows[a].append(b)
        rows[b].append(a)
    xadj = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    adjncy = np.array([b for r in rows for b in sorted(r)], dtype=np.int32)
    dg = DeviceGraph(get_backend("cpu"), xadj, adjncy, np.ones(len(adjncy), np.int32),
                     np.ones(6, np.int32))
    part = initial_partition(dg, np.full(5, np.inf), None, seed=1, ntrials=2, ufactor=30,
                             niter=10, target=100,  # taken whole: split by bisections
                             context=INITIAL)
    assert sorted(np.bincount(part, minlength=5)) == [1, 1, 1, 1, 2]
    three = part[:3] if part[0] >= 2 else part[3:]  # the side of parts 2, 3, 4
    assert sorted(three) == [2, 3, 4]


def _slow_trial(args):
    import time

    time.sleep(0.3)
    return metis_trial(args)


def test_meanwhile_steps_run_while_the_workers_compute(fixture4elt, graph, monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(metis_trials, "metis_trial", _slow_trial)
    done, seen = [], []
    results = workers._Pending.results
    monkeypatch.setattr(workers._Pending, "results",
                        lambda self: seen.append(len(done)) or results(self))

    def steps():
        for step in range(3):
            done.append(step)
            yield

    stop_workers()
    start_workers(4)
    try:
        _run(fixture4elt, graph, meanwhile=steps())
    finally:
        stop_workers()
    assert seen[0] == 3  # every step ran before the first round's answers were read


def test_a_failing_meanwhile_step_stops_the_workers(fixture4elt, graph, monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 4)

    def steps():
        raise RuntimeError("step failed")
        yield

    stop_workers()
    start_workers(4)
    try:
        with pytest.raises(RuntimeError, match="step failed"):
            _run(fixture4elt, graph, meanwhile=steps())
        assert workers._workers is None
        start_workers(4)
        pooled = _run(fixture4elt, graph)
    finally:
        stop_workers()
    np.testing.assert_array_equal(pooled, _run(fixture4elt, graph))


def _failing_trial(args):
    if args[6] == 4:  # the second trial's seed
        raise ValueError("trial failed")
    return metis_trial(args)


def test_a_failed_trial_raises_and_the_next_call_starts_fresh_workers(fixture4elt, graph,
                                                                       monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 4)
    serial = _run(fixture4elt, graph)
    stop_workers()
    monkeypatch.setattr(metis_trials, "metis_trial", _failing_trial)
    start_workers(4)
    try:
        with pytest.raises(ValueError, match="trial failed"):
            _run(fixture4elt, graph)
        assert workers._workers is None  # the other answers were never read
        monkeypatch.setattr(metis_trials, "metis_trial", metis_trial)
        start_workers(4)
        np.testing.assert_array_equal(_run(fixture4elt, graph), serial)
    finally:
        stop_workers()


def test_a_dead_worker_is_a_partition_error_not_a_hang(fixture4elt, graph, monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 4)
    stop_workers()
    start_workers(4)
    try:
        victim = workers._workers.processes[2]
        victim.kill()
        victim.join()
        with pytest.raises(PartitionError, match="ended unexpectedly"):
            _run(fixture4elt, graph)
        assert workers._workers is None
    finally:
        stop_workers()


def test_meanwhile_each_step_runs_once_workers_or_not(fixture4elt, graph, monkeypatch):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 4)
    calls = []

    def steps(pooled):
        for step in range(5):
            calls.append((pooled, step))
            yield

    for pooled in (False, True):
        stop_workers()
        if pooled:
            start_workers(4)
        try:
            part = _run(fixture4elt, graph, meanwhile=steps(pooled))
        finally:
            stop_workers()
        np.testing.assert_array_equal(part, _run(fixture4elt, graph))
    assert calls == [(pooled, step) for pooled in (False, True) for step in range(5)]


def test_random_bisections_are_metis_random_iptype(fixture4elt, graph, monkeypatch):
    calls = _recorded(monkeypatch)
    part = _run(fixture4elt, graph, random_bisections=True)
    assert calls and all(args[9] == IPTYPE_RANDOM for args, _ in calls)
    assert not np.array_equal(part, _run(fixture4elt, graph))


def test_metis_gets_arrays_of_its_index_width(graph, monkeypatch):
    # arrays of another width are converted by pymetis element by element (0.8 ms per trial
    # on a 1.1k-vertex graph); the partition is the same either way
    import pymetis
    from pymetis._internal import _idx_type_width

    seen = []
    real = pymetis.part_graph

    def spy(nparts, adjacency, **kw):
        seen.append([adjacency.adj_starts, adjacency.adjacent, kw["vweights"], kw["eweights"]])
        return real(nparts, adjacency, **kw)

    monkeypatch.setattr(pymetis, "part_graph", spy)
    narrow = tuple(a.astype(np.int32) for a in graph)
    part, cut = metis_trial((*narrow, NPARTS, None, 3, 30, 10, IPTYPE_GROW, True))
    assert all(a.dtype.itemsize * 8 == _idx_type_width() for a in seen[0])
    monkeypatch.setattr(pymetis, "part_graph", real)
    expected = pymetis.part_graph(NPARTS, pymetis.CSRAdjacency(*narrow[:2]), vweights=narrow[2],
                                  eweights=narrow[3], recursive=True,
                                  options=pymetis.Options(seed=3, ufactor=30, niter=10,
                                                          iptype=IPTYPE_GROW))
    np.testing.assert_array_equal(part, expected.vertex_part)
    assert cut == expected.edge_cuts == _cut(graph, part)


@pytest.mark.parametrize("nparts,n", [(1, 5), (8, 5), (4, 0)])
def test_trivial_cases(nparts, n):
    empty = np.zeros(0, dtype=np.int32)
    dg = DeviceGraph(get_backend("cpu"), np.zeros(n + 1, dtype=np.int64), empty, empty,
                     np.ones(n, np.int32))
    part = initial_partition(dg, np.ones(nparts), None, seed=1, ntrials=2, ufactor=30,
                             niter=10, target=1, context=INITIAL)
    assert part.shape == (n,) and part.dtype == np.int32
    assert (part < nparts).all() and len(np.unique(part)) == min(n, nparts)


def test_bisections_unless_coarsening_stalled(monkeypatch):
    from gpmetis import partition
    from gpmetis.graph import Graph

    calls = []
    bisects = metis_trials.bisects

    def spy(*args):
        calls.append(bisects(*args))
        return calls[-1]

    monkeypatch.setattr(metis_trials, "bisects", spy)
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


def _edge_keys(xadj, adjncy, adjwgt, seed):
    src = np.repeat(np.arange(len(xadj) - 1), np.diff(xadj))
    return src, (adjwgt.astype(np.uint64) << np.uint64(32)) | edge_hash(src, adjncy, seed)


@pytest.mark.parametrize("degree", [1, 5, 30])
def test_thinning_keeps_the_heaviest_edges_of_either_end(degree):
    g = _device(random_graph(400, 20, seed=8, hubs=2, weighted=True))
    thin = heaviest_edges(g.be, g, degree, seed=5)
    src, key = _edge_keys(g.xadj, g.adjncy, g.adjwgt, 5)
    top = set()  # (v, u) for the degree heaviest edges of each v, by brute force
    for v in range(g.nvtxs):
        row = range(g.xadj[v], g.xadj[v + 1])
        top |= {(v, g.adjncy[j]) for j in sorted(row, key=lambda j: -int(key[j]))[:degree]}
    expected = {(v, u) for v, u in zip(src, g.adjncy) if (v, u) in top or (u, v) in top}
    tsrc = np.repeat(np.arange(thin.nvtxs), np.diff(thin.xadj))
    kept = list(zip(tsrc, thin.adjncy))
    assert len(kept) == len(set(kept)) and set(kept) == expected
    assert {(u, v) for v, u in kept} == expected  # symmetric
    assert len(expected) < g.nnz  # something was dropped
    weight = dict(zip(zip(src, g.adjncy), g.adjwgt))
    assert all(weight[e] == w for e, w in zip(kept, thin.adjwgt))
    np.testing.assert_array_equal(thin.vwgt, g.vwgt)


def test_dense_graphs_metis_sees_the_thinned_graph_the_winner_is_the_lowest_full_cut(monkeypatch):
    dense = _device(random_graph(1500, 80, seed=4, weighted=True))
    seen = []
    monkeypatch.setattr(metis_trials, "metis_trial",
                        lambda args: seen.append(args) or metis_trial(args))
    stop_workers()
    maxpwgt = np.full(4, dense.total_vwgt / 4 * 1.03)
    part = initial_partition(dense, maxpwgt, None, seed=3, ntrials=6, ufactor=30, niter=10,
                             target=2000, context=INITIAL)
    thin = heaviest_edges(dense.be, dense, INITIAL.thin_degree, seed=3).to_host()
    assert len(seen) == 6 and all(not args[-1] for args in seen)  # k-way trials
    for args in seen:
        for a, b in zip(args[:4], thin):
            np.testing.assert_array_equal(a, b)
    full = dense.to_host()
    trials = [metis_trial(args)[0] for args in seen]
    fits = [bool((np.bincount(p, full[2], 4) <= maxpwgt).all()) for p in trials]
    full_cuts = [_cut(full, p) if ok else np.inf for p, ok in zip(trials, fits)]
    thin_cuts = [_cut(thin, p) if ok else np.inf for p, ok in zip(trials, fits)]
    assert np.argmin(full_cuts) != np.argmin(thin_cuts)  # scoring on the thin graph would fail
    np.testing.assert_array_equal(part, trials[int(np.argmin(full_cuts))])


def _sum_and_writeable(args):
    """A worker's job: the sum of its array, and whether the job could write into it."""
    array, scale = args
    return int(array.sum()) * scale, bool(array.flags.writeable)


def test_a_jobs_arrays_are_written_once_into_the_arena_and_read_back_equal():
    import mmap

    a, b = np.arange(10, dtype=np.int64), np.arange(7, dtype=np.int32)[::2]
    arena = mmap.mmap(-1, 4096)
    jobs = [(_sum_and_writeable, (x, scale)) for x, scale in ((a, 1), (a, 2), (b, 3))]
    shared = workers._share(jobs, arena)
    places = [argument[0] for _, argument in shared]
    aligned = -(-a.nbytes // workers.ARENA_ALIGN) * workers.ARENA_ALIGN
    assert places[0] is places[1] and places[2].offset == aligned  # a once, then b
    for (_, argument), (_, original) in zip(shared, jobs):
        back = workers._unshare(argument, arena)
        assert back[1] == original[1] and back[0].dtype == original[0].dtype
        np.testing.assert_array_equal(back[0], original[0])
        assert not back[0].flags.writeable
    assert workers._share(jobs, mmap.mmap(-1, 64)) is jobs  # too small: sent as they are


@pytest.mark.parametrize("arena_bytes", [workers.ARENA_BYTES, 16])
def test_workers_take_their_arrays_from_the_arena_or_the_pipes_when_it_is_full(
        monkeypatch, arena_bytes):
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 3)
    monkeypatch.setattr(workers, "ARENA_BYTES", arena_bytes)
    shared = []
    share = workers._share
    monkeypatch.setattr(workers, "_share", lambda jobs, arena: shared.append(
        share(jobs, arena)) or shared[-1])
    arrays = [np.arange(1000 * (i + 1), dtype=np.int64) for i in range(3)]
    jobs = [(_sum_and_writeable, (arrays[i % 3], i)) for i in range(6)]
    stop_workers()
    start_workers(3)
    try:
        results = workers.run_jobs(jobs, iter(()), parallel=True)
    finally:
        stop_workers()
    assert [r[0] for r in results] == [int(arrays[i % 3].sum()) * i for i in range(6)]
    via_arena = [isinstance(argument[0], workers._Shared) for _, argument in shared[0]]
    assert via_arena == [arena_bytes > 16] * 6
    # the arena's arrays are read-only: no job can change what another reads
    assert [r[1] for r in results] == [arena_bytes == 16] * 6


def test_stopped_workers_are_dead_and_reaped(monkeypatch):
    from gpmetis.initial_partitioning import workers

    monkeypatch.setattr(workers.os, "cpu_count", lambda: 4)
    stop_workers()
    start_workers(4)
    processes, pipes = workers._workers.processes, workers._workers.pipes
    assert len(processes) == 4 and all(p.is_alive() for p in processes)
    stop_workers()
    assert workers._workers is None
    assert all(p.exitcode is not None for p in processes)  # reaped: no zombie left
    assert all(pipe.closed for pipe in pipes)

