// Block-wide reductions (results valid in thread 0) and scans (in every thread), for the kernels
// that give one thread block to one item: a high-degree vertex, a group of a radix select, a
// share of a grid-wide scan. Every thread of the block must call them.
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

// The first i in [0, count) of the largest key(i) (a uint64 per index), valid in thread 0: the
// largest key, then the smallest index holding it. Every thread of the block must call it, and
// key(i) must give every thread the same value for the same i.
template <class F>
__device__ __forceinline__ int block_first_argmax(const int count, F key,
                                                  unsigned long long* buf) {
    __shared__ unsigned long long most;
    unsigned long long best = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const unsigned long long k = key(i);
        best = k > best ? k : best;
    }
    best = block_max_u64(best, buf);
    if (threadIdx.x == 0) most = best;
    __syncthreads();
    unsigned long long first = 0;  // the complement of the index: one max finds the smallest
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const unsigned long long k = 0xFFFFFFFFULL - (unsigned)i;
        if (key(i) == most && k > first) first = k;
    }
    first = block_max_u64(first, buf);  // its barrier orders these reads of most before the
    return (int)(0xFFFFFFFFULL - first);  // next call's write
}

// Folds the calling block's row lengths into out[0] = max(out[0], the longest) and out[1] =
// max(out[1], ~ the shortest): the complement, so that one atomicMax finds the minimum (out
// starts at 0; device_graph.py's decode_degree_range reads it). A thread with no row passes 0
// for both.
__device__ __forceinline__ void block_degree_range(const unsigned long long longest,
                                                   const unsigned long long shortest_complement,
                                                   unsigned long long* buf,
                                                   unsigned long long* out) {
    const unsigned long long most = block_max_u64(longest, buf);
    const unsigned long long least = block_max_u64(shortest_complement, buf);
    if (threadIdx.x != 0) return;
    if (most) atomicMax(out, most);
    if (least) atomicMax(out + 1, least);
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

// (hi, lo) = (h, l) where that pair is larger (hi first, then lo).
__device__ __forceinline__ void keep_max_pair(unsigned long long& hi, unsigned long long& lo,
                                              const unsigned long long h,
                                              const unsigned long long l) {
    if (h > hi || (h == hi && l > lo)) {
        hi = h;
        lo = l;
    }
}

// The block's largest (hi, lo) pair (hi first, then lo) into thread 0's hi and lo; buf holds
// 64 entries.
__device__ __forceinline__ void block_max_pair_u64(unsigned long long& hi, unsigned long long& lo,
                                                   unsigned long long* buf) {
    for (int o = 16; o > 0; o >>= 1)
        keep_max_pair(hi, lo, __shfl_down_sync(0xffffffffU, hi, o),
                      __shfl_down_sync(0xffffffffU, lo, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) {
        buf[warp] = hi;
        buf[32 + warp] = lo;
    }
    __syncthreads();
    if (warp == 0) {
        const bool has = lane < (int)(blockDim.x >> 5);
        hi = has ? buf[lane] : 0ULL;
        lo = has ? buf[32 + lane] : 0ULL;
        for (int o = 16; o > 0; o >>= 1)
            keep_max_pair(hi, lo, __shfl_down_sync(0xffffffffU, hi, o),
                          __shfl_down_sync(0xffffffffU, lo, o));
    }
}

// The inclusive prefix sum of x over the calling block (blockDim a multiple of 32, at most
// 1024) and, in total, the block's sum; buf holds 32 entries. Every thread of the block calls it.
template <typename T>
__device__ __forceinline__ T block_inclusive_scan(T x, T* buf, T& total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int o = 1; o < 32; o <<= 1) {
        const T y = __shfl_up_sync(0xffffffffU, x, o);
        if (lane >= o) x += y;
    }
    __syncthreads();  // buf is free from the last call
    if (lane == 31) buf[warp] = x;
    __syncthreads();
    T before = 0, all = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
        const T s = buf[w];
        before += w < warp ? s : 0;
        all += s;
    }
    total = all;
    return x + before;
}
