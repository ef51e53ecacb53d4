// jet.py's refine loop on the device: jet_loop runs a level's iterations in one cooperative
// kernel (launched by jet_device.py), from the start partition's score on. Twin: the loop of
// jet.py's refine. ctl (int64) holds the loop's state, gates (int32) which steps of the next
// iteration run.
#include "../cuda/grid_sync.cuh"
#include "../cuda/block_reduce.cuh"
#include "../cuda/resident_grid.cuh"
#include "loop_steps.cuh"
#include "rebalance.cu"

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
#define GATE_LOOSE 4      // label propagation's inflow cap is loose (jet.py's loose)

// Start of an iteration (one block): stop when the iteration or patience budget is spent, else
// pick label propagation or rebalancing; room[p] = maxpwgt[p] - pw[p], and roomiest as
// rebalance.cu's fallback_part reads it: roomiest[0] = the first part with the most room, or
// with groups of group_size parts each group's two roomiest parts (group_roomiest).
__device__ __forceinline__ void jet_begin_block(
    const int nparts, const int group_size, const long long* __restrict__ maxpwgt,
    const long long patience, const long long max_iterations, const long long* __restrict__ pw,
    long long* __restrict__ ctl, long long* __restrict__ room, int* __restrict__ roomiest,
    int* __restrict__ gates)
{
    __shared__ unsigned long long buf[32];
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) room[p] = maxpwgt[p] - pw[p];
    if (group_size) {
        __syncthreads();  // every part's room is written
        for (int g = threadIdx.x >> 5; g < nparts / group_size; g += blockDim.x >> 5)
            group_roomiest(g, group_size, room, roomiest);  // a warp per group
    } else {
        // room as uint64 with its order kept; each thread reads the rooms it wrote
        const int first = block_first_argmax(
            nparts, [&](const int p) { return (unsigned long long)room[p] ^ (1ULL << 63); },
            buf);
        if (threadIdx.x == 0) roomiest[0] = first;
    }
    if (threadIdx.x != 0) return;
    const bool stopped = ctl[CTL_ITERATIONS] >= max_iterations || ctl[CTL_STALE] >= patience;
    gates[GATE_RUN] = !stopped;
    gates[GATE_LP] = !stopped && ctl[CTL_OVER] == 0;
    gates[GATE_REBALANCE] = !stopped && ctl[CTL_OVER] > 0;
}

// End of an iteration (one block), after `score` brought acc to the new partition's state
// (acc[0] = 2 * cut, acc[1 + p] = weight of part p): its (overweight, cut) against the best so
// far. A smaller score is the new best; it resets the stale count when the
// overweight dropped or the cut fell below keep_factor * the best cut. After label propagation,
// the next one is loose when this one was not and its cut stayed at or above keep_factor * the
// cut before it. With `init`, the scores of the starting partition set the state instead.
__device__ __forceinline__ void jet_end_block(
    const int init, const int nparts, const long long* __restrict__ maxpwgt,
    const double keep_factor, const unsigned long long* __restrict__ acc,
    long long* __restrict__ pw, long long* __restrict__ ctl, int* __restrict__ gates)
{
    __shared__ long long buf[32];
    long long over = 0;
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
        const long long w = (long long)acc[1 + p];
        pw[p] = w;
        over += w > maxpwgt[p] ? w - maxpwgt[p] : 0;
    }
    over = block_sum_i64(over, buf);
    if (threadIdx.x != 0) return;
    const long long cut = (long long)(acc[0] / 2);
    if (!init && gates[GATE_LP]) {
        const bool stuck = (double)cut >= keep_factor * (double)ctl[CTL_CUT];
        gates[GATE_LOOSE] = !gates[GATE_LOOSE] && stuck;
    }
    ctl[CTL_OVER] = over;
    ctl[CTL_CUT] = cut;
    if (init) {
        ctl[CTL_BEST_OVER] = over;
        ctl[CTL_BEST_CUT] = cut;
        ctl[CTL_STALE] = 0;
        ctl[CTL_ITERATIONS] = 0;
        gates[GATE_BEST] = 0;
        gates[GATE_LOOSE] = 0;
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

// The books after an iteration's score (one block): jet_end_block, then jet_begin_block for the
// next iteration, whose gates replace this one's (GATE_BEST stays).
__device__ __forceinline__ void jet_books_block(
    const int init, const int nparts, const int group_size,
    const long long* __restrict__ maxpwgt, const long long patience,
    const long long max_iterations, const double keep_factor,
    const unsigned long long* __restrict__ acc, long long* __restrict__ pw,
    long long* __restrict__ ctl, long long* __restrict__ room, int* __restrict__ roomiest,
    int* __restrict__ gates)
{
    jet_end_block(init, nparts, maxpwgt, keep_factor, acc, pw, ctl, gates);
    __syncthreads();  // ctl, pw and the gates are read by the whole block next
    jet_begin_block(nparts, group_size, maxpwgt, patience, max_iterations, pw, ctl, room,
                    roomiest, gates);
}

// The iteration before was the best partition so far (GATE_BEST): best = part, the partition
// it left. Plain pointers: the loop wrote gates and part.
__device__ __forceinline__ void jet_keep_best_pass(
    const int* gates, const int n, const int* part, int* best)
{
    if (gates[GATE_BEST]) for_each_vertex(n, [&](const int v) { best[v] = part[v]; });
}

// One radix select of rebalance.cu (sources or destinations, from the level-0 histogram in
// hist) inside jet_loop: its steps as launch_select's kernels run them, a barrier after each,
// until a level leaves no item undecided (the levels after it would select nothing: no later
// step reads their digits). opened (NUM_LEVELS - 1 ints) is zero on entry and left zero: the
// flag of a level is cleared in the next one, once every block has read it.
__device__ __forceinline__ void select_in_loop(
    const GridBarrier& grid, const int n, const int nparts, const int source,
    const long long* room, const int* to, const int* part, const int* gain, const int* vwgt,
    const int shift_hi, const int shift_lo, unsigned long long* hist, int* sel, long long* base,
    int* opened)
{
    for (int level = 0; level < NUM_LEVELS; ++level) {
        const bool last = level == NUM_LEVELS - 1;
        if (level) {
            select_digit_hist_pass(n, level, source, to, part, gain, vwgt, sel, shift_hi,
                                   shift_lo, hist);
            grid.sync();
            if (blockIdx.x == 0 && threadIdx.x == 0) opened[level - 1] = 0;
        }
        for (int g = blockIdx.x; g < nparts; g += gridDim.x) {
            select_threshold_group(g, level, source, room, hist, sel, base,
                                   last ? nullptr : opened + level);
            __syncthreads();  // the group's shared prefix sums are read before the next's
        }
        grid.sync();
        if (!last && !opened[level]) return;
    }
}

// score of part into acc (of the change from prev where prev is given, so that acc goes on
// holding the current partition's state), then block 0's books (init: of a start), each step
// followed by a grid-wide barrier.
__device__ __forceinline__ void score_and_books(
    const GridBarrier& grid, const RowTiers& rows, const int init,
    const int n, const int nparts, const int group_size, const long long* xadj,
    const int* adjncy, const int* adjwgt, const int* vwgt, const int* part, const int* prev,
    const long long* maxpwgt,
    const long long patience, const long long max_iterations, const double keep_factor,
    unsigned long long* acc, long long* pw, long long* ctl, long long* room, int* roomiest,
    int* gates)
{
    score_in_loop(rows, n, nparts, xadj, adjncy, adjwgt, vwgt, part, prev, acc);
    grid.sync();
    if (blockIdx.x == 0)
        jet_books_block(init, nparts, group_size, maxpwgt, patience, max_iterations,
                        keep_factor, acc, pw, ctl, room, roomiest, gates);
    grid.sync();
}

// A level's whole loop in one cooperative launch (every block resident, NUM_DIGITS threads
// each, 4 * nparts bytes of dynamic shared memory where score or a block's best_moves needs
// them): the steps of an iteration as the kernels of jet.cu and rebalance.cu define them, a
// grid-wide barrier after each, block 0 keeping the books, until jet_begin_block stops the loop;
// first, part and best = start, no locks, and the books of start's score. Rows go to threads,
// warps and blocks as their RowTiers says. part and moved (and locked and
// next_locked) trade places between iterations, so part ends as either buffer: the result is
// best. With groups of `group_size` parts (0: none), rebalancing sends a vertex no adjacent part
// can take to the roomiest other part of its group, so a graph whose edges join only parts of
// one group keeps every vertex in its group (the pieces of a depth of -ptype=rb in pairs, the
// copies of a batched -preset=strong run in k parts each).
// Its arguments are plain pointers: the loop writes what its steps read, so none of them may go
// through the read-only cache.
extern "C" __global__ void jet_loop(
    const int n, const int nparts, const long long* xadj, const int* adjncy, const int* adjwgt,
    const int* vwgt, const long long max_degree, const int* mid,
    const int nmid, const int* heavy, const int nheavy, const long long* maxpwgt,
    const long long patience, const long long max_iterations, const long long c_num,
    const long long c_den, const long long slack, const double keep_factor, const int shift_hi,
    const int shift_lo, const int group_size,
    int* tkeys, int* tvals, int* part, int* moved, int* best, unsigned char* locked,
    unsigned char* next_locked, int* dest, int* gain, long long* pw, long long* ctl,
    long long* room, int* opened, int* roomiest, int* gates, unsigned long long* acc,
    unsigned long long* hist, unsigned long long* outflow, long long* limit, int* sel,
    long long* base, const int* start)
{
    const GridBarrier grid{};
    const RowTiers rows{max_degree, mid, heavy, nmid, nheavy};
    for_each_vertex(n, [&](const int v) {
        part[v] = start[v];
        best[v] = start[v];
        locked[v] = 0;
    });
    if (blockIdx.x == 0)
        for (int p = threadIdx.x; p <= nparts; p += blockDim.x) acc[p] = 0;
    grid.sync();
    score_and_books(grid, rows, 1, n, nparts, group_size, xadj, adjncy, adjwgt, vwgt, part,
                    nullptr, maxpwgt, patience, max_iterations, keep_factor, acc, pw, ctl, room,
                    roomiest, gates);
    for (;;) {
        jet_keep_best_pass(gates, n, part, best);
        if (!gates[GATE_RUN]) return;
        const bool lp = gates[GATE_LP] != 0;  // the books replace the gates before the swaps
        if (lp) {
            best_moves_in_loop(rows, n, nparts, xadj, adjncy, adjwgt, vwgt, part, locked, room,
                               0, c_num, c_den, tkeys, tvals, dest, gain);
            grid.sync();
            afterburner_in_loop(rows, n, xadj, adjncy, adjwgt, part, dest, gain, next_locked,
                                moved);
            grid.sync();
            inflow_prepare_pass(n, part, moved, vwgt, gates[GATE_LOOSE], gain, dest, outflow,
                                hist);
            grid.sync();
            for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < nparts;
                 p += gridDim.x * blockDim.x)
                inflow_limit(p, room, maxpwgt, slack, gates[GATE_LOOSE], outflow, limit);
            grid.sync();
            select_in_loop(grid, n, nparts, 0, limit, dest, part, gain, vwgt, shift_hi, shift_lo,
                           hist, sel, base, opened);
            inflow_apply_pass(n, part, dest, gain, sel, shift_hi, shift_lo, moved, next_locked);
        } else {
            best_moves_in_loop(rows, n, nparts, xadj, adjncy, adjwgt, vwgt, part, locked, room,
                               1, c_num, c_den, tkeys, tvals, dest, gain);
            grid.sync();
            rebalance_prepare_pass(n, part, vwgt, gain, room, roomiest, group_size, dest,
                                   hist);
            grid.sync();
            select_in_loop(grid, n, nparts, 1, room, dest, part, gain, vwgt, shift_hi, shift_lo,
                           hist, sel, base, opened);
            rebalance_take_pass(n, part, dest, gain, vwgt, sel, shift_hi, shift_lo, hist);
            grid.sync();
            select_in_loop(grid, n, nparts, 0, room, dest, part, gain, vwgt, shift_hi, shift_lo,
                           hist, sel, base, opened);
            rebalance_apply_pass(n, part, dest, gain, sel, shift_hi, shift_lo, moved);
            for_each_vertex(n, [&](const int v) { locked[v] = 0; });  // unread when rebalancing
        }
        grid.sync();
        score_and_books(grid, rows, 0, n, nparts, group_size, xadj, adjncy, adjwgt, vwgt, moved,
                        part, maxpwgt, patience, max_iterations, keep_factor, acc, pw, ctl, room,
                        roomiest, gates);
        // its first step copies moved to best where GATE_BEST says so
        next_iteration(lp, part, moved, locked, next_locked);
    }
}
