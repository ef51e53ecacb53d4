// The split graph of SPAC edge partitioning, one thread per CSR slot of the input graph.
//
// Slot i (entry i of the input's CSR, of row u = src[i]) is vertex i of the split graph. Its
// row lists, in this order: the partner slot (the slot of the reverse entry, joined by a
// dominant edge of weight `dominant`), the previous slot of row u (weight 1) when i is not the
// row's first, the next slot (weight 1) when i is not the row's last. Rows are placed without a
// scan: a row has 3 entries less one at each end of its input row, so slot i's row starts at
// 3 i - 2 * (non-empty input rows before u) - (i is not the first slot of u).
extern "C" __global__ void split_graph_build(
    const long long nslots, const long long* __restrict__ xadj, const int* __restrict__ src,
    const int* __restrict__ partner, const int* __restrict__ nonempty_before, const int dominant,
    long long* __restrict__ sxadj, int* __restrict__ sadjncy, int* __restrict__ sadjwgt)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nslots) return;
    const int u = src[i];
    const long long start = xadj[u], end = xadj[u + 1];
    long long at = 3 * i - 2 * (long long)nonempty_before[u] - (i > start ? 1 : 0);
    if (i == 0) sxadj[0] = 0;
    sadjncy[at] = partner[i];
    sadjwgt[at] = dominant;
    ++at;
    if (i > start) {
        sadjncy[at] = (int)(i - 1);
        sadjwgt[at] = 1;
        ++at;
    }
    if (i + 1 < end) {
        sadjncy[at] = (int)(i + 1);
        sadjwgt[at] = 1;
        ++at;
    }
    sxadj[i + 1] = at;
}
