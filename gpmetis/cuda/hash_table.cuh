// Open-addressing tables that sum int weights per int key (keys >= 0; an empty slot holds -1).
// A table has at least as many slots as the entries inserted into it, so it never fills up.
// The set of keys and their sums do not depend on the order of insertion; their slots do.
#pragma once

__device__ __forceinline__ long long table_slot(const int key, const long long cap) {
    unsigned int x = (unsigned int)key;
    x ^= x >> 16; x *= 0x45d9f3bU; x ^= x >> 16;
    return (long long)(x % (unsigned long long)cap);
}

// Add w to key's sum in keys/vals[0..cap), owned by one thread; returns 1 when key is new.
__device__ __forceinline__ int table_add(const int key, const int w, const long long cap,
                                         int* __restrict__ keys, int* __restrict__ vals) {
    long long s = table_slot(key, cap);
    while (true) {
        const int k = keys[s];
        if (k == key) { vals[s] += w; return 0; }
        if (k < 0) { keys[s] = key; vals[s] = w; return 1; }
        s = (s + 1 == cap) ? 0 : s + 1;
    }
}

// table_add for a table shared by a thread block (slots claimed with atomicCAS, vals zeroed).
__device__ __forceinline__ int table_add_atomic(const int key, const int w, const long long cap,
                                                int* keys, int* vals) {
    long long s = table_slot(key, cap);
    while (true) {
        const int prev = atomicCAS(keys + s, -1, key);
        if (prev == -1 || prev == key) {
            atomicAdd(vals + s, w);
            return prev == -1;
        }
        s = (s + 1 == cap) ? 0 : s + 1;
    }
}
