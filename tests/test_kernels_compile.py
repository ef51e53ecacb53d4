"""Every CUDA kernel file compiles for the H100 (sm_90): a broken kernel fails CI, not the GPU."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpmetis.cuda import fatbin
from gpmetis.cuda.fatbin import kernel_source

ROOT = Path(__file__).resolve().parents[1]
CU_FILES = sorted((ROOT / "gpmetis").rglob("*.cu"))


def test_kernel_files_exist():
    names = {p.name for p in CU_FILES}
    assert {"matching.cu", "contraction.cu", "jet.cu", "ncon.cu", "ncon_device.cu"} <= names


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) is not installed")
@pytest.mark.parametrize("cu_file", CU_FILES, ids=lambda p: p.name)
def test_kernel_compiles(cu_file: Path, tmp_path: Path):
    # compile the text the GPU path hands to CuPy: headers pasted in, no include path
    source = tmp_path / cu_file.name
    source.write_text(kernel_source(cu_file))
    out = tmp_path / (cu_file.stem + ".ptx")
    proc = subprocess.run(
        ["nvcc", "-arch=sm_90", "-std=c++17", "-ptx", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    for line in cu_file.read_text().splitlines():
        if line.startswith('extern "C" __global__ void '):
            name = line.split("void ")[1].split("(")[0]
            assert f".entry {name}(" in text, f"kernel {name} missing from the PTX"


def test_kernel_source_pastes_headers_once(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "common.cuh").write_text("#pragma once\nint shared_helper;\n")
    (tmp_path / "sub" / "a.cu").write_text(
        '#include "../common.cuh"\n#include "../common.cuh"\nint a;\n')
    text = kernel_source(tmp_path / "sub" / "a.cu")
    assert "#include" not in text
    assert text.count("int shared_helper;") == 1
    assert text.index("int shared_helper;") < text.index("int a;")


SMALL_MODULE = ROOT / "gpmetis" / "edge_partitioning" / "split_graph.cu"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) is not installed")
def test_fatbin_built_named_by_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    stale = fatbin.fatbin_path(SMALL_MODULE, "older source", tmp_path)
    tmp_path.mkdir(exist_ok=True)
    stale.write_bytes(b"old")
    [built] = fatbin.build(["90"], tmp_path, files=[SMALL_MODULE])
    assert built == fatbin.fatbin_path(SMALL_MODULE, kernel_source(SMALL_MODULE), tmp_path)
    assert built.stat().st_size > 0 and not stale.exists()
    monkeypatch.setattr(fatbin, "FATBIN_DIR", tmp_path)
    assert fatbin.prebuilt(SMALL_MODULE, kernel_source(SMALL_MODULE)) == built
    assert fatbin.prebuilt(SMALL_MODULE, kernel_source(SMALL_MODULE) + "// edited\n") is None


def test_fatbin_names_differ_by_module_and_source():
    a, b = CU_FILES[0], CU_FILES[1]
    names = {fatbin.fatbin_path(f, s, ROOT).name for f in (a, b) for s in ("x", "y")}
    assert len(names) == 4


def test_fatbin_command_refuses_unknown_arch(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exc:
        fatbin.main(["--arch=hopper"])
    assert exc.value.code == 2 and "--arch=hopper" in capsys.readouterr().err


def test_fatbin_gencode_covers_each_arch_and_ptx_of_the_newest():
    flags = fatbin.gencode_flags(["80", "100", "90"])
    assert flags[:3] == [f"-gencode=arch=compute_{a},code=sm_{a}" for a in ("80", "100", "90")]
    assert flags[3] == "-gencode=arch=compute_100,code=compute_100"
    assert fatbin.gencode_flags(["native"]) == ["-arch=native"]


def test_no_fatbin_for_a_module_outside_the_package(tmp_path: Path):
    outside = tmp_path / "probe.cu"
    outside.write_text('extern "C" __global__ void probe() {}\n')
    assert fatbin.prebuilt(outside, kernel_source(outside)) is None
