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
// slots do). Rows come out unsorted. contract_loop does a level's members and row counts in
// one cooperative launch and contract_rows writes its rows, a warp per coarse vertex whatever
// cap[c] (members placed by atomics, so the rows' order may vary).

#include "../cuda/grid_sync.cuh"
#include "../cuda/block_reduce.cuh"
#include "../cuda/csr.cuh"
#include "../cuda/grid_scan.cuh"
#include "../cuda/hash_table.cuh"
#include "../cuda/resident_grid.cuh"
#include "../cuda/warp_sums.cuh"

#define WARP_CAP 256  // as HEAVY_DEGREE in device_graph.py
#define WARP_ROW 256  // contract_count_heavy gives longer member rows the whole block

// Coarse vertex c's weight, cvwgt[c] = its members' weights summed; returns its candidate
// entries, the members' degrees summed. Plain pointers where contract_loop writes the arrays.
__device__ __forceinline__ long long coarse_vertex(
    const int c, const long long* __restrict__ xadj, const int* __restrict__ vwgt,
    const int* members, const int* mstart, int* cvwgt)
{
    long long degree = 0;
    int weight = 0;
    for (int m = mstart[c]; m < mstart[c + 1]; ++m) {
        const int x = members[m];
        degree += xadj[x + 1] - xadj[x];
        weight += vwgt[x];
    }
    cvwgt[c] = weight;
    return degree;
}

// Per coarse vertex c: cap[c] = its members' degrees summed, cvwgt[c] = their weights summed.
extern "C" __global__ void coarse_vertices(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ vwgt,
    const int* __restrict__ members, const int* __restrict__ mstart, long long* __restrict__ cap,
    int* __restrict__ cvwgt)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < nc) cap[c] = coarse_vertex(c, xadj, vwgt, members, mstart, cvwgt);
}

// The calling warp's coarse vertex c: its distinct coarse neighbours (self loops dropped) with
// their summed edge weights, in order of first appearance, gathered in keys/vals (WARP_CAP
// each; incl and first are the warp's scratch for warp_member_entries). fill == 0: cdeg[c] =
// their number; fill == 1: they are written as c's coarse row from cxadj[c] on. Returns 1 (and
// does neither) where c has more than WARP_CAP distinct neighbours, which only a c of more
// than WARP_CAP candidate entries can have. Plain pointers where contract_loop writes the
// arrays before it reads them.
__device__ __forceinline__ int contract_row(
    const long long c, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* members, const int* mstart,
    const int* __restrict__ cmap, long long* cdeg, const long long* cxadj, int* cadjncy,
    int* cadjwgt, const int fill, int* keys, int* vals, int* incl, long long* first)
{
    const int lane = threadIdx.x & 31;
    WarpSums sums{keys, vals, 0, WARP_CAP};
    warp_member_entries(mstart[c], mstart[c + 1], members, xadj, incl, first,
                        [&](const long long j) {
                            const int cu = j >= 0 ? cmap[adjncy[j]] : -1;
                            sums.add(j >= 0 && cu != c, cu, j >= 0 ? edge_weight(adjwgt, j) : 0);
                        });
    if (sums.overflow) return 1;
    if (!fill) {
        if (lane == 0) cdeg[c] = sums.size;
        return 0;
    }
    const long long out = cxadj[c];
    for (int i = lane; i < sums.size; i += 32) {
        cadjncy[out + i] = sums.keys[i];
        cadjwgt[out + i] = sums.vals[i];
    }
    return 0;
}

// One warp per coarse vertex c with cap[c] <= WARP_CAP, or every c where cap_of is null
// (contract_loop found each c's list within WARP_CAP); launched as 32 threads per coarse
// vertex, ROW_WARPS warps per block: contract_row of c.
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
    const int warp = threadIdx.x >> 5;
    const long long c = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (c >= nc || (cap_of != nullptr && cap_of[c] > WARP_CAP)) return;  // the whole warp
    contract_row(c, xadj, adjncy, adjwgt, members, mstart, cmap, cdeg, cxadj, cadjncy, cadjwgt,
                 fill, keys[warp], vals[warp], incl[warp], first[warp]);
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
        if (cu != c && table_add_atomic(cu, edge_weight(adjwgt, j), cap, tkeys + base, tvals + base))
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

// A level's contraction up to its rows in one cooperative launch (blocks of ROW_WARPS warps,
// every block resident): the clusters' members placed by counting (in no particular order
// within a cluster), cvwgt, each coarse row counted, cxadj scanned; contract_rows (cap_of null)
// then writes the rows. Then what DeviceGraph would find in the coarse rows with two round
// trips: out[2] = the longest row's length, out[3] = ~ the shortest's, and in mid the ids of the
// rows of more than mid_low entries, ascending (out[4] of them; no row is longer than WARP_CAP,
// so none is a hub). count (nc) and out (5) are zero on entry; partial has gridDim.x entries,
// tiers nc + 1. out[0] = the coarse graph's entries; out[1] = 1 where a cluster has more than
// WARP_CAP distinct coarse neighbours, which leaves the rest undone (the general kernels take
// the level, with these members). Plain pointers where the loop writes what a later step reads.
extern "C" __global__ void contract_loop(
    const int n, const int nc, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt,
    const int* __restrict__ vwgt, const int* __restrict__ cmap, const long long mid_low,
    int* count, int* members, int* mstart, int* cvwgt, long long* cdeg, long long* cxadj,
    long long* tiers, int* mid, long long* partial, unsigned long long* out)
{
    __shared__ int keys[ROW_WARPS][WARP_CAP], vals[ROW_WARPS][WARP_CAP], incl[ROW_WARPS][32];
    __shared__ long long first[ROW_WARPS][32], buf[32];
    const GridBarrier grid{};
    for_each_vertex(n, [&](const int v) { atomicAdd(count + cmap[v], 1); });
    grid.sync();
    grid_exclusive_scan(grid, nc, count, mstart, 1, partial, buf);
    for_each_vertex(n, [&](const int v) {
        const int c = cmap[v];
        members[mstart[c] + atomicAdd(count + c, 1)] = v;
    });
    grid.sync();
    for_each_vertex(nc, [&](const int c) {
        coarse_vertex(c, xadj, vwgt, members, mstart, cvwgt);
    });
    const int warp = threadIdx.x >> 5;
    const long long warps = (long long)gridDim.x * ROW_WARPS;
    for (long long c = (long long)blockIdx.x * ROW_WARPS + warp; c < nc; c += warps) {
        if (contract_row(c, xadj, adjncy, adjwgt, members, mstart, cmap, cdeg, nullptr, nullptr,
                         nullptr, 0, keys[warp], vals[warp], incl[warp], first[warp]))
            out[1] = 1;  // the warp's lanes alike
    }
    grid.sync();
    if (out[1]) return;
    grid_exclusive_scan(grid, nc, cdeg, cxadj, 0, partial, buf);
    // the rows for mid counted, the counts scanned into their places in the list
    unsigned long long longest = 0, shortest = 0;
    for_each_vertex(nc, [&](const int c) {
        const unsigned long long degree = cxadj[c + 1] - cxadj[c];
        tiers[c] = degree > mid_low;
        longest = max(longest, degree);
        shortest = max(shortest, ~degree);
    });
    block_degree_range(longest, shortest, (unsigned long long*)buf, out + 2);
    grid.sync();
    grid_exclusive_scan(grid, nc, tiers, tiers, 0, partial, buf);  // in place
    for_each_vertex(nc, [&](const int c) {
        if (tiers[c + 1] > tiers[c]) mid[tiers[c]] = c;
    });
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = cxadj[nc];
        out[4] = tiers[nc];
    }
}

// out[v] = the weight of v's edges to vertices outside its cluster cmap[v] (each 1 where adjwgt
// is null): summed over a cluster's members, its coarse vertex's weighted degree. Twin:
// contraction.py (outside_degrees).
extern "C" __global__ void outside_degrees(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ cmap, long long* __restrict__ out)
{
    for_each_vertex(n, [&](const int v) {
        const int c = cmap[v];
        long long sum = 0;
        for (long long j = xadj[v]; j < xadj[v + 1]; ++j)
            if (cmap[adjncy[j]] != c) sum += edge_weight(adjwgt, j);
        out[v] = sum;
    });
}
