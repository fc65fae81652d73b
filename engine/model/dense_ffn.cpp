#include "model/dense_ffn.h"

#include "model/fused_matvec.h"
#include "tensor/matmul.h"
#include "tensor/ops.h"

namespace powerinfer::model {

DenseFfn::DenseFfn(tensor::ThreadPool& pool, std::vector<FfnWeights> layers)
    : pool_(pool), layers_(std::move(layers)) {}

void DenseFfn::run(int layer, const float* x, int64_t n_tokens, float* out) {
    const FfnWeights& w = layers_.at(static_cast<size_t>(layer));
    const int64_t n_ff = w.gate.rows;
    const size_t need = static_cast<size_t>(n_tokens * n_ff);
    if (gate_.size() < need) {
        gate_.resize(need);
        up_.resize(need);
    }
    if (n_tokens == 1) {
        // Quantize the input once for both gate and up.
        tensor::quantize_activations(w.gate.type, x, w.gate.cols, xq_);
        const tensor::WeightView ws[2] = {w.gate, w.up};
        if (can_fuse(ws)) {
            float* const ys[2] = {gate_.data(), up_.data()};
            matvec_fused(pool_, ws, ys, xq_);
        } else {
            tensor::matvec_q(pool_, w.gate, xq_, gate_.data());
            tensor::matvec(pool_, w.up, x, up_.data());
        }
        tensor::swiglu(gate_.data(), up_.data(), gate_.data(), n_ff);
        tensor::matvec(pool_, w.down, gate_.data(), out);
        return;
    }
    tensor::matmul(pool_, w.gate, x, n_tokens, gate_.data());
    tensor::matmul(pool_, w.up, x, n_tokens, up_.data());
    tensor::swiglu(gate_.data(), up_.data(), gate_.data(), n_tokens * n_ff);
    tensor::matmul(pool_, w.down, gate_.data(), n_tokens, out);
}

}  // namespace powerinfer::model
