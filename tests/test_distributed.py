"""Distributed runs under ``mpiexec`` on the cpu engine: the communicator's pieces, the halo,
label-propagation clustering, contraction, Jet's refinement and the multilevel pipeline on the
blocks (one process's results), the distributed entry point and ``gpmetis`` itself (one
process's part file) on any number of ranks, and a failing or killed rank ends the run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES
from mpi_pieces import CASES, case_graph

from gpmetis import partition
from gpmetis.distributed import Comm, DistGraph
from gpmetis.distributed.comm import host_cpu_share
from gpmetis.distributed.dgraph import block_bounds
from gpmetis.distributed.halo import Halo

HERE = Path(__file__).resolve().parent
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install '.[mpi]')")


def mpiexec(ranks: int, *args: str, timeout: float = 300, cwd: Path | None = None):
    path = [str(HERE.parent), str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.run([MPIEXEC, "-n", str(ranks), *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd)


def pieces(ranks: int, *args: str):
    return mpiexec(ranks, sys.executable, str(HERE / "mpi_pieces.py"), *args)


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("command", [["halo", "add20"], ["halo", "4elt"], ["alltoallv"],
                                     ["clustering"], ["refinement"], ["multilevel"],
                                     ["metrics"], ["no-upload"], ["validate"], ["id-limits"]])
def test_halo_exchange_and_alltoallv(ranks, command):
    done = pieces(ranks, *command)
    assert done.returncode == 0, done.stderr


def test_host_cpu_share_gives_each_local_rank_its_block():
    hosts = ["a", "a", "b", "a"]
    assert [host_cpu_share(hosts, r, 12) for r in range(4)] == [
        range(0, 4), range(4, 8), range(0, 12), range(8, 12)]
    assert host_cpu_share(["a"] * 3, 2, 2) == range(0, 1)  # more ranks than CPUs: wrap


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_ranks_bound_to_one_cpu_run_on_their_share():
    """As Open MPI's mpiexec binds two ranks: each to one CPU (here, by the launcher's own
    binding, which the ranks inherit); each rank then runs on its share of the host's."""
    allowed = os.sched_getaffinity(0)
    code = ("import os; from gpmetis.distributed.comm import Comm; c = Comm.world(); "
            "cpus = c.allgather_objects(sorted(os.sched_getaffinity(0))); "
            "c.root and print(*(' '.join(map(str, x)) for x in cpus), sep='\\n')")
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run([MPIEXEC, "-n", "2", sys.executable, "-c", code],
                          capture_output=True, text=True, timeout=120, env=env,
                          preexec_fn=lambda: os.sched_setaffinity(0, {min(allowed)}))
    assert done.returncode == 0, done.stderr
    got = [set(map(int, line.split())) for line in done.stdout.splitlines()]
    assert len(got) == 2, done.stdout
    for rank in (0, 1):
        share = set(host_cpu_share(["host"] * 2, rank, os.cpu_count())) & allowed
        assert got[rank] == (share or {min(allowed)})


def test_one_rank_pieces_need_no_mpi():
    comm = Comm()
    graph = case_graph("add20")
    piece = DistGraph.scatter(comm, graph)
    halo, local = Halo.build(comm, piece.vtxdist, piece.adjncy)
    assert len(halo.ghosts) == 0 and np.array_equal(local, graph.adjncy)
    assert piece.gather(comm).adjncy.tolist() == graph.adjncy.tolist()


@pytest.mark.parametrize("first_read", ["local", "whole"])
def test_run_drops_the_validations_rows_on_gpu_once_read(first_read):
    """The validation's copies of a rank's rows on its GPU live until the local view is built
    (which reads them where the engine is gpu) or the whole graph is gathered; a cpu view
    reads the host's rows. Host arrays stand in for the GPU's copies here."""
    from dataclasses import replace

    from gpmetis.distributed.partition import DistributedRun

    comm = Comm()
    piece = DistGraph.scatter(comm, case_graph("add20"))
    stand_in = (piece.xadj.copy(), np.zeros_like(piece.adjncy))  # not the rows: never read
    run = DistributedRun(comm, replace(piece, rows_on_gpu=stand_in))
    if first_read == "local":
        view = run.local("cpu")
        assert np.array_equal(view.adjncy, piece.adjncy)
    else:
        assert run.whole().adjncy.tolist() == piece.adjncy.tolist()
    assert run.piece.rows_on_gpu is None
    run.close()


def test_blocks_balance_vertices_plus_entries():
    graph = case_graph("add20")
    bounds = block_bounds(graph.xadj, 3)
    work = np.diff(bounds) + np.diff(graph.xadj[bounds])
    assert bounds[0] == 0 and bounds[-1] == graph.nvtxs
    assert work.max() - work.min() <= 2 * np.diff(graph.xadj).max() + 2


@pytest.mark.parametrize("ranks", [2, 3])
def test_partition_does_not_depend_on_the_ranks(tmp_path, ranks):
    out = tmp_path / "parts.npz"
    done = pieces(ranks, "partition", str(out))
    assert done.returncode == 0, done.stderr
    got = np.load(out)
    for i, (name, nparts, options) in enumerate(CASES):
        one = partition(case_graph(name), nparts, engine="cpu", **options)
        assert np.array_equal(got[f"case{i}"], one.part), (name, options)


# METIS files for the ranks' byte ranges: comments and blank lines anywhere, every fmt, lines
# that end without a newline, fewer lines than ranks, and faults one reader names by line
READ_FILES = {
    "weights.graph": "% c1\n\n4 3 111 2\n% mid\n5 1 2 2 7 3 1\n6 1 1 1 7 % trailing\n"
                     "% c\n7 2 2 1 1 4 2\n1 0 0 3 2\n\n",
    "tiny.graph": "2 1\n2\n1",
    "isolated.graph": "5 1 10\n3\n2\n1 4\n%\n1 3\n1\n\n",
    "no-weights.graph": "5 1 10\n3\n\n1 4 5\n\n1 6\n",
    "extra.graph": "3 2\n2\n1 3\n2\n1\n",
    "extra-comments.graph": "3 2\n% a\n2\n1 3\n% b\n2\n% c\n1\n% d\n",
    "extra-counted.graph": "3 2\n2\n1 3\n\n2\n",  # (its entries add up to 2m)
    "short.graph": "4 2\n2\n1 3\n2\n",
    "bad-token.graph": "3 2\n2\n1 3\nx2\n",
    "range.graph": "3 2\n2\n1 3\n9\n",
    "count.graph": "3 5\n2\n1 3\n2\n",
    "odd.graph": "3 2 1\n2 1\n1 1 3\n2 1\n",
    "asym.graph": "% c\n4 4\n2 3\n% x\n1 3\n1 2 4\n2\n",
    "mismatch.graph": "3 2 001\n% c\n2 5\n1 5 3 4\n% d\n2 6\n",
    "loops.graph": "% top\n3 4\n1 2 2\n% mid\n1 3 2\n2 2\n",
}


def read_in_ranges(tmp_path, ranks: int, command: str, texts: dict, fixtures: tuple) -> None:
    """``mpi_pieces``' read ``command`` (the ranks' pieces against read_graph's graph or
    error) on the files of ``texts`` and the shared ``fixtures``."""
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    files = [str(tmp_path / name) for name in texts] + [str(FIXTURES / f) for f in fixtures]
    done = pieces(ranks, command, *files)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("ranks", [2, 3])
def test_ranks_read_a_metis_file_in_byte_ranges(tmp_path, ranks):
    read_in_ranges(tmp_path, ranks, "read", READ_FILES,
                   ("4elt.graph", "add20.graph", "data.graph"))


# METIS files on the GPU reader's fast path: weights, blank and '\r' lines, tabs, trailing
# blank lines, a last line without a newline
FAST_FILES = {
    "fast-weighted.graph": "4 4 1\n2 5 3 1\n1 5 3 2\n1 1 2 2 4 7\n3 7",
    "fast-blank.graph": "5 2\n2\n1 3\n2\n\n\r\n\n\n",
    "fast-tabs.graph": "3 2 001\n2\t4\n1 4  3 9\n2 9\n",
}


def gpu_read_files(tmp_path) -> list[str]:
    """The files of ``mpi_pieces``' read-gpu commands, written to ``tmp_path``: READ_FILES,
    FAST_FILES and the shared 4elt, add20 and data (named fast-*: each on the fast path)."""
    for name, text in {**READ_FILES, **FAST_FILES}.items():
        (tmp_path / name).write_text(text)
    for name in ("4elt", "add20", "data"):
        (tmp_path / f"fast-{name}.graph").write_bytes((FIXTURES / f"{name}.graph").read_bytes())
    return sorted(str(p) for p in tmp_path.iterdir())


@pytest.mark.parametrize("ranks", [2, 3])
def test_ranks_agree_on_their_gpu_rows(tmp_path, ranks):
    # the GPU reader's path of read_pieces with the host's tokenizer standing in for the
    # kernels: the fast-* files are read through it, the rest get the host reader's message
    done = pieces(ranks, "read-gpu-stand-in", *gpu_read_files(tmp_path))
    assert done.returncode == 0, done.stderr


def _mtx_entries(count: int, fault: dict[int, str]) -> str:
    """``count`` entry lines of a real 50 x 50 matrix, line i replaced by fault[i]."""
    lines = [f"{i % 50 + 1} {(7 * i) % 50 + 1} {(-1) ** i * (i + 0.5)}" for i in range(count)]
    for i, text in fault.items():
        lines[i] = text
    return "\n".join(lines) + "\n"


# Matrix Market files for the ranks' byte ranges: every field and symmetry, comments and blank
# lines, diagonal and repeated entries, and the faults one reader names by line, in its order
# (a late index out of range is found before an earlier value that is not finite)
READ_MTX = {
    "pattern.mtx": "%%MatrixMarket matrix coordinate pattern general\n% c\n\n4 4 6\n1 2\n"
                   "2 1\n\n3 3\n% mid\n4 1\n1 2\n2 4\n",
    "real.mtx": "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n2 1 -2.5e0\n"
                "3 1 7\n3 2 0.49\n1 1 4\n",
    "integer.mtx": "%%MATRIXMARKET Matrix Coordinate Integer General\n3 3 3\n1 2 5\n"
                   "2 1 -9\n3 1 2",
    "long.mtx": "%%MatrixMarket matrix coordinate real general\n50 50 300\n"
                + _mtx_entries(300, {}),
    "count.mtx": "%%MatrixMarket matrix coordinate real general\n50 50 300\n"
                 + _mtx_entries(300, {250: "1 2"}),
    "nnz.mtx": "%%MatrixMarket matrix coordinate real general\n50 50 301\n"
               + _mtx_entries(300, {}),
    "token.mtx": "%%MatrixMarket matrix coordinate real general\n50 50 300\n"
                 + _mtx_entries(300, {280: "1 x 2", 290: "1 2 y"}),
    "order.mtx": "%%MatrixMarket matrix coordinate real general\n50 50 300\n"
                 + _mtx_entries(300, {20: "1 2 nan", 280: "51 2 1"}),
    "finite.mtx": "%%MatrixMarket matrix coordinate real general\n50 50 300\n"
                  + _mtx_entries(300, {270: "1 2 inf"}),
    "int-value.mtx": "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n",
    "square.mtx": "%%MatrixMarket matrix coordinate pattern general\n3 4 1\n1 2\n",
    "banner.mtx": "%%MatrixMarket matrix array real general\n3 3\n1\n",
    "no-size.mtx": "%%MatrixMarket matrix coordinate pattern general\n% only comments\n",
    "control.mtx": "%%MatrixMarket matrix coordinate pattern general\n\x1a\n \x01% c\n"
                   "4 4 1\n1 2\n",
    "nul.mtx": "%%MatrixMarket matrix coordinate pattern general\n%\x00\n4 4 1\n1 \x002\n",
}


@pytest.mark.parametrize("ranks", [2, 3])
def test_ranks_read_a_matrix_market_file_in_byte_ranges(tmp_path, ranks):
    read_in_ranges(tmp_path, ranks, "read-mtx", READ_MTX,
                   ("karate.mtx", "west0067.mtx", "bcsstk13.mtx"))
    weighted = {name: READ_MTX[name] for name in ("real.mtx", "integer.mtx", "long.mtx")}
    read_in_ranges(tmp_path, ranks, "read-mtx-weights", weighted, ("bcsstk13.mtx",))


def test_the_ranks_read_in_byte_ranges_what_read_graph_reads_so(tmp_path):
    from gpmetis.distributed.read import plain_format

    text = (FIXTURES / "karate.mtx").read_bytes()
    files = {"a.mtx": text, "a.mtx.gz": text, "banner.txt": text, "unnamed.mtx": b"3 2\n",
             "empty.mtx": b"", "g.graph": (FIXTURES / "4elt.graph").read_bytes()}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    kinds = {name: plain_format(str(tmp_path / name)) for name in files}
    assert kinds == {"a.mtx": "mtx", "a.mtx.gz": None, "banner.txt": "mtx",
                     "unnamed.mtx": "mtx", "empty.mtx": None, "g.graph": "metis"}
    assert plain_format(str(tmp_path)) is None and plain_format(str(tmp_path / "x")) is None


def test_an_interrupt_under_mpiexec_ends_every_rank(tmp_path):
    graph = tmp_path / "rgg.graph"
    shutil.copy(FIXTURES / "rgg_n_2_16_s0.graph", graph)
    path = [str(HERE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    run = subprocess.Popen([MPIEXEC, "-n", "3", sys.executable, "-m", "cli.main", str(graph),
                            "64", "-engine=cpu", "-ncuts=50", "-nooutput"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           cwd=HERE.parent, env={**os.environ, "PYTHONPATH": os.pathsep.join(path)})
    time.sleep(6)  # the ranks are in their runs' collectives
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert run.returncode != 0 and "gpmetis: interrupted" in err


def test_a_rank_with_a_bad_piece_ends_every_rank():
    done = pieces(3, "bad-piece")
    assert done.returncode == 0, done.stderr


def test_gpmetis_under_mpiexec_writes_one_process_part_file(tmp_path):
    graph = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", graph)
    done = mpiexec(3, sys.executable, "-m", "cli.main", str(graph), "8", "-engine=cpu",
                   f"-json={tmp_path / 'r.json'}", cwd=HERE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Edgecut:") == 1 and "Ranks: 3" in done.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["distributed"]["ranks"] == 3
    assert sum(report["distributed"]["vertices"]) == report["graph"]["nvtxs"]
    # the multilevel run's levels and phases, as one process reports them
    assert report["levels"][0]["nvtxs"] == report["graph"]["nvtxs"]
    assert set(report["phases"]) == {"coarsening", "initial", "refinement"}
    part = np.loadtxt(f"{graph}.part.8", dtype=np.int32)
    assert np.array_equal(part, partition(case_graph("4elt"), 8, engine="cpu").part)


def test_gpmetis_under_mpiexec_reads_matrix_market_in_byte_ranges(tmp_path):
    graph = tmp_path / "bcsstk13.mtx"
    shutil.copy(FIXTURES / "bcsstk13.mtx", graph)
    done = mpiexec(2, sys.executable, "-m", "cli.main", str(graph), "8", "-engine=cpu",
                   cwd=HERE.parent)
    assert done.returncode == 0, done.stderr
    part = np.loadtxt(f"{graph}.part.8", dtype=np.int32)
    from gpmetis.io import read_graph

    assert np.array_equal(part, partition(read_graph(graph), 8, engine="cpu").part)


@pytest.mark.parametrize(("text", "message"), [
    ("3 2\n2\n1 3\n9\n", ":4: vertex 3: neighbour 9 is out of range"),
    (READ_FILES["asym.graph"], ":6: vertex 3 lists neighbour 4, but vertex 4 does not list 3"),
    (READ_FILES["mismatch.graph"], ":4: edge 2-3 has weight 4 but edge 3-2 has weight 6"),
])
def test_bad_input_under_mpiexec_one_message_exit_1(tmp_path, text, message):
    graph = tmp_path / "bad.graph"
    graph.write_text(text)
    done = mpiexec(3, sys.executable, "-m", "cli.main", str(graph), "2", "-engine=cpu",
                   cwd=HERE.parent)
    assert done.returncode == 1
    assert done.stderr.count("gpmetis: error:") == 1
    assert f"{graph}{message}" in done.stderr
    assert not list(tmp_path.glob("bad.graph.part.*"))


def test_warnings_under_mpiexec_come_once_with_their_lines(tmp_path):
    graph = tmp_path / "loops.graph"
    graph.write_text(READ_FILES["loops.graph"])
    done = mpiexec(2, sys.executable, "-m", "cli.main", str(graph), "2", "-engine=cpu",
                   cwd=HERE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("gpmetis: warning:") == 2
    assert f"{graph}:3: vertex 1 lists itself as a neighbour; dropped 2 self loops" in done.stderr
    assert "#Vertices: 3, #Edges: 2" in done.stdout


def test_a_killed_rank_ends_the_run_without_a_part_file(tmp_path):
    graph = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", graph)
    start = time.monotonic()
    done = pieces(2, "killed", str(graph))
    assert done.returncode != 0
    assert time.monotonic() - start < 120
    assert not list(tmp_path.glob("4elt.graph.part.*"))


def test_an_mpiexec_of_another_mpi_is_named(tmp_path):
    # the launcher says 2 processes, but MPI sees this one alone (as under an mpiexec of
    # another MPI than mpi4py's): one message, exit 1, nothing written
    graph = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", graph)
    done = subprocess.run([sys.executable, "-m", "cli.main", str(graph), "2", "-engine=cpu"],
                          capture_output=True, text=True, timeout=120, cwd=HERE.parent,
                          env={**os.environ, "PMI_SIZE": "2"})
    assert done.returncode == 1
    assert "mpiexec started 2 processes but MPI sees 1" in done.stderr
    assert not list(tmp_path.glob("4elt.graph.part.*"))


def test_usage_errors_and_edge_partitions_under_mpiexec_come_once(tmp_path):
    graph = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", graph)
    done = mpiexec(3, sys.executable, "-m", "cli.main", str(graph), "4", "-ufactor=-5",
                   cwd=HERE.parent)
    assert done.returncode == 2 and done.stderr.count("gpmetis: error:") == 1
    done = mpiexec(3, sys.executable, "-m", "cli.main", str(graph), "4", "-edgepart",
                   "-engine=cpu", cwd=HERE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("gpmetis edge partitioning (SPAC)") == 1
    assert [p.name for p in tmp_path.glob("4elt.graph.*")] == ["4elt.graph.edgepart.4"]


def test_gpus_option_is_checked(tmp_path):
    graph = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", graph)

    def gpmetis(*args: str):
        return subprocess.run([sys.executable, "-m", "cli.main", str(graph), "8", *args],
                              capture_output=True, text=True, timeout=120, cwd=HERE.parent)

    for args in (["-gpus=x"], ["-gpus=0"], ["-gpus=2", "-engine=cpu"]):
        done = gpmetis(*args)
        assert done.returncode == 2 and "option -gpus" in done.stderr, (args, done.stderr)
    # under mpiexec, -gpus must agree with the ranks
    done = mpiexec(2, sys.executable, "-m", "cli.main", str(graph), "8", "-gpus=3",
                   cwd=HERE.parent)
    assert done.returncode == 2 and done.stderr.count("option -gpus") == 1, done.stderr
    from gpmetis.backend import cuda_available

    if not cuda_available():
        done = gpmetis("-gpus=2")
        assert done.returncode == 2 and "CUDA device" in done.stderr
    assert not list(tmp_path.glob("4elt.graph.part.*"))


def test_a_run_spawned_on_ranks_gives_one_process_result_and_errors():
    # gpus=N's machinery (the ranks of mpiexec map the graph's blocks), on the cpu engine
    from gpmetis.distributed.spawn import partition_on_gpus
    from gpmetis.errors import OptionError
    from gpmetis.options import Options

    graph = case_graph("4elt")
    got = partition_on_gpus(graph, 8, Options(engine="cpu").validate(), 2)
    one = partition(graph, 8, engine="cpu")
    assert np.array_equal(got.part, one.part) and got.edgecut == one.edgecut
    assert got.stats["distributed"]["ranks"] == 2
    with pytest.raises(OptionError, match="-rtype"):  # the ranks' error, as one process's
        partition_on_gpus(graph, 8, Options(engine="cpu", rtype="fm").validate(), 2)
    for bad in ({"gpus": "x"}, {"gpus": 0}, {"gpus": 2, "engine": "cpu"}):
        with pytest.raises(OptionError, match="-gpus"):
            partition(graph, 8, **bad)
