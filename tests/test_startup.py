"""What a ``gpmetis`` process imports and starts: a run imports only what it uses, so that a
small graph costs little more than Python and NumPy, and the METIS workers get ready while the
engine works."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, requires_cuda

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "from cli.main import run; run()"  # what the installed ``gpmetis`` script runs
# what no run of the metis engine uses: CuPy, SciPy (through cupyx), rich on a pipe, JSON
# without -json, the threads that read a large file, tempfile's random names, decompressors on an
# uncompressed file
NOT_FOR_METIS = ("cupy", "cupyx", "scipy", "rich", "json", "concurrent.futures", "tempfile",
                 "zlib", "bz2", "lzma")
# what a run on a METIS graph file does not use
MATRIX_MARKET = ("gpmetis.io.matrix_market", "gpmetis.io.mtx_scan")
# ... nor, on a k-way run, the worker pool and the multilevel pipeline with its GPU reading
NOT_FOR_METIS_KWAY = (*NOT_FOR_METIS, "multiprocessing", "gpmetis.staging",
                      "gpmetis.io.metis_gpu", "gpmetis.io.forked", "gpmetis.initial_partitioning",
                      "gpmetis.coarsening", "gpmetis.partitioning.multilevel")


def imported_modules(args: list[str], cwd: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    """The modules a ``gpmetis ARGS`` process imported (from ``-X importtime``), and the
    finished process (stdout and stderr pipes)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", ENTRY, *args],
                          capture_output=True, text=True, cwd=cwd)
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    return modules, proc


def loaded(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(package + "."))


@pytest.mark.parametrize("name, args, unused", [
    ("4elt.graph", ["8"], (*NOT_FOR_METIS_KWAY, *MATRIX_MARKET)),
    ("4elt.graph", ["8", "-engine=metis"], (*NOT_FOR_METIS_KWAY, *MATRIX_MARKET)),
    ("karate.mtx", ["4"], NOT_FOR_METIS_KWAY),
    ("4elt.graph", ["2", "-ptype=rb", "-nooutput"], (*NOT_FOR_METIS, *MATRIX_MARKET)),
])
def test_a_small_graph_imports_nothing_of_the_gpu_path(tmp_path, name, args, unused):
    graph = tmp_path / name
    shutil.copy(FIXTURES / name, graph)
    modules, proc = imported_modules([str(graph), *args], ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Edgecut:" in proc.stdout
    assert "pymetis" in modules and "numpy" in modules  # the run itself was seen
    for package in unused:
        assert not loaded(modules, package), f"{package} imported by {args}"
    if "-nooutput" not in args:
        assert (tmp_path / f"{name}.part.{args[0]}").exists()


def test_json_is_imported_for_json_output(tmp_path):
    graph = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", graph)
    modules, proc = imported_modules([str(graph), "2", f"-json={tmp_path / 'r.json'}"], ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "json" in modules and (tmp_path / "r.json").exists()


def test_import_gpmetis_loads_names_on_first_use():
    code = ("import sys, gpmetis; before = 'numpy' in sys.modules; gpmetis.part_graph; "
            "gpmetis.Options; print(before, 'gpmetis.api' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert proc.stdout.split() == ["False", "True"]


def test_workers_import_pymetis_before_their_first_job():
    # the job only looks: a worker has pymetis already when its parent never imported it
    code = """
import sys
from gpmetis.initial_partitioning import workers

def has_pymetis(_):
    return "pymetis" in sys.modules

workers.start_workers(2)
answers = workers.run_jobs([(has_pymetis, None)] * 2, iter(()), parallel=True)
workers.stop_workers()
print("pymetis" in sys.modules, *answers)
"""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: no workers, the jobs run in this process")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert proc.stdout.split() == ["False", "True", "True"]


@pytest.mark.gpu
@requires_cuda
def test_a_gpu_run_stages_its_large_arrays(tmp_path):
    # a 1100 x 1100 grid: its arrays and partition (4.8 MB) go through the pinned staging
    side = 1100
    ids = np.pad(np.arange(1, side * side + 1).reshape(side, side), 1)  # 0: no neighbour
    nbrs = np.stack([ids[:-2, 1:-1], ids[1:-1, :-2], ids[1:-1, 2:], ids[2:, 1:-1]], axis=-1)
    rows = (" ".join(str(v) for v in row if v) for row in nbrs.reshape(-1, 4).tolist())
    graph = tmp_path / "grid.graph"
    graph.write_text(f"{side * side} {2 * side * (side - 1)}\n" + "\n".join(rows) + "\n")
    modules, proc = imported_modules([str(graph), "64", "-engine=gpu"], ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "cupy" in modules and "gpmetis.staging" in modules


def test_cupyx_is_kept_from_scipy_and_nothing_else():
    pytest.importorskip("cupyx")  # CuPy imports without a GPU
    code = """
import sys
from gpmetis.partitioning.warmup import keep_scipy_from_cupyx
keep_scipy_from_cupyx()
import cupyx.scipy.sparse
print(sorted(m for m in sys.modules if m.split(".")[0] == "scipy"))
import scipy.sparse  # any other importer gets SciPy
print(scipy.sparse.csr_matrix.__name__)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert proc.stdout.split() == ["[]", "csr_matrix"]


def _pymetis_version(preset: bool) -> tuple[str, str]:
    """pymetis's version values and whether importlib.metadata was imported, in a fresh
    process, with or without ``preset_pymetis_version`` first."""
    code = f"""
import sys
if {preset}:
    from cli.startup import preset_pymetis_version
    preset_pymetis_version()
import pymetis
module = sys.modules["pymetis.version"]
print(repr([pymetis.version, pymetis.version_tuple, *(getattr(module, k) for k in module.__all__)]))
print("importlib.metadata" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    values, metadata = proc.stdout.splitlines()
    return values, metadata


def test_the_preset_pymetis_version_is_pymetis_own_without_importlib_metadata():
    values, metadata = _pymetis_version(preset=True)
    assert (values, "True") == _pymetis_version(preset=False)
    assert metadata == "False"


def test_a_run_does_not_import_importlib_metadata(tmp_path):
    graph = tmp_path / "4elt.graph"
    shutil.copy(FIXTURES / "4elt.graph", graph)
    modules, proc = imported_modules([str(graph), "2"], ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "pymetis.version" not in modules and not loaded(modules, "importlib.metadata")
