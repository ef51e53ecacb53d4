// Per-vertex sums of a row's edge weights by the label (part or cluster) of each neighbour, for
// the kernels that give one thread to one vertex. Twins: the bincount/unique steps of the NumPy
// twins that call them.
#pragma once
#include "csr.cuh"
#include "hash_table.cuh"

#define SCAN_DEGREE 64  // rows up to this long are rescanned instead of hashed (no scratch)
#define REG_DEGREE 16   // rows up to this long are rescanned in registers

// for_each_label_sum for a row of at most REG_DEGREE entries: its labels and weights are read
// once into registers (the loops unroll fully), then each label's first entry sums it.
template <typename F>
__device__ __forceinline__ void for_each_label_sum_short(
    const long long begin, const int degree, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ label, F f)
{
    int l[REG_DEGREE], w[REG_DEGREE];
#pragma unroll
    for (int t = 0; t < REG_DEGREE; ++t) {
        l[t] = t < degree ? label[adjncy[begin + t]] : -1;
        w[t] = t < degree ? edge_weight(adjwgt, begin + t) : 0;
    }
#pragma unroll
    for (int t = 0; t < REG_DEGREE; ++t) {
        bool first = t < degree;
#pragma unroll
        for (int t2 = 0; t2 < t; ++t2) first = first && l[t2] != l[t];
        if (!first) continue;
        long long sum = w[t];
#pragma unroll
        for (int t2 = t + 1; t2 < REG_DEGREE; ++t2) sum += l[t2] == l[t] ? w[t2] : 0;
        f(l[t], sum);
    }
}

// Call f(l, w) once per distinct label l among the neighbours adjncy[begin..end), w being the
// weight of the row's edges into l. Rows of at most REG_DEGREE entries are summed in registers;
// rows of at most SCAN_DEGREE entries find each label at its first entry and sum it by
// rescanning; longer rows gather the labels in the hash table
// tkeys/tvals[begin..end) (one slot per entry: never full). Labels come in an order that
// callers must not depend on. Labels are >= 0.
template <typename F>
__device__ __forceinline__ void for_each_label_sum(
    const long long begin, const long long end, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ label, int* __restrict__ tkeys,
    int* __restrict__ tvals, F f)
{
    if (end - begin <= REG_DEGREE) {
        for_each_label_sum_short(begin, (int)(end - begin), adjncy, adjwgt, label, f);
        return;
    }
    if (end - begin <= SCAN_DEGREE) {
        for (long long j = begin; j < end; ++j) {
            const int l = label[adjncy[j]];
            bool first = true;
            for (long long j2 = begin; j2 < j && first; ++j2) first = label[adjncy[j2]] != l;
            if (!first) continue;
            long long w = edge_weight(adjwgt, j);
            for (long long j2 = j + 1; j2 < end; ++j2)
                if (label[adjncy[j2]] == l) w += edge_weight(adjwgt, j2);
            f(l, w);
        }
        return;
    }
    const long long cap = end - begin;
    for (long long s = begin; s < end; ++s) tkeys[s] = -1;
    for (long long j = begin; j < end; ++j)
        table_add(label[adjncy[j]], edge_weight(adjwgt, j), cap, tkeys + begin, tvals + begin);
    for (long long s = begin; s < end; ++s)
        if (tkeys[s] >= 0) f(tkeys[s], (long long)tvals[s]);
}
