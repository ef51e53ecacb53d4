// Jet-style refinement kernels. Twins: gpmetis/refinement/jet.py (_best_moves_numpy, the NumPy
// path of afterburner, _score). Every decision depends on weights, part ids and vertex ids only.
// Each kernel takes the rows by length (DeviceGraph.warp_split): a thread per vertex of degree
// <= max_degree (on a resident grid, resident_grid.cuh), a warp per listed vertex of degree up
// to WARP_DEGREE_MAX (best_moves in a kernel of its own: its threads neither rescan nor hash
// long rows), and a *_heavy version with one block per listed high-degree vertex (same
// contract). A kernel's work is a device function (*_pass, *_by_warp, *_by_block), which
// jet_device.cu's jet_loop also runs; the kernels themselves serve the functions of jet.py
// (and their tests).
#include "../cuda/block_reduce.cuh"
#include "../cuda/resident_grid.cuh"
#include "../cuda/row_sums.cuh"
#include "../cuda/warp_sums.cuh"

#define SCORE_SHARED_PARTS 2048  // score sums part weights per block up to this many parts

// conn(v,p) = the weight of v's edges into part p, summed by for_each_label_sum (rows longer
// than SCAN_DEGREE use tkeys/tvals[xadj[v]..xadj[v+1]) as scratch). Then:
//  mode 0 (label propagation), for v with locked[v] == 0: dest[v] = the other part p with the largest
//    conn(v,p), ties -> smaller p; gain[v] = conn(v,dest) - conn(v,part[v]); v stays a candidate
//    when gain >= 0 or -gain < floor(c_num * conn(v,part[v]) / c_den), else dest[v] = -1.
//  mode 1 (rebalancing), for v in an overweight part (room[part[v]] < 0): as above but only parts p
//    with vwgt[v] <= room[p] qualify; dest[v] = -1 when none is adjacent, and then
//    gain[v] = -conn(v,part[v]).
__device__ __forceinline__ void best_moves_pass(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt, const int* __restrict__ part,
    const unsigned char* __restrict__ locked, const long long* __restrict__ room,
    const int mode, const long long c_num, const long long c_den,
    int* __restrict__ tkeys, int* __restrict__ tvals,
    int* __restrict__ dest, int* __restrict__ gain, const long long max_degree)
{
    for_each_vertex(n, [&](const int v) {
        if (xadj[v + 1] - xadj[v] > max_degree) return;
        dest[v] = -1;
        gain[v] = 0;
        const int own = part[v];
        if (mode == 0 ? locked[v] != 0 : room[own] >= 0) return;
        const long long begin = xadj[v], end = xadj[v + 1];
        int best_p = -1;
        long long best_conn = -1;
        auto offer = [&](const int p, const long long c) {
            if (mode == 1 && vwgt[v] > room[p]) return;
            if (c > best_conn || (c == best_conn && p < best_p)) { best_conn = c; best_p = p; }
        };
        long long own_conn = 0;
        for_each_label_sum(begin, end, adjncy, adjwgt, part, tkeys, tvals,
                           [&](const int p, const long long c) {
                               if (p == own) own_conn = c;
                               else offer(p, c);
                           });
        if (best_p < 0) {
            if (mode == 1) gain[v] = (int)-own_conn;
            return;
        }
        const long long g = best_conn - own_conn;
        if (mode == 0 && g < 0 && -g >= (c_num * own_conn) / c_den) return;
        dest[v] = best_p;
        gain[v] = (int)g;
    });
}

extern "C" __global__ void best_moves(
    const int n, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ part,
    const unsigned char* __restrict__ locked, const long long* __restrict__ room,
    const int mode, const long long c_num, const long long c_den,
    int* __restrict__ tkeys, int* __restrict__ tvals,
    int* __restrict__ dest, int* __restrict__ gain, const long long max_degree)
{
    best_moves_pass(n, xadj, adjncy, adjwgt, vwgt, part, locked, room, mode, c_num, c_den, tkeys,
                    tvals, dest, gain, max_degree);
}

// The order in which the warp and block versions of best_moves rank a part p with conn(v,p) = c:
// larger conn first, then smaller p; 0 means none.
__device__ __forceinline__ unsigned long long move_key(const int c, const int p) {
    return ((unsigned long long)c << 32) | (0xFFFFFFFFU - (unsigned)p);
}

// dest[v] and gain[v] as best_moves defines them, from the move_key of v's best other part
// (0: none) and conn(v, part[v]).
__device__ __forceinline__ void write_best_move(
    const int v, const unsigned long long best, const long long own_conn, const int mode,
    const long long c_num, const long long c_den, int* __restrict__ dest,
    int* __restrict__ gain)
{
    dest[v] = -1;
    gain[v] = 0;
    if (best == 0) {
        if (mode == 1) gain[v] = (int)-own_conn;
        return;
    }
    const int best_p = (int)(0xFFFFFFFFU - (unsigned)(best & 0xFFFFFFFFULL));
    const long long g = (long long)(best >> 32) - own_conn;
    if (mode == 0 && g < 0 && -g >= (c_num * own_conn) / c_den) return;
    dest[v] = best_p;
    gain[v] = (int)g;
}

// best_moves for vertex v (degree <= WARP_DEGREE_MAX) by the calling warp, keys/vals being its
// shared scratch (WARP_DEGREE_MAX ints each): conn(v, p) summed in shared memory, then a
// warp-wide max of (conn, -p) picks the destination exactly as the thread version does.
__device__ __forceinline__ void best_moves_by_warp(
    const int v, int* keys, int* vals, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt,
    const int* __restrict__ vwgt, const int* __restrict__ part,
    const unsigned char* __restrict__ locked, const long long* __restrict__ room,
    const int mode, const long long c_num, const long long c_den, int* __restrict__ dest,
    int* __restrict__ gain)
{
    const int lane = threadIdx.x & 31;
    const int own = part[v];
    if (mode == 0 ? locked[v] != 0 : room[own] >= 0) {
        if (lane == 0) { dest[v] = -1; gain[v] = 0; }
        return;
    }
    const long long begin = xadj[v], end = xadj[v + 1];
    WarpSums sums{keys, vals, 0};
    for (long long j0 = begin; j0 < end; j0 += 32) {
        const long long j = j0 + lane;
        sums.add(j < end, j < end ? part[adjncy[j]] : 0, j < end ? adjwgt[j] : 0);
    }
    long long own_conn = 0;
    unsigned long long best = 0;
    for (int s = lane; s < sums.size; s += 32) {
        const int p = sums.keys[s], c = sums.vals[s];
        if (p == own) { own_conn = c; continue; }
        if (mode == 1 && vwgt[v] > room[p]) continue;
        const unsigned long long key = move_key(c, p);
        best = key > best ? key : best;
    }
    for (int o = 16; o > 0; o >>= 1) {
        own_conn += __shfl_xor_sync(FULL_MASK, own_conn, o);  // one lane holds it, others 0
        const unsigned long long other = __shfl_xor_sync(FULL_MASK, best, o);
        best = other > best ? other : best;
    }
    if (lane == 0) write_best_move(v, best, own_conn, mode, c_num, c_den, dest, gain);
    __syncwarp();  // the scratch is read before the warp's next vertex
}

// best_moves for the vertices mid[0..nmid) (degree <= WARP_DEGREE_MAX), a warp each: warp i of
// the grid takes i, i + the grid's warp count, ... (blocks of ROW_WARPS warps).
__device__ __forceinline__ void best_moves_warp_pass(
    const int* __restrict__ mid, const int nmid, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt,
    const int* __restrict__ vwgt, const int* __restrict__ part,
    const unsigned char* __restrict__ locked, const long long* __restrict__ room,
    const int mode, const long long c_num, const long long c_den, int* __restrict__ dest,
    int* __restrict__ gain)
{
    __shared__ int keys[ROW_WARPS][WARP_DEGREE_MAX], vals[ROW_WARPS][WARP_DEGREE_MAX];
    const int warp = threadIdx.x >> 5;
    const long long warps = (long long)gridDim.x * ROW_WARPS;
    for (long long i = (long long)blockIdx.x * ROW_WARPS + warp; i < nmid; i += warps)
        best_moves_by_warp(mid[i], keys[warp], vals[warp], xadj, adjncy, adjwgt, vwgt, part,
                           locked, room, mode, c_num, c_den, dest, gain);
}

// best_moves_warp_pass as a kernel (Backend.launch_warps: a warp per listed vertex).
extern "C" __global__ void best_moves_warp(
    const int* __restrict__ mid, const int nmid,
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ part, const unsigned char* __restrict__ locked,
    const long long* __restrict__ room, const int mode, const long long c_num,
    const long long c_den, int* __restrict__ dest, int* __restrict__ gain)
{
    best_moves_warp_pass(mid, nmid, xadj, adjncy, adjwgt, vwgt, part, locked, room, mode, c_num,
                         c_den, dest, gain);
}

// The change of v's gain (moving from -> to) due to its edge to u, counting u in its new part
// when u is a candidate of higher priority (larger gain, ties -> smaller id).
__device__ __forceinline__ long long afterburner_term(
    const int v, const int to, const int from, const long long gv, const int u, const int w,
    const int* __restrict__ part, const int* __restrict__ dest,
    const int* __restrict__ gain)
{
    int pu = part[u];
    const int du = dest[u];
    if (du >= 0 && (gain[u] > gv || (gain[u] == gv && u < v))) pu = du;
    return pu == to ? w : (pu == from ? -w : 0);
}

// Keep a candidate's move only if its gain stays >= 0 when every candidate of higher priority
// (larger gain, ties -> smaller id) is assumed to have moved already; moved[v] is v's part after
// the kept moves (a new array: part is read by other threads). Rows of up to max_degree entries
// go to a thread, those in mid[0..nmid) to a warp.
__device__ __forceinline__ void afterburner_pass(
    const int n, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ part, const int* __restrict__ dest,
    const int* __restrict__ gain, unsigned char* __restrict__ keep, int* __restrict__ moved,
    const long long max_degree, const int* __restrict__ mid, const int nmid)
{
    // v's re-checked gain from the row entries first, first + step, ... (0 for no candidate)
    auto recheck = [&](const int v, const int to, const int first, const int step) {
        long long g = 0;
        if (to >= 0)
            for (long long j = xadj[v] + first; j < xadj[v + 1]; j += step)
                g += afterburner_term(v, to, part[v], gain[v], adjncy[j], adjwgt[j], part, dest,
                                      gain);
        return g;
    };
    auto decide = [&](const int v, const int to, const long long g) {
        const bool kept = to >= 0 && g >= 0;
        keep[v] = kept ? 1 : 0;
        moved[v] = kept ? to : part[v];
    };
    for_each_vertex(n, [&](const int v) {
        if (xadj[v + 1] - xadj[v] > max_degree) return;
        decide(v, dest[v], recheck(v, dest[v], 0, 1));
    });
    for_each_listed_by_warp(mid, nmid, [&](const int v, const int lane) {
        long long g = recheck(v, dest[v], lane, 32);
        for (int o = 16; o > 0; o >>= 1) g += __shfl_xor_sync(FULL_MASK, g, o);
        if (lane == 0) decide(v, dest[v], g);
    });
}

extern "C" __global__ void afterburner(
    const int n, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ part,
    const int* __restrict__ dest,
    const int* __restrict__ gain, unsigned char* __restrict__ keep,
    int* __restrict__ moved, const long long max_degree, const int* __restrict__ mid,
    const int nmid)
{
    afterburner_pass(n, xadj, adjncy, adjwgt, part, dest, gain, keep, moved, max_degree, mid,
                     nmid);
}

// The state of a partition in one pass: out[0] = 2 * edgecut, out[1 + p] = weight of part p.
// With `prev` (not null), what changes from partition prev to part is added instead (wrapping
// uint64 arithmetic, so out keeps the state of part when it held that of prev): only moved
// vertices are read. An edge (v, u) of a moved v counts for both directions when u did not
// move, for its own when u moved too (u counts the other).
__device__ __forceinline__ long long score_entry(
    const int v, const int u, const int w, const int* __restrict__ part,
    const int* __restrict__ prev)
{
    if (prev == nullptr) return part[u] != part[v] ? w : 0;
    const int now = part[u] != part[v], was = prev[u] != prev[v];
    return (long long)(now - was) * w * (part[u] != prev[u] ? 1 : 2);
}

// The part weight v adds: all of it, or its move from prev[v] (0 when it did not move).
__device__ __forceinline__ void score_vertex(
    const int v, const int w, const int* __restrict__ part, const int* __restrict__ prev,
    unsigned long long* __restrict__ block_pw, unsigned long long* __restrict__ out)
{
    if (block_pw != nullptr) {
        atomicAdd(block_pw + part[v], (unsigned long long)w);
        if (prev != nullptr) atomicAdd(block_pw + prev[v], (unsigned long long)(long long)-w);
        return;
    }
    atomicAdd(out + 1 + part[v], (unsigned long long)w);
    if (prev != nullptr) atomicAdd(out + 1 + prev[v], (unsigned long long)(long long)-w);
}

// A block sums its cut and, when nparts <= SCORE_SHARED_PARTS, its part weights (dynamic shared
// memory, 8 * nparts bytes: a block's part weights pass 2^31) before adding them to out, so few atomics meet on one address.
// Integer sums do not depend on thread order. Rows of up to max_degree entries go to a thread,
// those in mid[0..nmid) to a warp. Twin: jet.py (_score via metrics).
__device__ __forceinline__ void score_pass(
    const int n, const int nparts, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ part, const int* __restrict__ prev,
    unsigned long long* __restrict__ out, const long long max_degree,
    const int* __restrict__ mid, const int nmid)
{
    extern __shared__ unsigned long long block_pw[];
    __shared__ long long buf[32];
    const bool shared = nparts <= SCORE_SHARED_PARTS;
    if (shared) {
        for (int p = threadIdx.x; p < nparts; p += blockDim.x) block_pw[p] = 0;
        __syncthreads();
    }
    long long cut = 0;
    auto unmoved = [&](const int v) { return prev != nullptr && part[v] == prev[v]; };
    for_each_vertex(n, [&](const int v) {
        if (unmoved(v) || xadj[v + 1] - xadj[v] > max_degree) return;
        for (long long j = xadj[v]; j < xadj[v + 1]; ++j)
            cut += score_entry(v, adjncy[j], adjwgt[j], part, prev);
        score_vertex(v, vwgt[v], part, prev, shared ? block_pw : nullptr, out);
    });
    for_each_listed_by_warp(mid, nmid, [&](const int v, const int lane) {
        if (unmoved(v)) return;
        for (long long j = xadj[v] + lane; j < xadj[v + 1]; j += 32)
            cut += score_entry(v, adjncy[j], adjwgt[j], part, prev);
        if (lane == 0) score_vertex(v, vwgt[v], part, prev, shared ? block_pw : nullptr, out);
    });
    cut = block_sum_i64(cut, buf);
    if (threadIdx.x == 0 && cut) atomicAdd(out, (unsigned long long)cut);
    if (!shared) return;
    __syncthreads();
    for (int p = threadIdx.x; p < nparts; p += blockDim.x)
        if (block_pw[p]) atomicAdd(out + 1 + p, block_pw[p]);
}

extern "C" __global__ void score(
    const int n, const int nparts,
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt, const int* __restrict__ part,
    const int* __restrict__ prev, unsigned long long* __restrict__ out,
    const long long max_degree, const int* __restrict__ mid, const int nmid)
{
    score_pass(n, nparts, xadj, adjncy, adjwgt, vwgt, part, prev, out, max_degree, mid, nmid);
}

// best_moves for a high-degree vertex v by the calling block (the kernel: a block per vertex
// of heavy): conn(v, p) summed in shared memory (nparts ints; integer atomics give the same
// sums in any order), then a block-wide max of (conn, -p) picks the destination exactly as the
// thread version does.
__device__ __forceinline__ void best_moves_by_block(
    const int v, const int nparts, const long long* __restrict__ xadj,
    const int* __restrict__ adjncy, const int* __restrict__ adjwgt,
    const int* __restrict__ vwgt, const int* __restrict__ part,
    const unsigned char* __restrict__ locked, const long long* __restrict__ room,
    const int mode, const long long c_num, const long long c_den, int* __restrict__ dest,
    int* __restrict__ gain)
{
    extern __shared__ int conn[];
    __shared__ unsigned long long buf[32];
    const int own = part[v];
    if (mode == 0 ? locked[v] != 0 : room[own] >= 0) {
        if (threadIdx.x == 0) { dest[v] = -1; gain[v] = 0; }
        return;
    }
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) conn[p] = 0;
    __syncthreads();
    for (long long j = xadj[v] + threadIdx.x; j < xadj[v + 1]; j += blockDim.x)
        atomicAdd(conn + part[adjncy[j]], adjwgt[j]);
    __syncthreads();
    const long long own_conn = conn[own];
    unsigned long long best = 0;
    for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
        const int c = conn[p];
        if (p == own || c <= 0) continue;
        if (mode == 1 && vwgt[v] > room[p]) continue;
        const unsigned long long key = move_key(c, p);
        best = key > best ? key : best;
    }
    best = block_max_u64(best, buf);
    if (threadIdx.x != 0) return;
    write_best_move(v, best, own_conn, mode, c_num, c_den, dest, gain);
}

extern "C" __global__ void best_moves_heavy(
    const int* __restrict__ heavy, const int nparts,
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ part, const unsigned char* __restrict__ locked,
    const long long* __restrict__ room, const int mode, const long long c_num,
    const long long c_den, int* __restrict__ dest, int* __restrict__ gain)
{
    best_moves_by_block(heavy[blockIdx.x], nparts, xadj, adjncy, adjwgt, vwgt, part, locked,
                        room, mode, c_num, c_den, dest, gain);
}

// afterburner for a high-degree vertex by the calling block: the gain re-check summed over it.
__device__ __forceinline__ void afterburner_by_block(
    const int v, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ part,
    const int* __restrict__ dest, const int* __restrict__ gain,
    unsigned char* __restrict__ keep, int* __restrict__ moved)
{
    __shared__ long long buf[32];
    const int to = dest[v];
    if (to < 0) {
        if (threadIdx.x == 0) { keep[v] = 0; moved[v] = part[v]; }
        return;
    }
    long long g = 0;
    for (long long j = xadj[v] + threadIdx.x; j < xadj[v + 1]; j += blockDim.x)
        g += afterburner_term(v, to, part[v], gain[v], adjncy[j], adjwgt[j], part, dest, gain);
    g = block_sum_i64(g, buf);
    if (threadIdx.x != 0) return;
    keep[v] = g >= 0 ? 1 : 0;
    moved[v] = g >= 0 ? to : part[v];
}

extern "C" __global__ void afterburner_heavy(
    const int* __restrict__ heavy,
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ part,
    const int* __restrict__ dest, const int* __restrict__ gain,
    unsigned char* __restrict__ keep, int* __restrict__ moved)
{
    afterburner_by_block(heavy[blockIdx.x], xadj, adjncy, adjwgt, part, dest, gain, keep, moved);
}

// score for a high-degree vertex by the calling block.
__device__ __forceinline__ void score_by_block(
    const int v, const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ part, const int* __restrict__ prev,
    unsigned long long* __restrict__ out)
{
    __shared__ long long buf[32];
    if (prev != nullptr && part[v] == prev[v]) return;
    long long cut = 0;
    for (long long j = xadj[v] + threadIdx.x; j < xadj[v + 1]; j += blockDim.x)
        cut += score_entry(v, adjncy[j], adjwgt[j], part, prev);
    cut = block_sum_i64(cut, buf);
    if (threadIdx.x != 0) return;
    if (cut) atomicAdd(out, (unsigned long long)cut);
    score_vertex(v, vwgt[v], part, prev, nullptr, out);
}

extern "C" __global__ void score_heavy(
    const int* __restrict__ heavy,
    const long long* __restrict__ xadj, const int* __restrict__ adjncy,
    const int* __restrict__ adjwgt, const int* __restrict__ vwgt,
    const int* __restrict__ part, const int* __restrict__ prev,
    unsigned long long* __restrict__ out)
{
    score_by_block(heavy[blockIdx.x], xadj, adjncy, adjwgt, vwgt, part, prev, out);
}
