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


@pytest.mark.gpu  # needs CuPy, which only the GPU machine installs
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


@pytest.mark.gpu  # needs CuPy, which only the GPU machine installs
@pytest.mark.parametrize("setting, expected", [(None, "[]"), ("cub", "[1]")])
def test_the_command_reduces_without_cub_unless_cupy_accelerators_says(setting, expected):
    pytest.importorskip("cupy")  # CuPy imports without a GPU
    code = """
import cupy
from gpmetis.partitioning.warmup import reduce_without_cub
reduce_without_cub()
print(cupy._core.get_reduction_accelerators(), cupy._core.get_routine_accelerators())
"""
    env = {k: v for k, v in os.environ.items() if k != "CUPY_ACCELERATORS"}
    if setting is not None:
        env["CUPY_ACCELERATORS"] = setting
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True, env=env)
    reductions, routines = proc.stdout.split()
    assert reductions == expected and routines == "[1]"  # routines keep CuPy's default


@pytest.mark.gpu  # needs CuPy, which only the GPU machine installs
@pytest.mark.parametrize("setting", [None, "cub,cutensor"])
def test_the_command_keeps_cutensor_unloaded_and_nothing_else(setting):
    pytest.importorskip("cupy")  # CuPy imports without a GPU
    code = """
import cuda.pathfinder as pathfinder
asked = []
pathfinder.load_nvidia_dynamic_lib = lambda name: asked.append(name) or "loaded " + name
from gpmetis.partitioning.warmup import keep_cutensor_unloaded
keep_cutensor_unloaded()
import cupy
from cupy import _environment
print(repr(_environment._preload_libs["cutensor"]), "cutensor" in asked)
try:
    print(pathfinder.load_nvidia_dynamic_lib("cutensor"))
except pathfinder.DynamicLibNotFoundError:
    print("not found")
print(pathfinder.load_nvidia_dynamic_lib("nvrtc"))
"""
    env = {k: v for k, v in os.environ.items() if k != "CUPY_ACCELERATORS"}
    if setting is not None:
        env["CUPY_ACCELERATORS"] = setting
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True, env=env)
    preload, cutensor, other = proc.stdout.splitlines()
    if setting is None:
        assert (preload, cutensor) == ("{'pathfinder': None} False", "not found")
    else:
        assert (preload, cutensor) == ("{'pathfinder': 'loaded cutensor'} True", "loaded cutensor")
    assert other == "loaded nvrtc"


@pytest.mark.gpu  # needs CuPy, which only the GPU machine installs
def test_keeping_cutensor_unloaded_changes_nothing_once_cupy_is_imported():
    pytest.importorskip("cupy")  # CuPy imports without a GPU
    code = """
import cupy
import cuda.pathfinder as pathfinder
load = pathfinder.load_nvidia_dynamic_lib
from gpmetis.partitioning.warmup import keep_cutensor_unloaded
keep_cutensor_unloaded()
print(pathfinder.load_nvidia_dynamic_lib is load)
"""
    env = {k: v for k, v in os.environ.items() if k != "CUPY_ACCELERATORS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True, env=env)
    assert proc.stdout.split() == ["True"]


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


ENV_A = ("90", ("-std=c++17",), (13, 0), "nvrtc", "-arch=sm_90", "cubin")
ENV_B = ("90", ("--std=c++17", "-DFIRST_PASS=1"), (13, 0), "nvrtc", "-arch=sm_90", "cubin")


def _fake_compiler(cache_dir: Path, memo: dict | None = None):
    """A stand-in for ``cupy.cuda.compiler``: its memo and its kernel cache's directory."""
    from types import SimpleNamespace

    return SimpleNamespace(_empty_file_preprocess_cache={} if memo is None else memo,
                           _kernel_cache_backend=SimpleNamespace(_cache_dir=str(cache_dir)))


def test_nvrtc_preprocessing_is_kept_for_the_next_process(tmp_path):
    from gpmetis.backend import PREPROCESS_FILE, PreprocessCache, keep_preprocessing_on_disk

    first = _fake_compiler(tmp_path, {ENV_A: "// cuda 13.0 a"})
    keep_preprocessing_on_disk(first)
    assert isinstance(first._empty_file_preprocess_cache, PreprocessCache)
    assert not (tmp_path / PREPROCESS_FILE).exists()  # nothing new was computed yet
    first._empty_file_preprocess_cache[ENV_B] = "// cuda 13.0 b"
    assert sorted(os.listdir(tmp_path)) == [PREPROCESS_FILE]  # no scratch file left
    second = _fake_compiler(tmp_path)
    keep_preprocessing_on_disk(second)
    assert second._empty_file_preprocess_cache == {ENV_A: "// cuda 13.0 a",
                                                    ENV_B: "// cuda 13.0 b"}
    assert second._empty_file_preprocess_cache.get(ENV_B) == "// cuda 13.0 b"  # tuple keys


@pytest.mark.parametrize("content", ["{not json", '{"a": 1}', "[[1, 2, 3]]", '[["x", 5]]'])
def test_a_damaged_preprocessing_file_is_ignored_and_rewritten(tmp_path, content):
    from gpmetis.backend import PREPROCESS_FILE, keep_preprocessing_on_disk

    (tmp_path / PREPROCESS_FILE).write_text(content)
    compiler = _fake_compiler(tmp_path)
    keep_preprocessing_on_disk(compiler)
    memo = compiler._empty_file_preprocess_cache
    assert dict(memo) == {}
    memo[ENV_A] = "// a"
    again = _fake_compiler(tmp_path)
    keep_preprocessing_on_disk(again)
    assert dict(again._empty_file_preprocess_cache) == {ENV_A: "// a"}


def test_an_unwritable_preprocessing_file_leaves_the_memo_working(tmp_path):
    from gpmetis.backend import keep_preprocessing_on_disk

    compiler = _fake_compiler(tmp_path / "missing" / "dir")
    keep_preprocessing_on_disk(compiler)
    compiler._empty_file_preprocess_cache[ENV_A] = "// a"
    assert compiler._empty_file_preprocess_cache[ENV_A] == "// a"
    assert not (tmp_path / "missing").exists()


def test_a_cupy_without_the_memo_is_left_alone(tmp_path):
    from types import SimpleNamespace

    from gpmetis.backend import keep_preprocessing_on_disk

    compiler = SimpleNamespace(_empty_file_preprocess_cache=None)
    keep_preprocessing_on_disk(compiler)
    assert compiler._empty_file_preprocess_cache is None


@pytest.mark.gpu  # needs CuPy, which only the GPU machine installs
def test_the_installed_cupy_has_the_memo_the_cache_replaces(tmp_path):
    pytest.importorskip("cupy")  # CuPy imports without a GPU
    code = """
import cupy.cuda.compiler as compiler
from gpmetis.backend import keep_preprocessing_on_disk
keep_preprocessing_on_disk(compiler)
print(type(compiler._empty_file_preprocess_cache).__name__)
print(compiler._empty_file_preprocess_cache.path)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          check=True, env={**os.environ, "CUPY_CACHE_DIR": str(tmp_path)})
    kind, path = proc.stdout.split()
    assert kind == "PreprocessCache" and Path(path).parent == tmp_path


@pytest.mark.gpu
@requires_cuda
def test_a_second_gpu_process_runs_no_nvrtc_preprocessing(tmp_path):
    code = """
import cupy.cuda.compiler as compiler
calls = []
preprocess = compiler._preprocess
compiler._preprocess = lambda *args: calls.append(args) or preprocess(*args)
from gpmetis.backend import get_backend
be = get_backend("gpu")
print(int(be.xp.arange(10, dtype=be.xp.int32).sum()), len(calls))
"""
    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, check=True, env=env).stdout.split() for _ in range(2)]
    assert runs[0][0] == runs[1][0] == "45"
    assert int(runs[0][1]) >= 1 and runs[1][1] == "0"
