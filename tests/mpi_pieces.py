"""Run by tests/test_distributed.py under ``mpiexec -n N``: each command checks a distributed
piece on every rank and exits 1 (with the failing check on stderr) when one fails.

    mpi_pieces.py halo FIXTURE
    mpi_pieces.py alltoallv
    mpi_pieces.py partition OUT.npz     (rank 0 saves every case's whole part)
    mpi_pieces.py clustering            (lp clusters and the coarse graph against one
                                         process's)
    mpi_pieces.py refinement            (Jet's loop against one process's)
    mpi_pieces.py multilevel            (the pipeline against one process's)
    mpi_pieces.py metrics               (components, state and report metrics against one
                                         process's)
    mpi_pieces.py no-upload             (a connected graph's k-way run never puts the whole
                                         graph on rank 0's backend)
    mpi_pieces.py read FILE...          (each rank's byte range: one reader's graph or error)
    mpi_pieces.py nccl FIXTURE          (device halo exchange and all-reduce over NCCL)
    mpi_pieces.py bad-piece
    mpi_pieces.py killed GRAPHFILE      (rank 1 dies; the others run gpmetis on GRAPHFILE)
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import load_fixture, random_graph  # noqa: E402
from test_wide_weights import wide_graph  # noqa: E402

from gpmetis.backend import get_backend  # noqa: E402
from gpmetis.coarsening import clustering, contraction  # noqa: E402
from gpmetis.context import DEFAULT  # noqa: E402
from gpmetis.device_graph import DeviceGraph  # noqa: E402
from gpmetis.distributed import Comm, DistGraph, partition_distributed  # noqa: E402
from gpmetis.distributed.clustering import LocalGraph, lp_clustering  # noqa: E402
from gpmetis.distributed.contraction import contract  # noqa: E402
from gpmetis.distributed.dgraph import block_bounds  # noqa: E402
from gpmetis.distributed.halo import Halo  # noqa: E402
from gpmetis.distributed.validation import validate  # noqa: E402
from gpmetis.errors import GpmetisError  # noqa: E402
from gpmetis.graph import Graph  # noqa: E402
from gpmetis.partitioning.driver import partition as gpmetis_partition  # noqa: E402

# (graph, nparts, options): modes and constraint counts whose part must not depend on the ranks
CASES = [
    ("4elt", 8, {}),
    ("add20", 6, {"ptype": "rb"}),
    ("4elt", 16, {"contig": True}),
    ("add20", 8, {"minconn": True}),
    ("wide-vol", 4, {"objtype": "vol"}),
    ("wide-ncon2", 4, {}),
    ("4elt-raw", 8, {}),
]


def raw_4elt() -> tuple[np.ndarray, np.ndarray]:
    """4elt's (xadj, adjncy) as a caller may hand them over: a self loop at every 5th vertex
    and every 3rd vertex's first neighbour twice more (validation drops them)."""
    graph = load_fixture("4elt")
    rows = np.split(graph.adjncy.astype(np.int64), graph.xadj[1:-1])
    for v in range(0, len(rows), 5):
        rows[v] = np.append(rows[v], v)
    for v in range(0, len(rows), 3):
        rows[v] = np.append(rows[v], [rows[v][0]] * 2)
    return np.concatenate(([0], np.cumsum([len(r) for r in rows]))), np.concatenate(rows)


def case_graph(name: str):
    if name == "wide-vol":
        return wide_graph("add20", vsize=True)
    if name == "wide-ncon2":
        return wide_graph("add20", ncon=2)
    if name == "4elt-raw":
        return Graph.from_csr(*raw_4elt())
    return load_fixture(name)


def raw_piece(comm: Comm) -> DistGraph:
    """This rank's block of ``raw_4elt``, not validated."""
    xadj, adjncy = raw_4elt()
    vtxdist = block_bounds(xadj, comm.size)
    lo, hi = int(vtxdist[comm.rank]), int(vtxdist[comm.rank + 1])
    return DistGraph(vtxdist, xadj[lo:hi + 1] - xadj[lo], adjncy[xadj[lo]:xadj[hi]])


def check(ok: bool, what: str) -> None:
    """End every rank (exit 1) with ``what`` where ``ok`` is false."""
    if not ok:
        comm = Comm.world()
        comm.abort(f"rank {comm.rank}: {what}")


def halo(name: str) -> None:
    comm = Comm.world()
    piece = DistGraph.scatter(comm, load_fixture(name) if comm.root else None)
    halo, local = Halo.build(comm, piece.vtxdist, piece.adjncy)
    small, small_local = Halo.build(comm, piece.vtxdist, piece.adjncy, chunk=97)
    check(np.array_equal(small.ghosts, halo.ghosts) and np.array_equal(small_local, local)
          and all(np.array_equal(a, b) for a, b in zip(small.send, halo.send, strict=True)),
          "the adjacency read in chunks")
    ids = np.arange(halo.first, halo.first + halo.nlocal, dtype=np.int64)
    check(np.array_equal(halo.exchange(comm, ids), halo.ghosts), "ghost values")
    check(np.array_equal(halo.extended(comm, ids)[local], piece.adjncy), "local adjacency")
    owned = (piece.adjncy >= halo.first) & (piece.adjncy < halo.first + halo.nlocal)
    check(not np.isin(halo.ghosts, piece.adjncy[owned]).any(), "ghosts are others' vertices")
    sent = comm.allreduce_sum(np.array([sum(len(s) for s in halo.send)], np.int64))
    check(int(sent[0]) == int(comm.allreduce_sum(np.array([len(halo.ghosts)]))[0]),
          "every ghost sent once")


def alltoallv() -> None:
    comm = Comm.world()
    send = [np.full(comm.rank + s, 10 * comm.rank + s, dtype=np.int64) for s in range(comm.size)]
    got = comm.alltoallv(send)
    for r, a in enumerate(got):
        check(np.array_equal(a, np.full(r + comm.rank, 10 * r + comm.rank)), f"from rank {r}")


def partition(out: str) -> None:
    comm = Comm.world()
    parts = {}
    for i, (name, nparts, options) in enumerate(CASES):
        if name == "4elt-raw":  # the ranks' pieces are not the graph their run takes
            piece = raw_piece(comm)
        else:
            piece = DistGraph.scatter(comm, case_graph(name) if comm.root else None)
        result = partition_distributed(
            piece.vtxdist, piece.xadj, piece.adjncy, nparts, vwgt=piece.vwgt,
            adjwgt=piece.adjwgt, vsize=piece.vsize, comm=comm, engine="cpu", **options)
        check(len(result.part) == piece.nlocal, "a part per local vertex")
        whole = comm.gatherv(result.part)
        if comm.root:
            parts[f"case{i}"] = whole
            check(result.edgecut == result.result.edgecut, "edgecut on every rank")
            # the plain k-way cut runs take the pipeline on the pieces
            plain = not options and case_graph(name).ncon == 1
            check(result.result.stats.get("multilevel_on_pieces", False) == plain,
                  f"{name} {options}: the run on the pieces")
    if comm.root:
        np.savez(out, **parts)


def uneven_piece(comm: Comm, graph: Graph, starts: np.ndarray) -> DistGraph:
    """This rank's piece of ``graph`` (which every rank holds) when rank r's vertices start at
    ``starts[r]``."""
    vtxdist = np.append(starts, graph.nvtxs).astype(np.int64)
    lo, hi = vtxdist[comm.rank], vtxdist[comm.rank + 1]
    xadj = graph.xadj[lo:hi + 1] - graph.xadj[lo]
    entries = slice(graph.xadj[lo], graph.xadj[hi])
    return DistGraph.of(comm, vtxdist, xadj, graph.adjncy[entries], graph.vwgt[lo:hi],
                        graph.adjwgt[entries] if graph.has_adjwgt else None)


def clustering_levels() -> None:
    comm = Comm.world()
    graphs = {"4elt": lambda: load_fixture("4elt"), "add20": lambda: load_fixture("add20"),
              "islands": lambda: random_graph(3000, 5, seed=3, weighted=True, isolated=40,
                                              components=3)}
    for name, make in graphs.items():
        for maxvwgt, seed, small in ((40, 17, False), (400, 5, False), (40, 17, True)):
            graph = make() if comm.root or small else None
            # small: the middle ranks hold 25 vertices each, whose clusters are mostly
            # labelled by other ranks' vertices (more labels than own vertices and ghosts)
            piece = DistGraph.scatter(comm, graph) if not small else uneven_piece(
                comm, graph, np.append(0, graph.nvtxs * 42 // 100 + 25 * np.arange(
                    comm.size - 1)))
            lg = LocalGraph.of(comm, piece)
            cmap, cvtxdist = lp_clustering(comm, lg, maxvwgt, seed, DEFAULT.coarsening)
            nc = int(cvtxdist[-1])
            coarse = contract(comm, lg, cmap, cvtxdist).piece().gather(comm)
            whole = comm.gatherv(cmap)
            if comm.root:
                cpu = get_backend("cpu")
                g = DeviceGraph.upload(cpu, graph)
                one, one_nc = clustering.lp_clustering(cpu, g, maxvwgt, seed,
                                                       DEFAULT.coarsening)
                check(nc == one_nc and np.array_equal(whole, one), f"{name} {maxvwgt} {seed}")
                ref = contraction.contract(cpu, g, one, one_nc)
                for a, b in ((coarse.xadj, ref.xadj), (coarse.adjncy, ref.adjncy),
                             (coarse.adjwgt, ref.adjwgt), (coarse.vwgt[:, 0], ref.vwgt)):
                    check(np.array_equal(a, b), f"{name} {maxvwgt} {seed}: coarse graph")


def metrics(engine: str = "cpu") -> None:
    from gpmetis.distributed import metrics as dist
    from gpmetis.metrics import compute_metrics, connected_components
    from gpmetis.refinement.jet import state_sums

    comm = Comm.world()
    if engine == "gpu":
        comm.use_gpus()
    cpu, be = get_backend("cpu"), get_backend(engine)
    graphs = {"4elt": lambda: load_fixture("4elt"),
              "islands": lambda: random_graph(3000, 5, seed=3, weighted=True, isolated=40,
                                              components=3)}
    for name, make in graphs.items():
        graph = make() if comm.root else None
        piece = DistGraph.scatter(comm, graph)
        lg = LocalGraph.of(comm, piece, be)
        n = int(piece.vtxdist[-1])
        first, last = piece.vtxdist[comm.rank], piece.vtxdist[comm.rank + 1]
        rng = np.random.default_rng(7)
        vsize = rng.integers(1, 5, n)
        # stripes of ids: parts of several components, and a random partition
        for nparts, whole in ((5, (np.arange(n) * 5 // n).astype(np.int32)),
                              (7, rng.integers(0, 7, n).astype(np.int32))):
            part = be.asarray(whole[first:last])
            tpwgts = np.full((nparts, 1), 1 / nparts)
            got = dist.metrics(comm, lg, part, nparts, tpwgts, be.asarray(vsize[first:last]))
            cut, pw = dist.state(comm, lg, part, nparts)
            labels = comm.gatherv(dist.components(comm, lg, part))
            whole_labels = comm.gatherv(dist.components(comm, lg))
            heaviest = dist.heaviest_component(comm, lg)
            if comm.root:
                g = DeviceGraph.upload(cpu, graph)
                sums = cpu.bin_sums(connected_components(cpu, g.xadj, g.adjncy), n, g.vwgt)
                check(heaviest == int(sums.max()), f"{name}: heaviest component {heaviest}")
                ref = compute_metrics(g.xadj, g.adjncy, g.vwgt[:, None], g.adjwgt, whole,
                                      nparts, tpwgts, vsize, cpu)
                check(got == ref, f"{name} {nparts}: metrics {got} against {ref}")
                one = state_sums(cpu, g, whole, nparts)
                check([cut * 2, *pw.tolist()] == one.tolist(), f"{name}: state")
                check(np.array_equal(labels, connected_components(cpu, g.xadj, g.adjncy,
                                                                  whole)), f"{name}: parts")
                check(np.array_equal(whole_labels, connected_components(cpu, g.xadj,
                                                                        g.adjncy)),
                      f"{name}: components")


def no_upload() -> None:
    import dataclasses

    import gpmetis
    from gpmetis.partitioning import schemes

    comm = Comm.world()
    real, calls = schemes.upload, []

    def upload(*args):
        calls.append(args)
        return real(*args)

    # islands: three components, each heavier than a part, which are not packed; many: forty
    # light ones, which are (the packing reads the whole graph)
    for name, uploads in (("4elt", False), ("islands", False), ("many", True)):
        graph = (load_fixture(name) if name == "4elt" else random_graph(
            40000, 4, seed=5, components=3 if name == "islands" else 40)) if comm.root else None
        piece = DistGraph.scatter(comm, graph)
        calls.clear()
        schemes.upload = upload
        result = partition_distributed(piece.vtxdist, piece.xadj, piece.adjncy, 16, comm=comm,
                                       engine="cpu", vsize=np.arange(piece.nlocal) % 3 + 1)
        schemes.upload = real
        whole = comm.gatherv(result.part)
        if comm.root:
            check(bool(calls) == uploads, f"{name}: the whole graph uploaded: {bool(calls)}")
            check(result.graph.gathered == uploads, f"{name}: the whole graph gathered")
            if not uploads:  # the ranks no longer serve rank 0: its arrays are refused
                try:
                    check(result.graph.xadj is None, f"{name}: the arrays after the run")
                except GpmetisError as exc:
                    check("the run has ended" in str(exc), str(exc))
            sizes = np.concatenate([np.arange(n) % 3 + 1 for n in np.diff(piece.vtxdist)])
            one = gpmetis.partition(dataclasses.replace(graph, vsize=sizes), 16, engine="cpu")
            check(np.array_equal(whole, one.part) and result.result.metrics == one.metrics,
                  f"{name}: the part and metrics of one process")
    # a vertex heavier than a part's limit: the balance warning names its weight ungathered
    graph = load_fixture("4elt") if comm.root else None
    piece = DistGraph.scatter(comm, graph)
    vwgt = np.ones(piece.nlocal, np.int64)
    vwgt[:1] = 5000 if comm.root else 1
    result = partition_distributed(piece.vtxdist, piece.xadj, piece.adjncy, 16, vwgt=vwgt,
                                   comm=comm, engine="cpu")
    if comm.root:
        weights = np.ones(graph.nvtxs, np.int64)
        weights[0] = 5000
        one = gpmetis.partition(dataclasses.replace(graph, vwgt=weights[:, None],
                                                    has_vwgt=True), 16, engine="cpu")
        check(not result.graph.gathered and one.warnings
              and result.result.warnings == one.warnings,
              f"the balance warning: {result.result.warnings} (one process: {one.warnings})")


def refinement() -> None:
    from gpmetis.balance import Balance, max_part_weights, uniform_tpwgts
    from gpmetis.distributed.refinement import refine
    from gpmetis.refinement.jet_refiner import refine as one_refine

    comm = Comm.world()
    rc = DEFAULT.refinement
    for name, nparts, finest, skew in (("4elt", 8, True, 0.0), ("add20", 4, False, 0.5),
                                       ("islands", 16, True, 0.9)):
        graph = (random_graph(3000, 5, seed=3, weighted=True, isolated=40, components=3)
                 if name == "islands" else load_fixture(name)) if comm.root else None
        piece = DistGraph.scatter(comm, graph)
        lg = LocalGraph.of(comm, piece)
        n = int(piece.vtxdist[-1])
        rng = np.random.default_rng(nparts)
        start = rng.integers(0, nparts, n).astype(np.int32)
        start[rng.random(n) < skew] = 0  # an overweight part 0: rebalancing runs
        totals = comm.allreduce_sum(np.array([lg.vwgt.sum()], np.int64))
        balance = Balance(max_part_weights(totals, uniform_tpwgts(nparts), [1.03]).T.copy(),
                          totals)
        first, last = piece.vtxdist[comm.rank], piece.vtxdist[comm.rank + 1]
        best, iterations = refine(comm, lg, start[first:last], balance, context=rc,
                                  finest=finest, patience=6)
        whole = comm.gatherv(best)
        if comm.root:
            cpu = get_backend("cpu")
            one, one_iterations = one_refine(cpu, DeviceGraph.upload(cpu, graph), start,
                                             balance, context=rc, finest=finest, patience=6)
            check(iterations == one_iterations and np.array_equal(whole, one),
                  f"{name}: {iterations} iterations, {one_iterations} in one process")


def multilevel(engine: str = "cpu") -> None:
    from gpmetis.balance import Balance, max_part_weights, uniform_tpwgts
    from gpmetis.coarsening.weights import WeightedGraph
    from gpmetis.distributed import multilevel as dist
    from gpmetis.options import Options
    from gpmetis.partitioning.multilevel import multilevel_partition

    comm = Comm.world()
    options = Options(engine=engine).validate()
    # wide: totals past 2^31, each level's sums checked on the pieces; heavy: the second
    # level's clusters pass 2^31 in their edges' sums, and coarsening ends before it
    graphs = {"islands": lambda: random_graph(3000, 5, seed=3, weighted=True, isolated=40,
                                              components=3),
              "wide": lambda: wide_graph("4elt"),
              "heavy": lambda: wide_graph("4elt", edge_scale=40_000_000)}
    root_run, gathered = dist._root_run, []

    def spied_root_run(be, graph, *rest):  # the size of the level gathered at rank 0
        gathered.append(graph.nvtxs)
        return root_run(be, graph, *rest)

    dist._root_run = spied_root_run
    for name, nparts, gather in (("4elt", 8, 1000), ("add20", 4, 300), ("islands", 16, 500),
                                 ("4elt", 64, 1 << 16), ("wide", 8, 300), ("heavy", 8, 300),
                                 ("4elt-empty", 8, 1000)):
        gathered.clear()
        if name == "4elt-empty":  # rank 0 without vertices, unit edge weights
            graph = load_fixture("4elt")
            starts = np.linspace(0, graph.nvtxs, comm.size).astype(np.int64)
            piece = uneven_piece(comm, graph, np.concatenate(([0], starts))[:comm.size])
        else:
            graph = graphs.get(name, functools.partial(load_fixture, name))() if comm.root \
                else None
            piece = DistGraph.scatter(comm, graph)
        totals = comm.allreduce_sum(np.array([graph.vwgt.sum() if comm.root else 0], np.int64))
        tpwgts = uniform_tpwgts(nparts)
        balance = Balance(max_part_weights(totals, tpwgts, [1.03]).T.copy(), totals)
        part, stats = dist.multilevel_partition(comm, piece, balance, options, tpwgts, seed=11,
                                                engine=engine, gather_vertices=gather)
        whole = comm.gatherv(part)
        if comm.root:
            check(name not in ("wide", "heavy") or gathered[0] < graph.nvtxs,
                  f"{name}: its finest level gathered at rank 0")
            # the levels on the pieces, then rank 0's from the gathered one, as one process's
            sizes = [(lv["level"], lv["nvtxs"], lv["nedges"]) for lv in stats.levels]
            check(sizes[0] == (0, graph.nvtxs, len(graph.adjncy) // 2)
                  and all(a[0] + 1 == b[0] and a[1] > b[1] for a, b in zip(sizes, sizes[1:]))
                  and gathered[0] in [s[1] for s in sizes]
                  and all(lv["seconds"] >= 0 and lv["refine_iterations"] >= 0
                          for lv in stats.levels)
                  and min(stats.coarsening, stats.initial, stats.refinement) > 0,
                  f"{name}: the levels' stats {stats}")
            be = get_backend(engine)
            one, _ = multilevel_partition(WeightedGraph.single(DeviceGraph.upload(be, graph)),
                                          balance, options, tpwgts, 11)
            check(np.array_equal(whole, be.asnumpy(one)),
                  f"{name} k={nparts} gathered at {gather} ({engine})")


def read(*paths: str, mtx: bool = False, mtx_weights: bool = False) -> None:
    from gpmetis.distributed.read import read_pieces
    from gpmetis.distributed.read_mtx import read_mtx_pieces
    from gpmetis.io import read_graph

    comm = Comm.world()
    for path in paths:
        pieces = (functools.partial(read_mtx_pieces, comm, path, mtx_weights=mtx_weights)
                  if mtx else functools.partial(read_pieces, comm, path))
        same_as_one(comm, path, pieces, functools.partial(read_graph, path,
                                                          mtx_weights=mtx_weights))


def read_gpu(*paths: str, stand_in: bool = False) -> None:
    """``read`` of the METIS files with each rank's lines parsed on its GPU, a few bytes at a
    time (many chunks a rank): the files named fast-* must be read there, the others may go
    back to the host's reader, which names what is wrong. ``stand_in``: without a GPU, the
    GPU's rows of a range (``io.metis_gpu.range_rows``) come from ``_host_range_rows``, so
    that the ranks' agreement on them runs on the cpu engine."""
    from gpmetis.distributed import read as dist_read
    from gpmetis.io import metis_gpu, read_graph

    if stand_in:
        import gpmetis.backend

        cpu = get_backend("cpu")
        gpmetis.backend.cuda_available = lambda: True
        gpmetis.backend.get_backend = lambda name: cpu
        Comm.use_gpus = lambda self: None
        metis_gpu.range_rows = _host_range_rows
    comm = Comm.world()
    used = []
    gpu_piece = dist_read._gpu_piece

    def recording(*args, **kwargs):
        piece = gpu_piece(*args, **kwargs)
        used.append(piece is not None)
        return piece

    dist_read._gpu_piece = recording
    for path in paths:
        used.clear()
        metis_gpu.CHUNK_BYTES = 16 if os.path.getsize(path) < 4096 else 4096
        same_as_one(comm, path, functools.partial(dist_read.read_pieces, comm, path, "gpu"),
                    functools.partial(read_graph, path))
        if Path(path).name.startswith("fast-"):
            check(used == [True], f"{path}: parsed on the ranks' GPUs")


def _host_range_rows(be, data, start: int, end: int, readew: int):
    """``io.metis_gpu.range_rows`` by the host's tokenizer: the same rows, and None for the
    same ranges (a byte other than a digit, a blank or a newline; a number of more than 9
    digits; a line of an odd count with edge weights)."""
    from gpmetis.io.tokens import tokenize

    text = np.frombuffer(data, np.uint8, end - start, start)
    if not np.isin(text, np.frombuffer(b"0123456789 \t\r\n", np.uint8)).all():
        return None
    tok = tokenize(text, "range", trailing_comments=True)
    values = tok.values.astype(np.int64)
    if len(tok.bad) or (values >= 10**9).any():
        return None
    cnt = np.zeros(tok.nlines, np.int64)
    cnt[tok.rows] = tok.row_cnt
    if readew and (cnt & 1).any():
        return None
    return cnt >> readew, values[::1 + readew] - 1, values[1::2] if readew else None


def _clean_entries(xadj: np.ndarray, adjncy: np.ndarray, adjwgt) -> bool:
    """Whether one process takes these rows as they are: no fault among the entries, nothing
    dropped, every row rising strictly."""
    try:
        graph = Graph.from_csr(xadj, adjncy, adjwgt=adjwgt)
    except GpmetisError:
        return False
    rows = np.repeat(np.arange(len(xadj) - 1), np.diff(xadj))
    rising = ((adjncy[1:] > adjncy[:-1]) | (rows[1:] != rows[:-1])).all()
    return not graph.warnings and bool(rising)


def same_as_one(comm: Comm, what: str, piece_of, one_of, *, gpu: bool = False) -> None:
    """The pieces ``piece_of()`` makes, validated (``gpu``: on the ranks' GPUs first) and
    gathered, are the graph ``one_of()`` makes, with its warnings and totals, or fail with its
    message."""
    try:
        piece, shape = validate(comm, piece_of(), gpu=gpu)
        graph, error = piece.gather(comm), None
    except GpmetisError as exc:
        graph, error = None, str(exc)
    if not comm.root:
        return
    try:
        one, one_error = one_of(), None
    except GpmetisError as exc:
        one, one_error = None, str(exc)
    check(error == one_error, f"{what}: {error} (one process: {one_error})")
    if one is None:
        return
    for a in ("xadj", "adjncy", "vwgt", "adjwgt", "vsize"):
        x, y = getattr(graph, a), getattr(one, a)
        check((x is None) == (y is None) and (x is None or np.array_equal(x, y)),
              f"{what}: {a}")
    check((graph.has_vwgt, graph.has_adjwgt) == (one.has_vwgt, one.has_adjwgt),
          f"{what}: which weights")
    check(list(shape.warnings) == one.warnings, f"{what}: {shape.warnings}")
    check((shape.weight_totals, shape.heaviest_vertex, shape.heaviest_degree, shape.max_vwgt,
           shape.nnz)
          == (one.weight_totals, one.heaviest_vertex, one.heaviest_degree, one.max_vwgt,
              len(one.adjncy)),
          f"{what}: totals")


def nccl(name: str) -> None:
    import cupy as cp

    comm = Comm.world()
    comm.use_gpus()
    device = comm.device
    check(device is not None, "a GPU per rank: NCCL between them")
    piece = DistGraph.scatter(comm, load_fixture(name) if comm.root else None)
    halo, _ = Halo.build(comm, piece.vtxdist, piece.adjncy)
    values = np.arange(halo.first, halo.first + halo.nlocal, dtype=np.int64) * 7 + 3
    got = halo.exchange(comm, cp.asarray(values)).get()
    check(np.array_equal(got, halo.exchange(comm, values)), "device ghost values")
    total = comm.allreduce_sum(cp.asarray(values[:1] * 0 + 2**40 + comm.rank)).get()
    check(int(total[0]) == comm.size * 2**40 + comm.size * (comm.size - 1) // 2, "all-reduce")
    big = cp.arange(1 << 24, dtype=cp.int64)  # 128 MiB each way
    back = comm.alltoallv([big if r != comm.rank else big[:0] for r in range(comm.size)])
    check(all(bool((b == big[:len(b)]).all()) for b in back), "large all-to-all")


def bad_piece() -> None:
    """A piece of the wrong shape or type at rank 1: every rank ends with its message."""
    comm = Comm.world()
    piece = DistGraph.scatter(comm, load_fixture("add20") if comm.root else None)
    ones = np.ones((piece.nlocal + (comm.rank == 1), 1), np.int64)
    faults = [({"xadj": piece.xadj[:-1]}, "(rank 1): xadj must hold"),
              ({"vwgt": ones}, "(rank 1): vwgt must have shape"),
              ({"adjncy": piece.adjncy.astype(np.float64)}, "(rank 1): adjncy must hold integers")]
    for fault, message in faults:
        arrays = {"xadj": piece.xadj, "adjncy": piece.adjncy,
                  "vwgt": ones[:piece.nlocal] if "vwgt" in fault else None}
        if comm.rank == 1:
            arrays.update(fault)
        try:
            partition_distributed(piece.vtxdist, arrays["xadj"], arrays["adjncy"], 4,
                                  vwgt=arrays["vwgt"], comm=comm, engine="cpu")
            check(False, "no rank may go on")
        except GpmetisError as exc:
            check(message in str(exc), f"message {exc}")


def validate_pieces(engine: str = "cpu") -> None:
    """Pieces with each fault ``Graph.from_csr`` names, and self loops and repeats: one
    process's message, warnings, canonical graph and totals, by either symmetry check; with
    the gpu engine, the GPUs' verdict first, which passes exactly the pieces whose entries
    hold no fault and whose rows rise strictly."""
    comm = Comm.world()
    gpu = engine == "gpu"
    path = ([0, 1, 3, 5, 7, 9, 10], [1, 0, 2, 1, 3, 2, 4, 3, 5, 4])  # 0-1-2-3-4-5
    weights = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    cases = [
        (path, {}), (path, {"adjwgt": weights, "vwgt": [[1], [2], [3], [4], [5], [6]]}),
        (path, {"adjwgt": weights[:7] + [5, 5, 5]}),  # edge 3-4 weighs 4 one way, 5 the other
        ((path[0], path[1][:-1] + [3]), {}),  # 5 lists 3, which does not list 5
        ((path[0], path[1][:-1] + [9]), {}),  # out of range
        ((path[0], [1, 0, 2, 1, 3, 2, 4, -3, 5, 4]), {}),
        (([0, 1, 3, 2, 7, 9, 10], path[1]), {}),  # xadj decreases
        (path, {"vwgt": [[1], [2], [3], [-4], [5], [6]]}),
        (path, {"adjwgt": weights[:6] + [0] + weights[7:]}),
        (path, {"vsize": [1, 1, 1, 1, -2, 1]}),
        (([0, 2, 5, 7, 10, 12, 13], [1, 0, 0, 2, 0, 1, 3, 2, 4, 4, 3, 5, 4]), {}),
        (([0, 3, 5, 7, 10, 12, 13], [1, 1, 0, 0, 2, 1, 3, 2, 4, 4, 3, 5, 4]),
         {"adjwgt": [2, 2, 7, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1]}),
        (([0, 3, 4, 4], [1, 2, 1, 0]), {}),  # a repeat apart in its row; 0 -> 2 one way
        (([0, 3, 4, 5], [1, 2, 1, 0, 0]), {}),  # the repeat another rank's vertex
        (([0, 1, 3, 6, 8, 10, 11], [1, 0, 2, 1, 2, 3, 2, 4, 3, 5, 4]), {}),  # a loop in order
    ]
    rng = np.random.default_rng(7)
    for k in range(4):  # a weighted random graph; a changed weight; a moved entry
        graph = random_graph(400, 6, seed=k, weighted=True)
        adjncy, adjwgt = graph.adjncy.astype(np.int64), graph.adjwgt.copy()
        if k == 1:
            adjwgt[rng.integers(len(adjwgt))] += 1
        if k >= 2:
            e = rng.integers(len(adjncy))
            adjncy[e] = (adjncy[e] + 1 + k) % graph.nvtxs
        cases.append(((graph.xadj, adjncy), {"adjwgt": adjwgt,
                                             "vwgt": rng.integers(0, 9, (graph.nvtxs, 2))}))
    import gpmetis.distributed.validation as dist_validation

    memory, device_room = dist_validation.available_memory, dist_validation._device_room
    if gpu:
        comm.use_gpus()
        dist_validation.VERDICT_CHUNK = 64  # (the cut entries found in many chunks)
    # with memory to spare, one process's scan; with none, the binary searches of sorted rows
    # (and no GPUs' verdict: a GPU without the memory for it leaves the pieces to the host)
    runs = [(scarce, i, case) for scarce in (False, True) for i, case in enumerate(cases)]
    for scarce, i, ((xadj, adjncy), weights) in runs:
        dist_validation.available_memory = (lambda: 0) if scarce else memory
        dist_validation._device_room = (lambda comm, be: 0) if scarce else device_room
        xadj, adjncy = np.asarray(xadj), np.asarray(adjncy)
        weights = {k: np.asarray(v) for k, v in weights.items()}
        vtxdist = np.linspace(0, len(xadj) - 1, comm.size + 1).astype(np.int64)
        lo, hi = vtxdist[comm.rank], vtxdist[comm.rank + 1]
        entries = slice(xadj[lo], xadj[hi])
        piece_of = functools.partial(
            DistGraph.of, comm, vtxdist, xadj[lo:hi + 1] - xadj[lo], adjncy[entries],
            weights["vwgt"][lo:hi] if "vwgt" in weights else None,
            weights["adjwgt"][entries] if "adjwgt" in weights else None,
            weights["vsize"][lo:hi] if "vsize" in weights else None)
        same_as_one(comm, f"case {i} (no memory: {scarce})", piece_of, functools.partial(
            Graph.from_csr, xadj, adjncy, weights.get("vwgt"), weights.get("adjwgt"),
            vsize=weights.get("vsize")), gpu=gpu)
        if gpu and (np.diff(xadj) >= 0).all():
            clean = dist_validation._clean_on_gpu(comm, piece_of(), int(lo), len(xadj) - 1)
            expected = not scarce and _clean_entries(xadj, adjncy, weights.get("adjwgt"))
            check((clean is not None) == expected,
                  f"case {i} (no memory: {scarce}): the GPUs' verdict {clean}")
    dist_validation.available_memory, dist_validation._device_room = memory, device_room
    if comm.size > 1:  # rank 0 without vertices, its weights flat (ParMETIS's): ncon 2; only
        # rank 0 names the engine (its options drive the run)
        path = case_graph("add20")
        vwgt = np.arange(2 * path.nvtxs, dtype=np.int64).reshape(-1, 2) % 5
        vtxdist = np.linspace(0, path.nvtxs, comm.size).astype(np.int64)
        vtxdist = np.concatenate(([0], vtxdist))
        lo, hi = vtxdist[comm.rank], vtxdist[comm.rank + 1]
        out = partition_distributed(vtxdist, path.xadj[lo:hi + 1] - path.xadj[lo],
                                    path.adjncy[path.xadj[lo]:path.xadj[hi]], 4,
                                    vwgt=vwgt[lo:hi].ravel(), comm=comm,
                                    **({"engine": "cpu"} if comm.root else {}))
        if comm.root:
            one = gpmetis_partition(Graph.from_csr(path.xadj, path.adjncy, vwgt), 4,
                                    engine="cpu")
            check(np.array_equal(out.result.part, one.part), "an empty rank's flat vwgt")


def id_limits(engine: str = "cpu") -> None:
    """A graph past one process's vertex ids (the limit patched down to fewer than 4elt's
    vertices) partitions on the pieces as one process does, each rank's local ids within
    theirs; a mode that reads the whole graph is refused on every rank, and so is a piece past
    its rank's local ids."""
    import gpmetis.distributed.dgraph as dgraph
    import gpmetis.distributed.multilevel as dist_multilevel
    import gpmetis.distributed.validation as dist_validation

    comm = Comm.world()
    dist_multilevel.GATHER_VERTICES = 1000  # (levels on the pieces down to it; 16 parts: no
    # direct candidate, which reads the whole graph)
    graph = case_graph("4elt")
    rows = np.repeat(np.arange(graph.nvtxs), np.diff(graph.xadj))
    graph = Graph.from_csr(graph.xadj, graph.adjncy[np.lexsort((graph.adjncy, rows))])
    # (rows in increasing order: the GPUs check their entries)
    one = gpmetis_partition(graph, 16, engine=engine).part if comm.root else None
    piece = DistGraph.scatter(comm, graph if comm.root else None)
    dgraph.INT32_MAX = graph.nvtxs - 1  # (the coarsest level's gather stays within it)
    out = partition_distributed(piece.vtxdist, piece.xadj, piece.adjncy, 16, comm=comm,
                                engine=engine)
    if comm.root:
        check(np.array_equal(out.result.part, one), "the pieces' partition")
    try:
        partition_distributed(piece.vtxdist, piece.xadj, piece.adjncy, 16, comm=comm,
                              engine=engine, contig=True)
        check(False, "-contig reads the whole graph: refused")
    except GpmetisError as exc:
        check(f"{graph.nvtxs} vertices: this run reads the whole graph" in str(exc),
              f"message {exc}")
    dgraph.INT32_MAX = np.iinfo(np.int32).max
    # past the host's symmetry keys: refused where the host checks the pieces, not where the
    # GPUs do
    dist_validation.KEY_VERTICES_MAX = graph.nvtxs - 1
    try:
        out = partition_distributed(piece.vtxdist, piece.xadj, piece.adjncy, 16, comm=comm,
                                    engine=engine)
        check(engine == "gpu" and (not comm.root or np.array_equal(out.result.part, one)),
              "the GPUs' check: one process's partition")
    except GpmetisError as exc:
        check(engine == "cpu" and "the host's checks of the pieces take at most" in str(exc),
              f"message {exc}")
    dist_validation.KEY_VERTICES_MAX = 3_037_000_499
    # rank 1's vertices and ghosts pass its local ids
    limit = int(np.diff(piece.vtxdist)[1]) + 1
    if comm.rank == 1:
        dist_validation.INT32_MAX = limit
    try:
        partition_distributed(piece.vtxdist, piece.xadj, piece.adjncy, 16, comm=comm,
                              engine=engine)
        check(False, "rank 1's local ids: refused")
    except GpmetisError as exc:
        check(f"rank 1 holds {int(np.diff(piece.vtxdist)[1])} vertices and" in str(exc)
              and f"at most {limit} together" in str(exc), f"message {exc}")


def killed(graphfile: str) -> None:
    if Comm.world().rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    from cli.main import main

    main([graphfile, "4", "-engine=cpu"])


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    try:
        {"halo": halo, "alltoallv": alltoallv, "partition": partition, "bad-piece": bad_piece,
         "killed": killed, "clustering": clustering_levels, "refinement": refinement,
         "multilevel": multilevel, "metrics": metrics, "no-upload": no_upload,
         "read": read, "read-gpu": read_gpu,
         "read-gpu-stand-in": lambda *paths: read_gpu(*paths, stand_in=True), "nccl": nccl,
         "validate": validate_pieces, "id-limits": id_limits,
         "read-mtx": lambda *paths: read(*paths, mtx=True),
         "read-mtx-weights": lambda *paths: read(*paths, mtx=True, mtx_weights=True),
         }[command](*args)
    except GpmetisError:  # every rank raises it (the commands that expect one check it)
        raise
    except Exception:  # one rank's crash: the others would wait in a collective until timeout
        import traceback

        traceback.print_exc()
        check(False, f"{command} crashed")
