"""mpmetis, ndmetis, m2gmetis, graphchk: METIS 5.1's syntax, files, summary lines, exit codes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES

import gpmetis

ROOT = Path(__file__).resolve().parents[1]
# a 2 x 2 grid of quads, METIS's 1-based mesh format, with a comment line
QUADS = "% four quads\n4\n1 2 5 4\n2 3 6 5\n4 5 8 7\n5 6 9 8\n"


def run(program: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"cli.{program}", *args], cwd=cwd,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def quads(tmp_path: Path) -> Path:
    path = tmp_path / "quad.mesh"
    path.write_text(QUADS)
    return path


def test_mpmetis_writes_epart_and_npart_with_metis_line_numbers(quads: Path):
    out = run("mpmetis", "-ncommon=2", "-gtype=dual", "quad.mesh", "2", cwd=quads.parent)
    assert out.returncode == 0, out.stderr
    epart = np.loadtxt(quads.parent / "quad.mesh.epart.2", dtype=int)
    npart = np.loadtxt(quads.parent / "quad.mesh.npart.2", dtype=int)
    assert sorted(epart.tolist()) == [0, 0, 1, 1] and len(npart) == 9 and set(npart) == {0, 1}
    lines = out.stdout.splitlines()
    # METIS 5.1 mpmetis prints these on these lines (1-based)
    assert lines[0] == "*" * 78 and lines[-1] == "*" * 78
    assert lines[5] == "Mesh Information " + "-" * 60
    assert lines[6] == " Name: quad.mesh, #Elements: 4, #Nodes: 9, #Parts: 2"
    assert lines[12] == " gtype=dual, ncommon=2, niter=10, ncuts=1"
    assert lines[14].startswith("Direct k-way Partitioning ---")
    assert lines[15] == " - Edgecut: 2."
    assert lines[18].startswith("Timing Information ---")
    assert lines[20].startswith("  Partitioning: \t\t")


def test_mpmetis_nodal_nooutput_and_errors(quads: Path):
    out = run("mpmetis", "-gtype=nodal", "-nooutput", "quad.mesh", "2", cwd=quads.parent)
    assert out.returncode == 0 and not list(quads.parent.glob("*part*"))
    assert run("mpmetis", "-bogus", "quad.mesh", "2", cwd=quads.parent).returncode == 2
    (quads.parent / "bad.mesh").write_text("3\n1 2 3\n2 3 4\n")
    bad = run("mpmetis", "bad.mesh", "2", cwd=quads.parent)
    assert bad.returncode == 1 and "bad.mesh" in bad.stderr and "3 elements" in bad.stderr
    zero = run("mpmetis", "missing.mesh", "2", cwd=quads.parent)
    assert zero.returncode == 1 and "missing.mesh" in zero.stderr


def test_m2gmetis_writes_the_dual_graph_metis_writes(quads: Path):
    out = run("m2gmetis", "quad.mesh", "quad.graph", cwd=quads.parent)
    assert out.returncode == 0, out.stderr
    # METIS 5.1 m2gmetis's file, neighbours sorted (METIS lists them in the order it finds them)
    assert (quads.parent / "quad.graph").read_text() == "4 6\n 2 3 4\n 1 3 4\n 1 2 4\n 1 2 3\n"
    assert " - #nvtxs: 4, #edges: 12" in out.stdout.splitlines()
    nodal = run("m2gmetis", "-gtype=nodal", "quad.mesh", "nodal.graph", cwd=quads.parent)
    assert nodal.returncode == 0
    graph = gpmetis.read_graph(quads.parent / "nodal.graph")
    assert (graph.nvtxs, graph.nedges) == (9, 20)


def test_ndmetis_writes_an_inverse_permutation(tmp_path: Path):
    src = FIXTURES / "4elt.graph"
    (tmp_path / "4elt.graph").write_bytes(src.read_bytes())
    out = run("ndmetis", "-seed=3", "4elt.graph", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    iperm = np.loadtxt(tmp_path / "4elt.graph.iperm", dtype=np.int64)
    assert np.array_equal(np.sort(iperm), np.arange(len(iperm)))
    lines = out.stdout.splitlines()
    # METIS 5.1 ndmetis prints these on these lines (0-based here)
    assert lines[5].startswith("Graph Information ---")
    assert lines[6] == " Name: 4elt.graph, #Vertices: 15606, #Edges: 45878"
    assert lines[13].startswith("Node-based Nested Dissection ---")
    assert lines[14].startswith("  Nonzeros: ") and "\tOperation Count: " in lines[14]
    assert lines[18].startswith("  Ordering:     \t\t")


def test_graphchk_exit_status_and_fixed_copy(tmp_path: Path):
    (tmp_path / "good.graph").write_text("3 2\n2\n1 3\n2\n")
    good = run("graphchk", "good.graph", cwd=tmp_path)
    assert good.returncode == 0 and "   The format of the graph is correct!" in good.stdout
    (tmp_path / "asym.graph").write_text("3 2\n2\n1 3\n1\n")
    bad = run("graphchk", "asym.graph", "fixed.graph", cwd=tmp_path)
    assert bad.returncode == 1 and "   The format of the graph is incorrect!" in bad.stdout
    fixed = gpmetis.read_graph(tmp_path / "fixed.graph")
    assert fixed.nedges == 3
    assert run("graphchk", cwd=tmp_path).returncode == 2


def test_graphchk_lists_each_error_as_metis_does(tmp_path: Path):
    """METIS 5.1 graphchk: the Name line with the header's counts, each error CheckGraph finds,
    then their total."""
    (tmp_path / "g.graph").write_text("4 3\n2 3\n3\n1 4\n3\n")
    out = run("graphchk", "g.graph", cwd=tmp_path)
    lines = out.stdout.splitlines()
    assert out.returncode == 1
    assert lines[6:14] == [
        "  Name: g.graph, #Vertices: 4, #Edges: 3",
        "",
        "Checking Graph... " + "-" * 51,
        "Missing edge: (2 1)!",
        "Missing edge: (3 2)!",
        "A total of 2 errors exist in the input file. Correct them, and run again!",
        "   The format of the graph is incorrect!",
        "",
    ]
    # a self loop, a repeated edge and a weight that differs each way
    (tmp_path / "w.graph").write_text("3 3 1\n1 5 2 4 2 4\n1 4 3 1\n2 2\n")
    lines = run("graphchk", "w.graph", cwd=tmp_path).stdout.splitlines()
    assert lines[9:14] == [
        "Vertex 1 contains a self-loop (i.e., diagonal entry in the matrix)!",
        "Edge 2 from vertex 1 is repeated 1 times",
        "Edges (u:2 v:3 wgt:1) and (v:3 u:2 wgt:2) do not have the same weight!",
        "Edges (u:3 v:2 wgt:2) and (v:2 u:3 wgt:1) do not have the same weight!",
        "A total of 4 errors exist in the input file. Correct them, and run again!",
    ]


@pytest.mark.parametrize("header,lines,fmt", [
    ("3 1 100", ["5 2", "6", "7 2"], "100"),
    ("3 1 111 2", ["5 1 4 2 3", "6 2 2", "7 3 1 2 3"], "111"),
])
def test_graphchk_fixed_copy_keeps_vertex_sizes(tmp_path: Path, header, lines, fmt):
    # vertex 2 misses its reverse edges: the corrected copy keeps sizes, weights and the fmt
    (tmp_path / "vs.graph").write_text("\n".join([header, *lines]) + "\n")
    bad = run("graphchk", "vs.graph", "fixed.graph", cwd=tmp_path)
    assert bad.returncode == 1
    assert (tmp_path / "fixed.graph").read_text().split("\n")[0].split()[2] == fmt
    fixed = gpmetis.read_graph(tmp_path / "fixed.graph")
    assert fixed.vsize.tolist() == [5, 6, 7] and fixed.nedges == 2
    if fmt == "111":
        assert fixed.vwgt.tolist() == [[1, 4], [2, 2], [3, 1]]
        assert fixed.adjwgt.tolist() == [3, 3, 3, 3]


@pytest.mark.parametrize("program,args", [("mpmetis", ["2"]), ("m2gmetis", ["out.graph"]),
                                          ("mpmetis", ["2", "-gtype=nodal"])])
def test_mesh_whose_node_ids_need_more_memory_than_there_is(tmp_path: Path, program, args):
    # METIS numbers nodes 1..the largest id: one id of 10^12 makes 10^12 nodes
    (tmp_path / "big.mesh").write_text("2\n1 2 3\n2 3 1000000000000\n")
    out = run(program, "big.mesh", *args, cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "big.mesh:3: node 1000000000000" in out.stderr and "GiB is available" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.mesh"]


@pytest.mark.parametrize("program", ["mpmetis", "ndmetis", "m2gmetis", "graphchk"])
@pytest.mark.parametrize("args", [["-bogus", "quad.mesh"], []])
def test_usage_errors_are_one_line_with_one_hint(quads: Path, program, args):
    out = run(program, *args, cwd=quads.parent)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"{program}: error: ")
    assert out.stderr.rstrip().endswith(f"(see '{program} -help')") and "Try" not in out.stderr


@pytest.mark.parametrize("program,usage", [
    ("mpmetis", "mpmetis [options] meshfile nparts"), ("ndmetis", "ndmetis [options] graphfile"),
    ("m2gmetis", "m2gmetis [options] meshfile graphfile"),
    ("graphchk", "graphchk [options] graphfile [fixedfile]")])
def test_help_is_metis_option_reference(tmp_path: Path, program, usage):
    """METIS 5.1's -help layout for each companion: usage, required parameters, then every
    option the command takes on a line of its own, each value of a choice listed."""
    import importlib

    import click

    out = run(program, "-help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith(f"\nUsage: {usage}\n\n Required parameters\n")
    assert "\n Optional parameters\n" in text and "[OPTIONS]" not in text
    lines = text.splitlines()
    headers = [ln for ln in lines if ln.startswith("  -")]
    for param in importlib.import_module(f"cli.{program}").main.params:
        if isinstance(param, click.Option):
            for opt in (o for o in param.opts if not o.startswith("--")):
                assert any(re.match(rf"  (.*, )?{opt}(=\w+)?(,| |$)", h) for h in headers), opt
        if isinstance(param.type, click.Choice):
            for value in param.type.choices:
                assert any(re.match(rf" {{8}}{value} +- ", ln) for ln in lines), value
        elif isinstance(param, click.Argument):
            assert any(ln.startswith(f"    {param.name} ") for ln in lines), param.name
    assert "  -help\n     Prints this message." in text


def test_version_option():
    out = subprocess.run([sys.executable, "-m", "cli.main", "--version"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0 and gpmetis.__version__ in out.stdout


def test_mesh_reader_weights_and_graph_writer_round_trip(tmp_path: Path):
    from gpmetis.mesh import graph_bytes, read_mesh

    path = tmp_path / "w.mesh"
    path.write_text("2 1\n5 1 2 3\n7 2 3 4\n")
    mesh = read_mesh(path)
    assert mesh.ewgt.ravel().tolist() == [5, 7] and mesh.eind.tolist() == [0, 1, 2, 1, 2, 3]
    # a '%' after a line's values starts a comment, as METIS 5.1's ReadMesh reads it
    path.write_text("2 1 % two\n5 1 2 3 % first\n7 2 3 4%\n")
    commented = read_mesh(path)
    assert np.array_equal(commented.eind, mesh.eind)
    assert np.array_equal(commented.ewgt, mesh.ewgt)
    graph = gpmetis.read_graph(FIXTURES / "4elt.graph")
    weighted = gpmetis.Graph.from_csr(graph.xadj, graph.adjncy,
                                      (np.arange(graph.nvtxs) % 4 + 1)[:, None],
                                      np.full(len(graph.adjncy), 12))
    back = tmp_path / "back.graph"
    back.write_bytes(graph_bytes(weighted))
    again = gpmetis.read_graph(back)
    assert np.array_equal(again.adjncy, weighted.adjncy)
    assert np.array_equal(again.vwgt, weighted.vwgt)
    assert np.array_equal(again.adjwgt, weighted.adjwgt)
