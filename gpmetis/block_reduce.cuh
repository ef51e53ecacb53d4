// Block-wide reductions for the kernels that give one thread block to one high-degree vertex.
// Results are valid in thread 0. Every thread of the block must call them.
#pragma once

__device__ __forceinline__ unsigned long long block_max_u64(unsigned long long x,
                                                            unsigned long long* buf) {
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long y = __shfl_down_sync(0xffffffffU, x, o);
        x = y > x ? y : x;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) buf[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = lane < (int)(blockDim.x >> 5) ? buf[lane] : 0ULL;
        for (int o = 16; o > 0; o >>= 1) {
            const unsigned long long y = __shfl_down_sync(0xffffffffU, x, o);
            x = y > x ? y : x;
        }
    }
    return x;
}

__device__ __forceinline__ long long block_sum_i64(long long x, long long* buf) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffU, x, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) buf[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = lane < (int)(blockDim.x >> 5) ? buf[lane] : 0LL;
        for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffU, x, o);
    }
    return x;
}
