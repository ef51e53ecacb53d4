// The seeded 32-bit edge hash shared by the kernels that break ties between edges.
// Twin: gpmetis/edge_hash.py. Decisions that use it depend on ids and the seed only.
#pragma once

__device__ __forceinline__ unsigned int mix32(unsigned int x) {
    x ^= x >> 16; x *= 0x7feb352dU;
    x ^= x >> 15; x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Symmetric hash of the edge {a, b}: both ends rank their shared edge the same.
__device__ __forceinline__ unsigned int edge_hash(int a, int b, unsigned int seed) {
    unsigned int lo = (unsigned int)min(a, b), hi = (unsigned int)max(a, b);
    return mix32(mix32(lo ^ seed) + hi);
}
