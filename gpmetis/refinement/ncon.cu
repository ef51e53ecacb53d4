// Multi-constraint refinement: the move selections of a rebalancing step and of a
// label-propagation step's inflow cap (device functions that ncon_device.cu's mc_loop
// runs), and a kernel for a partition's part weights, for (ncon, n) int32 vertex weights
// (constraint c of vertex v at weights[c * n + v]). Twin: the NumPy steps of
// gpmetis/refinement/ncon.py.
//
// An item is a vertex with a destination to[v] >= 0 and an order: ckey[v] (order_key of a
// float64 cost, 16 bits), then two 8-bit digits of the id, MC_LEVELS digits in all. Each
// constraint selects on its own: group c * nparts + p holds the items of part p (their source
// or their destination), weighing their weight in c, and rebalance.cu's select_threshold_group
// finds, level by level, the key at which the group's limit is reached. Sources take an item
// when a constraint it weighs in is over in its part and its key is at or below that group's
// threshold; destinations keep an item when its key is below every constraint's threshold (or,
// rebalancing, when it is the destination's first item). Integer atomics make every sum
// independent of thread order; every decision depends on weights, keys and ids only.
//
//   rebalancing:   prepare -> select (sources) -> take -> select (destinations) -> apply
//   inflow cap:    prepare -> select (destinations) -> apply
//   select:        (threshold, digit_hist) x (MC_LEVELS - 1) -> threshold
//
// Each step is a pass over the vertices or the groups (*_pass, mc_select_in_grid) followed by a
// grid-wide barrier; arrays that the loop writes and a later step reads are plain pointers (not
// read through the read-only cache).
#include "../cuda/block_reduce.cuh"
#include "../cuda/grid_sync.cuh"
#include "../cuda/resident_grid.cuh"
#include "rebalance.cu"

#define MC_LEVELS 4                          // cost key high, cost key low, id high, id low
#define NO_FIRST 0xFFFFFFFFFFFFFFFFULL       // no first item yet (a destination's atomicMin)

// A 16-bit key, monotone in cost: the top bits of the float64's bits mapped to an unsigned
// order (sign, exponent, 4 mantissa bits; integers below 32 exactly).
__device__ __forceinline__ int order_key(const double cost) {
    unsigned long long bits = (unsigned long long)__double_as_longlong(cost);
    bits = (bits >> 63) ? ~bits : bits | (1ULL << 63);
    return (int)(bits >> 48);
}

__device__ __forceinline__ int mc_digit(
    const int level, const int v, const int key, const int shift_hi, const int shift_lo)
{
    if (level == 0) return key >> 8;
    if (level == 1) return key & (NUM_DIGITS - 1);
    return (v >> (level == 2 ? shift_hi : shift_lo)) & (NUM_DIGITS - 1);
}

// -1 when item v's order is below the digits selected for its group (sel, MC_LEVELS per group)
// in the first `levels` levels, +1 above, 0 on them.
__device__ __forceinline__ int mc_compare(
    const int levels, const int* sel, const int v, const int key,
    const int shift_hi, const int shift_lo)
{
    for (int level = 0; level < levels; ++level) {
        const int d = mc_digit(level, v, key, shift_hi, shift_lo), s = sel[level];
        if (d != s) return d < s ? -1 : 1;
    }
    return 0;
}

// Item v's weights into the level-0 histograms of its groups (c, p) for the constraints it
// weighs in (where `over` is given, only those over in part p: p is then its source).
__device__ __forceinline__ void add_item(
    const int v, const int n, const int ncon, const int nparts, const int p, const int key,
    const int* __restrict__ weights, const long long* over,
    unsigned long long* hist)
{
    for (int c = 0; c < ncon; ++c) {
        const int w = weights[(long long)c * n + v];
        if (w == 0 || (over != nullptr && over[c * nparts + p] <= 0)) continue;
        atomicAdd(hist + (long long)(c * nparts + p) * NUM_DIGITS + (key >> 8),
                  (unsigned long long)w);
    }
}

// A rebalancing step's items. over[c * nparts + p] = part p's weight in c minus its limit; a
// vertex is active when its part is over in a constraint it weighs in. Its candidate
// destinations: dest[v] (best_moves mode 1: its most connected adjacent part over in no
// constraint), or when it has none each of roomiest[0..nroomiest) other than its part (none
// under adjacent_only: the loop passes nroomiest = 0). A
// candidate q's drop is the total excess it removes, sum over c of the change of
// max(over, 0) at both ends divided by scale[c] (the constraint's total, at least 1); among
// the candidates with drop > 0, the one of least cost = loss / drop (loss = -gain[v]; ties:
// the earlier candidate) is the item's destination, order_key(cost) its key. Sources' groups:
// (c, part[v]) for each c over there that v weighs in. Also resets first (per part) and the
// kept count for the take and apply passes.
__device__ __forceinline__ void mc_rebalance_prepare_pass(
    const int n, const int ncon, const int nparts, const int* part,
    const int* __restrict__ weights, const int* dest, const int* gain,
    const long long* over, const double* __restrict__ scale,
    const long long* roomiest, const int nroomiest, int* to, int* ckey,
    unsigned long long* hist, unsigned long long* first, unsigned long long* kept)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int p = tid; p < nparts; p += gridDim.x * blockDim.x) first[p] = NO_FIRST;
    if (tid == 0) kept[0] = 0;
    for_each_vertex(n, [&](const int v) {
        to[v] = -1;
        const int p = part[v];
        bool active = false;
        for (int c = 0; c < ncon; ++c)
            active |= over[c * nparts + p] > 0 && weights[(long long)c * n + v] > 0;
        if (!active) return;
        const long long loss = -(long long)gain[v];
        int best_q = -1;
        double best_cost = 0.0;
        auto consider = [&](const int q) {
            double drop = 0.0;
            for (int c = 0; c < ncon; ++c) {
                const long long w = weights[(long long)c * n + v];
                const long long os = over[c * nparts + p], od = over[c * nparts + q];
                const long long added = (od + w > 0 ? od + w : 0) - (od > 0 ? od : 0);
                const long long change = (os > 0 ? os : 0) - (os - w > 0 ? os - w : 0) - added;
                drop += (double)change / scale[c];
            }
            if (!(drop > 0.0)) return;
            const double cost = (double)loss / drop;
            if (best_q < 0 || cost < best_cost) {
                best_q = q;
                best_cost = cost;
            }
        };
        if (dest[v] >= 0) {
            consider(dest[v]);
        } else {
            for (int i = 0; i < nroomiest; ++i)
                if ((int)roomiest[i] != p) consider((int)roomiest[i]);
        }
        if (best_q < 0) return;
        const int key = order_key(best_cost);
        to[v] = best_q;
        ckey[v] = key;
        add_item(v, n, ncon, nparts, p, key, weights, over, hist);
    });
}

// A label-propagation step's items: the vertices moved (moved[v] != part[v]) to moved[v],
// keyed by order_key(-gain[v]) (highest gain first); destinations' groups (c, moved[v]).
__device__ __forceinline__ void mc_inflow_prepare_pass(
    const int n, const int ncon, const int nparts, const int* part,
    const int* moved, const int* gain,
    const int* __restrict__ weights, int* to, int* ckey, unsigned long long* hist)
{
    for_each_vertex(n, [&](const int v) {
        const int q = moved[v];
        if (q == part[v]) {
            to[v] = -1;
            return;
        }
        const int key = order_key((double)(-(long long)gain[v]));
        to[v] = q;
        ckey[v] = key;
        add_item(v, n, ncon, nparts, q, key, weights, nullptr, hist);
    });
}

// hist[group][digit at `level`] sums the weights of the items still undecided in their group
// after `level` levels; groups as add_item forms them (sources where `over` is given).
__device__ __forceinline__ void mc_digit_hist_pass(
    const int n, const int ncon, const int nparts, const int level,
    const int* part, const int* __restrict__ weights, const int* to,
    const int* ckey, const long long* over, const int* sel, const int shift_hi,
    const int shift_lo, unsigned long long* hist)
{
    for_each_vertex(n, [&](const int v) {
        const int q = to[v];
        if (q < 0) return;
        const int p = over != nullptr ? part[v] : q, key = ckey[v];
        for (int c = 0; c < ncon; ++c) {
            const int w = weights[(long long)c * n + v];
            if (w == 0 || (over != nullptr && over[c * nparts + p] <= 0)) continue;
            const int group = c * nparts + p;
            if (mc_compare(level, sel + group * MC_LEVELS, v, key, shift_hi, shift_lo) != 0)
                continue;
            atomicAdd(hist + (long long)group * NUM_DIGITS +
                          mc_digit(level, v, key, shift_hi, shift_lo),
                      (unsigned long long)w);
        }
    });
}

// The select of every (constraint, part) group over the items in `to`, from the level-0
// histograms already in hist, each level followed by a grid-wide barrier: sources where `over`
// is given (room[group] = minus the excess to cover), else destinations (room[group] = the
// room left). hist is left zero.
__device__ __forceinline__ void mc_select_in_grid(
    const GridBarrier& grid, const int n, const int ncon, const int nparts,
    const int* part, const int* __restrict__ weights, const int* to,
    const int* ckey, const long long* over, const long long* room,
    const int shift_hi, const int shift_lo, unsigned long long* hist, int* sel, long long* base)
{
    for (int level = 0; level < MC_LEVELS; ++level) {
        if (level) {
            mc_digit_hist_pass(n, ncon, nparts, level, part, weights, to, ckey, over, sel,
                               shift_hi, shift_lo, hist);
            grid.sync();
        }
        for (int g = blockIdx.x; g < ncon * nparts; g += gridDim.x) {
            select_threshold_group(g, level, over != nullptr, room, hist, sel, base, nullptr,
                                   MC_LEVELS);
            __syncthreads();  // the group's shared prefix sums are read before the next's
        }
        grid.sync();
    }
}

// Sources decided: an item is taken when, in some constraint over in its part that it weighs
// in, its order is at or below the group's selected digits (the last undecided id range goes
// too: the excess must be covered). to[v] = -1 for the others; a taken item's weights start
// its destination's histograms and first[to] = the least (key, id) taken there. credit[v] =
// the excess the item surely removes at its source, over each constraint's total (scale): in
// each over group, its weight below the selected digits, on them what the items before them
// (base) leave of the excess (shared whole by the items of that rank), none above them.
__device__ __forceinline__ void mc_rebalance_take_pass(
    const int n, const int ncon, const int nparts, const int* part,
    const int* __restrict__ weights, int* to, const int* ckey,
    const long long* over, const double* __restrict__ scale, const int* sel,
    const long long* base, const int shift_hi, const int shift_lo, unsigned long long* hist,
    unsigned long long* first, double* credit)
{
    for_each_vertex(n, [&](const int v) {
        const int q = to[v];
        if (q < 0) return;
        const int p = part[v], key = ckey[v];
        bool taken = false;
        double sure = 0.0;
        for (int c = 0; c < ncon; ++c) {
            const int group = c * nparts + p;
            const long long w = weights[(long long)c * n + v], excess = over[group];
            if (w == 0 || excess <= 0) continue;
            const int cmp =
                mc_compare(MC_LEVELS, sel + group * MC_LEVELS, v, key, shift_hi, shift_lo);
            taken |= cmp <= 0;
            if (cmp < 0) sure += (double)w / scale[c];
            else if (cmp == 0) {
                const long long left = excess - base[group];
                sure += (double)(left < w ? (left > 0 ? left : 0) : w) / scale[c];
            }
        }
        if (!taken) {
            to[v] = -1;
            return;
        }
        credit[v] = sure;
        add_item(v, n, ncon, nparts, q, key, weights, nullptr, hist);
        atomicMin(first + q, ((unsigned long long)key << 32) | (unsigned)v);
    });
}

// Destinations decided: an item keeps its move when its order is strictly below its
// destination's selected digits in every constraint (the last undecided id range stays: the
// moves must fit), or, where first is given (rebalancing), when it is its destination's first
// item or when its credit exceeds its weight (each over its constraint's total) in the
// constraints where it does not fit: all of that weight may become excess there, so the
// step's kept moves never raise the total excess together.
// out[v] = v's part after the step; locked[v] (where given) = 1 for a kept move; kept[0]
// counts them (where given). Every thread of the block must call it.
__device__ __forceinline__ void mc_apply_pass(
    const int n, const int ncon, const int nparts, const int* part,
    const int* __restrict__ weights, const double* __restrict__ scale,
    const int* to, const int* ckey, const int* sel, const int shift_hi, const int shift_lo,
    const unsigned long long* first, const double* credit, int* __restrict__ out,
    unsigned char* __restrict__ locked, unsigned long long* kept)
{
    __shared__ long long buf[32];
    long long count = 0;
    for_each_vertex(n, [&](const int v) {
        const int q = to[v];
        bool moves = false;
        if (q >= 0) {
            const int key = ckey[v];
            double left = first != nullptr ? credit[v] : 0.0;
            moves = true;
            for (int c = 0; c < ncon; ++c) {
                const bool fits = mc_compare(MC_LEVELS, sel + (c * nparts + q) * MC_LEVELS, v,
                                             key, shift_hi, shift_lo) < 0;
                moves &= fits;
                if (!fits && first != nullptr)
                    left -= (double)weights[(long long)c * n + v] / scale[c];
            }
            if (!moves && first != nullptr)
                moves = first[q] == (((unsigned long long)key << 32) | (unsigned)v) ||
                    left > 0.0;
        }
        out[v] = moves ? q : part[v];
        if (locked != nullptr) locked[v] = moves ? 1 : 0;
        count += moves;
    });
    if (kept == nullptr) return;
    count = block_sum_i64(count, buf);
    if (threadIdx.x == 0 && count) atomicAdd(kept, (unsigned long long)count);
}

// out[c * nparts + p] += the weight in c of part p (out zero on entry), summed per block in
// shared memory (8 * ncon * nparts bytes of it) when `shared`.
extern "C" __global__ void mc_part_weights(
    const int n, const int ncon, const int nparts, const int shared,
    const int* part, const int* __restrict__ weights,
    unsigned long long* __restrict__ out)
{
    extern __shared__ unsigned long long sums[];
    const int groups = ncon * nparts;
    if (shared) {
        for (int i = threadIdx.x; i < groups; i += blockDim.x) sums[i] = 0;
        __syncthreads();
    }
    for_each_vertex(n, [&](const int v) {
        const int p = part[v];
        for (int c = 0; c < ncon; ++c) {
            const int w = weights[(long long)c * n + v];
            if (w) atomicAdd((shared ? sums : out) + c * nparts + p, (unsigned long long)w);
        }
    });
    if (!shared) return;
    __syncthreads();
    for (int i = threadIdx.x; i < groups; i += blockDim.x)
        if (sums[i]) atomicAdd(out + i, sums[i]);
}
