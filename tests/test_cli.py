"""The ``gpmetis`` command as a METIS user runs it: options, output file, summary, errors."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pymetis
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, check_partition, load_fixture

from cli.main import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", path)
    return path


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def read_part(path: Path) -> np.ndarray:
    return np.loadtxt(path, dtype=np.int64, ndmin=1)


def test_writes_metis_part_file_and_summary(graph_file):
    result = run(graph_file, 8)
    assert result.exit_code == 0, result.output
    part = read_part(graph_file.with_name("4elt.graph.part.8"))
    graph = load_fixture("4elt")
    check_partition(graph, part, 8)
    for line in ("- Edgecut:", "communication volume:", "- Balance:", "constraint #0:",
                 "- Most overweight partition:", "- Subdomain connectivity:",
                 "Timing Information", "Max memory used:", "#Vertices: 15606", "engine"):
        assert line in result.output
    cut_line = [ln for ln in result.output.splitlines() if "Edgecut:" in ln][0]
    cut = int(cut_line.split("Edgecut:")[1].split(",")[0])
    src = graph.sources()
    assert cut == int((part[src] != part[graph.adjncy]).sum()) // 2


def test_cut_close_to_pymetis(graph_file):
    result = run(graph_file, 16, "-nooutput", "-json", graph_file.with_suffix(".json"))
    assert result.exit_code == 0, result.output
    report = json.loads(graph_file.with_suffix(".json").read_text())
    graph = load_fixture("4elt")
    ref = pymetis.part_graph(16, pymetis.CSRAdjacency(graph.xadj, graph.adjncy)).edge_cuts
    assert report["metrics"]["edgecut"] <= 1.03 * ref
    assert max(report["metrics"]["imbalance"]) <= 1.03 + 1e-9
    assert not graph_file.with_name("4elt.graph.part.16").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["-ufactor=100"], ["-ptype=rb"], ["-ptype=kway"], ["-seed=7"], ["-ctype=rm"],
        ["-ctype=shem"], ["-iptype=grow", "-ptype=rb"], ["-iptype=metisrb"], ["-objtype=vol"],
        ["-objtype=cut"], ["-niter=3"], ["-ncuts=2"], ["-no2hop"], ["-minconn"], ["-contig"],
        ["-dbglvl=0"], ["-ubvec=1.05"], ["-rtype=fm"], ["-engine=metis"], ["-engine=cpu"],
        ["-time"], ["-quiet"],
    ],
)
def test_every_metis_option_is_accepted(graph_file, args):
    result = run(graph_file, 4, *args)
    assert result.exit_code == 0, result.output
    part = read_part(graph_file.with_name("4elt.graph.part.4"))
    ufactor = 100 if "-ufactor=100" in args else 50 if "-ubvec=1.05" in args else 30
    check_partition(load_fixture("4elt"), part, 4, ufactor=ufactor)


def test_ufactor_is_honoured(graph_file):
    tight = run(graph_file, 8, "-ufactor=5", "-engine=cpu")
    assert tight.exit_code == 0, tight.output
    check_partition(load_fixture("4elt"), read_part(graph_file.with_name("4elt.graph.part.8")),
                    8, ufactor=5)


def test_tpwgts_file(graph_file, tmp_path):
    tp = tmp_path / "tp.txt"
    tp.write_text("0 = 0.5\n1 = 0.25\n2 = 0.25\n")
    result = run(graph_file, 3, f"-tpwgts={tp}", "-engine=metis")
    assert result.exit_code == 0, result.output
    part = read_part(graph_file.with_name("4elt.graph.part.3"))
    share = np.bincount(part, minlength=3) / len(part)
    assert share[0] > 0.45 and share[1] < 0.3


def test_output_option_and_json(graph_file, tmp_path):
    out = tmp_path / "p.txt"
    rep = tmp_path / "r.json"
    result = run(graph_file, 2, f"-o={out}", f"-json={rep}", "-engine=cpu")
    assert result.exit_code == 0, result.output
    assert len(read_part(out)) == 15606
    report = json.loads(rep.read_text())
    assert report["engine"] == "cpu" and report["nparts"] == 2
    assert report["levels"] and report["levels"][0]["nvtxs"] == 15606


@pytest.mark.parametrize(
    "args,needle",
    [
        (["-rtype=fm", "-engine=cpu"], "-rtype"),
        (["-iptype=node", "-engine=cpu"], "-iptype"),
        (["-ondisk"], "-ondisk"),
        (["-engine=gpu"], "-engine"),
        (["-ufactor=abc"], "-ufactor"),
        (["-ptype=xyz"], "-ptype"),
        (["-bogus=3"], "-bogus"),
        (["-ubvec=1.0"], "-ubvec"),
    ],
)
def test_options_that_cannot_be_honoured_fail_clearly(graph_file, args, needle):
    if args == ["-engine=gpu"]:
        from gpmetis.backend import cuda_available

        if cuda_available():
            pytest.skip("a GPU is usable here, so -engine=gpu is honoured")
    part_file = graph_file.with_name("4elt.graph.part.4")
    part_file.write_text("keep me\n")
    result = run(graph_file, 4, *args)
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert part_file.read_text() == "keep me\n"


def test_help_is_metis_option_reference():
    """METIS 5.1's layout: usage, required parameters, then each option (gpmetis's own too)
    on a line of its own, each value of a choice with what it does, the defaults marked."""
    import click

    result = run("-help")
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith("\nUsage: gpmetis [options] graphfile nparts\n\n Required parameters\n")
    assert "\n Optional parameters\n" in text and "[OPTIONS]" not in text
    lines = text.splitlines()
    headers = [ln for ln in lines if ln.startswith("  -")]
    for param in main.params:
        if isinstance(param, click.Option):
            for opt in (o for o in param.opts if not o.startswith("--")):  # click's aliases
                assert any(re.match(rf"  (.*, )?{opt}(=\w+)?(,| |$)", h) for h in headers), opt
        if isinstance(param.type, click.Choice):
            for value in param.type.choices:
                assert any(re.match(rf" {{8}}{value} +- ", ln) for ln in lines), value
    for default in ("Direct k-way partitioning [default]", "Default is 10.", "Default is 1.",
                    "30 for", "[default of -engine=metis]", "graphfile.part.nparts"):
        assert default in text


@pytest.mark.parametrize("args", [["G", "8", "-foo"], ["G", "8", "-ptype=xx"], [],
                                  ["G", "8", "-ufactor=-5"], ["G", "-5"], ["G", "8", "extra"],
                                  ["G", "8", "-ptype"]])
def test_usage_errors_are_one_line_with_one_hint(graph_file, args):
    args = [graph_file if a == "G" else a for a in args]
    out = subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("gpmetis: error: ")
    assert out.stderr.rstrip().endswith("(see 'gpmetis -help')") and "Try" not in out.stderr
    assert not list(graph_file.parent.glob("*.part.*"))


@pytest.mark.parametrize("nparts", ["0", "-3", "x"])
def test_bad_nparts_is_a_usage_error(graph_file, nparts):
    result = run(graph_file, nparts)
    assert result.exit_code == 2
    assert "NPARTS" in result.output or "nparts" in result.output.lower()


def test_nparts_larger_than_n(tmp_path):
    path = tmp_path / "tiny.graph"
    path.write_text("3 2\n2\n1 3\n2\n")
    result = run(path, 5, "-engine=cpu")
    assert result.exit_code == 0, result.output
    part = read_part(path.with_name("tiny.graph.part.5"))
    assert len(np.unique(part)) == 3 and part.max() < 5


def test_one_part(graph_file):
    result = run(graph_file, 1)
    assert result.exit_code == 0, result.output
    assert (read_part(graph_file.with_name("4elt.graph.part.1")) == 0).all()
    assert "Edgecut: 0," in result.output


BAD_INPUTS = {
    "missing": None,
    "empty": b"",
    "bad_header": b"3 x\n2\n1 3\n2\n",
    "count_mismatch": b"3 5\n2\n1 3\n2\n",
    "out_of_range": b"3 2\n2\n1 4\n2\n",
    "non_numeric": b"3 2\n2\n1 three\n2\n",
    "zero_weight": b"3 2 1\n2 0\n1 0 3 1\n2 1\n",
    "negative_weight": b"3 2 1\n2 -1\n1 -1 3 1\n2 1\n",
    "asymmetric": b"3 2\n2 3\n1\n2\n",
    "asymmetric_weights": b"3 2 1\n2 5\n1 4 3 1\n2 1\n",
    "too_few_lines": b"4 2\n2\n1 3\n2\n",
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_fails_with_file_and_no_output(tmp_path, case):
    path = tmp_path / f"{case}.graph"
    if BAD_INPUTS[case] is not None:
        path.write_bytes(BAD_INPUTS[case])
    out = tmp_path / f"{case}.graph.part.2"
    out.write_text("previous\n")
    result = run(path, 2)
    assert result.exit_code == 1, result.output
    assert str(path) in result.output
    assert out.read_text() == "previous\n"


def test_bad_line_is_named(tmp_path):
    path = tmp_path / "g.graph"
    path.write_bytes(b"% comment\n3 2\n2\n1 4\n2\n")
    result = run(path, 2)
    assert result.exit_code == 1
    assert f"{path}:4" in result.output


def test_truncated_gzip(tmp_path):
    data = gzip.compress((FIXTURES / "4elt.graph").read_bytes())
    path = tmp_path / "4elt.graph.gz"
    path.write_bytes(data[: len(data) // 2])
    result = run(path, 2)
    assert result.exit_code == 1
    assert str(path) in result.output
    assert not (tmp_path / "4elt.graph.gz.part.2").exists()


def test_matrix_market_input(tmp_path):
    path = tmp_path / "bcsstk13.mtx"
    shutil.copy(FIXTURES / "bcsstk13.mtx", path)
    result = run(path, 4)
    assert result.exit_code == 0, result.output
    assert len(read_part(path.with_name("bcsstk13.mtx.part.4"))) == 2003


def test_self_loop_warning(tmp_path):
    path = tmp_path / "loop.graph"
    path.write_bytes(b"3 3\n1 2\n1 2 3\n2\n")
    result = run(path, 2)
    assert result.exit_code == 0, result.output
    assert "warning" in result.output and f"{path}:2" in result.output


def test_entry_point_runs_as_a_program(graph_file):
    proc = subprocess.run(
        [sys.executable, "-m", "cli.main", str(graph_file), "2", "-nooutput"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Edgecut:" in proc.stdout
    assert "\x1b[" not in proc.stdout, "piped output must be plain text"


def test_metis_prints_go_to_stderr_and_json_to_stdout_stays_json(graph_file, tmp_path):
    # METIS's own printf output (-dbglvl, k > n) must not reach stdout: -quiet prints nothing
    # there, and the report written to /dev/stdout is JSON alone
    proc = subprocess.run(
        [sys.executable, "-m", "cli.main", str(graph_file), "4", "-engine=metis", "-dbglvl=1",
         "-quiet", "-nooutput", "-json=/dev/stdout"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["nparts"] == 4
    assert "Runtime parameters" in proc.stderr
    one = tmp_path / "one.graph"
    one.write_text("1 0\n\n")
    proc = subprocess.run([sys.executable, "-m", "cli.main", str(one), "5", "-quiet",
                           "-nooutput"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout


@pytest.mark.parametrize("graph", ["4elt", "small"])
def test_our_engines_metis_trials_print_nothing_unless_dbglvl(tmp_path, graph):
    # tpwgts giving part 0 almost everything make METIS's trials warn ("Cannot bisect a graph
    # with 0 vertices") on the workers (4elt) and in this process (a small graph): the trials
    # are the engine's, so nothing reaches the user but with -dbglvl
    path = FIXTURES / "4elt.graph"
    if graph == "small":
        path = tmp_path / "grid.graph"  # 6 x 6
        rows = [" ".join(str(u + 1) for u, ok in ((i - 6, i >= 6), (i + 6, i < 30),
                                                  (i - 1, i % 6 > 0), (i + 1, i % 6 < 5)) if ok)
                for i in range(36)]
        path.write_text("36 60\n" + "\n".join(rows) + "\n")
    tpwgts = tmp_path / "tpwgts"
    tpwgts.write_text("0 = 0.999\n")
    command = [sys.executable, "-m", "cli.main", str(path), "4", "-engine=cpu",
               f"-tpwgts={tpwgts}", "-nooutput"]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    for line in ("***Cannot bisect", "***You are trying"):
        assert line not in proc.stdout + proc.stderr, proc.stderr
    shown = subprocess.run([*command, "-dbglvl=1"], capture_output=True, text=True, cwd=ROOT)
    assert shown.returncode == 0 and "***Cannot bisect" in shown.stderr, shown.stderr
    assert "***Cannot bisect" not in shown.stdout


def test_program_exit_leaves_no_worker_running(graph_file):
    # the program leaves through os._exit: its METIS workers must be stopped, not orphaned
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", str(graph_file), "4", "-engine=cpu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        start_new_session=True,
    )
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "Edgecut:" in stdout
    nvtxs = int(graph_file.read_text().split()[0])
    assert len(Path(f"{graph_file}.part.4").read_text().split()) == nvtxs
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # nothing of the command's session is left


def test_gpu_path_reads_in_a_child_and_reports_input_errors(tmp_path):
    # -engine=gpu reads the file while CUDA starts (on the GPU where it can): a bad line must
    # still be reported with file:line, exit status 1 and no part file
    bad = tmp_path / "bad.graph"
    bad.write_text("3 2\n2\n1 x\n2\n")
    proc = subprocess.run(
        [sys.executable, "-m", "cli.main", str(bad), "2", "-engine=gpu"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 1, proc.stderr
    assert f"{bad}:3" in proc.stderr
    assert not list(tmp_path.glob("bad.graph.part.*"))
