// GPU kernels of metrics.py: CSR row ids, cut entries, boundary counts and connected
// components. Twins: backend.sources (numpy.repeat) and metrics.py (cut_edges,
// _boundary_by_sort, edge_list_components).

#include "cuda/block_reduce.cuh"
#include "cuda/csr.cuh"

// src[j] = the row holding entry j.
extern "C" __global__ void csr_sources(
    const int n, const long long nnz, const long long* __restrict__ xadj, int* __restrict__ src)
{
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nnz) return;
    src[j] = row_of(n, xadj, j);
}

// cut[j] = 1 when entry j of the CSR joins vertices of different parts (no per-entry source
// array: its row is found by row_of).
extern "C" __global__ void cut_edges(
    const int n, const long long nnz, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ part, bool* __restrict__ cut)
{
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nnz) return;
    cut[j] = part[row_of(n, xadj, j)] != part[adjncy[j]];
}

// The root of v's tree in the components' union-find forest, halving the path on the way
// (a vertex is pointed at its grandparent: both are ancestors, so only ids of its own tree
// and smaller ones are ever written). Reads go through volatile: other threads link roots.
__device__ __forceinline__ int component_root(volatile int* label, const int v)
{
    int curr = label[v];
    if (curr != v) {
        int prev = v, next;
        while (curr > (next = label[curr])) {
            label[prev] = next;
            prev = curr;
            curr = next;
        }
    }
    return curr;
}

// One pass of lock-free union-find over the CSR rows (ECL-CC's scheme): for every edge {v, u}
// (u > v; with use_part, only edges inside a part) the roots of both ends are joined by linking
// the larger root under the smaller with a compare-and-swap, retried from the new parent when
// another thread linked it first. Links point to smaller ids only, so every tree's root is its
// smallest vertex whatever the order of the threads, and one pass joins every edge's ends.
extern "C" __global__ void components_union(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ part, const int use_part, int* label)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    volatile int* vlabel = label;
    const int pv = use_part ? part[v] : 0;
    int rv = component_root(vlabel, v);
    for (long long j = xadj[v]; j < xadj[v + 1]; ++j) {
        const int u = adjncy[j];
        if (u <= v || (use_part && part[u] != pv)) continue;
        int ru = component_root(vlabel, u);
        while (rv != ru) {
            if (rv < ru) {
                const int old = atomicCAS(label + ru, ru, rv);
                if (old == ru) break;
                ru = old;
            } else {
                const int old = atomicCAS(label + rv, rv, ru);
                if (old == rv) break;
                rv = old;
            }
        }
    }
}

// Every label becomes its root (label[r] == r). Labels point to smaller ids, so chains end.
extern "C" __global__ void components_compress(const int n, int* label)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int r = label[v];
    while (label[r] != r) r = label[r];
    label[v] = r;
}

// Over the rows v of at most max_degree neighbours: totals[1] += the weight of v's edges into
// other parts, totals[2] += how many distinct other parts its neighbours lie in (METIS's volume
// unit) times vsize[v] (1 where vsize is null), and adjacent[part[v] * nparts + q] = 1 for each
// such part q. A part counts at its first entry in the row: each entry is compared with the
// row's earlier ones (degree^2 work, so short rows only). A longer row sets totals[0] and is
// skipped: the caller then counts by sorting. The sums are summed per block, then added to the
// totals (int64 atomics: exact).
extern "C" __global__ void boundary_rows(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ part, const int nparts,
    const int max_degree, const long long* __restrict__ vsize,
    unsigned char* __restrict__ adjacent, long long* __restrict__ totals)
{
    __shared__ long long buf[32];
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    long long weight = 0, count = 0;
    const long long begin = v < n ? xadj[v] : 0, end = v < n ? xadj[v + 1] : 0;
    if (end - begin > max_degree) {
        totals[0] = 1;
    } else if (v < n) {
        const int pv = part[v];
        for (long long j = begin; j < end; ++j) {
            const int q = part[adjncy[j]];
            if (q == pv) continue;
            weight += adjwgt[j];
            bool seen = false;
            for (long long i = begin; i < j && !seen; ++i) seen = part[adjncy[i]] == q;
            if (!seen) {
                ++count;
                adjacent[(long long)pv * nparts + q] = 1;  // every writer writes 1
            }
        }
        if (vsize != nullptr) count *= vsize[v];
    }
    weight = block_sum_i64(weight, buf);
    count = block_sum_i64(count, buf);
    if (threadIdx.x == 0) {
        atomicAdd((unsigned long long*)totals + 1, (unsigned long long)weight);
        atomicAdd((unsigned long long*)totals + 2, (unsigned long long)count);
    }
}
