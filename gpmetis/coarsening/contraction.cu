// Contraction of clusters (matched pairs are clusters of one or two) into the coarse graph.
// Twin: gpmetis/coarsening/contraction.py (_contract_numpy).
//
// Coarse vertex c has the members members[mstart[c] .. mstart[c+1]); its candidate entries are
// the members' rows in that order, cap[c] entries in all. When cap[c] <= SCAN_CAP they are
// merged by rescanning them (no scratch memory); longer ones in an open-addressing hash table in
// tkeys/tvals[off[c] .. off[c] + cap[c]), which can never overflow. One thread owns one coarse
// vertex, so its row is deterministic; rows come out unsorted. Coarse vertices with
// cap[c] > max_cap go to contract_count_heavy (one block each, the table filled with atomicCAS:
// the set of keys and their sums do not depend on thread order, their slots do).

#include "../hash_table.cuh"

#define SCAN_CAP 64
#define WARP_ROW 256  // contract_count_heavy gives longer member rows the whole block

// Whether entry j of member members[m] is the first of c's candidate entries leading to coarse
// vertex cu (c's members start at members[mb]).
__device__ __forceinline__ bool first_entry_to(
    const int cu, const int mb, const int m, const long long j,
    const int* __restrict__ members, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ cmap)
{
    for (int m2 = mb; m2 <= m; ++m2) {
        const int x = members[m2];
        const long long stop = m2 < m ? xadj[x + 1] : j;
        for (long long j2 = xadj[x]; j2 < stop; ++j2)
            if (cmap[adjncy[j2]] == cu) return false;
    }
    return true;
}

// counts[cmap[v] + 1] += 1 for every vertex v (counts zero on entry): a prefix sum of counts
// gives the start of each coarse vertex's member list.
extern "C" __global__ void member_counts(
    const int n, const int* __restrict__ cmap, int* __restrict__ counts)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) atomicAdd(counts + cmap[v] + 1, 1);
}

// Per coarse vertex c: cap[c] = its members' degrees summed, cvwgt[c] = their weights summed.
extern "C" __global__ void coarse_vertices(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ vwgt,
    const int* __restrict__ members, const int* __restrict__ mstart, long long* __restrict__ cap,
    int* __restrict__ cvwgt)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    long long degree = 0;
    int weight = 0;
    for (int m = mstart[c]; m < mstart[c + 1]; ++m) {
        const int x = members[m];
        degree += xadj[x + 1] - xadj[x];
        weight += vwgt[x];
    }
    cap[c] = degree;
    cvwgt[c] = weight;
}

// cdeg[c] = number of distinct coarse neighbours of c (self loops dropped); fills c's table
// when it has one.
extern "C" __global__ void contract_count(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ members,
    const int* __restrict__ mstart, const int* __restrict__ cmap,
    const long long* __restrict__ cap_of, const long long* __restrict__ off,
    int* __restrict__ tkeys, int* __restrict__ tvals, long long* __restrict__ cdeg,
    const long long max_cap)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    const long long cap = cap_of[c];
    if (cap > max_cap) return;
    const int mb = mstart[c], me = mstart[c + 1];
    long long count = 0;
    if (cap <= SCAN_CAP) {
        for (int m = mb; m < me; ++m) {
            const int x = members[m];
            for (long long j = xadj[x]; j < xadj[x + 1]; ++j) {
                const int cu = cmap[adjncy[j]];
                if (cu != c && first_entry_to(cu, mb, m, j, members, xadj, adjncy, cmap)) ++count;
            }
        }
        cdeg[c] = count;
        return;
    }
    int* keys = tkeys + off[c];
    int* vals = tvals + off[c];
    for (long long s = 0; s < cap; ++s) keys[s] = -1;
    for (int m = mb; m < me; ++m) {
        const int x = members[m];
        for (long long j = xadj[x]; j < xadj[x + 1]; ++j) {
            const int cu = cmap[adjncy[j]];
            if (cu != c) count += table_add(cu, adjwgt[j], cap, keys, vals);
        }
    }
    cdeg[c] = count;
}

extern "C" __global__ void contract_count_heavy(
    const int* __restrict__ heavy, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt,
    const int* __restrict__ members, const int* __restrict__ mstart,
    const int* __restrict__ cmap, const long long* __restrict__ cap_of,
    const long long* __restrict__ off, int* __restrict__ tkeys, int* __restrict__ tvals,
    long long* __restrict__ cdeg)
{
    __shared__ unsigned long long count;
    const int c = heavy[blockIdx.x];
    const long long base = off[c];
    const long long cap = cap_of[c];
    for (long long s = threadIdx.x; s < cap; s += blockDim.x) {
        tkeys[base + s] = -1;
        tvals[base + s] = 0;
    }
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    auto add = [&](const long long j) {
        const int cu = cmap[adjncy[j]];
        if (cu != c && table_add_atomic(cu, adjwgt[j], cap, tkeys + base, tvals + base))
            atomicAdd(&count, 1ULL);
    };
    // members with long rows (hubs) one after another, the whole block along each row; the
    // others (clusters have many short rows) one warp each, its lanes along the row
    const int mb = mstart[c], me = mstart[c + 1], lane = threadIdx.x & 31;
    for (int m = mb; m < me; ++m) {
        const int x = members[m];
        if (xadj[x + 1] - xadj[x] <= WARP_ROW) continue;
        for (long long j = xadj[x] + threadIdx.x; j < xadj[x + 1]; j += blockDim.x) add(j);
    }
    for (int m = mb + (threadIdx.x >> 5); m < me; m += blockDim.x >> 5) {
        const int x = members[m];
        if (xadj[x + 1] - xadj[x] > WARP_ROW) continue;
        for (long long j = xadj[x] + lane; j < xadj[x + 1]; j += 32) add(j);
    }
    __syncthreads();
    if (threadIdx.x == 0) cdeg[c] = (long long)count;
}

// Write c's coarse row starting at cxadj[c]: its table's slots in order, or (short rows) its
// distinct neighbours in order of first appearance with their summed weights.
extern "C" __global__ void contract_fill(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ members,
    const int* __restrict__ mstart, const int* __restrict__ cmap,
    const long long* __restrict__ cap_of, const long long* __restrict__ off,
    const int* __restrict__ tkeys, const int* __restrict__ tvals,
    const long long* __restrict__ cxadj, int* __restrict__ cadjncy, int* __restrict__ cadjwgt)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    const long long cap = cap_of[c];
    long long out = cxadj[c];
    if (cap > SCAN_CAP) {
        for (long long s = off[c]; s < off[c] + cap; ++s) {
            if (tkeys[s] >= 0) { cadjncy[out] = tkeys[s]; cadjwgt[out] = tvals[s]; ++out; }
        }
        return;
    }
    const int mb = mstart[c], me = mstart[c + 1];
    for (int m = mb; m < me; ++m) {
        const int x = members[m];
        for (long long j = xadj[x]; j < xadj[x + 1]; ++j) {
            const int cu = cmap[adjncy[j]];
            if (cu == c || !first_entry_to(cu, mb, m, j, members, xadj, adjncy, cmap)) continue;
            long long w = 0;
            for (int m2 = m; m2 < me; ++m2) {
                const int x2 = members[m2];
                for (long long j2 = m2 == m ? j : xadj[x2]; j2 < xadj[x2 + 1]; ++j2)
                    if (cmap[adjncy[j2]] == cu) w += adjwgt[j2];
            }
            cadjncy[out] = cu;
            cadjwgt[out] = (int)w;
            ++out;
        }
    }
}
