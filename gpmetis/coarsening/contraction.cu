// Contraction of matched pairs into the coarse graph.
// Twin: gpmetis/coarsening/contraction.py (_contract_numpy).
//
// Coarse vertex c has members rep[c] and match[rep[c]]. Its neighbours are merged in an
// open-addressing hash table that lives in scratch[off[c] .. off[c+1]), sized by the members'
// total degree, so it can never overflow. One thread owns one coarse vertex, so the table needs no
// atomics; rows come out in slot order (unsorted). Coarse vertices whose table is larger than
// max_cap go to contract_count_heavy (one block each, the table filled with atomicCAS: the set of
// keys and their sums do not depend on thread order, their slots do).

__device__ __forceinline__ unsigned int slot_hash(unsigned int x) {
    x ^= x >> 16; x *= 0x45d9f3bU; x ^= x >> 16;
    return x;
}

// Fill c's table; cdeg[c] = number of distinct coarse neighbours (self loops dropped).
extern "C" __global__ void contract_count(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ match, const int* __restrict__ cmap,
    const int* __restrict__ rep, const long long* __restrict__ off,
    int* __restrict__ tkeys, int* __restrict__ tvals, long long* __restrict__ cdeg,
    const long long max_cap)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    const long long base = off[c];
    const long long cap = off[c + 1] - base;
    if (cap > max_cap) return;
    for (long long s = 0; s < cap; ++s) tkeys[base + s] = -1;
    long long count = 0;
    const int r = rep[c];
    const int members[2] = {r, match[r]};
    const int nmembers = (members[1] == r) ? 1 : 2;
    for (int m = 0; m < nmembers; ++m) {
        const int x = members[m];
        for (long long j = xadj[x]; j < xadj[x + 1]; ++j) {
            const int cu = cmap[adjncy[j]];
            if (cu == c) continue;
            long long s = slot_hash((unsigned int)cu) % cap;
            while (true) {
                const int key = tkeys[base + s];
                if (key == cu) { tvals[base + s] += adjwgt[j]; break; }
                if (key < 0) { tkeys[base + s] = cu; tvals[base + s] = adjwgt[j]; ++count; break; }
                s = (s + 1 == cap) ? 0 : s + 1;
            }
        }
    }
    cdeg[c] = count;
}

extern "C" __global__ void contract_count_heavy(
    const int* __restrict__ heavy, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ match,
    const int* __restrict__ cmap, const int* __restrict__ rep, const long long* __restrict__ off,
    int* __restrict__ tkeys, int* __restrict__ tvals, long long* __restrict__ cdeg)
{
    __shared__ unsigned long long count;
    const int c = heavy[blockIdx.x];
    const long long base = off[c];
    const long long cap = off[c + 1] - base;
    for (long long s = threadIdx.x; s < cap; s += blockDim.x) {
        tkeys[base + s] = -1;
        tvals[base + s] = 0;
    }
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    const int r = rep[c];
    const int members[2] = {r, match[r]};
    const int nmembers = (members[1] == r) ? 1 : 2;
    for (int m = 0; m < nmembers; ++m) {
        const int x = members[m];
        for (long long j = xadj[x] + threadIdx.x; j < xadj[x + 1]; j += blockDim.x) {
            const int cu = cmap[adjncy[j]];
            if (cu == c) continue;
            long long s = slot_hash((unsigned int)cu) % cap;
            while (true) {
                const int prev = atomicCAS(tkeys + base + s, -1, cu);
                if (prev == -1 || prev == cu) {
                    atomicAdd(tvals + base + s, adjwgt[j]);
                    if (prev == -1) atomicAdd(&count, 1ULL);
                    break;
                }
                s = (s + 1 == cap) ? 0 : s + 1;
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) cdeg[c] = (long long)count;
}

// Compact c's table into its coarse CSR row starting at cxadj[c].
extern "C" __global__ void contract_fill(
    const int nc, const long long* __restrict__ off, const int* __restrict__ tkeys,
    const int* __restrict__ tvals, const long long* __restrict__ cxadj,
    int* __restrict__ cadjncy, int* __restrict__ cadjwgt)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    long long out = cxadj[c];
    for (long long s = off[c]; s < off[c + 1]; ++s) {
        if (tkeys[s] >= 0) { cadjncy[out] = tkeys[s]; cadjwgt[out] = tvals[s]; ++out; }
    }
}
