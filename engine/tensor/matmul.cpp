#include "tensor/matmul.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "tensor/kernels.h"
#include "tensor/panels.h"

namespace powerinfer::tensor {

namespace {

// Below this many weight bytes a product runs on the calling thread: waking
// the workers would cost more than it saves.
constexpr size_t kMinParallelBytes = 64 * 1024;
// Tokens per matmul tile: their quantized activations (~4.5 KB per 4096
// columns) stay in L2 while the weight rows stream past.
constexpr int64_t kTokenTile = 64;
constexpr int64_t kTileTokens = 4;  // tokens per tile of the SIMD dot_tile kernels
// From this many tokens on, rewriting a slice as Q8_0 (kernels.h, to_q8_0)
// costs less than the decoding it saves.
constexpr int64_t kTranscodeTokens = 8;
// Weight rows per matmul slice: they stay in L2 while the tokens pass.
constexpr size_t kSliceBytes = 256 * 1024;

const kernels::TypeKernels& kernels_for(const WeightView& w) {
    const int i = kernels::type_index(w.type);
    if (i < 0)
        throw EngineError("tensor type " + std::string(ggml_type_name(w.type)) +
                          " is not supported by the CPU kernels");
    return kernels::active_table().types[i];
}

void check_view(const WeightView& w) {
    const auto bytes = ggml_row_bytes(w.type, static_cast<uint64_t>(w.cols));
    if (!w.data || w.rows < 0 || w.cols <= 0 || !bytes || *bytes != w.row_bytes)
        throw EngineError("weight view is inconsistent (" + std::to_string(w.rows) + " x " +
                          std::to_string(w.cols) + " " + std::string(ggml_type_name(w.type)) +
                          ", " + std::to_string(w.row_bytes) + " bytes per row)");
}

void check_indices(const WeightView& w, const int32_t* idx, int64_t count) {
    for (int64_t i = 0; i < count; ++i)
        if (idx[i] < 0 || idx[i] >= w.rows)
            throw EngineError("row index " + std::to_string(idx[i]) + " is outside the " +
                              std::to_string(w.rows) + "-row matrix");
}

// Gathered rows defeat the hardware prefetcher (each row is a separate short
// stream), so ask for the rows a few iterations ahead.
constexpr int64_t kPrefetchAhead = 4;
inline void prefetch(const uint8_t* p, size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, 3);
#else
    (void)p;
    (void)bytes;
#endif
}

bool worth_parallel(const ThreadPool& pool, size_t bytes) {
    return pool.size() > 1 && bytes >= kMinParallelBytes;
}

// The panel kernel when the matrix has panels and the active level a panel
// form; null otherwise.
kernels::DotPanelFn panel_kernel(const WeightView& w, const kernels::TypeKernels& k) {
    return w.panels ? k.dot_panel : nullptr;
}

// Y[t * y_stride + r] for every row, over the workers by whole panels.
void panel_product(ThreadPool& pool, kernels::DotPanelFn f, const WeightView& w, const void* x,
                   size_t x_stride, int64_t n, float* Y, size_t y_stride) {
    const size_t panel_bytes = static_cast<size_t>(kPanelRows) * w.row_bytes;
    auto panels = [&](int64_t begin, int64_t end, int) {
        f(w.cols, w.panels + static_cast<size_t>(begin) * panel_bytes, end - begin, x, x_stride, n,
          Y + begin * kPanelRows, y_stride);
    };
    const int64_t n_panels = w.rows / kPanelRows;
    if (!worth_parallel(pool, w.row_bytes * static_cast<size_t>(w.rows)))
        return panels(0, n_panels, 0);
    pool.parallel_for(n_panels, panels, 1);
}

}  // namespace

WeightView WeightView::slice(int64_t r0, int64_t r1) const {
    WeightView s = *this;
    s.data = row(r0);
    s.rows = r1 - r0;
    // A matrix has panels only when its rows are a multiple of kPanelRows.
    const bool aligned = r0 % kPanelRows == 0 && r1 % kPanelRows == 0;
    s.panels = panels && aligned ? panels + static_cast<size_t>(r0) * row_bytes : nullptr;
    return s;
}

void matvec(ThreadPool& pool, const WeightView& w, const float* x, float* y) {
    // Per calling thread, so that concurrent callers do not share it.
    thread_local QuantizedVector xq;
    quantize_activations(w.type, x, w.cols, xq);
    matvec_q(pool, w, xq, y);
}

void matvec_q(ThreadPool& pool, const WeightView& w, const QuantizedVector& xq, float* y) {
    check_view(w);
    if (xq.type != vec_dot_type(w.type) || xq.n != w.cols)
        throw EngineError("activations do not match the weight matrix (type or length)");
    const kernels::TypeKernels& k = kernels_for(w);
    const void* x = xq.data.data();
    if (const kernels::DotPanelFn f = panel_kernel(w, k))
        return panel_product(pool, f, w, x, 0, 1, y, 0);
    const kernels::DotRowsFn dot_rows = k.dot_rows;
    auto rows = [&](int64_t begin, int64_t end, int) {
        dot_rows(w.cols, w.row(begin), w.row_bytes, end - begin, x, y + begin);
    };
    if (!worth_parallel(pool, w.row_bytes * static_cast<size_t>(w.rows))) {
        if (w.rows > 0) rows(0, w.rows, 0);
        return;
    }
    pool.parallel_for(w.rows, rows, 16);
}

namespace {

// Quantizes n tokens of X into xq (one activation row every `stride` bytes),
// on the calling thread when it is cheaper than waking the workers.
void quantize_tokens(ThreadPool& pool, GgmlType weight_type, const float* X, int64_t cols,
                     int64_t n, size_t stride, uint8_t* xq) {
    auto tokens = [&](int64_t begin, int64_t end, int) {
        QuantizedVector one;
        for (int64_t t = begin; t < end; ++t) {
            quantize_activations(weight_type, X + t * cols, cols, one);
            std::copy(one.data.begin(), one.data.end(), xq + static_cast<size_t>(t) * stride);
        }
    };
    // A few decode steps' tokens take a microsecond or two to quantize.
    constexpr int64_t kSerialElements = 16 * 1024;
    if (pool.size() == 1 || n * cols <= kSerialElements) return tokens(0, n, 0);
    pool.parallel_for(n, tokens);
}

// Y[t * y_stride + r] = W.row(r) . token t of the quantized tokens xq, for
// every row of w; nested in a pool job it runs on the calling thread.
void product_q(ThreadPool& pool, const WeightView& w, const uint8_t* xq, size_t stride, int64_t n,
               float* Y, size_t y_stride) {
    const kernels::TypeKernels& k = kernels_for(w);
    if (const kernels::DotPanelFn f = panel_kernel(w, k))
        return panel_product(pool, f, w, xq, stride, n, Y, y_stride);

    const bool tail_tiles = w.type == GgmlType::Q4_K || w.type == GgmlType::Q6_K;
    // A prompt's Q4_0 and Q5_0 slices are rewritten as Q8_0 once per call
    // and multiplied by Q8_0's kernels (the same bits, kernels.h): the tiles
    // then stop decoding nibbles and fifth bits once per four tokens.
    const kernels::TypeKernels& kq8 = kernels::active_table().types[kernels::kQ8_0];
    const bool as_q8 = k.to_q8_0 && n >= kTranscodeTokens;
    const size_t q8_row_bytes =
        as_q8 ? *ggml_row_bytes(GgmlType::Q8_0, static_cast<uint64_t>(w.cols)) : 0;
    const kernels::TypeKernels& kk = as_q8 ? kq8 : k;
    const kernels::DotTileFn tile = as_q8 && k.dot_tile_q8 ? k.dot_tile_q8 : kk.dot_tile;
    const size_t rb = as_q8 ? q8_row_bytes : w.row_bytes;
    // Each worker owns a contiguous range of rows (outputs), cut into slices
    // that stay in L2 while every token tile passes over them; the kernel
    // decodes each weight block once per few tokens.
    const size_t slice_rows = std::max<size_t>(16, kSliceBytes / rb);
    const auto rows = [&](int64_t begin, int64_t end, int) {
            thread_local std::vector<uint8_t> q8;
            for (int64_t r0 = begin; r0 < end; r0 += static_cast<int64_t>(slice_rows)) {
                const int64_t r1 = std::min(end, r0 + static_cast<int64_t>(slice_rows));
                const uint8_t* wr = w.row(r0);
                if (as_q8) {
                    q8.resize(static_cast<size_t>(r1 - r0) * q8_row_bytes);
                    k.to_q8_0(wr, q8.data(), (r1 - r0) * w.cols);
                    wr = q8.data();
                }
                for (int64_t t0 = 0; t0 < n; t0 += kTokenTile) {
                    const int64_t count = std::min(kTokenTile, n - t0);
                    // Whole tiles of kTileTokens through the tile kernel; the
                    // last 1-3 tokens through the row kernel, which is faster
                    // one token at a time (the same bits: both are the
                    // single-row dot's sums in its order). The K-quant tiles
                    // take 2-3 tokens faster than the row kernel does (a
                    // prefill's experts often get no more).
                    const int64_t rest = count % kTileTokens;
                    const int64_t tiled = tail_tiles && rest >= 2 ? count : count - rest;
                    if (tiled > 0)
                        tile(w.cols, wr, rb, r1 - r0, xq + static_cast<size_t>(t0) * stride,
                                    stride, tiled, Y + static_cast<size_t>(t0) * y_stride + r0,
                                    y_stride);
                    for (int64_t t = t0 + tiled; t < t0 + count; ++t)
                        kk.dot_rows(w.cols, wr, rb, r1 - r0, xq + static_cast<size_t>(t) * stride,
                                    Y + static_cast<size_t>(t) * y_stride + r0);
                }
            }
    };
    if (!worth_parallel(pool, w.row_bytes * static_cast<size_t>(w.rows * n))) {
        if (w.rows > 0) rows(0, w.rows, 0);
        return;
    }
    pool.parallel_for(w.rows, rows, 16);
}

}  // namespace

void matmul_q(ThreadPool& pool, const WeightView& w, const uint8_t* xq, size_t stride, int64_t n,
              float* Y, size_t y_stride) {
    check_view(w);
    if (n > 0) product_q(pool, w, xq, stride, n, Y, y_stride);
}

void quantize_activation_rows(ThreadPool& pool, GgmlType weight_type, const float* X, int64_t cols,
                              int64_t n, size_t stride, uint8_t* xq) {
    quantize_tokens(pool, weight_type, X, cols, n, stride, xq);
}

void matmul(ThreadPool& pool, const WeightView& w, const float* X, int64_t n, float* Y) {
    check_view(w);
    if (n <= 0) return;
    if (n == 1) return matvec(pool, w, X, Y);
    const size_t stride = *ggml_row_bytes(vec_dot_type(w.type), static_cast<uint64_t>(w.cols));
    thread_local std::vector<uint8_t> xq;
    xq.resize(stride * static_cast<size_t>(n));
    quantize_tokens(pool, w.type, X, w.cols, n, stride, xq.data());
    product_q(pool, w, xq.data(), stride, n, Y, static_cast<size_t>(w.rows));
}

void matmul_fused(ThreadPool& pool, std::span<const WeightView> ws, const float* X, int64_t n,
                  std::span<float* const> ys) {
    if (n <= 0 || ws.empty()) return;
    if (!can_fuse(ws)) throw EngineError("fused products need one activation format and length");
    const int64_t cols = ws[0].cols;
    const size_t stride = *ggml_row_bytes(vec_dot_type(ws[0].type), static_cast<uint64_t>(cols));
    thread_local std::vector<uint8_t> xq;
    xq.resize(stride * static_cast<size_t>(n));
    quantize_tokens(pool, ws[0].type, X, cols, n, stride, xq.data());
    matmul_fused_q(pool, ws, xq.data(), stride, n, ys);
}

bool can_fuse(std::span<const WeightView> ws) {
    for (const auto& w : ws)
        if (w.cols != ws[0].cols || vec_dot_type(w.type) != vec_dot_type(ws[0].type)) return false;
    return true;
}

void matmul_fused_q(ThreadPool& pool, std::span<const WeightView> ws, const uint8_t* xq,
                    size_t stride, int64_t n, std::span<float* const> ys) {
    int64_t total = 0;
    size_t bytes = 0;
    for (const WeightView& w : ws) {
        check_view(w);
        total += w.rows;
        bytes += w.row_bytes * static_cast<size_t>(w.rows);
    }
    // Each worker takes a contiguous range of the concatenated rows and runs
    // its slice of every matrix it overlaps (whole panels when the matrices'
    // rows are multiples of kPanelRows, as the grain keeps the cuts there);
    // nested in the job, the products run on the worker's thread.
    auto rows = [&](int64_t begin, int64_t end, int) {
        int64_t base = 0;
        for (size_t k = 0; k < ws.size(); ++k) {
            const WeightView& w = ws[k];
            const int64_t r0 = std::max(begin, base) - base;
            const int64_t r1 = std::min(end, base + w.rows) - base;
            base += w.rows;
            if (r0 < r1)
                product_q(pool, w.slice(r0, r1), xq, stride, n, ys[k] + r0,
                          static_cast<size_t>(w.rows));
        }
    };
    if (!worth_parallel(pool, bytes)) return rows(0, total, 0);
    pool.parallel_for(total, rows, kPanelRows);
}

void matvec_rows(ThreadPool& pool, const WeightView& w, const QuantizedVector& xq,
                 const int32_t* idx, int64_t count, float* y) {
    check_view(w);
    if (xq.type != vec_dot_type(w.type) || xq.n != w.cols)
        throw EngineError("activations do not match the weight matrix (type or length)");
    if (count <= 0) return;
    check_indices(w, idx, count);
    const kernels::DotGatherFn gather = kernels_for(w).dot_gather;
    const void* x = xq.data.data();
    auto rows = [&](int64_t begin, int64_t end, int) {
        gather(w.cols, w.data, w.row_bytes, idx + begin, end - begin, x, y + begin);
    };
    if (!worth_parallel(pool, w.row_bytes * static_cast<size_t>(count))) return rows(0, count, 0);
    pool.parallel_for(count, rows, 16);
}

void axpy_rows(ThreadPool& pool, const WeightView& w, const int32_t* idx, const float* a,
               int64_t count, float* y) {
    check_view(w);
    if (count <= 0) return;
    check_indices(w, idx, count);
    const kernels::AxpyFn axpy = kernels_for(w).axpy;
    const auto traits = ggml_traits(w.type);
    const int64_t block = traits.block_elems;
    // Slices of y start on block boundaries and, for float types, on
    // 16-element (cache line) boundaries.
    const int64_t grain = block > 16 ? block : 16;
    auto cols = [&](int64_t begin, int64_t end, int) {
        const size_t offset = static_cast<size_t>(begin / block) * traits.block_bytes;
        const size_t slice_bytes =
            static_cast<size_t>((end - begin + block - 1) / block) * traits.block_bytes;
        for (int64_t i = 0; i < count; ++i) {
            if (i + 2 * kPrefetchAhead < count)
                prefetch(w.row(idx[i + 2 * kPrefetchAhead]) + offset, slice_bytes);
            axpy(end - begin, w.row(idx[i]) + offset, a[i], y + begin);
        }
    };
    if (!worth_parallel(pool, w.row_bytes * static_cast<size_t>(count))) return cols(0, w.cols, 0);
    pool.parallel_for(w.cols, cols, grain);
}

}  // namespace powerinfer::tensor
