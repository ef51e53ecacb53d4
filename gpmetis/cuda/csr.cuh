// CSR helpers shared by the kernels that walk adjacency entries without a source array.
#pragma once

// The row holding entry j of a CSR with n rows: the last v with xadj[v] <= j.
__device__ __forceinline__ int row_of(const int n, const long long* __restrict__ xadj,
                                      const long long j)
{
    int lo = 0, hi = n;  // xadj[lo] <= j < xadj[hi]
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        if (xadj[mid] <= j) lo = mid; else hi = mid;
    }
    return lo;
}

// Entry j's edge weight: adjwgt[j], or 1 where adjwgt is null (a graph whose unit weights were
// not kept in memory).
__device__ __forceinline__ int edge_weight(const int* __restrict__ adjwgt, const long long j)
{
    return adjwgt != nullptr ? adjwgt[j] : 1;
}
