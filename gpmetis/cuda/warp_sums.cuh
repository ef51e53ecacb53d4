// Sums of int weights per int label (>= 0) gathered by a whole warp in shared memory, for the
// kernels that give one warp to one row (or one coarse vertex's member rows). Twins: the
// bincount/unique steps of the NumPy twins that call them. Labels are listed in the order of
// their first appearance (chunk by chunk, lane by lane), so the lists do not depend on timing.
#pragma once

#define FULL_MASK 0xffffffffU
#define ROW_WARPS 8  // warp-per-row kernels run blocks of ROW_WARPS warps (Backend.launch_warps)
#define WARP_DEGREE_MAX 256  // the longest row a warp sums (HEAVY_DEGREE in device_graph.py)

// A warp's list: keys[0..size) distinct labels, vals[0..size) their summed weights. Every lane
// of the warp calls add with the same list; size stays the same in every lane. keys/vals hold
// cap labels: where more come, the list stops growing and overflow is set (the sums are then
// incomplete); a caller that adds at most cap entries never sees it.
struct WarpSums {
    int* keys;
    int* vals;
    int size;
    int cap = WARP_DEGREE_MAX;
    bool overflow = false;

    // Add w to key's sum where valid (one entry per lane).
    __device__ __forceinline__ void add(const bool valid, const int key, const int w) {
        if (overflow) return;  // the whole warp
        const int lane = threadIdx.x & 31;
        int slot = -1;
        if (valid)
            for (int i = 0; i < size; ++i)
                if (keys[i] == key) { slot = i; break; }
        const bool fresh = valid && slot < 0;
        if (__ballot_sync(FULL_MASK, fresh)) {
            // lanes holding the same new label agree on its lowest lane, which lists it
            const unsigned int peers = __match_any_sync(FULL_MASK, fresh ? key : -1 - lane);
            const int leader = __ffs(peers) - 1;
            const unsigned int leaders = __ballot_sync(FULL_MASK, fresh && leader == lane);
            if (size + __popc(leaders) > cap) {
                overflow = true;
                return;
            }
            const int mine = size + __popc(leaders & ((1U << lane) - 1U));
            if (fresh && leader == lane) { keys[mine] = key; vals[mine] = 0; }
            const int theirs = __shfl_sync(FULL_MASK, mine, leader);
            if (fresh) slot = theirs;
            size += __popc(leaders);
        }
        __syncwarp();
        if (valid) atomicAdd(vals + slot, w);
        __syncwarp();
    }
};

// Call f(j) in every lane, warp-uniformly, for the adjacency entries j of the rows of
// members[mb..me) taken in order, one entry per lane (j = -1 where a lane has none);
// incl (int[32]) and first (long long[32]) are the warp's shared scratch. The members' degrees
// summed must fit in an int. members is a plain pointer: contract_loop writes it before.
template <typename F>
__device__ __forceinline__ void warp_member_entries(
    const int mb, const int me, const int* members,
    const long long* __restrict__ xadj, int* incl, long long* first, F f)
{
    const int lane = threadIdx.x & 31;
    for (int b = mb; b < me; b += 32) {
        int degree = 0;
        long long start = 0;
        if (b + lane < me) {
            const int x = members[b + lane];
            start = xadj[x];
            degree = (int)(xadj[x + 1] - start);
        }
        int sum = degree;  // inclusive scan of the batch's degrees
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(FULL_MASK, sum, o);
            if (lane >= o) sum += y;
        }
        __syncwarp();
        incl[lane] = sum;
        first[lane] = start;
        __syncwarp();
        const int total = __shfl_sync(FULL_MASK, sum, 31);
        for (int e0 = 0; e0 < total; e0 += 32) {
            const int e = e0 + lane;
            long long j = -1;
            if (e < total) {
                int lo = 0, hi = 31;  // the first member whose rows reach past entry e
                while (lo < hi) {
                    const int mid = (lo + hi) >> 1;
                    if (incl[mid] > e) hi = mid; else lo = mid + 1;
                }
                j = first[lo] + (e - (lo ? incl[lo - 1] : 0));
            }
            f(j);
        }
    }
}
