// Kernels of the GPU Matrix Market reader (mtx_gpu.py). The body of the file (the bytes after
// the size line) is parsed in place: white space is every byte from 0x01 to 0x20, a token is a
// run of other bytes, lines end with '\n' (as in tokens.py). Whatever the kernels do not read
// exactly sets a bit of `flags`; the caller then reads the file on the CPU. The entry parser is
// __host__ __device__ so that tests can run it on the CPU (tests/mtx_entry_host.cu).
typedef unsigned char uint8_t;  // NVRTC has no <cstdint>

#define FLAG_BYTE 1    // a byte outside white space, digits and "+-.eE" (NUL included)
#define FLAG_LINE 2    // a line with other than the field's 2 or 3 tokens
#define FLAG_INDEX 4   // an index that is not 1..n written in at most 18 digits
#define FLAG_VALUE 8   // an integer matrix's value that is not [+-]D+ of at most 16 digits
#define FLAG_SLOW 16   // more values for the host to convert than the list holds

#define ENTRY_SLOW (-1)  // parse_entry: the value is for the host to convert (mtx_scan._exact)
#define VALUE_SLOW 0LL   // value_weight: likewise
#define VALUE_FAIL (-1LL)  // value_weight: outside the kernels' reading (FLAG_VALUE)

#define WEIGHT_DIGITS 13   // weights decided from the digits below 10^13
#define FINITE_DIGITS 300  // values below 10^300 are finite without a closer look
#define HALF 5000000LL     // one half in units of 10^-7
#define TIE_SCALE 8        // below 10^8 fractions within 10^-6 of one half are ties

#define SPAN 4096  // bytes per block in the two compaction kernels
#define FULL_MASK 0xffffffffu
#define NO_EDGE 0x7fffffffffffffffLL  // pack_entries' key of a diagonal entry: sorts last

#define HD __host__ __device__ __forceinline__

HD bool is_space(uint8_t c) { return c >= 1 && c <= ' '; }
HD bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
HD bool in_alphabet(uint8_t c) {
    return is_space(c) || is_digit(c) || c == '+' || c == '-' || c == '.' || (c | 32) == 'e';
}

// The end of the token that starts at p: its first white space byte, or nbytes.
HD long long token_end(const uint8_t* text, const long long nbytes, long long p) {
    while (p < nbytes && !is_space(text[p])) ++p;
    return p;
}

// The start of the next token on the line of byte p (p not inside a token); -1 when the line
// (or the text) ends first.
HD long long next_on_line(const uint8_t* text, const long long nbytes, long long p) {
    for (; p < nbytes && is_space(text[p]); ++p) {
        if (text[p] == '\n') return -1;
    }
    return p < nbytes ? p : -1;
}

// The value of text[p:end) when it is 1 to 18 decimal digits, else 0 (never a 1-based index).
HD long long parse_index(const uint8_t* text, long long p, const long long end) {
    if (end - p > 18) return 0;
    long long v = 0;
    for (; p < end; ++p) {
        if (!is_digit(text[p])) return 0;
        v = v * 10 + (text[p] - '0');
    }
    return v;
}

// Digit k of a mantissa of nint integer digits from byte s and nfrac fraction digits after the
// '.' at byte dot; 0 past its end.
HD long long mantissa_digit(const uint8_t* text, const long long s, const long long nint,
                            const long long dot, const long long nfrac, const long long k) {
    if (k < nint) return text[s + k] - '0';
    if (k - nint < nfrac) return text[dot + 1 + k - nint] - '0';
    return 0;
}

// The edge weight of the value text[p:end) (|a_ij| rounded half up, at least 1; 1 when
// `weights` is 0 and the value is surely a finite number), as the CPU reader's float64
// conversion gives it; VALUE_SLOW where only that conversion can tell (forms other than
// [+-]D+[.D+][(e|E)[+-]D+], |a_ij| of 10^13 or more, fractions near one half but not exactly
// one half: within 10^-6 below 10^8, within 10^(s-14) below 10^s for larger s, more than
// float64's spacing there);
// VALUE_FAIL for an integer matrix's value other than [+-]D+ of at most 16 digits.
HD long long value_weight(const uint8_t* text, const long long p, const long long end,
                          const int integer_field, const int weights) {
    const long long s = p + (text[p] == '+' || text[p] == '-');
    long long i = s;
    while (i < end && is_digit(text[i])) ++i;
    const long long nint = i - s;
    long long dot = -1, nfrac = 0;
    if (i < end && text[i] == '.') {
        dot = i++;
        while (i < end && is_digit(text[i])) ++i;
        nfrac = i - dot - 1;
    }
    long long e10 = 0, nexp = 0;
    bool has_exp = false;
    if (i < end && (text[i] | 32) == 'e') {
        has_exp = true;
        ++i;
        const bool negative = i < end && text[i] == '-';
        if (i < end && (text[i] == '+' || text[i] == '-')) ++i;
        for (; i < end && is_digit(text[i]); ++i, ++nexp) {
            if (nexp < 9) e10 = e10 * 10 + (text[i] - '0');
        }
        if (negative) e10 = -e10;
    }
    const bool good = i == end && nint >= 1 && (dot < 0 || nfrac >= 1)
                      && (!has_exp || (nexp >= 1 && nexp <= 8));
    if (integer_field) {
        if (!good || dot >= 0 || has_exp || nint > 16) return VALUE_FAIL;
    } else if (!good) {
        return VALUE_SLOW;
    }
    const long long scale = nint + e10;  // |a_ij| < 10^scale
    if (!weights) return scale <= FINITE_DIGITS ? 1 : VALUE_SLOW;
    if (scale <= 0) return 1;
    if (scale > WEIGHT_DIGITS) return VALUE_SLOW;
    // the mantissa's digits with the point moved by the exponent: the integer part and the 7
    // digits after it
    long long ipart = 0, frac7 = 0;
    for (long long k = 0; k < scale + 7; ++k) {
        const long long d = mantissa_digit(text, s, nint, dot, nfrac, k);
        if (k < scale) ipart = ipart * 10 + d; else frac7 = frac7 * 10 + d;
    }
    if (frac7 == HALF) {
        // exactly ipart + 1/2 when no other digit follows: below 10^13 float64 holds it and
        // its sum with 1/2 exactly, so the weight is ipart + 1
        bool exact = true;
        for (long long k = scale + 7; k < nint + nfrac; ++k) {
            exact &= mantissa_digit(text, s, nint, dot, nfrac, k) == 0;
        }
        if (exact) return ipart + 1;
    }
    long long tie = 10;  // half the width of the window around one half, in 10^-7
    for (long long k = TIE_SCALE; k < scale; ++k) tie *= 10;
    if (frac7 >= HALF - tie && frac7 <= HALF + tie) return VALUE_SLOW;
    const long long w = ipart + (frac7 >= HALF);
    return w > 1 ? w : 1;
}

// The entry line whose first token starts at byte p: 0-based row and column, the weight (see
// value_weight; 1 for a pattern matrix) and where its value token lies. Returns 0, ENTRY_SLOW
// (the weight is for the host to convert), or FLAG_* bits.
HD int parse_entry(const uint8_t* text, const long long nbytes, long long p, const int per_line,
                   const int integer_field, const int weights, const long long nvtxs, int* row,
                   int* col, long long* weight, long long* value_at, long long* value_len) {
    long long index[2] = {0, 0};
    long long w = 1;
    for (int c = 0; c < per_line; ++c) {
        if (c > 0) {
            p = next_on_line(text, nbytes, p);
            if (p < 0) return FLAG_LINE;
        }
        const long long end = token_end(text, nbytes, p);
        if (c < 2) {
            index[c] = parse_index(text, p, end);
            if (index[c] < 1 || index[c] > nvtxs) return FLAG_INDEX;
        } else {
            *value_at = p;
            *value_len = end - p;
            w = value_weight(text, p, end, integer_field, weights);
            if (w == VALUE_FAIL) return FLAG_VALUE;
        }
        p = end;
    }
    if (next_on_line(text, nbytes, p) >= 0) return FLAG_LINE;
    *row = (int)(index[0] - 1);
    *col = (int)(index[1] - 1);
    *weight = w;
    return w == VALUE_SLOW ? ENTRY_SLOW : 0;
}

HD bool token_start(const uint8_t* text, const long long i) {
    return !is_space(text[i]) && (i == 0 || is_space(text[i - 1]));
}

// counts[b]: the token starts among the SPAN bytes of block b; flags bytes outside the
// alphabet of the entry lines.
extern "C" __global__ void count_starts(const long long nbytes, const uint8_t* __restrict__ text,
                                        int* __restrict__ counts, int* __restrict__ flags) {
    __shared__ int total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    const long long base = (long long)blockIdx.x * SPAN;
    int starts = 0;
    bool outside = false;
    for (int k = threadIdx.x; k < SPAN && base + k < nbytes; k += blockDim.x) {
        outside |= !in_alphabet(text[base + k]);
        starts += token_start(text, base + k);
    }
    if (outside) atomicOr(flags, FLAG_BYTE);
    atomicAdd(&total, starts);
    __syncthreads();
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// The byte offsets of the token starts, in file order; `offsets` holds the exclusive prefix
// sums of count_starts' counts. Blocks of at most 1024 threads.
extern "C" __global__ void write_starts(const long long nbytes, const uint8_t* __restrict__ text,
                                        const long long* __restrict__ offsets,
                                        int* __restrict__ pos) {
    __shared__ int warp_count[32];
    __shared__ long long next;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const long long base = (long long)blockIdx.x * SPAN;
    if (threadIdx.x == 0) next = offsets[blockIdx.x];
    __syncthreads();
    for (int k0 = 0; k0 < SPAN; k0 += blockDim.x) {
        const long long i = base + k0 + threadIdx.x;
        const bool s = i < nbytes && token_start(text, i);
        const unsigned mask = __ballot_sync(FULL_MASK, s);
        if (lane == 0) warp_count[warp] = __popc(mask);
        __syncthreads();
        int before = 0, total = 0;
        for (int w = 0; w < nwarps; ++w) {
            if (w < warp) before += warp_count[w];
            total += warp_count[w];
        }
        if (s) pos[next + before + __popc(mask & ((1u << lane) - 1))] = (int)i;
        __syncthreads();
        if (threadIdx.x == 0) next += total;
        __syncthreads();
    }
}

// Entry e is the line of tokens pos[e * per_line ...]: its 0-based row and column and, with
// `weights`, its weight. Values for the host (ENTRY_SLOW) are listed as (entry, byte offset,
// length) triples in `slow` (room for slow_cap of them) and counted in state[1]; state[0]
// collects the FLAG_* bits.
extern "C" __global__ void parse_entries(const long long nnz, const long long nbytes,
                                         const uint8_t* __restrict__ text,
                                         const int* __restrict__ pos, const int per_line,
                                         const int integer_field, const int weights,
                                         const int nvtxs, int* __restrict__ row,
                                         int* __restrict__ col, long long* __restrict__ weight,
                                         long long* __restrict__ slow, const int slow_cap,
                                         int* __restrict__ state) {
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= nnz) return;
    int r = 0, c = 0;
    long long w = 1, at = 0, len = 0;
    const int status = parse_entry(text, nbytes, pos[e * per_line], per_line, integer_field,
                                   weights, nvtxs, &r, &c, &w, &at, &len);
    if (status > 0) {
        atomicOr(state, status);
        return;
    }
    row[e] = r;
    col[e] = c;
    if (weights) weight[e] = w;
    if (status == ENTRY_SLOW) {
        const int k = atomicAdd(state + 1, 1);
        if (k < slow_cap) {
            slow[3LL * k] = e;
            slow[3LL * k + 1] = at;
            slow[3LL * k + 2] = len;
        } else {
            atomicOr(state, FLAG_SLOW);
        }
    }
}

// packed[j] for the 2 nnz directed entries (entry j, then its reverse): row, column and
// weight in id_bits, id_bits and w_bits bits (w_bits 0: no weights), so that one sort orders
// them by row, column and weight; NO_EDGE for diagonal entries.
extern "C" __global__ void pack_entries(const long long nnz, const int* __restrict__ row,
                                        const int* __restrict__ col,
                                        const long long* __restrict__ weight, const int id_bits,
                                        const int w_bits, long long* __restrict__ packed) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= 2 * nnz) return;
    const long long e = j < nnz ? j : j - nnz;
    long long u = row[e], v = col[e];
    if (j >= nnz) {
        const long long t = u;
        u = v;
        v = t;
    }
    if (u == v) {
        packed[j] = NO_EDGE;
        return;
    }
    packed[j] = (u << (id_bits + w_bits)) | (v << w_bits) | (w_bits ? weight[e] : 0);
}
