"""Hostile and careless options, numbers and output paths (issue 36): each case ends in a
message naming the option, file or limit with the right exit status (usage 2, input/run 1), or
in a correct result with exact numbers; a failed run writes nothing."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from cli.main import main
from gpmetis import partition
from gpmetis.backend import get_backend
from gpmetis.errors import InputError, OptionError, PartitionError
from gpmetis.graph import Graph
from gpmetis.io import read_graph
from gpmetis.limits import check_limits
from gpmetis.metrics import part_weights
from gpmetis.options import NPARTS_SPARE, Options, check_nparts
from gpmetis.validation import INT64_MAX, exact_total

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def grid_file(path: Path, side: int = 10, ew: int | None = None, vw=None) -> Path:
    """A side x side grid in METIS format, with edge weight ``ew`` and vertex weights
    ``vw(v)`` where given."""
    n = side * side
    rows = []
    for i in range(n):
        r, c = divmod(i, side)
        nbrs = [u for u, ok in ((i - side, r > 0), (i + side, r < side - 1),
                                (i - 1, c > 0), (i + 1, c < side - 1)) if ok]
        tokens = [] if vw is None else [str(vw(i))]
        for u in nbrs:
            tokens += [str(u + 1)] + ([] if ew is None else [str(ew)])
        rows.append(" ".join(tokens))
    fmt = f"{int(vw is not None)}{int(ew is not None)}"
    m = 2 * side * (side - 1)
    path.write_text(f"{n} {m} {fmt}\n" + "\n".join(rows) + "\n")
    return path


def reported_cut(output: str) -> int:
    line = next(ln for ln in output.splitlines() if "Edgecut:" in ln)
    return int(line.split("Edgecut:")[1].split(",")[0])


def file_cut(graph: Graph, part: np.ndarray) -> int:
    src = graph.sources()
    return sum(int(w) for w in graph.adjwgt[part[src] != part[graph.adjncy]]) // 2


# ------------------------------------------------------------------------- numbers that overflow


@pytest.mark.parametrize("engine", ["cpu", "metis"])
@pytest.mark.parametrize("weights,words", [
    ({"ew": 10**17}, "edge weights add up to 36000000000000000000"),
    ({"ew": 10**18 - 1}, "edge weights add up to"),
    ({"vw": lambda v: 10**17}, "vertex weights add up to 10000000000000000000"),
])
def test_weight_totals_past_int64_are_refused(tmp_path, engine, weights, words):
    path = grid_file(tmp_path / "g.graph", **weights)
    result = run(path, 7, f"-engine={engine}")
    assert result.exit_code == 1, result.output
    assert words in result.output and "2^63-1" in result.output and str(path) in result.output
    assert not (tmp_path / "g.graph.part.7").exists()


def test_metis_engine_reports_the_exact_cut_of_huge_weights(tmp_path):
    path = grid_file(tmp_path / "g.graph", ew=10**15)  # total 3.6e17: fits METIS's int64
    result = run(path, 7, "-engine=metis")
    assert result.exit_code == 0, result.output
    part = np.loadtxt(tmp_path / "g.graph.part.7", dtype=np.int64)
    cut = reported_cut(result.output)
    assert cut == file_cut(read_graph(path), part) and cut % 10**15 == 0 and cut > 0


@pytest.mark.parametrize("engine", ["cpu", "metis"])
def test_a_run_that_would_not_fit_in_memory_is_refused(tmp_path, monkeypatch, engine):
    # a few bytes of Matrix Market can declare 10^8 vertices: the run is refused up front
    import gpmetis.limits

    path = grid_file(tmp_path / "g.graph", side=10)
    need = (100 * gpmetis.limits.RUN_VERTEX_BYTES[engine]
            + 360 * gpmetis.limits.RUN_ENTRY_BYTES[engine])
    monkeypatch.setattr(gpmetis.limits, "available_memory", lambda: need - 1)
    result = run(path, 2, f"-engine={engine}")
    assert result.exit_code == 1, result.output
    assert f"{path}: the {engine} engine needs about" in result.output
    assert "100 vertices and 180 edges" in result.output
    assert not list(tmp_path.glob("g.graph.part.*"))
    monkeypatch.setattr(gpmetis.limits, "available_memory", lambda: 1 << 40)
    assert run(path, 2, f"-engine={engine}").exit_code == 0


def test_check_limits_catches_graphs_built_without_the_readers():
    # a Graph made directly (as a reader that skips validation could) is still checked exactly
    xadj = np.array([0, 1, 2], np.int64)
    adjncy = np.array([1, 0], np.int32)
    big = np.array([2**62, 2**62], np.int64)  # 2^63 in all: an int64 sum wraps to negative
    g = Graph(xadj, adjncy, np.ones((2, 1), np.int64), big, has_adjwgt=True)
    with pytest.raises(InputError, match="9223372036854775808"):
        check_limits(g, 2, "metis")
    heavy = Graph(xadj, adjncy, np.array([[2**61], [1]], np.int64), np.ones(2, np.int64),
                  has_vwgt=True)
    with pytest.raises(PartitionError, match="heaviest vertex"):
        check_limits(heavy, 5, "metis")


def test_exact_total_is_exact_where_int64_sums_wrap():
    rng = np.random.default_rng(3)
    values = rng.integers(2**60, 2**63 - 1, size=100_000, dtype=np.int64)
    factor = rng.integers(0, 2**31 - 1, size=len(values), dtype=np.int64)
    assert exact_total(values) == sum(int(x) for x in values)
    assert exact_total(values, factor) == sum(int(x) * int(f) for x, f in zip(values, factor))
    assert exact_total(values[:3]) > INT64_MAX
    small = values[:1000] >> 40
    assert exact_total(small, factor[:1000]) == int(np.dot(small, factor[:1000]))


def test_part_weights_are_exact_past_float_precision():
    w = np.array([[2**60 + 1], [2**60 + 3], [5], [2**53 + 1]], np.int64)
    part = np.array([0, 0, 1, 1], np.int32)
    pw = part_weights(get_backend("cpu"), w, part, 3)
    assert pw.tolist() == [[2**61 + 4], [2**53 + 6], [0]]


@pytest.mark.parametrize("engine", ["cpu", "metis"])
def test_balance_bound_is_not_an_int32_product(tmp_path, engine):
    # nparts * heaviest vertex = 32 * 2^27 = 2^32 wrapped to 0 in int32 ('out of 0.000')
    path = grid_file(tmp_path / "g.graph", vw=lambda v: 2**27 if v == 0 else 1)
    result = run(path, 32, f"-engine={engine}", "-nooutput")
    assert result.exit_code == 0, result.output
    bound = 32 * 2**27 / (2**27 + 99)
    assert f"out of {bound:5.3f}" in result.output


# ------------------------------------------------------------------------- NPARTS


@pytest.mark.parametrize("nparts,engine,words", [
    ("1000000000", "cpu", "more parts than vertices are allowed only up to 1024"),
    ("100000000000000000000000", "cpu", "between 1 and 2147483647"),
    ("10000000", "metis", "more parts than vertices"),
    ("\u0663", "cpu", "digits 0-9"),  # ARABIC-INDIC DIGIT THREE: int() would take it
    ("1_0", "cpu", "digits 0-9"),
    ("+4", "cpu", "digits 0-9"),
])
def test_nparts_bounds_are_usage_errors(tmp_path, nparts, engine, words):
    path = grid_file(tmp_path / "g.graph", side=2)
    result = run(path, nparts, f"-engine={engine}")
    assert result.exit_code == 2, result.output
    assert "NPARTS" in result.output and words in result.output
    assert "Traceback" not in result.output
    assert not list(tmp_path.glob("g.graph.part.*"))


def test_check_nparts_bounds():
    check_nparts(NPARTS_SPARE, 4)
    check_nparts(5000, 5000)
    for nparts, nvtxs in ((NPARTS_SPARE + 1, 4), (5001, 5000), (0, 4), (2**31, 2**31), (True, 4)):
        with pytest.raises(OptionError, match="NPARTS"):
            check_nparts(nparts, nvtxs)


# ------------------------------------------------------------------------- option ranges


@pytest.mark.parametrize("arg,option", [
    *[(f"-{name}={value}", f"-{name}")
      for name in ("ufactor", "niter", "ncuts", "seed", "dbglvl")
      for value in ("99999999999999999999", str(2**63), str(2**64), "7" * 5000)],
    ("-seed=-" + "7" * 5000, "-seed"),
    ("-ncuts=2147483648", "-ncuts"),
    ("-ncuts=1001", "-ncuts"),
    ("-niter=0", "-niter"),
    ("-seed=1_0", "-seed"),
    ("-ufactor=\u0663", "-ufactor"),
    ("-ubvec=inf", "-ubvec"),
    ("-ubvec=1e308", "-ubvec"),
    ("-ubvec=nan", "-ubvec"),
    ("-ubvec=1.05 1.05", "-ubvec"),  # more values than the graph's one constraint
    ("-ubvec=1_1", "-ubvec"),  # Python's float() reads 11; METIS's strtod does not
    ("-ubvec=1.0\u0665", "-ubvec"),
    ("-o=", "-output"),
    ("-json=", "-json"),
])
@pytest.mark.parametrize("engine", ["cpu", "metis"])
def test_option_values_are_range_checked(tmp_path, arg, option, engine):
    path = grid_file(tmp_path / "g.graph", side=3)
    result = run(path, 2, f"-engine={engine}", arg)
    assert result.exit_code == 2, result.output
    assert option in result.output and "Traceback" not in result.output
    assert not list(tmp_path.glob("g.graph.part.*"))


def test_option_ranges_hold_for_the_api():
    for kwargs in ({"ufactor": 2**63}, {"ncuts": 2**31}, {"seed": 2**64}, {"dbglvl": -1},
                   {"ubvec": (float("inf"),)}, {"niter": 1.5}, {"output": ""}):
        with pytest.raises(OptionError, match=next(iter(kwargs))):
            Options.from_kwargs(**kwargs)
    Options.from_kwargs(seed=-5, ncuts=1000, ufactor=2**31 - 1, ubvec="1.5")


@pytest.mark.parametrize("engine", ["cpu", "metis"])
@pytest.mark.parametrize("ptype", ["kway", "rb"])
@pytest.mark.parametrize("ubvec", ["1.0001", "1.0005"])
def test_ubvec_just_above_one_is_honoured(tmp_path, engine, ptype, ubvec):
    # METIS's ufactor for these rounds to 0, which METIS refuses: its runs take 1, the limit
    # stays -ubvec's, and every part within it is kept or named in a warning
    path = grid_file(tmp_path / "g.graph", side=12)
    out = tmp_path / "g.part"
    result = run(path, 6, f"-engine={engine}", f"-ptype={ptype}", f"-ubvec={ubvec}", "-o", out)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "error" not in result.output
    pwgts = np.bincount(np.loadtxt(out, dtype=np.int64), minlength=6)
    assert (pwgts <= 24).all() or " above " in result.output, pwgts
    graph = read_graph(str(path))
    api = partition(graph, 6, engine=engine, ptype=ptype, ubvec=[float(ubvec)])
    assert len(np.unique(api.part)) == 6


def test_negative_seed_and_bounds_are_accepted(tmp_path):
    path = grid_file(tmp_path / "g.graph", side=4)
    result = run(path, 2, "-engine=metis", "-seed=-7", "-niter=2147483647", "-quiet")
    assert result.exit_code == 0, result.output


def test_tiny_tpwgts_fraction_is_an_input_error(tmp_path):
    path = grid_file(tmp_path / "g.graph", side=3)
    tp = tmp_path / "tp"
    tp.write_text("0 = 1e-300\n")
    result = run(path, 2, "-engine=metis", f"-tpwgts={tp}")
    assert result.exit_code == 1, result.output
    assert f"{tp}:1" in result.output and "Traceback" not in result.output


def test_tpwgts_fractions_are_decimals_as_strtod_reads_them(tmp_path):
    path = grid_file(tmp_path / "g.graph", side=3)
    tp = tmp_path / "tp"
    tp.write_text("0 = 0.1_5\n")
    result = run(path, 2, f"-tpwgts={tp}")
    assert result.exit_code == 1 and f"{tp}:1" in result.output, result.output
    tp.write_text("0 = .25\n1 = 7.5e-1\n")
    assert run(path, 2, f"-tpwgts={tp}", "-quiet").exit_code == 0


@pytest.mark.parametrize("line", ["1 0 = 0.5", "0 = 0. 2 5"])
def test_tpwgts_white_space_inside_a_number_is_an_input_error(tmp_path, line):
    """METIS 5.1 drops every space of the line, reading part 10 or the fraction 0.25."""
    path = grid_file(tmp_path / "g.graph", side=5)
    tp = tmp_path / "tp"
    tp.write_text(f"% targets\n{line}\n")
    result = run(path, 16, f"-tpwgts={tp}")
    assert result.exit_code == 1, result.output
    assert f"{tp}:2" in result.output and "white space inside" in result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert not list(tmp_path.glob("g.graph.part.*"))


def test_tpwgts_ids_of_thousands_of_digits_are_an_input_error(tmp_path):
    path = grid_file(tmp_path / "g.graph", side=3)
    tp = tmp_path / "tp"
    tp.write_text("0 = 0.5\n" + "1" * 5000 + " = 0.5\n")
    result = run(path, 2, f"-tpwgts={tp}")
    assert result.exit_code == 1, result.output
    assert f"{tp}:2" in result.output and "digits" in result.output
    assert not list(tmp_path.glob("g.graph.part.*"))


def test_nparts_of_thousands_of_digits_is_a_usage_error(tmp_path):
    path = grid_file(tmp_path / "g.graph", side=3)
    result = run(path, "1" * 5000)
    assert result.exit_code == 2 and "NPARTS" in result.output, result.output


# ------------------------------------------------------------------------- output paths


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    return grid_file(tmp_path / "g.graph", side=6)


def test_output_naming_the_input_is_refused(graph_file):
    before = graph_file.read_bytes()
    for args in ([f"-o={graph_file}"], [f"-o={graph_file.parent}/./g.graph"],
                 [f"-json={graph_file}"]):
        result = run(graph_file, 2, "-engine=cpu", *args)
        assert result.exit_code == 2, result.output
        assert "input graph" in result.output
    assert graph_file.read_bytes() == before


def test_json_naming_the_part_file_is_refused(graph_file, tmp_path):
    out = tmp_path / "out.part"
    for args in ([f"-o={out}", f"-json={out}"], [f"-json={graph_file}.part.2"]):
        result = run(graph_file, 2, "-engine=cpu", *args)
        assert result.exit_code == 2, result.output
        assert "-json" in result.output and "partition file" in result.output
    assert not out.exists() and not Path(f"{graph_file}.part.2").exists()


def test_character_device_output_is_written_not_replaced(graph_file):
    before = os.stat(os.devnull)
    result = run(graph_file, 2, "-engine=cpu", f"-o={os.devnull}", f"-json={os.devnull}")
    assert result.exit_code == 0, result.output
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_fifo_output_is_written_into(graph_file, tmp_path):
    fifo = tmp_path / "parts.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run(graph_file, 2, "-engine=cpu", f"-o={fifo}", "-quiet")
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert len(got[0].split()) == 36


def test_unwritable_json_writes_no_part_file(graph_file, tmp_path):
    result = run(graph_file, 2, "-engine=cpu", f"-json={tmp_path}/missing/r.json")
    assert result.exit_code == 1, result.output
    assert "missing/r.json" in result.output
    assert not Path(f"{graph_file}.part.2").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["g.graph"]  # no temporary file either


@pytest.mark.parametrize("redirect,why", [("> /dev/full", "No space left"), (">&-", "closed")])
def test_stdout_that_cannot_be_written_is_a_run_error(graph_file, redirect, why):
    cmd = f"exec {sys.executable} -m cli.main {graph_file} 2 -engine=cpu {redirect}"
    proc = subprocess.run(["bash", "-c", cmd], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert why in proc.stderr and "standard output" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not Path(f"{graph_file}.part.2").exists()


def test_closed_stdout_with_quiet_runs(graph_file):
    cmd = f"exec {sys.executable} -m cli.main {graph_file} 2 -engine=cpu -quiet >&-"
    proc = subprocess.run(["bash", "-c", cmd], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(Path(f"{graph_file}.part.2").read_text().split()) == 36


def test_sigint_exits_130_without_traceback_or_file(tmp_path):
    graph = tmp_path / "4elt.graph"
    graph.write_bytes((FIXTURES / "4elt.graph").read_bytes())
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", str(graph), "8", "-engine=cpu",
                             "-ncuts=1000"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(3.0)  # past the imports, inside the 1000 cuts
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert [p.name for p in tmp_path.iterdir()] == ["4elt.graph"]
