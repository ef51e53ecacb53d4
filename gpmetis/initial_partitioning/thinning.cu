// Thinning a dense coarsest graph for METIS: each vertex keeps its `degree` heaviest edges.
// Twin: gpmetis/initial_partitioning/thinning.py (_keep_numpy).
// An edge's key is (adjwgt << 32) | edge_hash: symmetric, so both ends rank it alike, and
// distinct edges of a row almost never tie.
#include "../cuda/block_reduce.cuh"
#include "../cuda/edge_hash.cuh"

__device__ __forceinline__ unsigned long long edge_key(int v, int u, int w, unsigned int seed) {
    return ((unsigned long long)(unsigned int)w << 32) | edge_hash(v, u, seed);
}

// threshold[v] = the degree-th largest key of row v (0 when the row has at most `degree`
// entries: keep them all), by fixing the key's bits from the top. One block per row.
extern "C" __global__ void row_thresholds(
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const long long degree, const unsigned int seed,
    unsigned long long* __restrict__ threshold)
{
    __shared__ long long buf[32];
    __shared__ long long count;
    const int v = blockIdx.x;
    const long long begin = xadj[v], end = xadj[v + 1];
    if (end - begin <= degree) {
        if (threadIdx.x == 0) threshold[v] = 0ULL;
        return;
    }
    unsigned long long t = 0ULL;
    for (int bit = 63; bit >= 0; --bit) {
        const unsigned long long candidate = t | (1ULL << bit);
        long long above = 0;
        for (long long j = begin + threadIdx.x; j < end; j += blockDim.x)
            above += edge_key(v, adjncy[j], adjwgt[j], seed) >= candidate;
        above = block_sum_i64(above, buf);
        if (threadIdx.x == 0) count = above;
        __syncthreads();
        if (count >= degree) t = candidate;
        __syncthreads();
    }
    if (threadIdx.x == 0) threshold[v] = t;
}

// keep[j] for the entries of row v (one block per row): the edge is among the heaviest of
// either of its ends.
extern "C" __global__ void keep_heaviest(
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const unsigned int seed,
    const unsigned long long* __restrict__ threshold, bool* __restrict__ keep)
{
    const int v = blockIdx.x;
    for (long long j = xadj[v] + threadIdx.x; j < xadj[v + 1]; j += blockDim.x) {
        const int u = adjncy[j];
        const unsigned long long key = edge_key(v, u, adjwgt[j], seed);
        keep[j] = key >= threshold[v] || key >= threshold[u];
    }
}
