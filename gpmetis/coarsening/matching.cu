// Heavy-edge matching on the GPU: one proposal round and its acceptance.
// Twin: gpmetis/coarsening/matching.py (_propose_numpy, accept via array ops).
// Decisions depend only on edge weights, vertex ids and a seeded hash, never on thread timing.
// propose takes vertices of degree <= max_degree, propose_warp and propose_heavy the listed
// longer ones (DeviceGraph.degree_tiers).
#include "../cuda/block_reduce.cuh"
#include "../cuda/edge_hash.cuh"
#include "../cuda/resident_grid.cuh"

// prop[v] = the free neighbour u maximising (adjwgt * use_weights, edge_hash), ties -> smaller u;
// -1 when v is matched or has no free neighbour u with vwgt[v] + vwgt[u] <= maxvwgt.
extern "C" __global__ void propose(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ match, const int maxvwgt, const unsigned int seed,
    const int use_weights, int* __restrict__ prop, const long long max_degree)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || xadj[v + 1] - xadj[v] > max_degree) return;
    int best_u = -1;
    if (match[v] < 0) {
        long long best_key = -1;
        const int wv = vwgt[v];
        for (long long j = xadj[v]; j < xadj[v + 1]; ++j) {
            const int u = adjncy[j];
            if (match[u] >= 0 || (long long)wv + vwgt[u] > maxvwgt) continue;
            const long long w = use_weights ? (long long)adjwgt[j] : 0LL;
            const long long key = (w << 32) | (long long)edge_hash(v, u, seed);
            if (key > best_key || (key == best_key && u < best_u)) { best_key = key; best_u = u; }
        }
    }
    prop[v] = best_u;
}

// propose for the vertices mid[0..nmid), one warp each: a warp-wide max of (key, -u).
extern "C" __global__ void propose_warp(
    const int* __restrict__ mid, const int nmid, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ match, const int maxvwgt, const unsigned int seed,
    const int use_weights, int* __restrict__ prop)
{
    for_each_listed_by_warp(mid, nmid, [&](const int v, const int lane) {
        unsigned long long best_key = 0, best_u = 0;  // key + 1 (0 = none), 0xFFFFFFFF - u
        if (match[v] < 0) {
            const int wv = vwgt[v];
            for (long long j = xadj[v] + lane; j < xadj[v + 1]; j += 32) {
                const int u = adjncy[j];
                if (match[u] >= 0 || (long long)wv + vwgt[u] > maxvwgt) continue;
                const unsigned long long w = use_weights ? (unsigned long long)adjwgt[j] : 0ULL;
                keep_max_pair(best_key, best_u, ((w << 32) | edge_hash(v, u, seed)) + 1ULL,
                              0xFFFFFFFFULL - (unsigned int)u);
            }
        }
        for (int o = 16; o > 0; o >>= 1)
            keep_max_pair(best_key, best_u, __shfl_xor_sync(0xffffffffU, best_key, o),
                          __shfl_xor_sync(0xffffffffU, best_u, o));
        if (lane == 0) prop[v] = best_key == 0 ? -1 : (int)(0xFFFFFFFFULL - best_u);
    });
}

// propose for the vertices heavy[0..nheavy), one block each: a block-wide max of the key, then
// the smallest neighbour id among the threads that hold that key.
extern "C" __global__ void propose_heavy(
    const int* __restrict__ heavy, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ match, const int maxvwgt, const unsigned int seed,
    const int use_weights, int* __restrict__ prop)
{
    __shared__ unsigned long long buf[32];
    __shared__ unsigned long long top;
    const int v = heavy[blockIdx.x];
    if (match[v] >= 0) {
        if (threadIdx.x == 0) prop[v] = -1;
        return;
    }
    const int wv = vwgt[v];
    unsigned long long best_key = 0;  // key + 1; 0 = none
    int best_u = 0x7fffffff;
    for (long long j = xadj[v] + threadIdx.x; j < xadj[v + 1]; j += blockDim.x) {
        const int u = adjncy[j];
        if (match[u] >= 0 || (long long)wv + vwgt[u] > maxvwgt) continue;
        const unsigned long long w = use_weights ? (unsigned long long)adjwgt[j] : 0ULL;
        const unsigned long long key = ((w << 32) | edge_hash(v, u, seed)) + 1ULL;
        if (key > best_key || (key == best_key && u < best_u)) { best_key = key; best_u = u; }
    }
    const unsigned long long k = block_max_u64(best_key, buf);
    if (threadIdx.x == 0) top = k;
    __syncthreads();
    const unsigned long long mine =
        (best_key == top && top != 0) ? 0xFFFFFFFFULL - (unsigned long long)best_u : 0ULL;
    const unsigned long long r = block_max_u64(mine, buf);
    if (threadIdx.x == 0) prop[v] = top == 0 ? -1 : (int)(0xFFFFFFFFULL - r);
}

// A free vertex whose proposal is returned takes its partner: match[v] = u iff prop[u] == v.
// matched[0] counts the vertices matched (one atomic per warp).
extern "C" __global__ void accept(
    const int n, const int* __restrict__ prop, int* __restrict__ match, int* __restrict__ matched)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    bool now = false;
    if (v < n && match[v] < 0) {
        const int u = prop[v];
        if (u >= 0 && prop[u] == v) { match[v] = u; now = true; }
    }
    const unsigned int ballot = __ballot_sync(0xffffffffU, now);
    if ((threadIdx.x & 31) == 0 && ballot) atomicAdd(matched, __popc(ballot));
}

// keys[i] = (smallest neighbour of vertices[i] + 1) << 32 | vertices[i]; the neighbour is -1
// when it has none (rows need not be sorted). Sorted, the keys group free vertices by anchor.
// Twin: matching.py (_two_hop_numpy).
extern "C" __global__ void two_hop_keys(
    const int m, const int* __restrict__ vertices, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, long long* __restrict__ keys)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const int v = vertices[i];
    int best = -1;
    for (long long j = xadj[v]; j < xadj[v + 1]; ++j)
        if (best < 0 || adjncy[j] < best) best = adjncy[j];
    keys[i] = ((long long)(best + 1) << 32) | (long long)v;
}

// Over sorted keys: the entries at even ranks 0, 2, ... of each anchor's group pair with the
// next entry of the group when their weights fit.
extern "C" __global__ void pair_two_hop(
    const int m, const long long* __restrict__ keys, const int* __restrict__ vwgt,
    const int maxvwgt, int* __restrict__ match)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 >= m) return;
    const long long group = keys[i] >> 32;
    if ((keys[i + 1] >> 32) != group) return;
    int lo = 0, hi = i;  // the group's first entry: the first key >= group << 32
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (keys[mid] < (group << 32)) lo = mid + 1; else hi = mid;
    }
    if ((i - lo) & 1) return;
    const int a = (int)(keys[i] & 0xffffffffLL), b = (int)(keys[i + 1] & 0xffffffffLL);
    if ((long long)vwgt[a] + vwgt[b] > maxvwgt) return;
    match[a] = b;
    match[b] = a;
}
