// The bookkeeping of jet.py's refine loop, on the device (driven by jet_device.py). Twin: the
// loop of jet.py's refine. ctl (int64) holds the loop's state, gates (int32) which kernels of
// the next iteration run.
#include "../block_reduce.cuh"
#include "../resident_grid.cuh"

#define CTL_OVER 0        // total overweight of the current partition
#define CTL_CUT 1         // its edge cut
#define CTL_BEST_OVER 2   // the same for the best partition so far
#define CTL_BEST_CUT 3
#define CTL_STALE 4       // iterations since the last big improvement
#define CTL_ITERATIONS 5

#define GATE_LP 0         // label propagation (no part overweight)
#define GATE_REBALANCE 1  // rebalancing (some part overweight)
#define GATE_RUN 2        // the loop still runs
#define GATE_BEST 3       // the new partition is the best so far

// Start of an iteration (one block): stop when the iteration or patience budget is spent, else
// pick label propagation or rebalancing; room[p] = maxpwgt[p] - pw[p], roomiest[0] = the first
// part with the most room.
extern "C" __global__ void jet_begin(
    const int nparts, const long long* __restrict__ maxpwgt, const long long patience,
    const long long max_iterations, const long long* __restrict__ pw, long long* __restrict__ ctl,
    long long* __restrict__ room, int* __restrict__ roomiest, int* __restrict__ gates)
{
    __shared__ unsigned long long buf[32];
    __shared__ unsigned long long most;
    const unsigned long long sign = 1ULL << 63;  // int64 -> uint64, order kept
    unsigned long long best = 0;
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
        room[p] = maxpwgt[p] - pw[p];
        const unsigned long long key = (unsigned long long)room[p] ^ sign;
        best = key > best ? key : best;
    }
    best = block_max_u64(best, buf);
    if (threadIdx.x == 0) most = best;
    __syncthreads();
    unsigned long long first = 0;
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
        const unsigned long long key = 0xFFFFFFFFULL - (unsigned)p;
        if (((unsigned long long)room[p] ^ sign) == most && key > first) first = key;
    }
    first = block_max_u64(first, buf);
    if (threadIdx.x != 0) return;
    roomiest[0] = (int)(0xFFFFFFFFULL - first);
    const bool stopped = ctl[CTL_ITERATIONS] >= max_iterations || ctl[CTL_STALE] >= patience;
    gates[GATE_RUN] = !stopped;
    gates[GATE_LP] = !stopped && ctl[CTL_OVER] == 0;
    gates[GATE_REBALANCE] = !stopped && ctl[CTL_OVER] > 0;
}

// End of an iteration (one block), after `score` brought acc to the new partition's state
// (acc[0] = 2 * cut, acc[1 + p] = weight of part p): its (overweight, cut) against the best so
// far. A smaller score is the new best; it resets the stale count when the
// overweight dropped or the cut fell below keep_factor * the best cut. With `init`, the scores
// of the starting partition set the state instead.
extern "C" __global__ void jet_end(
    const int init, const int nparts, const long long* __restrict__ maxpwgt,
    const double keep_factor, const unsigned long long* __restrict__ acc,
    long long* __restrict__ pw, long long* __restrict__ ctl, int* __restrict__ gates)
{
    __shared__ long long buf[32];
    if (!init && gates[GATE_RUN] == 0) {
        if (threadIdx.x == 0) gates[GATE_BEST] = 0;
        return;
    }
    long long over = 0;
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
        const long long w = (long long)acc[1 + p];
        pw[p] = w;
        over += w > maxpwgt[p] ? w - maxpwgt[p] : 0;
    }
    over = block_sum_i64(over, buf);
    if (threadIdx.x != 0) return;
    const long long cut = (long long)(acc[0] / 2);
    ctl[CTL_OVER] = over;
    ctl[CTL_CUT] = cut;
    if (init) {
        ctl[CTL_BEST_OVER] = over;
        ctl[CTL_BEST_CUT] = cut;
        ctl[CTL_STALE] = 0;
        ctl[CTL_ITERATIONS] = 0;
        gates[GATE_BEST] = 0;
        return;
    }
    ctl[CTL_ITERATIONS] += 1;
    const long long best_over = ctl[CTL_BEST_OVER], best_cut = ctl[CTL_BEST_CUT];
    const bool better = over < best_over || (over == best_over && cut < best_cut);
    gates[GATE_BEST] = better;
    if (!better) {
        ctl[CTL_STALE] += 1;
        return;
    }
    const bool big = over < best_over || (double)cut < keep_factor * (double)best_cut;
    ctl[CTL_STALE] = big ? 0 : ctl[CTL_STALE] + 1;
    ctl[CTL_BEST_OVER] = over;
    ctl[CTL_BEST_CUT] = cut;
}

// End of an iteration, per vertex: best = moved when it is the best partition so far; while the
// loop runs, the next iteration starts from moved, with the locks of this label propagation
// (none after a rebalancing round).
extern "C" __global__ void jet_commit(
    const int* __restrict__ gates, const int n, const int* __restrict__ moved,
    int* __restrict__ best, int* __restrict__ part, const unsigned char* __restrict__ next_locked,
    unsigned char* __restrict__ locked)
{
    for_each_vertex(n, [&](const int v) {
        if (gates[GATE_BEST]) best[v] = moved[v];
        if (!gates[GATE_RUN]) return;
        part[v] = moved[v];
        locked[v] = gates[GATE_REBALANCE] ? 0 : next_locked[v];
    });
}
