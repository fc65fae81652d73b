// Products over quantized weight matrices, parallel over a ThreadPool.
// A weight matrix is stored as in GGUF: `rows` rows of `cols` elements, each
// row `row_bytes` long (so y = W x has `rows` outputs).
#pragma once

#include <cstddef>
#include <cstdint>

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
    const uint8_t* row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
};

// y[rows] = W x[cols]
void matvec(ThreadPool& pool, const WeightView& w, const float* x, float* y);
// Same, with activations already quantized (reuse across several matrices).
void matvec_q(ThreadPool& pool, const WeightView& w, const QuantizedVector& xq, float* y);
// Y[n][rows] = X[n][cols] * W^T for a small batch (prefill).
void matmul(ThreadPool& pool, const WeightView& w, const float* X, int64_t n, float* Y);

// Row-sparse product: y[i] = W.row(idx[i]) . x for i < count.
void matvec_rows(ThreadPool& pool, const WeightView& w, const QuantizedVector& xq,
                 const int32_t* idx, int64_t count, float* y);
// Column-sparse accumulate over a neuron-major matrix (row r = the down
// projection's column for neuron r): y[cols] += sum_i a[i] * W.row(idx[i]).
// Deterministic: each worker owns a slice of y.
void axpy_rows(ThreadPool& pool, const WeightView& w, const int32_t* idx, const float* a,
               int64_t count, float* y);

}  // namespace powerinfer::tensor
