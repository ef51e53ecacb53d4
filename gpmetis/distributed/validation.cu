// The GPU's verdict on a rank's piece (validation.py's _clean_on_gpu): whether it is free of
// every fault the host checks find entry by entry. Rows must rise strictly, so that a binary
// search finds an entry's reverse; a piece that is not clean goes through the host checks,
// which name its first fault.

#include "../cuda/csr.cuh"

#define MAX_WEIGHT 2147483647LL  // the engines' int32 edge weights

// Whether row `row` (local) lists the global id `target` with weight w (any weight where adjwgt
// is null), by a binary search of the row.
__device__ __forceinline__ bool lists(const long long* __restrict__ xadj,
                                      const long long* __restrict__ adjncy,
                                      const long long* __restrict__ adjwgt, const long long row,
                                      const long long target, const long long w)
{
    long long lo = xadj[row], hi = xadj[row + 1];
    while (lo < hi) {
        const long long mid = lo + (hi - lo) / 2;
        if (adjncy[mid] < target) lo = mid + 1; else hi = mid;
    }
    return lo < xadj[row + 1] && adjncy[lo] == target && (adjwgt == nullptr || adjwgt[lo] == w);
}

// Entry e of row u (global id first + u) names v = adjncy[e] (global). *fault = 1 where v is
// out of [0, n) or is first + u (a self loop), the row does not rise strictly at e (unsorted
// or repeated), its weight is outside [1, MAX_WEIGHT], or v is this rank's vertex and its row
// lacks first + u or lists it with another weight.
extern "C" __global__ void piece_entries(
    const long long nnz, const int nlocal, const long long first, const long long n,
    const long long* __restrict__ xadj, const long long* __restrict__ adjncy,
    const long long* __restrict__ adjwgt, int* __restrict__ fault)
{
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nnz) return;
    const int u = row_of(nlocal, xadj, e);
    const long long v = adjncy[e], self = first + u;
    const long long w = adjwgt != nullptr ? adjwgt[e] : 1;
    bool bad = v < 0 || v >= n || v == self || w < 1 || w > MAX_WEIGHT
               || (e > xadj[u] && adjncy[e - 1] >= v);
    if (!bad && v >= first && v < first + nlocal)
        bad = !lists(xadj, adjncy, adjwgt, v - first, self, w);
    if (bad) *fault = 1;
}

// The reverses (v, u, w) of other ranks' cut entries u -> v, v this rank's vertex: *fault = 1
// where row v - first lacks u or lists it with another weight (w null: unweighted).
extern "C" __global__ void piece_reverses(
    const long long count, const long long first, const long long* __restrict__ xadj,
    const long long* __restrict__ adjncy, const long long* __restrict__ adjwgt,
    const long long* __restrict__ v, const long long* __restrict__ u,
    const long long* __restrict__ w, int* __restrict__ fault)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    if (!lists(xadj, adjncy, adjwgt, v[i] - first, u[i], w != nullptr ? w[i] : 1))
        *fault = 1;
}

// degree[u] = the weight of row u's entries.
extern "C" __global__ void row_weights(const int nlocal, const long long* __restrict__ xadj,
                                       const long long* __restrict__ adjwgt,
                                       long long* __restrict__ degree)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= nlocal) return;
    long long sum = 0;
    for (long long e = xadj[u]; e < xadj[u + 1]; ++e) sum += adjwgt[e];
    degree[u] = sum;
}
