// A grid-wide prefix sum for the cooperative kernels (every block resident), which scan counts
// into offsets between two of their steps without a launch or a round trip.
#pragma once

#include "grid_sync.cuh"
#include "block_reduce.cuh"

// out[0..len) = the exclusive prefix sums of in[0..len) and out[len] = their total, over the
// whole grid (every thread calls it; it ends with a grid-wide barrier): each block sums its
// share of the items into partial[block] (gridDim.x entries), then scans its share from the sum
// of the shares before it. With zero_in, in[] is left zero. in may be out (each item is read
// by the thread that writes it, and every read of the first pass precedes the barrier).
template <typename T, typename U>
__device__ __forceinline__ void grid_exclusive_scan(
    const GridBarrier& grid, const int len, T* in, U* out, const int zero_in,
    long long* partial, long long* buf)
{
    const int share = (len + gridDim.x - 1) / gridDim.x;
    const int lo = min(len, blockIdx.x * share), hi = min(len, lo + share);
    long long sum = 0, total;
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) sum += in[i];
    block_inclusive_scan(sum, buf, total);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
    grid.sync();
    long long before = 0, all = 0;
    for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x) {
        before += b < (int)blockIdx.x ? partial[b] : 0;
        all += partial[b];
    }
    block_inclusive_scan(before, buf, before);
    block_inclusive_scan(all, buf, all);
    for (int t0 = lo; t0 < hi; t0 += blockDim.x) {  // tiles of the share, in order
        const int i = t0 + threadIdx.x;
        const long long x = i < hi ? (long long)in[i] : 0;
        long long tile;
        const long long incl = block_inclusive_scan(x, buf, tile);
        if (i < hi) {
            out[i] = (U)(before + incl - x);
            if (zero_in) in[i] = 0;
        }
        before += tile;
    }
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) out[len] = (U)all;
    grid.sync();
}
