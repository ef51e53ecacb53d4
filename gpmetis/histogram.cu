// Sums per id (a histogram) for Backend.bin_sums. Twin: numpy.bincount.
#include "cuda/resident_grid.cuh"

// out[b] += the weight of every item i < n with ids[i] == b (1 each where weights is null), for
// nbins bins that fit in a block's shared memory (nbins int64 of dynamic shared memory): each
// block sums its items there, then adds each bin it touched to out once (integer atomics: the
// sums do not depend on the order). A few bins (a partition's parts) take millions of items, so
// atomics straight into out would queue on them.
extern "C" __global__ void bin_sums(
    const int n, const int nbins, const int* __restrict__ ids, const int* __restrict__ weights,
    unsigned long long* __restrict__ out)
{
    extern __shared__ unsigned long long sums[];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) sums[b] = 0;
    __syncthreads();
    for_each_vertex(n, [&](const int i) {
        atomicAdd(sums + ids[i], weights != nullptr ? (unsigned long long)(long long)weights[i]
                                                    : 1ULL);
    });
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x)
        if (sums[b] != 0) atomicAdd(out + b, sums[b]);
}
