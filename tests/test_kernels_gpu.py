"""On a GPU, every kernel module loads from the fatbin built ahead of time (``make gpu-test``
builds them first), and one without a fatbin still compiles through NVRTC."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import requires_cuda

from gpmetis.cuda import fatbin

CU_FILES = fatbin.module_files()


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("cu_file", CU_FILES, ids=lambda p: p.name)
def test_module_loads_from_its_fatbin(cu_file: Path):
    from gpmetis.backend import _raw_module

    built = fatbin.prebuilt(cu_file, fatbin.kernel_source(cu_file))
    assert built is not None, f"no fatbin for {cu_file.name}: run python -m gpmetis.cuda.fatbin"
    module = _raw_module(str(cu_file))
    assert module.file_path == str(built)


@pytest.mark.gpu
@requires_cuda
def test_module_without_fatbin_compiles_from_source(monkeypatch, tmp_path):
    from gpmetis.backend import _raw_module

    monkeypatch.setattr(fatbin, "FATBIN_DIR", tmp_path)
    cu_file = str(CU_FILES[0])
    _raw_module.cache_clear()
    try:
        module = _raw_module(cu_file)
        assert not module.file_path
        module.compile()
    finally:
        _raw_module.cache_clear()
