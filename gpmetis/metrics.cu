// GPU kernels of metrics.py: CSR row ids, cut entries and connected components. Twins:
// backend.sources (numpy.repeat) and metrics.py (cut_edges, _components_numpy).

#include "csr.cuh"

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

// One hooking round of the components labelling: for every edge {v, u} (u > v; with use_part,
// only edges inside a part) whose ends carry different labels, the larger label's vertex takes
// the smaller label; changed[0] = 1 when any edge did. Labels only decrease and stay ids of the
// same component, so the order of the atomics does not change the final labels.
extern "C" __global__ void components_hook(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ part, const int use_part, int* label, int* __restrict__ changed)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    const int pv = use_part ? part[v] : 0;
    for (long long j = xadj[v]; j < xadj[v + 1]; ++j) {
        const int u = adjncy[j];
        if (u <= v || (use_part && part[u] != pv)) continue;
        const int a = label[v], b = label[u];
        if (a == b) continue;
        atomicMin(label + (a > b ? a : b), a < b ? a : b);
        changed[0] = 1;
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
