// A barrier across the whole grid for the kernels that loop on the device, launched by
// Backend.launch_cooperative (a one-dimensional grid, every block resident). It stands in for cooperative_groups'
// grid.sync(): that header brings libcudacxx constants into the module as initialized device
// globals, and the driver takes milliseconds to load a module that has any.
#pragma once

// Zero when the module is loaded (its uninitialized device memory is cleared); each barrier
// flips the top bit. The kernels of one module never run at the same time: gpmetis issues
// them on one stream, one partition at a time.
__device__ unsigned int grid_barrier_word;

struct GridBarrier {
    // Every thread of the grid calls it; none returns before all have called it, and what any
    // thread wrote before the call is visible to every thread after it.
    __device__ __forceinline__ void sync() const {
        __syncthreads();
        if (threadIdx.x == 0) {
            // block 0 adds 2^31 - (blocks - 1), every other block 1: the last arrival flips
            // the top bit and leaves the low bits as they were
            const unsigned int add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
            __threadfence();
            const unsigned int before = atomicAdd(&grid_barrier_word, add);
            const volatile unsigned int* word = &grid_barrier_word;
            while (((before ^ *word) & 0x80000000u) == 0) {
            }
            __threadfence();
        }
        __syncthreads();
    }
};
