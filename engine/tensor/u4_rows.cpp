#include "tensor/u4_rows.h"

#include <algorithm>
#include <cmath>

#include "tensor/kernels.h"

namespace powerinfer::tensor {

U4Rows make_u4_rows(int64_t rows, int64_t cols) {
    U4Rows w;
    w.rows = rows;
    w.cols = u4_padded_cols(cols);
    w.q.assign(static_cast<size_t>(rows) * w.row_bytes(), 0);
    w.d.assign(static_cast<size_t>(rows), 0.0f);
    w.m.assign(static_cast<size_t>(rows), 0.0f);
    return w;
}

void set_u4_row(U4Rows& w, int64_t i, const float* a, int64_t n) {
    // The padding columns meet zeros in the input: any level serves them.
    // (Least-squares rounds on the offset and step, tried, left the sparse
    // head's KL where this is.)
    float lo = a[0], hi = a[0];
    for (int64_t k = 0; k < n; ++k) {
        lo = std::min(lo, a[k]);
        hi = std::max(hi, a[k]);
    }
    const float d = (hi - lo) / 15.0f, inv = d > 0 ? 1.0f / d : 0.0f;
    w.d[static_cast<size_t>(i)] = d;
    w.m[static_cast<size_t>(i)] = lo;
    uint8_t* row = w.q.data() + static_cast<size_t>(i) * w.row_bytes();
    std::fill(row, row + w.row_bytes(), uint8_t{0});
    for (int64_t k = 0; k < n; ++k) {
        const auto u =
            static_cast<uint8_t>(std::clamp<long>(std::lround((a[k] - lo) * inv), 0L, 15L));
        const int64_t c = k / kU4Chunk, j = k % kU4Chunk;
        row[c * 32 + j % 32] |= j < 32 ? u : static_cast<uint8_t>(u << 4);
    }
}

void quantize_u4_input(const float* x, int64_t n, int64_t padded_cols, U4Input& in) {
    float amax = 0;
    for (int64_t k = 0; k < n; ++k) amax = std::max(amax, std::fabs(x[k]));
    in.scale = amax / 127.0f;
    const float inv = amax > 0 ? 127.0f / amax : 0.0f;
    in.q.assign(static_cast<size_t>(padded_cols), 0);
    int32_t sum = 0;
    for (int64_t k = 0; k < n; ++k) {
        const auto v = static_cast<int8_t>(std::clamp<long>(std::lround(x[k] * inv), -127L, 127L));
        in.q[static_cast<size_t>(k)] = v;
        sum += v;
    }
    in.qsum = static_cast<float>(sum);
}

namespace {

kernels::U4RowsArgs args(const U4Rows& w, const U4Input& x, int64_t row_begin) {
    kernels::U4RowsArgs a{};
    a.q = w.q.data() + static_cast<size_t>(row_begin) * w.row_bytes();
    a.row_bytes = w.row_bytes();
    a.d = w.d.data() + row_begin;
    a.m = w.m.data() + row_begin;
    a.cols = w.cols;
    a.x = x.q.data();
    a.xsum = x.qsum;
    a.xscale = x.scale;
    return a;
}

}  // namespace

void u4_rows_product(const U4Rows& w, const U4Input& x, int64_t row_begin, int64_t row_end,
                     float* out) {
    kernels::active_table().u4_rows(args(w, x, row_begin), row_end - row_begin, out);
}

void u4_rows_product_ref(const U4Rows& w, const U4Input& x, int64_t row_begin, int64_t row_end,
                         float* out) {
    kernels::u4_rows_scalar(args(w, x, row_begin), row_end - row_begin, out);
}

}  // namespace powerinfer::tensor

namespace powerinfer::tensor::kernels {

void u4_rows_scalar(const U4RowsArgs& a, int64_t rows, float* out) {
    const float msum = a.xsum;
    for (int64_t i = 0; i < rows; ++i) {
        const uint8_t* row = a.q + static_cast<size_t>(i) * a.row_bytes;
        int32_t dot = 0;
        for (int64_t c = 0; c < a.cols / kU4Chunk; ++c)
            for (int j = 0; j < 32; ++j) {
                const int b = row[c * 32 + j];
                dot += (b & 0x0F) * a.x[c * kU4Chunk + j] + (b >> 4) * a.x[c * kU4Chunk + 32 + j];
            }
        out[i] = std::fma(a.d[i], static_cast<float>(dot), a.m[i] * msum) * a.xscale;
    }
}

}  // namespace powerinfer::tensor::kernels
