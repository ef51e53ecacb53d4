// Rebalancing kernels: the GPU path of one rebalancing round. Twin: gpmetis/refinement/rebalance.py
// (_select_numpy). room[p] = limit - weight of part p (negative for an overweight part); loss =
// -gain from best_moves (mode 1). Integer atomics and sorted keys make every result independent
// of thread order.
//
//   prepare -> threshold -> mark -> flatnonzero -> source_keys -> argsort -> gather ->
//   cumsum -> group_starts -> select -> argsort -> gather -> cumsum -> group_starts -> apply

#define NUM_LOSS_BUCKETS 64
#define LOSS_BUCKET_OFFSET 16
#define LOSS_BIAS (1LL << 31)

__device__ __forceinline__ int loss_bucket(long long loss) {
    const long long lo = -LOSS_BUCKET_OFFSET, hi = NUM_LOSS_BUCKETS - 1 - LOSS_BUCKET_OFFSET;
    return (int)((loss < lo ? lo : (loss > hi ? hi : loss)) + LOSS_BUCKET_OFFSET);
}

// (group << 32) | loss clipped to 32 bits: sorting these keys orders by group, then loss.
__device__ __forceinline__ long long group_loss_key(long long group, long long loss) {
    const long long clipped = loss < -LOSS_BIAS ? -LOSS_BIAS
                              : (loss > LOSS_BIAS - 1 ? LOSS_BIAS - 1 : loss);
    return (group << 32) | (clipped + LOSS_BIAS);
}

// to[v] = where v would go (dest[v], or `roomiest` when no adjacent part has room) when v sits in
// an overweight part and that is another part, else -1. hist[part * 64 + bucket(loss)] sums the
// weights of those movable vertices.
extern "C" __global__ void rebalance_prepare(
    const int n, const int* __restrict__ part, const int* __restrict__ vwgt,
    const int* __restrict__ dest, const long long* __restrict__ gain,
    const long long* __restrict__ room, const int roomiest, int* __restrict__ to,
    unsigned long long* __restrict__ hist)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    const int p = part[v];
    const int target = dest[v] >= 0 ? dest[v] : roomiest;
    if (room[p] >= 0 || target == p) { to[v] = -1; return; }
    to[v] = target;
    atomicAdd(hist + (long long)p * NUM_LOSS_BUCKETS + loss_bucket(-gain[v]),
              (unsigned long long)vwgt[v]);
}

// threshold[p] = the first loss bucket at which p's movable weight reaches max(excess, 1), or
// the last bucket when it never does.
extern "C" __global__ void rebalance_threshold(
    const int nparts, const long long* __restrict__ room,
    const unsigned long long* __restrict__ hist, int* __restrict__ threshold)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= nparts) return;
    const long long need = -room[p] > 1 ? -room[p] : 1;
    long long cum = 0;
    int b = 0;
    for (; b < NUM_LOSS_BUCKETS - 1; ++b) {
        cum += (long long)hist[(long long)p * NUM_LOSS_BUCKETS + b];
        if (cum >= need) break;
    }
    threshold[p] = b;
}

// flag[v] = 1 for the movable vertices whose loss bucket is within their part's threshold.
extern "C" __global__ void rebalance_mark(
    const int n, const int* __restrict__ part, const int* __restrict__ to,
    const long long* __restrict__ gain, const int* __restrict__ threshold,
    unsigned char* __restrict__ flag)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    flag[v] = to[v] >= 0 && loss_bucket(-gain[v]) <= threshold[part[v]];
}

// key[i] = (part, loss) of candidate cand[i].
extern "C" __global__ void rebalance_source_keys(
    const int m, const long long* __restrict__ cand, const int* __restrict__ part,
    const long long* __restrict__ gain, long long* __restrict__ key)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long v = cand[i];
    key[i] = group_loss_key(part[v], -gain[v]);
}

// The candidates in sorted order: vertex, group (key >> 32) and weight.
extern "C" __global__ void rebalance_gather(
    const int m, const long long* __restrict__ order, const long long* __restrict__ cand,
    const long long* __restrict__ key, const int* __restrict__ vwgt,
    long long* __restrict__ out_cand, int* __restrict__ group, long long* __restrict__ w)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long j = order[i];
    const long long v = cand[j];
    out_cand[i] = v;
    group[i] = (int)(key[j] >> 32);
    w[i] = vwgt[v];
}

// first[g] = the index at which the run of group g starts in the sorted candidates.
extern "C" __global__ void group_starts(
    const int m, const int* __restrict__ group, int* __restrict__ first)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    if (i == 0 || group[i - 1] != group[i]) first[group[i]] = i;
}

// Inclusive prefix sum of w within i's group, from the global inclusive prefix sum csum.
__device__ __forceinline__ long long group_prefix(
    const int i, const int* __restrict__ group, const long long* __restrict__ csum,
    const int* __restrict__ first)
{
    const int f = first[group[i]];
    return csum[i] - (f > 0 ? csum[f - 1] : 0);
}

// Per source part, candidates are taken in (loss, id) order while the weight taken before them
// is below the part's excess. key2[i] = (destination, loss) for a taken candidate, or the
// sentinel group nparts (sorted last, never applied) for the others.
extern "C" __global__ void rebalance_select(
    const int m, const long long* __restrict__ cand, const int* __restrict__ group,
    const long long* __restrict__ w, const long long* __restrict__ csum,
    const int* __restrict__ first, const long long* __restrict__ room,
    const int* __restrict__ to, const long long* __restrict__ gain, const int nparts,
    long long* __restrict__ key2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long v = cand[i];
    const bool taken = group_prefix(i, group, csum, first) - w[i] < -room[group[i]];
    key2[i] = taken ? group_loss_key(to[v], -gain[v]) : ((long long)nparts << 32);
}

// Per destination, taken moves in (loss, source order) order are applied while they fit.
extern "C" __global__ void rebalance_apply(
    const int m, const long long* __restrict__ cand, const int* __restrict__ group,
    const long long* __restrict__ csum, const int* __restrict__ first,
    const long long* __restrict__ room, const int nparts, int* __restrict__ part)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const int g = group[i];
    if (g < nparts && group_prefix(i, group, csum, first) <= room[g]) part[cand[i]] = g;
}
