// Size-constrained label-propagation clustering. Twin: gpmetis/coarsening/clustering.py
// (_best_cluster_numpy, _approve_numpy, apply_moves). Every decision depends on weights, ids
// and the seed only.
//
// In a sub-round the active vertices (a seeded hash of the id, mod nsub, equals sub) each pick
// the adjacent cluster they are most strongly tied to; the proposals are approved per target
// cluster in priority order (rating, then id) while the cluster stays within maxvwgt (a target
// that holds all its proposals takes them all), then applied, without a host round trip.
// best_cluster takes the vertices of degree <= max_degree (one thread each), best_cluster_warp
// the listed ones of degree <= WARP_DEGREE_MAX (one warp each), best_cluster_heavy the listed
// longer ones (one block each); all give the same answer for any vertex.
#include "../cuda/grid_sync.cuh"
#include "../cuda/edge_hash.cuh"
#include "../cuda/block_reduce.cuh"
#include "../cuda/grid_scan.cuh"
#include "../cuda/resident_grid.cuh"
#include "../cuda/row_sums.cuh"
#include "../cuda/warp_sums.cuh"

// cluster_tie: a seeded hash of cluster id c that is a bijection of c for a given vertex id v
// (lp_clustering's last resort between clusters, see cluster_key).
__device__ __forceinline__ unsigned int cluster_tie(const unsigned int v, const unsigned int c,
                                                    const unsigned int seed) {
    return mix32(c ^ mix32(v ^ seed));
}

// The schedule of a level's sub-rounds: plan[0] is the current step of the kernels launched one
// at a time (next_step advances it), plan[1 + 2 * step] its round's seed and plan[2 + 2 * step]
// its sub-round; cluster_loop takes the steps in turn. The hashes read the vertices' and
// clusters' ids in the whole graph (their low 32 bits): row v is vertex id_base + v, cluster c
// is labels[c] (c itself where labels is null), so that a rank holding some rows of a graph,
// with its clusters numbered locally, decides as one process does.
struct SubRound {
    unsigned int round_seed, sub, nsub, id_base;
    const unsigned int* labels;

    __device__ __forceinline__ bool is_active(const int v) const {
        return mix32(((unsigned int)v + id_base) ^ round_seed) % nsub == sub;
    }

    __device__ __forceinline__ unsigned int tie(const int v, const int c,
                                                const unsigned int seed) const {
        return cluster_tie((unsigned int)v + id_base,
                           labels == nullptr ? (unsigned int)c : labels[c], seed);
    }
};

// The sub-round of the given step of plan.
__device__ __forceinline__ SubRound sub_round_at(const unsigned int* plan, const unsigned int step,
                                                 const int nsub, const unsigned int id_base = 0,
                                                 const unsigned int* labels = nullptr) {
    return SubRound{plan[1 + 2 * step], plan[2 + 2 * step], (unsigned int)nsub, id_base, labels};
}

extern "C" __global__ void next_step(unsigned int* plan) {
    if (blockIdx.x == 0 && threadIdx.x == 0) plan[0] += 1;
}

// The clusters' labels renumbered 0..nc-1 in label order (lp_clustering's last step; twin:
// its NumPy lines), in one cooperative launch: used[l] = 1 for each label l in use, scanned in
// place into each label's rank, which replaces it; used[n] = nc. used (n + 1) is zero on entry,
// partial has gridDim.x entries.
extern "C" __global__ void number_labels(const int n, int* cluster, int* used, long long* partial)
{
    __shared__ long long buf[32];
    const GridBarrier grid{};
    for_each_vertex(n, [&](const int v) { used[cluster[v]] = 1; });
    grid.sync();
    grid_exclusive_scan(grid, n, used, used, 0, partial, buf);
    for_each_vertex(n, [&](const int v) { cluster[v] = used[cluster[v]]; });
}

// The order in which v ranks its adjacent clusters: first cluster_key (a valid bit, the rating
// = v's edge weight into c, below 2^31, then the lighter cluster), then cluster_tie (a seeded
// hash that is a bijection of c for a given v, so no two clusters tie). 0 means "none".
__device__ __forceinline__ unsigned long long cluster_key(const long long rating, const int cw) {
    return (1ULL << 63) | ((unsigned long long)rating << 32) | (0xFFFFFFFFU - (unsigned int)cw);
}


// Whether (key, tie) ranks before (best, best_tie).
__device__ __forceinline__ bool ranks_first(const unsigned long long key, const unsigned int tie,
                                            const unsigned long long best,
                                            const unsigned int best_tie) {
    return key > best || (key == best && tie > best_tie);
}

// Whether v may join cluster c: its own, or one that stays within maxvwgt with v in it.
__device__ __forceinline__ bool may_join(const int v, const int c, const int own,
                                         const int* __restrict__ cw,
                                         const int* __restrict__ vwgt, const int maxvwgt) {
    return c == own || (long long)cw[c] + vwgt[v] <= maxvwgt;
}

// For each active v of degree <= max_degree: dest[v] = the adjacent cluster v may join that
// ranks first (cluster_key, then cluster_tie), when that is not v's own cluster, else -1;
// rating[v] = v's edge weight into dest[v]. Inactive vertices get dest = -1. Rows longer than
// SCAN_DEGREE use tkeys/tvals[xadj[v]..xadj[v+1]) as scratch.
__device__ __forceinline__ void best_cluster_vertex(
    const int v, const SubRound round, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ cluster, const int* __restrict__ cw, const int maxvwgt,
    const unsigned int seed, int* __restrict__ tkeys, int* __restrict__ tvals,
    int* __restrict__ dest, int* __restrict__ rating, const long long max_degree)
{
    if (xadj[v + 1] - xadj[v] > max_degree) return;
    dest[v] = -1;
    if (!round.is_active(v)) return;
    const int own = cluster[v];
    const long long begin = xadj[v], end = xadj[v + 1];
    unsigned long long best = 0;
    unsigned int best_tie = 0;
    int best_c = -1;
    long long best_r = 0;
    auto offer = [&](const int c, const long long r) {
        if (!may_join(v, c, own, cw, vwgt, maxvwgt)) return;
        const unsigned long long key = cluster_key(r, cw[c]);
        const unsigned int tie = round.tie(v, c, seed);
        if (ranks_first(key, tie, best, best_tie)) {
            best = key; best_tie = tie; best_c = c; best_r = r;
        }
    };
    for_each_label_sum(begin, end, adjncy, adjwgt, cluster, tkeys, tvals, offer);
    if (best_c >= 0 && best_c != own) {
        dest[v] = best_c;
        rating[v] = (int)best_r;
    }
}

extern "C" __global__ void best_cluster(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ cluster, const int* __restrict__ cw, const int maxvwgt,
    const unsigned int seed, const unsigned int* __restrict__ plan, const int nsub,
    const unsigned int id_base, const unsigned int* __restrict__ labels,
    int* __restrict__ tkeys, int* __restrict__ tvals, int* __restrict__ dest,
    int* __restrict__ rating, const long long max_degree)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    best_cluster_vertex(v, sub_round_at(plan, plan[0], nsub, id_base, labels), xadj, adjncy,
                        adjwgt, vwgt, cluster, cw, maxvwgt, seed, tkeys, tvals, dest, rating,
                        max_degree);
}

// best_cluster for vertex v (degree <= WARP_DEGREE_MAX) by the calling warp, keys/vals being its
// shared scratch (WARP_DEGREE_MAX ints each): the row's clusters summed in shared memory, then a
// warp-wide max of (cluster_key, cluster_tie), which identifies the winner.
__device__ __forceinline__ void best_cluster_by_warp(
    const int v, const SubRound round, int* keys, int* vals, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ cluster, const int* __restrict__ cw, const int maxvwgt,
    const unsigned int seed, int* __restrict__ dest, int* __restrict__ rating)
{
    const int lane = threadIdx.x & 31;
    if (!round.is_active(v)) {
        if (lane == 0) dest[v] = -1;
        return;
    }
    const int own = cluster[v];
    const long long begin = xadj[v], end = xadj[v + 1];
    WarpSums sums{keys, vals, 0};
    for (long long j0 = begin; j0 < end; j0 += 32) {
        const long long j = j0 + lane;
        sums.add(j < end, j < end ? cluster[adjncy[j]] : 0, j < end ? edge_weight(adjwgt, j) : 0);
    }
    unsigned long long best = 0;
    unsigned int best_tie = 0;
    int best_c = -1, best_r = 0;
    for (int s = lane; s < sums.size; s += 32) {
        const int c = sums.keys[s];
        if (!may_join(v, c, own, cw, vwgt, maxvwgt)) continue;
        const unsigned long long key = cluster_key(sums.vals[s], cw[c]);
        const unsigned int tie = round.tie(v, c, seed);
        if (ranks_first(key, tie, best, best_tie)) {
            best = key; best_tie = tie; best_c = c; best_r = sums.vals[s];
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long key = __shfl_xor_sync(FULL_MASK, best, o);
        const unsigned int tie = __shfl_xor_sync(FULL_MASK, best_tie, o);
        const int c = __shfl_xor_sync(FULL_MASK, best_c, o);
        const int r = __shfl_xor_sync(FULL_MASK, best_r, o);
        if (ranks_first(key, tie, best, best_tie)) {
            best = key; best_tie = tie; best_c = c; best_r = r;
        }
    }
    if (lane == 0) {
        const bool move = best_c >= 0 && best_c != own;
        dest[v] = move ? best_c : -1;
        if (move) rating[v] = best_r;
    }
    __syncwarp();  // the scratch is read before the warp's next vertex
}

// A proposal of weight w to join cluster c (none where c < 0) counted at its target.
__device__ __forceinline__ void add_inflow(const int c, const int w, long long* inflow,
                                           int* count)
{
    if (c < 0) return;
    atomicAdd(reinterpret_cast<unsigned long long*>(inflow + c), (unsigned long long)(long long)w);
    atomicAdd(count + c, 1);
}

// best_cluster_by_warp for the vertices mid[0..nmid): warp i of the grid takes i, i + the grid's
// warp count, ... (blocks of ROW_WARPS warps). With inflow and count, each proposal is also
// counted at its target (approve_inflow's work, by the lane that wrote dest).
__device__ __forceinline__ void best_cluster_warp_pass(
    const int* __restrict__ mid, const int nmid, const SubRound round,
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ cluster, const int* __restrict__ cw, const int maxvwgt,
    const unsigned int seed, int* __restrict__ dest, int* __restrict__ rating,
    long long* inflow = nullptr, int* count = nullptr)
{
    __shared__ int keys[ROW_WARPS][WARP_DEGREE_MAX], vals[ROW_WARPS][WARP_DEGREE_MAX];
    const int warp = threadIdx.x >> 5;
    const long long warps = (long long)gridDim.x * ROW_WARPS;
    for (long long i = (long long)blockIdx.x * ROW_WARPS + warp; i < nmid; i += warps) {
        const int v = mid[i];
        best_cluster_by_warp(v, round, keys[warp], vals[warp], xadj, adjncy, adjwgt, vwgt,
                             cluster, cw, maxvwgt, seed, dest, rating);
        if (inflow != nullptr && (threadIdx.x & 31) == 0)
            add_inflow(dest[v], vwgt[v], inflow, count);
    }
}

extern "C" __global__ void best_cluster_warp(
    const int* __restrict__ mid, const int nmid, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ cluster, const int* __restrict__ cw, const int maxvwgt,
    const unsigned int seed, const unsigned int* __restrict__ plan, const int nsub,
    const unsigned int id_base, const unsigned int* __restrict__ labels,
    int* __restrict__ dest, int* __restrict__ rating)
{
    best_cluster_warp_pass(mid, nmid, sub_round_at(plan, plan[0], nsub, id_base, labels), xadj,
                           adjncy, adjwgt, vwgt, cluster, cw, maxvwgt, seed, dest, rating);
}

// best_cluster for the i-th high-degree vertex v = heavy[i] by the calling block: its row's
// clusters summed in the hash table tkeys/tvals[hoff[i]..hoff[i+1]) (TABLE_SLACK slots per
// entry) by the whole block (integer atomics: the sums do not depend on thread order), then one
// block-wide max of (cluster_key, cluster_tie) over the table, which identifies the winner (its
// slot rides along).
__device__ __forceinline__ void best_cluster_by_block(
    const int i, const int v, const SubRound round, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ cluster, const int* __restrict__ cw, const int maxvwgt,
    const unsigned int seed, const long long* __restrict__ hoff, int* __restrict__ tkeys,
    int* __restrict__ tvals, int* __restrict__ dest, int* __restrict__ rating)
{
    __shared__ unsigned long long buf[64];
    if (!round.is_active(v)) {
        if (threadIdx.x == 0) dest[v] = -1;
        return;
    }
    const int own = cluster[v];
    const long long begin = hoff[i], end = hoff[i + 1], cap = end - begin;
    for (long long s = begin + threadIdx.x; s < end; s += blockDim.x) {
        tkeys[s] = -1;
        tvals[s] = 0;
    }
    __syncthreads();
    for (long long j = xadj[v] + threadIdx.x; j < xadj[v + 1]; j += blockDim.x)
        table_add_atomic(cluster[adjncy[j]], edge_weight(adjwgt, j), cap, tkeys + begin, tvals + begin);
    __syncthreads();
    // key 0: no cluster; ties are distinct for distinct clusters, so the slot (below 2^32: a
    // table has twice a row's entries) never decides
    unsigned long long key = 0, tie_slot = 0;
    for (long long s = begin + threadIdx.x; s < end; s += blockDim.x) {
        const int c = tkeys[s];
        if (c < 0 || !may_join(v, c, own, cw, vwgt, maxvwgt)) continue;
        keep_max_pair(key, tie_slot, cluster_key(tvals[s], cw[c]),
                      ((unsigned long long)round.tie(v, c, seed) << 32)
                          | (unsigned long long)(s - begin));
    }
    block_max_pair_u64(key, tie_slot, buf);
    if (threadIdx.x != 0) return;
    const long long s = begin + (long long)(tie_slot & 0xFFFFFFFFULL);
    const bool moves = key != 0 && tkeys[s] != own;
    dest[v] = moves ? tkeys[s] : -1;
    if (moves) rating[v] = tvals[s];
}

extern "C" __global__ void best_cluster_heavy(
    const int* __restrict__ heavy, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ cluster, const int* __restrict__ cw, const int maxvwgt,
    const unsigned int seed, const unsigned int* __restrict__ plan, const int nsub,
    const unsigned int id_base, const unsigned int* __restrict__ labels,
    const long long* __restrict__ hoff, int* __restrict__ tkeys, int* __restrict__ tvals,
    int* __restrict__ dest, int* __restrict__ rating)
{
    best_cluster_by_block(blockIdx.x, heavy[blockIdx.x],
                          sub_round_at(plan, plan[0], nsub, id_base, labels), xadj, adjncy,
                          adjwgt, vwgt, cluster, cw, maxvwgt, seed, hoff, tkeys, tvals, dest,
                          rating);
}

#define OVER 2  // accepted[v]: v proposes to a target that cannot hold all its proposals

// inflow[c] and count[c] (zero on entry) = the total weight and the number of the vertices
// proposing to join cluster c.
__device__ __forceinline__ void approve_inflow_vertex(
    const int v, const int* __restrict__ dest, const int* __restrict__ vwgt,
    long long* __restrict__ inflow, int* __restrict__ count)
{
    add_inflow(dest[v], vwgt[v], inflow, count);
}

extern "C" __global__ void approve_inflow(
    const int n, const int* __restrict__ dest, const int* __restrict__ vwgt,
    long long* __restrict__ inflow, int* __restrict__ count)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) approve_inflow_vertex(v, dest, vwgt, inflow, count);
}

__device__ __forceinline__ bool over_subscribed(const int c, const int* __restrict__ cw,
                                                const long long* __restrict__ inflow,
                                                const int maxvwgt) {
    return cw[c] + inflow[c] > maxvwgt;
}

// As a proposer, accepted[v] = 1 where v's target holds all its proposals (cw + inflow <=
// maxvwgt), OVER where it does not (approve_over decides), 0 where v proposes nothing. As a
// target that cannot hold its proposals, v reserves count[v] entries of the bucket list
// (reserved[0] counts them) and count[v] becomes the first of them.
__device__ __forceinline__ void approve_fits_vertex(
    const int v, const int* __restrict__ dest, const int* __restrict__ cw,
    const long long* __restrict__ inflow, int* __restrict__ count, const int maxvwgt,
    unsigned char* __restrict__ accepted, int* __restrict__ reserved)
{
    const int c = dest[v];
    accepted[v] = c < 0 ? 0 : (over_subscribed(c, cw, inflow, maxvwgt) ? OVER : 1);
    if (count[v] > 0 && over_subscribed(v, cw, inflow, maxvwgt))
        count[v] = atomicAdd(reserved, count[v]);
}

extern "C" __global__ void approve_fits(
    const int n, const int* __restrict__ dest, const int* __restrict__ cw,
    const long long* __restrict__ inflow, int* __restrict__ count, const int maxvwgt,
    unsigned char* __restrict__ accepted, int* __restrict__ reserved)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) approve_fits_vertex(v, dest, cw, inflow, count, maxvwgt, accepted, reserved);
}

// A proposal's priority at its target: the higher rating, then the smaller id (distinct keys).
__device__ __forceinline__ unsigned long long priority(const int v,
                                                       const int* __restrict__ rating) {
    return ((unsigned long long)(unsigned int)rating[v] << 32) | (0xFFFFFFFFU - (unsigned int)v);
}

// Every OVER proposal is listed in its target's bucket, from start[target] on, in any order;
// fill[target] (zero on entry) ends as the number of them. With keys (else null), keys and
// weights get each listed proposal's priority and weight at its place in the bucket.
__device__ __forceinline__ void approve_bucket_vertex(
    const int v, const int* __restrict__ dest, const unsigned char* __restrict__ accepted,
    const int* __restrict__ start, int* __restrict__ fill, int* __restrict__ bucket,
    const int* __restrict__ rating = nullptr, const int* __restrict__ vwgt = nullptr,
    unsigned long long* __restrict__ keys = nullptr, int* __restrict__ weights = nullptr)
{
    if (accepted[v] != OVER) return;
    const int at = start[dest[v]] + atomicAdd(fill + dest[v], 1);
    bucket[at] = v;
    if (keys == nullptr) return;
    keys[at] = priority(v, rating);
    weights[at] = vwgt[v];
}

extern "C" __global__ void approve_bucket(
    const int n, const int* __restrict__ dest, const unsigned char* __restrict__ accepted,
    const int* __restrict__ start, int* __restrict__ fill, int* __restrict__ bucket,
    const int* __restrict__ rating, const int* __restrict__ vwgt,
    unsigned long long* __restrict__ keys, int* __restrict__ weights)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) approve_bucket_vertex(v, dest, accepted, start, fill, bucket, rating, vwgt, keys,
                                     weights);
}

// The buckets as the threshold searches read them: target t's proposals are bucket[start[t]..
// start[t] + fill[t]); their priorities and weights come from keys and weights where those are
// given (in bucket order: a hub's search reads them many times), else through the ids.
struct Buckets {
    const int* start;
    const int* fill;
    const int* bucket;
    const unsigned long long* keys;
    const int* weights;
    const int* rating;
    const int* vwgt;

    __device__ __forceinline__ unsigned long long key(const int at) const {
        return keys != nullptr ? keys[at] : priority(bucket[at], rating);
    }
    __device__ __forceinline__ int weight(const int at) const {
        return weights != nullptr ? weights[at] : vwgt[bucket[at]];
    }
};

// The threshold of target t: a proposal is accepted when the target's weight plus the weights
// of it and of every proposal of higher priority stays within maxvwgt. Weights are not
// negative, so these are the proposals whose priority is at least the smallest threshold T at
// which the weight at or above T fits: T is found by binary search over the 64-bit priorities,
// each step a sum over the bucket by the group of threads (a warp or a block) that shares the
// search: each takes the proposals from offset on, step apart, and total(x) sums x over the
// group, for every thread of it. Then the group marks the accepted proposals. The result does
// not depend on the bucket's order.
template <class Total>
__device__ __forceinline__ void approve_target(
    const int t, const int size, const Buckets& buckets, const int* __restrict__ cw,
    const int maxvwgt, const int offset, const int step, Total total,
    unsigned char* __restrict__ accepted)
{
    const int first = buckets.start[t], last = first + size;
    const long long room = (long long)maxvwgt - cw[t];
    unsigned long long lo = 0, hi = 1ULL << 63;  // the weight at or above hi is 0
    while (lo < hi) {
        const unsigned long long mid = lo + (hi - lo) / 2;
        long long above = 0;
        for (int at = first + offset; at < last; at += step)
            if (buckets.key(at) >= mid) above += buckets.weight(at);
        if (total(above) <= room) hi = mid; else lo = mid + 1;
    }
    for (int at = first + offset; at < last; at += step)
        accepted[buckets.bucket[at]] = buckets.key(at) >= lo;
}

#define SMALL_BUCKET_ROWS 4  // a warp approves buckets of up to 32 * this many without a search

// approve_target's result for a bucket of at most 32 * SMALL_BUCKET_ROWS proposals, by the
// warp, without its binary search (64 steps, each a pass over the bucket's memory): each lane
// holds proposals lane, lane + 32, ... in registers and sums the weight at or above each of their
// priorities; a proposal is accepted where that fits the room. (It is the same set: proposal p
// is at or above the search's threshold exactly when the weight at or above p's priority fits.)
__device__ __forceinline__ void approve_small_target(
    const int t, const int size, const Buckets& buckets, const int* __restrict__ cw,
    const int maxvwgt, const int lane, unsigned char* __restrict__ accepted)
{
    const int first = buckets.start[t];
    const long long room = (long long)maxvwgt - cw[t];
    unsigned long long key[SMALL_BUCKET_ROWS];
    int weight[SMALL_BUCKET_ROWS];
    long long above[SMALL_BUCKET_ROWS];
#pragma unroll
    for (int r = 0; r < SMALL_BUCKET_ROWS; ++r) {
        const int at = r * 32 + lane;
        key[r] = at < size ? buckets.key(first + at) : 0;  // key 0, weight 0: no proposal
        weight[r] = at < size ? buckets.weight(first + at) : 0;
        above[r] = 0;
    }
#pragma unroll
    for (int r = 0; r < SMALL_BUCKET_ROWS; ++r) {
        const int lanes = min(size - r * 32, 32);  // the same in every lane
        for (int from = 0; from < lanes; ++from) {
            const unsigned long long k = __shfl_sync(0xffffffffU, key[r], from);
            const int w = __shfl_sync(0xffffffffU, weight[r], from);
#pragma unroll
            for (int i = 0; i < SMALL_BUCKET_ROWS; ++i) above[i] += k >= key[i] ? w : 0;
        }
    }
#pragma unroll
    for (int r = 0; r < SMALL_BUCKET_ROWS; ++r) {
        const int at = r * 32 + lane;
        if (at < size) accepted[buckets.bucket[first + at]] = above[r] <= room;
    }
}

// Each warp looks at 32 targets at a time (grid-stride) and approves those with a bucket of at
// most max_bucket proposals one by one (approve_over_large takes the larger ones, a block each).
__device__ __forceinline__ void approve_over_pass(
    const int n, const Buckets& buckets, const int* __restrict__ cw, const int maxvwgt,
    unsigned char* __restrict__ accepted, const int max_bucket = 0x7fffffff)
{
    const int lane = threadIdx.x & 31;
    const int stride = gridDim.x * blockDim.x;  // 32 targets per warp and step
    auto warp_total = [](long long x) {
        for (int offset = 16; offset > 0; offset >>= 1)
            x += __shfl_xor_sync(0xffffffffU, x, offset);
        return x;
    };
    for (int base = (blockIdx.x * blockDim.x + threadIdx.x) & ~31; base < n; base += stride) {
        const int size = base + lane < n ? buckets.fill[base + lane] : 0;
        const int mine = size <= max_bucket ? size : 0;
        unsigned int pending = __ballot_sync(0xffffffffU, mine > 0);
        while (pending) {
            const int leader = __ffs(pending) - 1;
            pending &= pending - 1;
            const int proposals = __shfl_sync(0xffffffffU, mine, leader);
            if (proposals <= 32 * SMALL_BUCKET_ROWS)
                approve_small_target(base + leader, proposals, buckets, cw, maxvwgt, lane,
                                     accepted);
            else
                approve_target(base + leader, proposals, buckets, cw, maxvwgt, lane, 32, warp_total,
                               accepted);
        }
    }
}

extern "C" __global__ void approve_over(
    const int n, const int* __restrict__ start, const int* __restrict__ fill,
    const int* __restrict__ bucket, const unsigned long long* __restrict__ keys,
    const int* __restrict__ weights, const int* __restrict__ rating,
    const int* __restrict__ vwgt, const int* __restrict__ cw, const int maxvwgt,
    unsigned char* __restrict__ accepted, const int max_bucket)
{
    approve_over_pass(n, Buckets{start, fill, bucket, keys, weights, rating, vwgt}, cw, maxvwgt,
                      accepted, max_bucket);
}

// The targets with a bucket of more than max_bucket proposals (hubs' clusters), which
// approve_over's warps leave: each block looks at blockDim targets at a time (grid-stride) and
// takes those one by one, the whole block on each.
extern "C" __global__ void approve_over_large(
    const int n, const int* __restrict__ start, const int* __restrict__ fill,
    const int* __restrict__ bucket, const unsigned long long* __restrict__ keys,
    const int* __restrict__ weights, const int* __restrict__ rating,
    const int* __restrict__ vwgt, const int* __restrict__ cw, const int maxvwgt,
    unsigned char* __restrict__ accepted, const int max_bucket)
{
    extern __shared__ int large[];  // blockDim entries
    __shared__ int nlarge;
    __shared__ long long buf[32], sum;
    const Buckets buckets{start, fill, bucket, keys, weights, rating, vwgt};
    auto block_total = [&](const long long x) {
        const long long all = block_sum_i64(x, buf);  // its first barrier: every thread read sum
        if (threadIdx.x == 0) sum = all;
        __syncthreads();
        return sum;
    };
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        if (threadIdx.x == 0) nlarge = 0;
        __syncthreads();
        const int t = base + threadIdx.x;
        if (t < n && fill[t] > max_bucket) large[atomicAdd(&nlarge, 1)] = t;
        __syncthreads();
        for (int i = 0; i < nlarge; ++i)
            approve_target(large[i], fill[large[i]], buckets, cw, maxvwgt, threadIdx.x,
                           blockDim.x, block_total, accepted);
        __syncthreads();  // nlarge is read by every thread before the next chunk resets it
    }
}

// Move every v with accepted[v] == 1: cluster[v] = dest[v], the weights follow (integer
// atomics), moved[0] counts the moves. The approval's work arrays (inflow, count, reserved)
// are left zero for the next sub-round. Each warp takes 32 vertices at a time (grid-stride).
__device__ __forceinline__ void apply_moves_pass(
    const int n, const unsigned char* __restrict__ accepted, const int* __restrict__ dest,
    const int* __restrict__ vwgt, int* __restrict__ cluster, int* __restrict__ cw,
    unsigned long long* __restrict__ moved, long long* __restrict__ inflow,
    int* __restrict__ count, int* __restrict__ reserved)
{
    const int stride = gridDim.x * blockDim.x;
    for (int base = (blockIdx.x * blockDim.x + threadIdx.x) & ~31; base < n; base += stride) {
        const int v = base + (threadIdx.x & 31);
        const bool move = v < n && accepted[v] == 1;
        if (move) {
            atomicSub(cw + cluster[v], vwgt[v]);
            atomicAdd(cw + dest[v], vwgt[v]);
            cluster[v] = dest[v];
        }
        if (v < n) {
            inflow[v] = 0;
            count[v] = 0;
        }
        const unsigned int ballot = __ballot_sync(0xffffffffU, move);
        if ((threadIdx.x & 31) == 0 && ballot)
            atomicAdd(moved, (unsigned long long)__popc(ballot));
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) reserved[0] = 0;
}

extern "C" __global__ void apply_moves(
    const int n, const unsigned char* __restrict__ accepted, const int* __restrict__ dest,
    const int* __restrict__ vwgt, int* __restrict__ cluster, int* __restrict__ cw,
    unsigned long long* __restrict__ moved, long long* __restrict__ inflow,
    int* __restrict__ count, int* __restrict__ reserved)
{
    apply_moves_pass(n, accepted, dest, vwgt, cluster, cw, moved, inflow, count, reserved);
}

// A level's rounds in one cooperative launch (every block resident, ROW_WARPS warps each), for
// levels without rows past WARP_DEGREE_MAX: per sub-round of plan (nrounds rounds of nsub),
// best_cluster (rows of up to max_degree <= SCAN_DEGREE entries by a thread, which needs no
// table, those in mid by a warp), the approval and apply_moves, as the kernels above run them,
// a grid-wide barrier after each step; after a round that moved fewer than min_moves vertices,
// no more rounds. A proposal is counted at its target (approve_inflow) by the thread or lane
// that made it, in best_cluster's step; approve_bucket's bucket is inflow's bytes, its start is
// count, and its fill (zero on entry) is zeroed again by each apply step. Its arguments are plain
// pointers: the loop writes what its steps read, so none of them may go through the read-only
// cache.
extern "C" __global__ void cluster_loop(
    const int n, const long long* xadj, const int* adjncy, const int* adjwgt, const int* vwgt,
    int* cluster, int* cw, const int maxvwgt, const unsigned int seed, const unsigned int* plan,
    const int nrounds, const int nsub, const double min_moves, const long long max_degree,
    const int* mid, const int nmid, int* dest, int* rating, long long* inflow, int* count,
    int* reserved, unsigned char* accepted, unsigned long long* moved, int* fill)
{
    const GridBarrier grid{};
    int* bucket = reinterpret_cast<int*>(inflow);  // inflow is done with once the fits are known
    unsigned long long total = moved[0];
    for (int r = 0; r < nrounds; ++r) {
        for (int sub = 0; sub < nsub; ++sub) {
            const SubRound round = sub_round_at(plan, r * nsub + sub, nsub);
            for_each_vertex(n, [&](const int v) {
                if (xadj[v + 1] - xadj[v] > max_degree) return;  // a warp's, below
                best_cluster_vertex(v, round, xadj, adjncy, adjwgt, vwgt, cluster, cw, maxvwgt,
                                    seed, nullptr, nullptr, dest, rating, max_degree);
                add_inflow(dest[v], vwgt[v], inflow, count);
            });
            best_cluster_warp_pass(mid, nmid, round, xadj, adjncy, adjwgt, vwgt, cluster, cw,
                                   maxvwgt, seed, dest, rating, inflow, count);
            grid.sync();
            for_each_vertex(n, [&](const int v) {
                approve_fits_vertex(v, dest, cw, inflow, count, maxvwgt, accepted, reserved);
            });
            grid.sync();
            for_each_vertex(n, [&](const int v) {
                approve_bucket_vertex(v, dest, accepted, count, fill, bucket);
            });
            grid.sync();
            approve_over_pass(n, Buckets{count, fill, bucket, nullptr, nullptr, rating, vwgt}, cw,
                              maxvwgt, accepted);
            grid.sync();
            apply_moves_pass(n, accepted, dest, vwgt, cluster, cw, moved, inflow, count,
                             reserved);
            for_each_vertex(n, [&](const int v) { fill[v] = 0; });
            grid.sync();
        }
        const unsigned long long now = moved[0];
        if ((double)(now - total) < min_moves) return;
        total = now;
    }
}
