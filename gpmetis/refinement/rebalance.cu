// Rebalancing kernels: the GPU path of one rebalancing round, without sorting. Twin:
// gpmetis/refinement/rebalance.py (_select_numpy). room[p] = limit - weight of part p (negative
// for an overweight part); loss = -gain from best_moves (mode 1).
//
// Items are taken per group (source part, then destination part) in the order of their key
// (loss bucket, vertex id), found as a radix select over three digits: the loss bucket, then two
// 8-bit digits of the id. Per group and digit level, a histogram of item weights picks the digit
// at which the group's limit is reached; items below it are decided (taken), items above it too
// (not taken), items on it go to the next level. Integer atomics make every sum independent of
// thread order. The per-vertex kernels run on a resident grid (resident_grid.cuh). Each
// kernel's work is a device function (*_pass, select_threshold_group, inflow_limit), which
// jet_device.cu's jet_loop also runs.
//
//   prepare -> (threshold, digit_hist) x 2 -> threshold -> take          (sources)
//           -> (threshold, digit_hist) x 2 -> threshold -> apply         (destinations)

#include "../cuda/block_reduce.cuh"
#include "../cuda/resident_grid.cuh"

#define NUM_DIGITS 256      // histogram width of every level
#define NUM_LEVELS 3        // loss bucket, high id digit, low id digit
#define BEYOND NUM_DIGITS   // selected digit of a group whose limit is never reached
#define NEG_LOSSES 16       // losses -15..15 get a bucket each, smaller ones share bucket 0
#define MAX_BUCKET 127

// Loss bucket, monotone in loss: exact for |loss| < 16, four buckets per octave above.
__device__ __forceinline__ int loss_bucket(const long long loss) {
    if (loss < 1 - NEG_LOSSES) return 0;
    if (loss < NEG_LOSSES) return (int)(loss + NEG_LOSSES);
    const int e = 63 - __clzll(loss);
    const int b = 2 * NEG_LOSSES + (e - 4) * 4 + (int)((loss >> (e - 2)) & 3);
    return b < MAX_BUCKET ? b : MAX_BUCKET;
}

// The digit at `level` of the key (loss bucket, vertex id) of the vertex whose id is `id`.
// The passes below take vertex v as id id_base + v: a rank holding the vertices of a graph from
// id_base on orders them as one process does.
__device__ __forceinline__ int order_digit(
    const int level, const long long id, const long long loss, const int shift_hi,
    const int shift_lo)
{
    if (level == 0) return loss_bucket(loss);
    return (int)((id >> (level == 1 ? shift_hi : shift_lo)) & (NUM_DIGITS - 1));
}

// -1 when the key of the vertex with id `id` is below the digits selected for its group, +1
// above, 0 on them (undecided after `levels` levels).
__device__ __forceinline__ int compare_key(
    const int levels, const int* __restrict__ sel, const long long id, const long long loss,
    const int shift_hi, const int shift_lo)
{
    for (int level = 0; level < levels; ++level) {
        const int d = order_digit(level, id, loss, shift_hi, shift_lo), s = sel[level];
        if (d != s) return d < s ? -1 : 1;
    }
    return 0;
}

// Where a vertex of part p goes when no adjacent part has room for it. Without groups
// (`group_size` 0) roomiest[0], the part with the most room; with groups of `group_size` parts
// (parts g * group_size .. (g + 1) * group_size - 1: one piece's pair, one copy's k parts), the
// roomiest part of p's group other than p: roomiest holds each group's roomiest part and its
// second (2g, 2g + 1), so no vertex leaves its group (groups of 2: the partner part p ^ 1).
__device__ __forceinline__ int fallback_part(
    const int p, const int* __restrict__ roomiest, const int group_size)
{
    if (!group_size) return roomiest[0];
    const int first = roomiest[2 * (p / group_size)];
    return first != p ? first : roomiest[2 * (p / group_size) + 1];
}

// Whether part a (room ra) is roomier than part b (room rb): more room, the lower id of
// equals; any part is roomier than none (-1).
__device__ __forceinline__ bool roomier(
    const long long ra, const int a, const long long rb, const int b)
{
    return a >= 0 && (b < 0 || ra > rb || (ra == rb && a < b));
}

// roomiest[2g], roomiest[2g + 1] = the roomiest and the second roomiest part of group g (of
// `group_size` >= 2 parts). One warp per group, every lane calling it: each lane keeps the top
// two of its strided parts, then butterfly shuffles merge the lanes' (disjoint) top twos.
__device__ __forceinline__ void group_roomiest(
    const int g, const int group_size, const long long* __restrict__ room,
    int* __restrict__ roomiest)
{
    const unsigned full = 0xffffffffU;
    int first = -1, second = -1;
    long long r1 = 0, r2 = 0;
    for (int p = g * group_size + (int)(threadIdx.x & 31); p < (g + 1) * group_size; p += 32) {
        const long long r = room[p];
        if (roomier(r, p, r1, first)) {
            second = first;
            r2 = r1;
            first = p;
            r1 = r;
        } else if (roomier(r, p, r2, second)) {
            second = p;
            r2 = r;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const int f = __shfl_xor_sync(full, first, o), s = __shfl_xor_sync(full, second, o);
        const long long rf = __shfl_xor_sync(full, r1, o), rs = __shfl_xor_sync(full, r2, o);
        if (roomier(rf, f, r1, first)) {  // theirs leads: ours or their second follows
            if (!roomier(r1, first, rs, s)) {
                first = s;  // (moved into second below)
                r1 = rs;
            }
            second = first;
            r2 = r1;
            first = f;
            r1 = rf;
        } else if (roomier(rf, f, r2, second)) {  // ours leads, theirs follows
            second = f;
            r2 = rf;
        }
    }
    if ((threadIdx.x & 31) == 0) {
        roomiest[2 * g] = first;
        roomiest[2 * g + 1] = second;
    }
}

// In place on best_moves' dest (mode 1): to[v] = where v would go (dest[v], or when no adjacent
// part has room its fallback_part) when v sits in an overweight part and that is another part,
// else -1. Those vertices are the items; an item's group is its part. hist[part][loss bucket]
// sums the items' weights.
__device__ __forceinline__ void rebalance_prepare_pass(
    const int n, const int* __restrict__ part, const int* __restrict__ vwgt,
    const int* __restrict__ gain, const long long* __restrict__ room,
    const int* __restrict__ roomiest, const int group_size, int* to,
    unsigned long long* __restrict__ hist)
{
    for_each_vertex(n, [&](const int v) {
        const int p = part[v];
        const int target = to[v] >= 0 ? to[v] : fallback_part(p, roomiest, group_size);
        const bool item = room[p] < 0 && target != p;
        to[v] = item ? target : -1;
        if (item)
            atomicAdd(hist + (long long)p * NUM_DIGITS + loss_bucket(-(long long)gain[v]),
                      (unsigned long long)vwgt[v]);
    });
}

extern "C" __global__ void rebalance_prepare(
    const int n, const int* __restrict__ part,
    const int* __restrict__ vwgt, const int* __restrict__ gain,
    const long long* __restrict__ room, const int* __restrict__ roomiest, const int group_size,
    int* to, unsigned long long* __restrict__ hist)
{
    rebalance_prepare_pass(n, part, vwgt, gain, room, roomiest, group_size, to, hist);
}

// Per group g (one block of NUM_DIGITS threads, one per digit) at `level`: the first digit at
// which the weight taken so far (base[g] plus the histogram's prefix) reaches the limit:
// >= max(-room[g], 1) for sources (`source` != 0: take until the excess is covered), > room[g]
// for destinations (take while the moves fit). sel[g * levels + level] = that digit, or
// BEYOND; base[g] += the weight of the digits before it. The histogram row is zeroed for the
// next level. Where opened is given, *opened = 1 when the group has a digit (its items on it
// go on to the next level; without one there, every group's items are decided). sel holds
// `levels` digits per group (NUM_LEVELS here; the multi-constraint selects use more).
__device__ __forceinline__ void select_threshold_group(
    const int g, const int level, const int source, const long long* __restrict__ room,
    unsigned long long* __restrict__ hist, int* __restrict__ sel, long long* __restrict__ base,
    int* __restrict__ opened, const int levels = NUM_LEVELS)
{
    __shared__ long long buf[32];
    __shared__ int first;
    const int i = threadIdx.x;
    unsigned long long* row = hist + (long long)g * NUM_DIGITS;
    const long long w = (long long)row[i];
    row[i] = 0;
    const bool open = level == 0 || sel[g * levels + level - 1] != BEYOND;
    const long long before = level == 0 ? 0 : base[g];
    const long long limit = source ? (-room[g] > 1 ? -room[g] : 1) : room[g];
    if (i == 0) first = BEYOND;  // the scan's barriers publish it
    long long all;
    const long long through = before + block_inclusive_scan(w, buf, all);  // to digit i, with it
    if (open && (source ? through >= limit : through > limit)) atomicMin(&first, i);
    __syncthreads();
    const int d = first;
    if (d == BEYOND ? i == 0 : i == d) {
        sel[g * levels + level] = d;
        base[g] = !open ? before : (d == BEYOND ? before + all : through - w);
        if (opened != nullptr && d != BEYOND) *opened = 1;
    }
}

extern "C" __global__ void select_threshold(
    const int level, const int source,
    const long long* __restrict__ room, unsigned long long* __restrict__ hist,
    int* __restrict__ sel, long long* __restrict__ base)
{
    select_threshold_group(blockIdx.x, level, source, room, hist, sel, base, nullptr);
}

// The group of item v: its part while sources are selected, its destination after (`to` holds
// the destinations of the taken items only by then), -1 for a vertex that is not an item.
__device__ __forceinline__ int item_group(
    const int source, const int v, const int* __restrict__ to, const int* __restrict__ part)
{
    const int t = to[v];
    return t < 0 ? -1 : (source ? part[v] : t);
}

// hist[group][digit at `level`] sums the weights of the items still undecided after `level`
// levels.
__device__ __forceinline__ void select_digit_hist_pass(
    const int n, const int level, const int source, const int* __restrict__ to,
    const int* __restrict__ part, const int* __restrict__ gain, const int* __restrict__ vwgt,
    const int* __restrict__ sel, const int shift_hi, const int shift_lo,
    unsigned long long* __restrict__ hist, const long long id_base = 0)
{
    for_each_vertex(n, [&](const int v) {
        const int g = item_group(source, v, to, part);
        if (g < 0) return;
        const long long loss = -(long long)gain[v], id = id_base + v;
        if (compare_key(level, sel + g * NUM_LEVELS, id, loss, shift_hi, shift_lo) != 0) return;
        const int d = order_digit(level, id, loss, shift_hi, shift_lo);
        atomicAdd(hist + (long long)g * NUM_DIGITS + d, (unsigned long long)vwgt[v]);
    });
}

extern "C" __global__ void select_digit_hist(
    const int n, const int level, const int source,
    const int* __restrict__ to, const int* __restrict__ part, const int* __restrict__ gain,
    const int* __restrict__ vwgt, const int* __restrict__ sel, const int shift_hi,
    const int shift_lo, unsigned long long* __restrict__ hist, const long long id_base)
{
    select_digit_hist_pass(n, level, source, to, part, gain, vwgt, sel, shift_hi, shift_lo, hist,
                           id_base);
}

// Sources decided, in place on `to`: an item is taken when its key is below its part's selected
// digits or on them (the last undecided id range goes too: the excess must be covered); to[v]
// stays the destination of a taken item and becomes -1 for the others. hist[to][loss bucket]
// starts the destinations' selection.
__device__ __forceinline__ void rebalance_take_pass(
    const int n, const int* __restrict__ part, int* to, const int* __restrict__ gain,
    const int* __restrict__ vwgt, const int* __restrict__ sel, const int shift_hi,
    const int shift_lo, unsigned long long* __restrict__ hist, const long long id_base = 0)
{
    for_each_vertex(n, [&](const int v) {
        const int g = item_group(1, v, to, part);
        const long long loss = -(long long)gain[v];
        const bool taken = g >= 0 && compare_key(NUM_LEVELS, sel + g * NUM_LEVELS, id_base + v,
                                                 loss, shift_hi, shift_lo) <= 0;
        if (!taken) {
            to[v] = -1;
            return;
        }
        atomicAdd(hist + (long long)to[v] * NUM_DIGITS + loss_bucket(loss),
                  (unsigned long long)vwgt[v]);
    });
}

extern "C" __global__ void rebalance_take(
    const int n, const int* __restrict__ part, int* to,
    const int* __restrict__ gain, const int* __restrict__ vwgt, const int* __restrict__ sel,
    const int shift_hi, const int shift_lo, unsigned long long* __restrict__ hist,
    const long long id_base)
{
    rebalance_take_pass(n, part, to, gain, vwgt, sel, shift_hi, shift_lo, hist, id_base);
}

// Destinations decided: a taken item moves when its key is strictly below its destination's
// selected digits (the last undecided id range stays: the moves must fit). out = the new part.
__device__ __forceinline__ void rebalance_apply_pass(
    const int n, const int* __restrict__ part, const int* __restrict__ to,
    const int* __restrict__ gain, const int* __restrict__ sel, const int shift_hi,
    const int shift_lo, int* __restrict__ out, const long long id_base = 0)
{
    for_each_vertex(n, [&](const int v) {
        const int q = to[v];
        const long long loss = -(long long)gain[v];
        const bool moves = q >= 0 && compare_key(NUM_LEVELS, sel + q * NUM_LEVELS, id_base + v,
                                                 loss, shift_hi, shift_lo) < 0;
        out[v] = moves ? q : part[v];
    });
}

extern "C" __global__ void rebalance_apply(
    const int n, const int* __restrict__ part,
    const int* __restrict__ to, const int* __restrict__ gain,
    const int* __restrict__ sel, const int shift_hi, const int shift_lo, int* __restrict__ out,
    const long long id_base)
{
    rebalance_apply_pass(n, part, to, gain, sel, shift_hi, shift_lo, out, id_base);
}

// ---- The inflow cap of a label-propagation step (rebalance.py: cap_inflow; twin _cap_inflow_numpy).
// The step's moves (moved[v] != part[v]) are items grouped by destination and taken in the order
// (MAX_BUCKET - loss_bucket(gain), id), highest gains first, while they fit in the destination's
// limit (room + maxpwgt / slack + the weight the step moves out of it; slack: the refinement
// context's inflow_slack). The destination
// selection above does the choosing: each item's gain is replaced by the smallest loss of the
// bucket that is its order digit.

// The smallest loss whose loss_bucket is b (0 <= b <= MAX_BUCKET).
__device__ __forceinline__ long long bucket_loss(const int b) {
    if (b < 2 * NEG_LOSSES) return (long long)b - NEG_LOSSES;
    const int e = 4 + (b - 2 * NEG_LOSSES) / 4, m = (b - 2 * NEG_LOSSES) % 4;
    return (long long)(4 + m) << (e - 2);
}

// to[v] = moved[v] for a moved vertex, else -1; its gain becomes -bucket_loss(order digit);
// hist[to][digit] sums the items' weights and, where loose (the only limit that reads it),
// outflow[part] the weights moved out.
__device__ __forceinline__ void inflow_prepare_pass(
    const int n, const int* __restrict__ part, const int* __restrict__ moved,
    const int* __restrict__ vwgt, const int loose, int* __restrict__ gain, int* __restrict__ to,
    unsigned long long* __restrict__ outflow, unsigned long long* __restrict__ hist)
{
    for_each_vertex(n, [&](const int v) {
        const int q = moved[v], p = part[v];
        to[v] = q != p ? q : -1;
        if (q == p) return;
        const int digit = MAX_BUCKET - loss_bucket((long long)gain[v]);
        gain[v] = (int)(-bucket_loss(digit));
        if (loose) atomicAdd(outflow + p, (unsigned long long)vwgt[v]);
        atomicAdd(hist + (long long)q * NUM_DIGITS + digit, (unsigned long long)vwgt[v]);
    });
}

extern "C" __global__ void inflow_prepare(
    const int n, const int* __restrict__ part,
    const int* __restrict__ moved, const int* __restrict__ vwgt, const int loose,
    int* __restrict__ gain, int* __restrict__ to, unsigned long long* __restrict__ outflow,
    unsigned long long* __restrict__ hist)
{
    inflow_prepare_pass(n, part, moved, vwgt, loose, gain, to, outflow, hist);
}

// limit[p] = room[p], or with loose room[p] + maxpwgt[p] / slack + outflow[p]; outflow is zeroed
// for the next step.
__device__ __forceinline__ void inflow_limit(
    const int p, const long long* __restrict__ room, const long long* __restrict__ maxpwgt,
    const long long slack, const int loose, unsigned long long* __restrict__ outflow,
    long long* __restrict__ limit)
{
    limit[p] = room[p] + (loose ? maxpwgt[p] / slack + (long long)outflow[p] : 0);
    outflow[p] = 0;
}

extern "C" __global__ void inflow_limits(
    const int nparts, const long long* __restrict__ room,
    const long long* __restrict__ maxpwgt, const long long slack, const int loose,
    unsigned long long* __restrict__ outflow, long long* __restrict__ limit)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= nparts) return;
    inflow_limit(p, room, maxpwgt, slack, loose, outflow, limit);
}

// An item keeps its move when its key is strictly below its destination's selected digits;
// moved[v] = v's part after the step, keep[v] = 1 for a kept move.
__device__ __forceinline__ void inflow_apply_pass(
    const int n, const int* __restrict__ part, const int* __restrict__ to,
    const int* __restrict__ gain, const int* __restrict__ sel, const int shift_hi,
    const int shift_lo, int* __restrict__ moved, unsigned char* __restrict__ keep,
    const long long id_base = 0)
{
    for_each_vertex(n, [&](const int v) {
        const int q = to[v];
        const bool kept = q >= 0 &&
            compare_key(NUM_LEVELS, sel + q * NUM_LEVELS, id_base + v, -(long long)gain[v],
                        shift_hi, shift_lo) < 0;
        moved[v] = kept ? q : part[v];
        keep[v] = kept ? 1 : 0;
    });
}

extern "C" __global__ void inflow_apply(
    const int n, const int* __restrict__ part,
    const int* __restrict__ to, const int* __restrict__ gain, const int* __restrict__ sel,
    const int shift_hi, const int shift_lo, int* __restrict__ moved,
    unsigned char* __restrict__ keep, const long long id_base)
{
    inflow_apply_pass(n, part, to, gain, sel, shift_hi, shift_lo, moved, keep, id_base);
}
