"""The ``gpmetis`` summary on METIS 5.1's line numbers, the JSON report's keys and version, and
the summary's colours (on a terminal only)."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURES

import gpmetis
from cli.main import main, summary_text
from gpmetis.report import REPORT_FORMAT_VERSION

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "json-report.md"
RULE = "*" * 78
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def section(title: str) -> str:
    """METIS 5.1's section line: 77 characters."""
    return f"{title} {'-' * (76 - len(title))}"


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", path)
    return path


def summary(*args: object) -> list[str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def metis_layout(heading: str, ufactor: str, ncon: int, contiguity: list[str]) -> dict[int, str]:
    """METIS 5.1 gpmetis's summary as it prints it (`gpmetis 4elt.graph 8 -nooutput`, with
    -ptype=rb, and with a two-constraint graph): 1-based line number -> the line or its start.
    ``contiguity``: the contiguity report's lines up to the timing heading (contiguity_report);
    the lines after it move with it, as METIS's do."""
    c = ncon - 1  # METIS adds " Balancing constraints" and one line per constraint
    lines = {
        1: RULE,
        5: "",
        6: section("Graph Information"),
        7: " Name: ",
        8 + c: "",
        9 + c: section("Options"),
        10 + c: " ptype=",
        11 + c: f" dbglvl=0, ufactor={ufactor}, no2hop=NO, minconn=NO, contig=NO, nooutput=YES",
        12 + c: " seed=-1, niter=10, ncuts=1",
        13 + c: "",
        14 + c: section(heading),
        15 + c: " - Edgecut: ",
        16 + c: "",
        17 + c: " - Balance:",
    }
    n = 18 + c
    for k in range(ncon):
        lines[n + k] = f"     constraint #{k}:  "
    n += ncon
    lines[n] = ""
    if ncon == 1:  # METIS prints the most overweight partition of one constraint only
        lines.update({n + 1: " - Most overweight partition:", n + 2: "     pid: ", n + 3: ""})
        n += 3
    lines.update({n + 1: " - Subdomain connectivity: max: ", n + 2: ""})
    n += 2
    lines.update({n + 1 + k: line for k, line in enumerate(contiguity)})
    n += len(contiguity)
    lines.update({
        n + 1: section("Timing Information"),
        n + 2: "  I/O:          \t\t ",
        n + 3: "  Partitioning: \t\t ",
        n + 4: "  Reporting:    \t\t ",
        n + 5: "",
        n + 6: section("Memory Information"),
        n + 7: "  Max memory used:\t\t ",
    })
    return lines


def contiguity_report(lines: list[str], ncon: int) -> list[str]:
    """METIS 5.1's contiguity report for the case ``lines`` shows (its first line is on METIS's
    line 20 + 2 ncon, three lines later with the most overweight partition of one constraint),
    up to the timing heading: a blank line ends it, but for a disconnected graph, whose
    report METIS ends without a line break."""
    first = lines[20 + 2 * ncon + (3 if ncon == 1 else 0) - 1]
    if first == " - Each partition is contiguous.":
        return [first, ""]
    if first.startswith(" - There are "):
        return [" - There are ", "   Total components after removing the cut edges: ",
                "   max components: ", ""]
    return [" - The original graph had ", "   partitioning after removing the cut edges has "]


def check_layout(lines: list[str], expected: dict[int, str]) -> None:
    for number, start in expected.items():
        line = lines[number - 1]
        assert line == start if start in ("", RULE) or start.endswith("-") else \
            line.startswith(start), f"line {number}: {line!r}, METIS prints {start!r}..."


@pytest.mark.parametrize("ptype,heading,ufactor", [
    ("kway", "Direct k-way Partitioning", "1.030"),
    ("rb", "Recursive Partitioning", "1.001"),
])
def test_summary_has_metis_lines_on_metis_line_numbers(graph_file, ptype, heading, ufactor):
    lines = summary(graph_file, 8, f"-ptype={ptype}", "-engine=cpu", "-nooutput")
    expected = metis_layout(heading, ufactor, 1, contiguity_report(lines, 1))
    assert lines[6] == f" Name: {graph_file}, #Vertices: 15606, #Edges: 45878, #Parts: 8"
    check_layout(lines, expected)
    last = max(expected)
    # gpmetis's own lines after METIS's, the closing rule last
    assert lines[last] == "  Engine: cpu (-engine=cpu)"
    assert lines[-1] == RULE and RULE not in lines[1:-1]


def test_multi_constraint_summary_on_metis_line_numbers(tmp_path: Path):
    graph = gpmetis.read_graph(FIXTURES / "4elt.graph")
    weights = np.stack([np.arange(graph.nvtxs) % 3 + 1, np.arange(graph.nvtxs) % 5 + 1], axis=1)
    rows = [" ".join(map(str, [*weights[v], *(graph.adjncy[graph.xadj[v]:graph.xadj[v + 1]] + 1)]))
            for v in range(graph.nvtxs)]
    path = tmp_path / "mc.graph"
    path.write_text(f"{graph.nvtxs} {graph.nedges} 010 2\n" + "\n".join(rows) + "\n")
    lines = summary(path, 8, "-engine=cpu", "-nooutput")
    assert lines[7] == " Balancing constraints: 2"
    check_layout(lines, metis_layout("Direct k-way Partitioning", "1.030", 2,
                                     contiguity_report(lines, 2)))


def test_disconnected_graph_summary_on_metis_line_numbers(tmp_path: Path):
    """Three components in two parts: METIS 5.1 prints its two-line report of the original
    graph's components, then the timing heading on the next line (27)."""
    path = tmp_path / "pairs.graph"
    path.write_text("6 3\n2\n1\n4\n3\n6\n5\n")
    lines = summary(path, 2, "-engine=cpu", "-nooutput")
    assert lines[24] == " - The original graph had 3 connected components and the resulting"
    assert re.fullmatch(r"   partitioning after removing the cut edges has \d+ components\.",
                        lines[25])
    assert lines[26] == section("Timing Information")
    check_layout(lines, metis_layout("Direct k-way Partitioning", "1.030", 1,
                                     contiguity_report(lines, 1)))


def test_banner_and_rules_have_metis_widths(graph_file):
    lines = summary(graph_file, 2, "-engine=cpu", "-nooutput", "-dbglvl=2")
    assert lines[0] == lines[-1] == RULE
    assert lines[1].startswith(f"gpmetis (gpmetis {gpmetis.__version__}), METIS 5.1")
    assert lines[3].startswith(" size of idx_t: ")
    headings = [ln for ln in lines if ln.endswith("---")]
    assert len(headings) == 6 and all(len(ln) == 77 for ln in headings)
    # -dbglvl's phase timing is gpmetis's own: after METIS's memory block
    phases = lines.index(section("Phase Timing"))
    assert phases > lines.index(section("Memory Information"))
    assert lines[phases + 1].startswith("     coarsening:")


def test_json_report_carries_versions_and_names_files(graph_file, tmp_path: Path):
    part, rep = tmp_path / "p.txt", tmp_path / "r.json"
    summary(graph_file, 4, "-engine=cpu", f"-o={part}", f"-json={rep}")
    report = json.loads(rep.read_text())
    assert report["format_version"] == REPORT_FORMAT_VERSION == 1
    assert report["gpmetis_version"] == gpmetis.__version__
    assert report["files"] == {"graph": str(graph_file), "partition": str(part),
                               "report": str(rep)}
    assert report["metrics"]["edgecut"] > 0 and report["nparts"] == 4
    summary(graph_file, 4, "-engine=cpu", "-nooutput", f"-json={rep}")
    assert json.loads(rep.read_text())["files"]["partition"] is None


def test_every_json_key_is_documented(graph_file, tmp_path: Path):
    rep = tmp_path / "r.json"
    summary(graph_file, 4, "-engine=cpu", "-nooutput", f"-json={rep}")
    report = json.loads(rep.read_text())
    keys = set(report)
    for name in ("files", "graph", "options", "metrics", "timing", "memory", "phases"):
        keys |= set(report[name])
    keys |= set(report["levels"][0])
    documented = set(re.findall(r"`([a-z_0-9]+)`", DOCS.read_text()))
    assert keys <= documented, f"undocumented keys: {sorted(keys - documented)}"


def test_colours_mark_headings_and_whole_figures_only():
    text = "\n".join([
        RULE, f"gpmetis (gpmetis {gpmetis.__version__}), METIS 5.1 gpmetis compatible",
        " size of idx_t: 64bits", "", section("Graph Information"),
        " Name: data/4elt.graph, #Vertices: 15606, #Parts: 8",
        " seed=-1, ufactor=1.030", "     constraint #0:  1.030 out of 0.001",
        " - Edgecut: 597, communication volume: 614.",
    ])
    styled = summary_text(text)
    coloured = [(text[s.start:s.end], str(s.style)) for s in styled.spans]
    figures = [part for part, style in coloured if style == "bold cyan"]
    assert figures == ["15606", "8", "-1", "1.030", "1.030", "0.001", "597", "614"]
    assert [part for part, style in coloured if style == "bold"] == [
        RULE, section("Graph Information")]


def test_terminal_output_is_coloured_and_piped_output_plain(graph_file):
    command = [sys.executable, "-m", "cli.main", str(graph_file), "2", "-engine=cpu",
               "-nooutput"]
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"}
    env.pop("NO_COLOR", None)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL, cwd=ROOT,
                            env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    tty = b"".join(chunks).decode().replace("\r\n", "\n")
    assert "\x1b[" in tty
    assert " - Edgecut: \x1b[1;36m" in tty and "constraint #0:  \x1b[1;36m" in tty
    assert f"(gpmetis {gpmetis.__version__})" in tty  # the version is not split
    piped = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    assert piped.returncode == 0 and "\x1b[" not in piped.stdout
    assert len(ANSI.sub("", tty).splitlines()) == len(piped.stdout.splitlines())
