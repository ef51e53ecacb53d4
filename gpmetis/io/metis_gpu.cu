// Kernels of the GPU METIS reader (metis_gpu.py). The body of the file (the bytes after the
// header line) is parsed in place: tokens are runs of digits, lines end with '\n'. Whatever
// the fast path does not cover sets a bit of `flags`; the caller then reads the file on the CPU.
#include "../cuda/csr.cuh"
typedef unsigned char uint8_t;  // NVRTC has no <cstdint>

#define FLAG_BYTE 1      // a byte other than a digit, ' ', '\t', '\r' or '\n'
#define FLAG_LONG 2      // a number of more than 9 digits
#define FLAG_LINES 4     // a token after the n vertex lines
#define FLAG_ODD 8       // fmt 1: a vertex line with an odd number of values
#define FLAG_RANGE 16    // a neighbour outside 1..n
#define FLAG_LOOP 32     // a self loop
#define FLAG_WEIGHT 64   // an edge weight of 0
#define FLAG_ORDER 128   // a row not strictly increasing (unsorted, or a repeated neighbour)
#define FLAG_ASYM 256    // the entries are not symmetric (pattern or weights)
#define FLAG_REPEAT 512  // a repeated neighbour (found once unsorted rows are sorted)

__device__ __forceinline__ bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

#define SPAN 4096  // bytes per block in the two compaction kernels
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ bool token_start(const uint8_t* text, long long i) {
    return is_digit(text[i]) && (i == 0 || !is_digit(text[i - 1]));
}

// counts[2 b] and counts[2 b + 1]: the token starts and newlines among the SPAN bytes of block
// b; flags bytes outside the fast path's alphabet.
extern "C" __global__ void count_marks(const long long nbytes, const uint8_t* __restrict__ text,
                                       int* __restrict__ counts, int* __restrict__ flags) {
    __shared__ int total[2];
    if (threadIdx.x == 0) total[0] = total[1] = 0;
    __syncthreads();
    const long long base = (long long)blockIdx.x * SPAN;
    int starts = 0, newlines = 0;
    for (int k = threadIdx.x; k < SPAN && base + k < nbytes; k += blockDim.x) {
        const uint8_t c = text[base + k];
        if (!is_digit(c) && c != ' ' && c != '\n' && c != '\t' && c != '\r') {
            atomicOr(flags, FLAG_BYTE);
        }
        starts += token_start(text, base + k);
        newlines += c == '\n';
    }
    atomicAdd(&total[0], starts);
    atomicAdd(&total[1], newlines);
    __syncthreads();
    if (threadIdx.x == 0) {
        counts[2 * blockIdx.x] = total[0];
        counts[2 * blockIdx.x + 1] = total[1];
    }
}

// The byte offsets of the token starts and of the newlines, in file order; `offsets` holds
// the exclusive prefix sums of count_marks' counts (same layout). Blocks of at most 1024.
extern "C" __global__ void write_marks(const long long nbytes, const uint8_t* __restrict__ text,
                                       const long long* __restrict__ offsets,
                                       int* __restrict__ pos, int* __restrict__ newlines) {
    __shared__ int warp_count[2][32];
    __shared__ long long next[2];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const unsigned below = (1u << lane) - 1;
    const long long base = (long long)blockIdx.x * SPAN;
    if (threadIdx.x == 0) {
        next[0] = offsets[2 * blockIdx.x];
        next[1] = offsets[2 * blockIdx.x + 1];
    }
    __syncthreads();
    for (int k0 = 0; k0 < SPAN; k0 += blockDim.x) {
        const long long i = base + k0 + threadIdx.x;
        const bool s = i < nbytes && token_start(text, i);
        const bool nl = i < nbytes && text[i] == '\n';
        const unsigned ms = __ballot_sync(FULL_MASK, s), mn = __ballot_sync(FULL_MASK, nl);
        if (lane == 0) {
            warp_count[0][warp] = __popc(ms);
            warp_count[1][warp] = __popc(mn);
        }
        __syncthreads();
        int before_s = 0, before_n = 0, total_s = 0, total_n = 0;
        for (int w = 0; w < nwarps; ++w) {
            if (w < warp) {
                before_s += warp_count[0][w];
                before_n += warp_count[1][w];
            }
            total_s += warp_count[0][w];
            total_n += warp_count[1][w];
        }
        if (s) pos[next[0] + before_s + __popc(ms & below)] = (int)i;
        if (nl) newlines[next[1] + before_n + __popc(mn & below)] = (int)i;
        __syncthreads();
        if (threadIdx.x == 0) {
            next[0] += total_s;
            next[1] += total_n;
        }
        __syncthreads();
    }
}

// For token t starting at pos[t]: its value and its 0-based line (newlines before it).
extern "C" __global__ void parse_tokens(const long long ntok, const long long nbytes,
                                        const uint8_t* __restrict__ text,
                                        const int* __restrict__ pos,
                                        const int* __restrict__ newlines,
                                        const long long nnewlines, const int nvtxs,
                                        int* __restrict__ value, int* __restrict__ line,
                                        int* __restrict__ flags) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ntok) return;
    const long long start = pos[t];
    long long p = start;
    int v = 0, len = 0;
    for (; p < nbytes && is_digit(text[p]); ++p, ++len) {
        if (len < 9) v = v * 10 + (text[p] - '0');
    }
    if (len > 9) atomicOr(flags, FLAG_LONG);
    long long lo = 0, hi = nnewlines;  // first newline at or after the token
    while (lo < hi) {
        long long mid = (lo + hi) >> 1;
        if (newlines[mid] < start) lo = mid + 1; else hi = mid;
    }
    if (lo >= nvtxs) atomicOr(flags, FLAG_LINES);
    value[t] = v;
    line[t] = (int)lo;
}

// xadj[v] = first token of row v >> shift (shift 1 with edge weights); odd rows flagged.
extern "C" __global__ void row_offsets(const int nvtxs, const long long* __restrict__ tok_xadj,
                                       const int shift, long long* __restrict__ xadj,
                                       int* __restrict__ flags) {
    long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v > nvtxs) return;
    xadj[v] = tok_xadj[v] >> shift;
    if (shift && v < nvtxs && ((tok_xadj[v + 1] - tok_xadj[v]) & 1)) atomicOr(flags, FLAG_ODD);
}

// Entry e of row u = line[e * stride]: adjncy (0-based) and adjwgt. Rows must rise strictly
// (sorted, no repeats), else FLAG_ORDER.
extern "C" __global__ void entries(const long long nnz, const int* __restrict__ value,
                                   const int* __restrict__ line, const int stride,
                                   const int nvtxs, int* __restrict__ adjncy,
                                   long long* __restrict__ adjwgt, int* __restrict__ flags) {
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nnz) return;
    long long u = line[e * stride];
    long long v = (long long)value[e * stride] - 1;
    if (v < 0 || v >= nvtxs) {
        atomicOr(flags, FLAG_RANGE);
        v = 0;
    }
    if (v == u) atomicOr(flags, FLAG_LOOP);
    adjncy[e] = (int)v;
    if (stride == 2) {
        int w = value[2 * e + 1];
        if (w <= 0) atomicOr(flags, FLAG_WEIGHT);
        adjwgt[e] = w;
    }
    if (e > 0) {
        long long pu = line[(e - 1) * stride];
        long long pv = (long long)value[(e - 1) * stride] - 1;
        if (pu * nvtxs + pv >= u * nvtxs + v) atomicOr(flags, FLAG_ORDER);
    }
}

// With sorted rows: entry e = (u, v) has its reverse when a binary search finds u in row v;
// with `weighted`, of the same weight. Needs no memory beyond the CSR arrays.
extern "C" __global__ void find_reverse(const long long nnz, const int nvtxs,
                                        const long long* __restrict__ xadj,
                                        const int* __restrict__ adjncy,
                                        const long long* __restrict__ adjwgt, const int weighted,
                                        int* __restrict__ flags) {
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nnz) return;
    const int u = row_of(nvtxs, xadj, e), v = adjncy[e];
    long long lo = xadj[v], hi = xadj[v + 1];  // search [lo, hi)
    while (lo < hi) {
        const long long mid = lo + (hi - lo) / 2;
        if (adjncy[mid] < u) lo = mid + 1; else hi = mid;
    }
    if (lo == xadj[v + 1] || adjncy[lo] != u || (weighted && adjwgt[lo] != adjwgt[e]))
        atomicOr(flags, FLAG_ASYM);
}

// Keys of entry e = (u, v) for rows that are not sorted: u * n + v and its reverse v * n + u.
extern "C" __global__ void entry_keys(const long long nnz, const int nvtxs,
                                      const long long* __restrict__ xadj,
                                      const int* __restrict__ adjncy, long long* __restrict__ key,
                                      long long* __restrict__ rkey) {
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nnz) return;
    const long long u = row_of(nvtxs, xadj, e), v = adjncy[e];
    key[e] = u * nvtxs + v;
    rkey[e] = v * nvtxs + u;
}

// After sorting both (unsorted rows): key_sorted[e] (entry korder[e] when weighted) must equal
// rkey_sorted[e] (entry rorder[e]): then every entry has its reverse; with `weighted`, of the
// same weight. Equal neighbouring keys are repeated neighbours.
extern "C" __global__ void compare_reverse(const long long nnz,
                                           const long long* __restrict__ key_sorted,
                                           const long long* __restrict__ korder,
                                           const long long* __restrict__ rkey_sorted,
                                           const long long* __restrict__ rorder,
                                           const long long* __restrict__ adjwgt,
                                           const int weighted, int* __restrict__ flags) {
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nnz) return;
    if (key_sorted[e] != rkey_sorted[e]) {
        atomicOr(flags, FLAG_ASYM);
    } else if (e > 0 && key_sorted[e - 1] == key_sorted[e]) {
        atomicOr(flags, FLAG_REPEAT);
    } else if (weighted && adjwgt[rorder[e]] != adjwgt[korder[e]]) {
        atomicOr(flags, FLAG_ASYM);
    }
}
