// ncon_refiner.py's multi-constraint refine loop on the device: mc_loop runs a level's iterations
// in one cooperative kernel (launched by ncon_device.py), from the start partition's score
// on, until the loop stops or a rebalancing step keeps no move (the host then runs swap_step and
// resumes the loop). Twin: the loop of ncon_refiner.py's refine. ctl (int64) and fctl (float64)
// hold the loop's state, gates (int32) which steps of the next iteration run.
//
// Per (constraint, part) group g = c * nparts + p the books keep pw[g] (the part's weight in c)
// and the limits; the excess is summed in one fixed order on both engines: per constraint the
// integer sum of its parts' weight over their limits, divided by the constraint's total, then the
// constraints in order (weights.py's Balance.excess).
#include "../cuda/grid_sync.cuh"
#include "../cuda/block_reduce.cuh"
#include "../cuda/resident_grid.cuh"
#include "../refinement/loop_steps.cuh"
#include "ncon.cu"

#define MC_CUT 0          // ctl: the current partition's edge cut
#define MC_BEST_CUT 1     //      the best partition's
#define MC_STALE 2        //      iterations since the last big improvement
#define MC_ITERATIONS 3
#define MC_SWAP 4         //      1: the loop stopped for the host's swap step
#define MC_NROOMIEST 5    //      entries of roomiest
#define MC_CTL_SIZE 6

#define MC_EXCESS 0       // fctl: the current partition's excess (less the tolerance)
#define MC_BEST_EXCESS 1  //       the best partition's

#define MC_LP 0           // gates: label propagation (no excess)
#define MC_REBALANCE 1    //        rebalancing
#define MC_RUN 2          //        the loop still runs
#define MC_BEST 3         //        the new partition is the best so far
#define MC_LOOSE 4        //        label propagation's inflow room has slack

#define MC_UNBOUNDED (1LL << 62)

// pwacc[g] += the weight in c of part p (of the change from prev where prev is given: a moved
// vertex adds its weights to its part and subtracts them from prev's, wrapping uint64), summed
// per block in dynamic shared memory (8 * groups bytes) when `shared`.
__device__ __forceinline__ void mc_weights_pass(
    const int n, const int ncon, const int nparts, const int shared, const int* part,
    const int* prev, const int* __restrict__ weights, unsigned long long* pwacc)
{
    extern __shared__ unsigned long long group_sums[];
    const int groups = ncon * nparts;
    unsigned long long* sums = shared ? group_sums : pwacc;
    if (shared) {
        __syncthreads();  // the block's last use of the shared scratch is over
        for (int i = threadIdx.x; i < groups; i += blockDim.x) group_sums[i] = 0;
        __syncthreads();
    }
    for_each_vertex(n, [&](const int v) {
        const int p = part[v], q = prev != nullptr ? prev[v] : -1;
        if (p == q) return;
        for (int c = 0; c < ncon; ++c) {
            const long long w = weights[(long long)c * n + v];
            if (w == 0) continue;
            atomicAdd(sums + c * nparts + p, (unsigned long long)w);
            if (q >= 0) atomicAdd(sums + c * nparts + q, (unsigned long long)-w);
        }
    });
    if (!shared) return;
    __syncthreads();
    for (int i = threadIdx.x; i < groups; i += blockDim.x)
        if (group_sums[i]) atomicAdd(pwacc + i, group_sums[i]);
}

// End of an iteration (one block), after the score passes brought acc (acc[0] = 2 * cut) and
// pwacc to the new partition: pw = pwacc, its (excess, cut) against the best so far, as
// ncon_refiner.py's refine keeps them. With `init`, the scores of the starting partition set the
// state instead.
__device__ __forceinline__ void mc_end_block(
    const int init, const int ncon, const int nparts, const long long* __restrict__ limits,
    const double* __restrict__ scale, const double tolerance, const double keep_factor,
    const double settle_factor, const unsigned long long* acc,
    const unsigned long long* pwacc, long long* pw, long long* ctl, double* fctl, int* gates)
{
    __shared__ long long buf[32];
    double excess = 0.0;
    for (int c = 0; c < ncon; ++c) {
        long long over = 0;
        for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
            const int g = c * nparts + p;
            const long long w = (long long)pwacc[g];
            pw[g] = w;
            over += w > limits[g] ? w - limits[g] : 0;
        }
        over = block_sum_i64(over, buf);
        excess += (double)over / scale[c];  // valid in thread 0, the only reader
    }
    if (threadIdx.x != 0) return;
    excess -= tolerance;
    excess = excess > 0.0 ? excess : 0.0;
    const long long cut = (long long)(acc[0] / 2);
    if (init) {
        fctl[MC_EXCESS] = fctl[MC_BEST_EXCESS] = excess;
        ctl[MC_CUT] = ctl[MC_BEST_CUT] = cut;
        ctl[MC_STALE] = ctl[MC_ITERATIONS] = 0;
        gates[MC_BEST] = gates[MC_LOOSE] = 0;
        return;
    }
    const bool lp = gates[MC_LP] != 0;
    const double before = fctl[MC_EXCESS];
    if (lp) gates[MC_LOOSE] = !gates[MC_LOOSE] && (double)cut >= keep_factor * (double)ctl[MC_CUT];
    fctl[MC_EXCESS] = excess;
    ctl[MC_CUT] = cut;
    ctl[MC_ITERATIONS] += 1;
    const double best_excess = fctl[MC_BEST_EXCESS];
    const long long best_cut = ctl[MC_BEST_CUT];
    const bool better = excess < best_excess || (excess == best_excess && cut < best_cut);
    gates[MC_BEST] = better;
    if (better) {
        const bool big = excess < best_excess || (double)cut < keep_factor * (double)best_cut;
        ctl[MC_STALE] = big ? 0 : ctl[MC_STALE] + 1;
        fctl[MC_BEST_EXCESS] = excess;
        ctl[MC_BEST_CUT] = cut;
    } else if (lp || excess >= (best_excess == 0.0 ? settle_factor : keep_factor) * before) {
        // a rebalancing step that still lowers the excess is not stale; once a balanced state
        // is kept, only one that removes a good share of it
        ctl[MC_STALE] += 1;
    }
}

// Start of an iteration (one block): stop when the iteration or patience budget is spent, else
// pick label propagation (no excess) or rebalancing, and set the rooms the step reads, as
// ncon.py's lp_step and rebalance_step derive them from pw: per group lp_room = limit - pw
// (+ slack when loose), over = pw - limit, excess_room = -max(over, 0), room = -over; per part
// bm_room = -1 when over in some constraint, else unbounded; roomiest = the sorted distinct
// parts of most room relative to their limit, one per constraint (the first of equals).
__device__ __forceinline__ void mc_begin_block(
    const int ncon, const int nparts, const long long* __restrict__ limits,
    const long long* __restrict__ slack, const long long patience,
    const long long max_iterations, const long long* pw, long long* ctl, const double* fctl,
    int* gates, long long* lp_room, long long* over, long long* excess_room, long long* room,
    long long* bm_room, long long* roomiest)
{
    __shared__ unsigned long long buf[32];
    const int groups = ncon * nparts;
    const bool loose = gates[MC_LOOSE] != 0;
    for (int g = threadIdx.x; g < groups; g += blockDim.x) {
        const long long o = pw[g] - limits[g];
        over[g] = o;
        excess_room[g] = o > 0 ? -o : 0;
        room[g] = -o;
        lp_room[g] = -o + (loose ? slack[g] : 0);
    }
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
        bool any = false;
        for (int c = 0; c < ncon; ++c) any |= pw[c * nparts + p] > limits[c * nparts + p];
        bm_room[p] = any ? -1 : MC_UNBOUNDED;
    }
    for (int c = 0; c < ncon; ++c) {
        // the largest share, as an order-preserving uint64 of its bits, then its first part
        auto share_key = [&](const int p) {
            const long long lim = limits[c * nparts + p];
            const double share = (double)(lim - pw[c * nparts + p]) / (double)(lim > 1 ? lim : 1);
            const unsigned long long bits = (unsigned long long)__double_as_longlong(share);
            return (bits >> 63) ? ~bits : bits | (1ULL << 63);
        };
        const int first = block_first_argmax(nparts, share_key, buf);
        if (threadIdx.x == 0) roomiest[c] = first;
    }
    if (threadIdx.x != 0) return;
    int count = 0;
    for (int c = 0; c < ncon; ++c) {  // insertion into the sorted distinct list before c
        const long long p = roomiest[c];
        int at = 0;
        while (at < count && roomiest[at] < p) ++at;
        if (at < count && roomiest[at] == p) continue;
        for (int i = count; i > at; --i) roomiest[i] = roomiest[i - 1];
        roomiest[at] = p;
        ++count;
    }
    ctl[MC_NROOMIEST] = count;
    const bool stopped = ctl[MC_ITERATIONS] >= max_iterations || ctl[MC_STALE] >= patience;
    gates[MC_RUN] = !stopped;
    gates[MC_LP] = !stopped && fctl[MC_EXCESS] == 0.0;
    gates[MC_REBALANCE] = !stopped && fctl[MC_EXCESS] > 0.0;
}

// The score of part (of the change from prev where prev is given) into acc and pwacc, then
// block 0's books (init: of a start), each step followed by a grid-wide barrier.
__device__ __forceinline__ void mc_score_and_books(
    const GridBarrier& grid, const RowTiers& rows, const int init,
    const int n, const int ncon, const int nparts, const int shared, const long long* xadj,
    const int* adjncy, const int* adjwgt, const int* vwgt, const int* __restrict__ weights,
    const int* part, const int* prev, const long long* __restrict__ limits,
    const long long* __restrict__ slack, const double* __restrict__ scale,
    const double tolerance, const long long patience, const long long max_iterations,
    const double keep_factor, const double settle_factor, unsigned long long* acc,
    unsigned long long* pwacc, long long* pw, long long* ctl, double* fctl, int* gates,
    long long* lp_room, long long* over, long long* excess_room, long long* room,
    long long* bm_room, long long* roomiest)
{
    score_in_loop(rows, n, nparts, xadj, adjncy, adjwgt, vwgt, part, prev, acc);
    mc_weights_pass(n, ncon, nparts, shared, part, prev, weights, pwacc);
    grid.sync();
    if (blockIdx.x == 0) {
        mc_end_block(init, ncon, nparts, limits, scale, tolerance, keep_factor, settle_factor,
                     acc, pwacc, pw, ctl, fctl, gates);
        __syncthreads();  // ctl, fctl, pw and the gates are read by the whole block next
        mc_begin_block(ncon, nparts, limits, slack, patience, max_iterations, pw, ctl, fctl,
                       gates, lp_room, over, excess_room, room, bm_room, roomiest);
    }
    grid.sync();
}

// A level's loop in one cooperative launch (every block resident, NUM_DIGITS threads each, the
// dynamic shared memory of score, of a heavy row's best_moves and of mc_weights_pass): the
// steps of an iteration as the kernels of jet.cu and ncon.cu define them, a grid-wide
// barrier after each, block 0 keeping the books. From `start` (resume = 0: a level's start, no
// locks, best = start; resume = 1: the partition the host's swap step left, scored as that
// rebalancing iteration's result) until mc_begin_block stops the loop, or until a rebalancing
// step keeps no move: then ctl[MC_SWAP] = 1 and cur = the partition to swap from. part and
// moved (and locked and next_locked) trade places between iterations; the result is best.
// Plain pointers: the loop writes what its steps read.
extern "C" __global__ void mc_loop(
    const int n, const int ncon, const int nparts, const long long* xadj, const int* adjncy,
    const int* adjwgt, const int* vwgt, const long long max_degree, const int* mid,
    const int nmid, const int* heavy, const int nheavy, const int* __restrict__ weights,
    const long long* __restrict__ limits, const long long* __restrict__ slack,
    const double* __restrict__ scale, const int shared, const double tolerance,
    const long long patience, const long long max_iterations, const long long c_num,
    const long long c_den, const double keep_factor, const double settle_factor,
    const int shift_hi, const int shift_lo, const int adjacent_only, const int resume,
    int* tkeys, int* tvals, int* part,
    int* moved, int* best, int* cur, unsigned char* locked, unsigned char* next_locked,
    int* dest, int* gain, long long* ctl, double* fctl, int* gates, unsigned long long* acc,
    unsigned long long* pwacc, long long* pw, long long* lp_room, long long* over,
    long long* excess_room, long long* room, long long* bm_room, long long* roomiest, int* to,
    int* ckey, unsigned long long* hist, int* sel, long long* base, unsigned long long* first,
    double* credit, unsigned long long* kept, const int* start)
{
    const GridBarrier grid{};
    const RowTiers rows{max_degree, mid, heavy, nmid, nheavy};
    for_each_vertex(n, [&](const int v) {
        part[v] = start[v];
        if (!resume) best[v] = start[v];
        locked[v] = 0;
    });
    if (blockIdx.x == 0) {
        for (int p = threadIdx.x; p <= nparts; p += blockDim.x) acc[p] = 0;
        for (int g = threadIdx.x; g < ncon * nparts; g += blockDim.x) pwacc[g] = 0;
        if (threadIdx.x == 0) ctl[MC_SWAP] = 0;
    }
    grid.sync();
    mc_score_and_books(grid, rows, !resume, n, ncon, nparts, shared, xadj, adjncy, adjwgt, vwgt,
                       weights, part, nullptr, limits, slack, scale, tolerance, patience,
                       max_iterations, keep_factor, settle_factor, acc, pwacc, pw, ctl, fctl,
                       gates, lp_room, over, excess_room, room, bm_room, roomiest);
    for (;;) {
        if (gates[MC_BEST]) for_each_vertex(n, [&](const int v) { best[v] = part[v]; });
        if (!gates[MC_RUN]) return;
        const bool lp = gates[MC_LP] != 0;  // the books replace the gates before the swaps
        if (lp) {
            best_moves_in_loop(rows, n, nparts, xadj, adjncy, adjwgt, vwgt, part, locked,
                               bm_room, 0, c_num, c_den, tkeys, tvals, dest, gain);
            grid.sync();
            afterburner_in_loop(rows, n, xadj, adjncy, adjwgt, part, dest, gain, next_locked,
                                moved);
            grid.sync();
            mc_inflow_prepare_pass(n, ncon, nparts, part, moved, gain, weights, to, ckey, hist);
            grid.sync();
            mc_select_in_grid(grid, n, ncon, nparts, part, weights, to, ckey, nullptr, lp_room,
                              shift_hi, shift_lo, hist, sel, base);
            mc_apply_pass(n, ncon, nparts, part, weights, nullptr, to, ckey, sel, shift_hi,
                          shift_lo, nullptr, nullptr, moved, next_locked, nullptr);
        } else {
            best_moves_in_loop(rows, n, nparts, xadj, adjncy, adjwgt, vwgt, part, locked,
                               bm_room, 1, c_num, c_den, tkeys, tvals, dest, gain);
            grid.sync();
            mc_rebalance_prepare_pass(n, ncon, nparts, part, weights, dest, gain, over, scale,
                                      roomiest, adjacent_only ? 0 : (int)ctl[MC_NROOMIEST], to,
                                      ckey, hist, first, kept);
            grid.sync();
            mc_select_in_grid(grid, n, ncon, nparts, part, weights, to, ckey, over, excess_room,
                              shift_hi, shift_lo, hist, sel, base);
            mc_rebalance_take_pass(n, ncon, nparts, part, weights, to, ckey, over, scale, sel,
                                   base, shift_hi, shift_lo, hist, first, credit);
            grid.sync();
            mc_select_in_grid(grid, n, ncon, nparts, part, weights, to, ckey, nullptr, room,
                              shift_hi, shift_lo, hist, sel, base);
            mc_apply_pass(n, ncon, nparts, part, weights, scale, to, ckey, sel, shift_hi,
                          shift_lo, first, credit, moved, nullptr, kept);
            grid.sync();
            if (kept[0] == 0) {  // no move lowers the excess: the host swaps
                for_each_vertex(n, [&](const int v) { cur[v] = part[v]; });
                if (blockIdx.x == 0 && threadIdx.x == 0) ctl[MC_SWAP] = 1;
                return;
            }
            for_each_vertex(n, [&](const int v) { locked[v] = 0; });
        }
        grid.sync();
        mc_score_and_books(grid, rows, 0, n, ncon, nparts, shared, xadj, adjncy, adjwgt, vwgt,
                           weights, moved, part, limits, slack, scale, tolerance, patience,
                           max_iterations, keep_factor, settle_factor, acc, pwacc, pw, ctl, fctl,
                           gates, lp_room, over, excess_room, room, bm_room, roomiest);
        next_iteration(lp, part, moved, locked, next_locked);
    }
}
