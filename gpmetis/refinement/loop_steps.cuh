// The steps of a level's refinement loop that both cooperative loops run (jet_device.cu's
// jet_loop, the multi-constraint mc_loop): rows by length, each step's per-vertex, per-warp and
// per-block work in one pass of jet.cu's kernels' device functions.
#pragma once

#include "jet.cu"

// Call f(list[i]) in every thread of block b for i = b, b + the grid's block count, ...
template <typename F>
__device__ __forceinline__ void for_each_listed_by_block(const int* list, const int count, F f) {
    for (int i = blockIdx.x; i < count; i += gridDim.x) {
        f(list[i]);
        __syncthreads();  // the block's shared scratch is read before the next vertex's
    }
}

// The rows of a level by length, as jet_loop's kernels take them: rows of up to max_degree
// entries to a thread, those in mid to a warp, those in heavy to a block.
struct RowTiers {
    long long max_degree;
    const int* mid;
    const int* heavy;
    int nmid, nheavy;
};

__device__ __forceinline__ void best_moves_in_loop(
    const RowTiers& rows, const int n, const int nparts, const long long* xadj,
    const int* adjncy, const int* adjwgt, const int* vwgt, const int* part,
    const unsigned char* locked, const long long* room, const int mode, const long long c_num,
    const long long c_den, int* tkeys, int* tvals, int* dest, int* gain)
{
    best_moves_pass(n, xadj, adjncy, adjwgt, vwgt, part, locked, room, mode, c_num, c_den,
                    tkeys, tvals, dest, gain, rows.max_degree);
    best_moves_warp_pass(rows.mid, rows.nmid, xadj, adjncy, adjwgt, vwgt, part, locked, room,
                         mode, c_num, c_den, dest, gain);
    for_each_listed_by_block(rows.heavy, rows.nheavy, [&](const int v) {
        best_moves_by_block(v, nparts, xadj, adjncy, adjwgt, vwgt, part, locked, room, mode,
                            c_num, c_den, dest, gain);
    });
}

// afterburner_pass of dest's moves into keep and moved, heavy rows a block each.
__device__ __forceinline__ void afterburner_in_loop(
    const RowTiers& rows, const int n, const long long* xadj, const int* adjncy,
    const int* adjwgt, const int* part, const int* dest, const int* gain, unsigned char* keep,
    int* moved)
{
    afterburner_pass(n, xadj, adjncy, adjwgt, part, dest, gain, keep, moved, rows.max_degree,
                     rows.mid, rows.nmid);
    for_each_listed_by_block(rows.heavy, rows.nheavy, [&](const int v) {
        afterburner_by_block(v, xadj, adjncy, adjwgt, part, dest, gain, keep, moved);
    });
}

// score_pass of part (of the change from prev where prev is given) into acc, heavy rows a
// block each.
__device__ __forceinline__ void score_in_loop(
    const RowTiers& rows, const int n, const int nparts, const long long* xadj,
    const int* adjncy, const int* adjwgt, const int* vwgt, const int* part, const int* prev,
    unsigned long long* acc)
{
    score_pass(n, nparts, xadj, adjncy, adjwgt, vwgt, part, prev, acc, rows.max_degree,
               rows.mid, rows.nmid);
    for_each_listed_by_block(rows.heavy, rows.nheavy, [&](const int v) {
        score_by_block(v, xadj, adjncy, adjwgt, vwgt, part, prev, acc);
    });
}

// The next iteration starts from moved, with this label propagation's locks (none after
// rebalancing): part and moved, and after label propagation locked and next_locked, trade
// places.
__device__ __forceinline__ void next_iteration(const bool lp, int*& part, int*& moved,
                                               unsigned char*& locked,
                                               unsigned char*& next_locked)
{
    int* const was = part;
    part = moved;
    moved = was;
    if (!lp) return;
    unsigned char* const locks = locked;
    locked = next_locked;
    next_locked = locks;
}
