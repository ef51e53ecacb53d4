// GPU kernels of metrics.py: CSR row ids, cut entries and connected components. Twins:
// backend.sources (numpy.repeat) and metrics.py (cut_edges, _components_numpy).

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
