// Row statistics of a DeviceGraph on the GPU. Twins in device_graph.py: numpy.diff(xadj)'s
// min and max, and its comparisons for the degree lists.
#include "cuda/block_reduce.cuh"

// out[0] = the longest row's length, out[1] = ~ the shortest's (block_degree_range); out must
// start at 0.
extern "C" __global__ void row_degree_range(
    const int n, const long long* __restrict__ xadj, unsigned long long* __restrict__ out)
{
    __shared__ unsigned long long buf[32];
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long degree =
        v < n ? (unsigned long long)(xadj[v + 1] - xadj[v]) : 0ULL;
    block_degree_range(degree, v < n ? ~degree : 0ULL, buf, out);
}

// keep[v] = 1 when row v has more than low entries and, with has_high, at most high; else 0.
extern "C" __global__ void rows_in_degree_range(
    const int n, const long long* __restrict__ xadj, const long long low, const long long high,
    const int has_high, unsigned char* __restrict__ keep)
{
    const int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    const long long degree = xadj[v + 1] - xadj[v];
    keep[v] = degree > low && (!has_high || degree <= high);
}
