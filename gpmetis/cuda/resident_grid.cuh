// Per-vertex kernels launched by Backend.launch_resident: the grid is at most what the GPU holds
// at once and each thread takes vertices v, v + the grid's thread count, ... A kernel that has
// nothing to do (gated off) then costs one wave of blocks, not n / blockDim of them.
#pragma once

template <class F>
__device__ __forceinline__ void for_each_vertex(const int n, F f) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) f(v);
}

// Call f(list[i], lane) in every lane of warp i of the grid, for i = that warp, + the grid's
// warp count, ... (blockDim a multiple of 32).
template <class F>
__device__ __forceinline__ void for_each_listed_by_warp(const int* list, const int count, F f) {
    const long long warps = (long long)gridDim.x * blockDim.x / 32;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; i < count;
         i += warps)
        f(list[i], (int)(threadIdx.x & 31));
}
