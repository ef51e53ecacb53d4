// Contraction of clusters (matched pairs are clusters of one or two) into the coarse graph.
// Twin: gpmetis/coarsening/contraction.py (_contract_numpy).
//
// Coarse vertex c has the members members[mstart[c] .. mstart[c+1]); its candidate entries are
// the members' rows in that order, cap[c] entries in all. When cap[c] <= WARP_CAP one warp
// merges them in shared memory (contract_rows): c's row lists its distinct coarse neighbours
// in order of first appearance, so it is deterministic. Longer ones go to contract_count_heavy
// and contract_fill_heavy (one block each): an open-addressing hash table in
// tkeys/tvals[hoff[i] .. hoff[i] + cap[c]) for the i-th of them, which can never overflow,
// filled with atomicCAS (the set of keys and their sums do not depend on thread order, their
// slots do). Rows come out unsorted.

#include "../hash_table.cuh"
#include "../warp_sums.cuh"

#define WARP_CAP 256  // as HEAVY_DEGREE in device_graph.py
#define WARP_ROW 256  // contract_count_heavy gives longer member rows the whole block

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

// One warp per coarse vertex c with cap[c] <= WARP_CAP (launched as 32 threads per coarse
// vertex, ROW_WARPS warps per block): c's distinct coarse neighbours (self loops dropped) with
// their summed edge weights, in order of first appearance. fill == 0: cdeg[c] = their number;
// fill == 1: they are written as c's coarse row from cxadj[c] on.
extern "C" __global__ void contract_rows(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ members,
    const int* __restrict__ mstart, const int* __restrict__ cmap,
    const long long* __restrict__ cap_of, long long* __restrict__ cdeg,
    const long long* __restrict__ cxadj, int* __restrict__ cadjncy, int* __restrict__ cadjwgt,
    const int fill)
{
    __shared__ int keys[ROW_WARPS][WARP_CAP], vals[ROW_WARPS][WARP_CAP], incl[ROW_WARPS][32];
    __shared__ long long first[ROW_WARPS][32];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long c = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (c >= nc || cap_of[c] > WARP_CAP) return;  // the whole warp
    WarpSums sums{keys[warp], vals[warp], 0};
    warp_member_entries(mstart[c], mstart[c + 1], members, xadj, incl[warp], first[warp],
                        [&](const long long j) {
                            const int cu = j >= 0 ? cmap[adjncy[j]] : -1;
                            sums.add(j >= 0 && cu != c, cu, j >= 0 ? adjwgt[j] : 0);
                        });
    if (!fill) {
        if (lane == 0) cdeg[c] = sums.size;
        return;
    }
    const long long out = cxadj[c];
    for (int i = lane; i < sums.size; i += 32) {
        cadjncy[out + i] = sums.keys[i];
        cadjwgt[out + i] = sums.vals[i];
    }
}

// For the coarse vertices heavy[i] (cap > WARP_CAP), one block each: cdeg[c] = the number of
// distinct coarse neighbours, gathered with their summed weights in c's table.
extern "C" __global__ void contract_count_heavy(
    const int* __restrict__ heavy, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt,
    const int* __restrict__ members, const int* __restrict__ mstart,
    const int* __restrict__ cmap, const long long* __restrict__ cap_of,
    const long long* __restrict__ hoff, int* __restrict__ tkeys, int* __restrict__ tvals,
    long long* __restrict__ cdeg)
{
    __shared__ unsigned long long count;
    const int c = heavy[blockIdx.x];
    const long long base = hoff[blockIdx.x];
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

// Write the rows of the coarse vertices heavy[i], one block each: the used slots of c's table
// in slot order, from cxadj[c] on.
extern "C" __global__ void contract_fill_heavy(
    const int* __restrict__ heavy, const long long* __restrict__ cap_of,
    const long long* __restrict__ hoff, const int* __restrict__ tkeys,
    const int* __restrict__ tvals, const long long* __restrict__ cxadj,
    int* __restrict__ cadjncy, int* __restrict__ cadjwgt)
{
    __shared__ int before[33];  // per warp of the block, the used slots of lower warps; [32] all
    __shared__ long long out;
    const int c = heavy[blockIdx.x];
    const long long base = hoff[blockIdx.x], cap = cap_of[c];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nwarps = blockDim.x >> 5;
    if (threadIdx.x == 0) out = cxadj[c];
    for (long long s0 = 0; s0 < cap; s0 += blockDim.x) {
        const long long s = base + s0 + threadIdx.x;
        const bool used = s0 + threadIdx.x < cap && tkeys[s] >= 0;
        const unsigned int ballot = __ballot_sync(FULL_MASK, used);
        if (lane == 0) before[warp] = __popc(ballot);
        __syncthreads();
        if (threadIdx.x == 0) {
            int run = 0;
            for (int i = 0; i < nwarps; ++i) {
                const int here = before[i];
                before[i] = run;
                run += here;
            }
            before[32] = run;
        }
        __syncthreads();
        if (used) {
            const long long o = out + before[warp] + __popc(ballot & ((1U << lane) - 1U));
            cadjncy[o] = tkeys[s];
            cadjwgt[o] = tvals[s];
        }
        __syncthreads();
        if (threadIdx.x == 0) out += before[32];
        __syncthreads();
    }
}
