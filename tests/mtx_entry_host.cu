// mtx_gpu.cu's entry parser run on the CPU, for tests/test_mtx_gpu.py (no GPU needed):
//     mtx_entry_host FILE BODY NNZ PER_LINE INTEGER_FIELD WEIGHTS NVTXS
// prints "OUTSIDE NTOK" (a byte outside the alphabet after BODY, the token starts found as
// count_starts counts them), then, when NTOK is NNZ * PER_LINE, one line per entry:
// "status row col weight value_at value_len" as parse_entries sees them.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../gpmetis/io/mtx_gpu.cu"

int main(int argc, char** argv) {
    if (argc != 8) return 2;
    FILE* f = fopen(argv[1], "rb");
    if (!f) return 2;
    std::vector<uint8_t> data;
    for (int c; (c = fgetc(f)) != EOF;) data.push_back((uint8_t)c);
    fclose(f);
    const long long body = atoll(argv[2]), nnz = atoll(argv[3]), nvtxs = atoll(argv[7]);
    const int per_line = atoi(argv[4]), integer_field = atoi(argv[5]), weights = atoi(argv[6]);
    const uint8_t* text = data.data() + body;
    const long long nbytes = (long long)data.size() - body;
    std::vector<long long> starts;
    int outside = 0;
    for (long long i = 0; i < nbytes; ++i) {
        outside |= !in_alphabet(text[i]);
        if (token_start(text, i)) starts.push_back(i);
    }
    printf("%d %lld\n", outside, (long long)starts.size());
    if ((long long)starts.size() != nnz * per_line) return 0;
    for (long long e = 0; e < nnz; ++e) {
        int row = -1, col = -1;
        long long weight = -1, at = -1, len = -1;
        const int status = parse_entry(text, nbytes, starts[e * per_line], per_line,
                                       integer_field, weights, nvtxs, &row, &col, &weight, &at,
                                       &len);
        printf("%d %d %d %lld %lld %lld\n", status, row, col, weight, at, len);
    }
    return 0;
}
