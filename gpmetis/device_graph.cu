// Row statistics of a DeviceGraph on the GPU. Twin: numpy.diff(xadj).max() in device_graph.py.
#include "block_reduce.cuh"

// out[0] = max(out[0], the largest row length xadj[v + 1] - xadj[v]); out[0] must start at 0.
extern "C" __global__ void max_row_degree(
    const int n, const long long* __restrict__ xadj, unsigned long long* __restrict__ out)
{
    __shared__ unsigned long long buf[32];
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long degree = v < n ? (unsigned long long)(xadj[v + 1] - xadj[v]) : 0ULL;
    degree = block_max_u64(degree, buf);
    if (threadIdx.x == 0 && degree) atomicMax(out, degree);
}
