"""Distributed pieces between GPUs over NCCL (``mpiexec -n 2``, one GPU per rank): the device
halo exchange equals the host one, all-reduces are exact, large all-to-alls arrive whole."""

from __future__ import annotations

import pytest
from conftest import requires_cuda
from test_distributed import MPIEXEC, pieces

pytestmark = [pytest.mark.gpu, requires_cuda,
              pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec (pip install '.[mpi]')")]


def _gpus() -> int:
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


@pytest.mark.parametrize("name", ["4elt", "add20"])
def test_nccl_halo_exchange_and_all_reduce_between_two_gpus(name):
    if _gpus() < 2:
        pytest.skip("needs two GPUs (the nvidia-h200-x2 kind)")
    done = pieces(2, "nccl", name)
    assert done.returncode == 0, done.stderr
