// The gated FFN, written once over the op interface (backend/compute.h):
// every dense FFN of the engine (a layer on any backend, a mixture's experts
// and shared expert, calibration's recording pass) runs this sequence.
#include "backend/compute.h"

#include "common/error.h"

namespace powerinfer::backend {

void Compute::gated_ffn(std::span<const GatedFfnWeights> ffns, const float* x, int64_t rows,
                        std::span<float* const> outs, FfnTap* tap) {
    if (ffns.empty() || rows <= 0) return;
    if (outs.size() != ffns.size()) throw EngineError("gated_ffn: one output per FFN");
    if (tap && !host_memory()) throw EngineError("gated_ffn: a tap needs a host backend");
    int64_t floats = 0;
    for (const GatedFfnWeights& w : ffns) floats += rows * w.gate.rows;
    const FfnBuffers buf = ffn_buffers(floats);
    ffn_hs_.clear();
    ffn_us_.clear();
    ffn_xs_.clear();
    ffn_downs_.clear();
    int64_t at = 0;
    for (const GatedFfnWeights& w : ffns) {
        ffn_hs_.push_back(buf.h + at);
        ffn_us_.push_back(buf.up + at);
        ffn_xs_.push_back(buf.h + at);
        ffn_downs_.push_back(w.down);
        at += rows * w.gate.rows;
    }
    gated_products(ffns, x, rows, ffn_hs_, ffn_us_);
    if (tap)
        for (size_t k = 0; k < ffns.size(); ++k)
            tap->hidden(static_cast<int64_t>(k), x, rows, ffn_us_[k], ffn_hs_[k]);
    matmul_each(ffn_downs_, ffn_xs_, rows, outs);
}

}  // namespace powerinfer::backend
