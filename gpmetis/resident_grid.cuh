// Per-vertex kernels launched by Backend.launch_resident: the grid is at most what the GPU holds
// at once and each thread takes vertices v, v + the grid's thread count, ... A kernel that has
// nothing to do (gated off) then costs one wave of blocks, not n / blockDim of them.
#pragma once

template <class F>
__device__ __forceinline__ void for_each_vertex(const int n, F f) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) f(v);
}
