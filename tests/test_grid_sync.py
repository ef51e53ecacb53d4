"""The grid-wide barrier of ``cuda/grid_sync.cuh``, which the kernels that loop on the device
use between their steps, and the headers the kernels may include."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import requires_cuda

from gpmetis.cuda.fatbin import kernel_source

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "gpmetis" / "cuda" / "grid_sync.cuh"

# Each round, every block writes its slot, then (after a barrier) every thread checks another
# block's slot, then a second barrier keeps the next round's writes after every check.
ROUNDS_CU = """
#include "{header}"

extern "C" __global__ void rounds(const int nrounds, int* slots, int* wrong)
{{
    const GridBarrier grid{{}};
    for (int r = 0; r < nrounds; ++r) {{
        if (threadIdx.x == 0) slots[blockIdx.x] = r * (int)gridDim.x + blockIdx.x;
        grid.sync();
        const int b = (blockIdx.x + threadIdx.x + r + 1) % gridDim.x;
        if (slots[b] != r * (int)gridDim.x + b) atomicAdd(wrong, 1);
        grid.sync();
    }}
}}
"""


def test_no_kernel_includes_a_cuda_library_header():
    # cooperative_groups' and libcudacxx's constants become initialized device globals, which
    # make the driver's load of a module take milliseconds
    for cu_file in sorted((ROOT / "gpmetis").rglob("*.cu")):
        assert "#include <" not in kernel_source(cu_file), cu_file.name


@pytest.mark.gpu
@requires_cuda
def test_every_block_sees_every_write_made_before_the_barrier(tmp_path):
    from gpmetis.backend import get_backend

    be = get_backend("gpu")
    source = tmp_path / "rounds.cu"
    source.write_text(ROUNDS_CU.format(header=HEADER))
    kernel = be.kernel(source, "rounds")
    for nblocks in (1, 7, 10**6):  # 10**6: as many blocks as the GPU holds at once
        slots = be.xp.full(10**6, -1, dtype=be.xp.int32)
        wrong = be.xp.zeros(1, dtype=be.xp.int32)
        for _ in range(2):  # the barrier's word carries over from launch to launch
            be.launch_cooperative(kernel, nblocks, (np.int32(50), slots, wrong))
        assert int(wrong[0]) == 0
        launched = int((slots >= 0).sum())
        assert launched == nblocks if nblocks < 10**6 else launched > 7
