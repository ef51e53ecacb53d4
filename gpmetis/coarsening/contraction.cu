// Contraction of matched pairs into the coarse graph.
// Twin: gpmetis/coarsening/contraction.py (_contract_numpy).
//
// Coarse vertex c has members rep[c] and match[rep[c]]; its candidate entries are the members'
// rows, cap[c] entries in all. When cap[c] <= SCAN_CAP they are merged by rescanning them (no
// scratch memory); longer ones in an open-addressing hash table in tkeys/tvals[off[c] ..
// off[c] + cap[c]), which can never overflow. One thread owns one coarse vertex, so its row is
// deterministic; rows come out unsorted. Coarse vertices with cap[c] > max_cap go to
// contract_count_heavy (one block each, the table filled with atomicCAS: the set of keys and
// their sums do not depend on thread order, their slots do).

#define SCAN_CAP 64

__device__ __forceinline__ unsigned int slot_hash(unsigned int x) {
    x ^= x >> 16; x *= 0x45d9f3bU; x ^= x >> 16;
    return x;
}

// The k-th candidate entry of coarse vertex c (member r's row, then its mate's).
__device__ __forceinline__ long long member_entry(
    const long long k, const int r, const int mate, const long long* __restrict__ xadj)
{
    const long long d0 = xadj[r + 1] - xadj[r];
    return k < d0 ? xadj[r] + k : xadj[mate] + (k - d0);
}

// Whether entry k is the first of c's candidate entries leading to coarse vertex cu.
__device__ __forceinline__ bool first_entry_to(
    const int cu, const long long k, const int r, const int mate,
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ cmap)
{
    for (long long k2 = 0; k2 < k; ++k2)
        if (cmap[adjncy[member_entry(k2, r, mate, xadj)]] == cu) return false;
    return true;
}

// Per coarse vertex c (members r = rep[c] and match[r]): cap[c] = the members' degrees summed,
// cvwgt[c] = their weights summed.
extern "C" __global__ void coarse_vertices(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ vwgt,
    const int* __restrict__ match, const int* __restrict__ rep, long long* __restrict__ cap,
    int* __restrict__ cvwgt)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    const int r = rep[c];
    const int mate = match[r];
    long long degree = xadj[r + 1] - xadj[r];
    int weight = vwgt[r];
    if (mate != r) {
        degree += xadj[mate + 1] - xadj[mate];
        weight += vwgt[mate];
    }
    cap[c] = degree;
    cvwgt[c] = weight;
}

// cdeg[c] = number of distinct coarse neighbours of c (self loops dropped); fills c's table
// when it has one.
extern "C" __global__ void contract_count(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ match, const int* __restrict__ cmap,
    const int* __restrict__ rep, const long long* __restrict__ cap_of,
    const long long* __restrict__ off, int* __restrict__ tkeys, int* __restrict__ tvals,
    long long* __restrict__ cdeg, const long long max_cap)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    const long long cap = cap_of[c];
    if (cap > max_cap) return;
    const int r = rep[c];
    const int mate = match[r];
    long long count = 0;
    if (cap <= SCAN_CAP) {
        for (long long k = 0; k < cap; ++k) {
            const int cu = cmap[adjncy[member_entry(k, r, mate, xadj)]];
            if (cu != c && first_entry_to(cu, k, r, mate, xadj, adjncy, cmap)) ++count;
        }
        cdeg[c] = count;
        return;
    }
    const long long base = off[c];
    for (long long s = 0; s < cap; ++s) tkeys[base + s] = -1;
    for (long long k = 0; k < cap; ++k) {
        const long long j = member_entry(k, r, mate, xadj);
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
    cdeg[c] = count;
}

extern "C" __global__ void contract_count_heavy(
    const int* __restrict__ heavy, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ match,
    const int* __restrict__ cmap, const int* __restrict__ rep,
    const long long* __restrict__ cap_of, const long long* __restrict__ off,
    int* __restrict__ tkeys, int* __restrict__ tvals, long long* __restrict__ cdeg)
{
    __shared__ unsigned long long count;
    const int c = heavy[blockIdx.x];
    const long long base = off[c];
    const long long cap = cap_of[c];
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

// Write c's coarse row starting at cxadj[c]: its table's slots in order, or (short rows) its
// distinct neighbours in order of first appearance with their summed weights.
extern "C" __global__ void contract_fill(
    const int nc, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ match, const int* __restrict__ cmap,
    const int* __restrict__ rep, const long long* __restrict__ cap_of,
    const long long* __restrict__ off, const int* __restrict__ tkeys,
    const int* __restrict__ tvals, const long long* __restrict__ cxadj,
    int* __restrict__ cadjncy, int* __restrict__ cadjwgt)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nc) return;
    const long long cap = cap_of[c];
    long long out = cxadj[c];
    if (cap > SCAN_CAP) {
        for (long long s = off[c]; s < off[c] + cap; ++s) {
            if (tkeys[s] >= 0) { cadjncy[out] = tkeys[s]; cadjwgt[out] = tvals[s]; ++out; }
        }
        return;
    }
    const int r = rep[c];
    const int mate = match[r];
    for (long long k = 0; k < cap; ++k) {
        const int cu = cmap[adjncy[member_entry(k, r, mate, xadj)]];
        if (cu == c || !first_entry_to(cu, k, r, mate, xadj, adjncy, cmap)) continue;
        long long w = 0;
        for (long long k2 = k; k2 < cap; ++k2) {
            const long long j = member_entry(k2, r, mate, xadj);
            if (cmap[adjncy[j]] == cu) w += adjwgt[j];
        }
        cadjncy[out] = cu;
        cadjwgt[out] = (int)w;
        ++out;
    }
}
