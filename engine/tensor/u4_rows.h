// A matrix of 4-bit rows with one float scale and offset per row, for
// products that only need to be close (the sparse head's preview,
// sparse/sparse_head.h), not any model format's bits:
//   A[i][k] ~= m[i] + d[i] * u[i][k],  u in 0..15,
// and an int8 input with one scale for the whole vector, x[k] ~= s * xq[k]:
//   (A x)[i] ~= s * (d[i] * sum_k u[i][k] xq[k] + m[i] * sum_k xq[k]).
// The integer sum is exact, so every SIMD level gives the same bits. The
// row's nibbles come in chunks of 64 columns, 32 bytes: byte j of chunk c
// holds column 64c + j in its low nibble and 64c + 32 + j in its high one.
// Against a Q8_0 matrix of the same shape it reads 0.47x the bytes and
// needs no per-block float step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/weight_memory.h"

namespace powerinfer::tensor {

constexpr int64_t kU4Chunk = 64;

struct U4Rows {
    int64_t rows = 0;
    int64_t cols = 0;        // a multiple of kU4Chunk (padded with zero columns)
    WeightVector<uint8_t> q;  // rows of cols / 2 bytes
    std::vector<float> d, m;
    size_t row_bytes() const { return static_cast<size_t>(cols / 2); }
    size_t bytes() const { return q.size() + (d.size() + m.size()) * sizeof(float); }
};

// Columns rounded up to whole chunks.
inline int64_t u4_padded_cols(int64_t cols) { return (cols + kU4Chunk - 1) / kU4Chunk * kU4Chunk; }

// A zero matrix of rows x u4_padded_cols(cols).
U4Rows make_u4_rows(int64_t rows, int64_t cols);
// Quantizes row i from a[n] (n <= the padded width; the rest are zeros):
// m = min, d = (max - min) / 15, u = the nearest level.
void set_u4_row(U4Rows& w, int64_t i, const float* a, int64_t n);

// An input vector for it: xq = round(x / s), s = max |x| / 127.
struct U4Input {
    std::vector<int8_t> q;  // the padded width, zeros beyond n
    float scale = 0, qsum = 0;
};
void quantize_u4_input(const float* x, int64_t n, int64_t padded_cols, U4Input& in);

// out[i - row_begin] for rows [row_begin, row_end), on the calling thread.
void u4_rows_product(const U4Rows& w, const U4Input& x, int64_t row_begin, int64_t row_end,
                     float* out);
// The scalar reference (the same integer sums and float steps).
void u4_rows_product_ref(const U4Rows& w, const U4Input& x, int64_t row_begin, int64_t row_end,
                         float* out);

}  // namespace powerinfer::tensor
