// Scatter-min for the connected-components labelling in metrics.py. Twin: numpy.minimum.at.
extern "C" __global__ void scatter_min(
    const long long m, long long* __restrict__ target, const long long* __restrict__ index,
    const long long* __restrict__ values)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    atomicMin(target + index[i], values[i]);
}
