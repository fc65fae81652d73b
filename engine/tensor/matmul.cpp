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

void matmul(ThreadPool& pool, const WeightView& w, const float* X, int64_t n, float* Y) {
    check_view(w);
    if (n <= 0) return;
    if (n == 1) return matvec(pool, w, X, Y);
    const kernels::TypeKernels& k = kernels_for(w);
    const GgmlType act = vec_dot_type(w.type);
    const size_t stride = *ggml_row_bytes(act, static_cast<uint64_t>(w.cols));

    // Quantize every token once, in parallel over tokens.
    thread_local std::vector<uint8_t> xq;
    xq.resize(stride * static_cast<size_t>(n));
    uint8_t* xq_data = xq.data();
    pool.parallel_for(n, [&](int64_t begin, int64_t end, int) {
        QuantizedVector one;
        for (int64_t t = begin; t < end; ++t) {
            quantize_activations(w.type, X + t * w.cols, w.cols, one);
            std::copy(one.data.begin(), one.data.end(), xq_data + static_cast<size_t>(t) * stride);
        }
    });

    if (const kernels::DotPanelFn f = panel_kernel(w, k))
        return panel_product(pool, f, w, xq_data, stride, n, Y, static_cast<size_t>(w.rows));

    // Each worker owns a contiguous range of rows (outputs), cut into slices
    // that stay in L2 while every token tile passes over them; the kernel
    // decodes each weight block once per few tokens.
    const size_t slice_rows = std::max<size_t>(16, kSliceBytes / w.row_bytes);
    pool.parallel_for(
        w.rows,
        [&](int64_t begin, int64_t end, int) {
            for (int64_t r0 = begin; r0 < end; r0 += static_cast<int64_t>(slice_rows)) {
                const int64_t r1 = std::min(end, r0 + static_cast<int64_t>(slice_rows));
                for (int64_t t0 = 0; t0 < n; t0 += kTokenTile) {
                    const int64_t count = std::min(kTokenTile, n - t0);
                    // Whole tiles of kTileTokens through the tile kernel; the
                    // last 1-3 tokens through the row kernel, which is faster
                    // one token at a time (the same bits: both are the
                    // single-row dot's sums in its order).
                    const int64_t tiled = count - count % kTileTokens;
                    if (tiled > 0)
                        k.dot_tile(w.cols, w.row(r0), w.row_bytes, r1 - r0,
                                   xq_data + static_cast<size_t>(t0) * stride, stride, tiled,
                                   Y + t0 * w.rows + r0, static_cast<size_t>(w.rows));
                    for (int64_t t = t0 + tiled; t < t0 + count; ++t)
                        k.dot_rows(w.cols, w.row(r0), w.row_bytes, r1 - r0,
                                   xq_data + static_cast<size_t>(t) * stride, Y + t * w.rows + r0);
                }
            }
        },
        16);
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
