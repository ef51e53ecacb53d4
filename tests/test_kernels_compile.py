"""Every CUDA kernel file compiles for the H100 (sm_90): a broken kernel fails CI, not the GPU."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpmetis.backend import kernel_source

ROOT = Path(__file__).resolve().parents[1]
CU_FILES = sorted((ROOT / "gpmetis").rglob("*.cu"))


def test_kernel_files_exist():
    names = {p.name for p in CU_FILES}
    assert {"matching.cu", "contraction.cu", "jet.cu", "refinement.cu"} <= names


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
