#include "tensor/fused_matvec.h"

#include <algorithm>

namespace powerinfer::tensor {

bool can_fuse(std::span<const WeightView> ws) {
    for (const auto& w : ws)
        if (w.cols != ws[0].cols ||
            vec_dot_type(w.type) != vec_dot_type(ws[0].type))
            return false;
    return true;
}

void matvec_fused(ThreadPool& pool, std::span<const WeightView> ws,
                  std::span<float* const> ys, const QuantizedVector& xq) {
    struct Job {
        std::span<const WeightView> ws;
        std::span<float* const> ys;
        const QuantizedVector* xq;
        ThreadPool* pool;
    } job{ws, ys, &xq, &pool};
    int64_t total = 0;
    size_t bytes = 0;
    for (const auto& w : ws) {
        total += w.rows;
        bytes += w.row_bytes * static_cast<size_t>(w.rows);
    }
    // Each worker takes a contiguous range of the concatenated rows and runs
    // its slice of every matrix it overlaps; nested pool calls run inline.
    const auto rows = [&job](int64_t begin, int64_t end, int) {
        int64_t base = 0;
        for (size_t k = 0; k < job.ws.size(); ++k) {
            const WeightView& w = job.ws[k];
            const int64_t r0 = std::max(begin, base) - base;
            const int64_t r1 = std::min(end, base + w.rows) - base;
            base += w.rows;
            if (r0 >= r1) continue;
            matvec_q(*job.pool, w.slice(r0, r1), *job.xq, job.ys[k] + r0);
        }
    };
    // Waking the workers costs more than a few tens of KB of dots.
    constexpr size_t kMinParallelBytes = 64 * 1024;
    if (bytes < kMinParallelBytes) {
        rows(0, total, 0);
    } else {
        pool.parallel_for(total, rows, 16);
    }
}

}  // namespace powerinfer::model
