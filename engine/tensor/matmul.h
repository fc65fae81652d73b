// Products over quantized weight matrices, parallel over a ThreadPool.
// A weight matrix is stored as in GGUF: `rows` rows of `cols` elements, each
// row `row_bytes` long (so y = W x has `rows` outputs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/ggml_types.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

namespace powerinfer::tensor {

struct WeightView {
    GgmlType type = GgmlType::F32;
    const uint8_t* data = nullptr;
    int64_t rows = 0;
    int64_t cols = 0;
    size_t row_bytes = 0;
    // The same matrix in row-panel layout (tensor/panels.h), or null. The
    // products use it where the active kernels have a panel form; the bits
    // are the same either way, so it is only ever a speed choice.
    const uint8_t* panels = nullptr;
    const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
    size_t bytes() const { return static_cast<size_t>(rows) * row_bytes; }
    // Rows [r0, r1); keeps the panels when the slice starts and ends on a
    // panel boundary (every kPanelRows rows).
    WeightView slice(int64_t r0, int64_t r1) const;
};

// y[rows] = W x[cols]
void matvec(ThreadPool& pool, const WeightView& w, const float* x, float* y);
// Same, with activations already quantized (reuse across several matrices).
void matvec_q(ThreadPool& pool, const WeightView& w, const QuantizedVector& xq, float* y);
// Y[n][rows] = X[n][cols] * W^T for a small batch (prefill).
void matmul(ThreadPool& pool, const WeightView& w, const float* X, int64_t n, float* Y);
// ys[k][n][ws[k].rows] = X[n][cols] * ws[k]^T for matrices that take the same
// activations (q/k/v, gate/up of a batched step): X is quantized once and all
// products run in one pool dispatch. The same bits as matmul per matrix.
void matmul_fused(ThreadPool& pool, std::span<const WeightView> ws, const float* X, int64_t n,
                  std::span<float* const> ys);
// The same over tokens already quantized (xq: n rows of `stride` bytes in
// the matrices' activation format), one pool dispatch.
void matmul_fused_q(ThreadPool& pool, std::span<const WeightView> ws, const uint8_t* xq,
                    size_t stride, int64_t n, std::span<float* const> ys);
// Y[t * y_stride + r] = W.row(r) . token t of xq for every row of w and
// t < n: matmul's bits (matvec's at n = 1). xq holds n tokens every `stride`
// bytes in w's activation format (quantize_activation_rows). Nested in a
// pool job it runs on the calling thread.
void matmul_q(ThreadPool& pool, const WeightView& w, const uint8_t* xq, size_t stride, int64_t n,
              float* Y, size_t y_stride);
// n tokens of X (cols each) quantized for products with weight_type's
// matrices, one every `stride` bytes of xq (at least the format's row bytes).
void quantize_activation_rows(ThreadPool& pool, GgmlType weight_type, const float* X, int64_t cols,
                              int64_t n, size_t stride, uint8_t* xq);
// Whether these matrices take the same activations (format and length).
bool can_fuse(std::span<const WeightView> ws);

// Row-sparse product: y[i] = W.row(idx[i]) . x for i < count.
void matvec_rows(ThreadPool& pool, const WeightView& w, const QuantizedVector& xq,
                 const int32_t* idx, int64_t count, float* y);
// Column-sparse accumulate over a neuron-major matrix (row r = the down
// projection's column for neuron r): y[cols] += sum_i a[i] * W.row(idx[i]).
// Deterministic: each worker owns a slice of y.
void axpy_rows(ThreadPool& pool, const WeightView& w, const int32_t* idx, const float* a,
               int64_t count, float* y);

}  // namespace powerinfer::tensor
