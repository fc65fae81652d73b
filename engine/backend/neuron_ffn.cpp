#include "backend/neuron_ffn.h"

#include <algorithm>

namespace powerinfer::backend {

void NeuronFfn::run(tensor::ThreadPool& pool, const NeuronFfnWeights& w, const float* x,
                    const int32_t* ids, int64_t count, float* y) {
    const int64_t n = w.gate.cols;
    std::fill(y, y + w.down_t.cols, 0.0f);
    if (count <= 0) return;
    tensor::quantize_activations(w.gate.type, x, n, xq_gate_);
    const bool same = tensor::vec_dot_type(w.up.type) == tensor::vec_dot_type(w.gate.type);
    if (!same) tensor::quantize_activations(w.up.type, x, n, xq_up_);
    h_.resize(static_cast<size_t>(count));
    u_.resize(static_cast<size_t>(count));
    tensor::matvec_rows(pool, w.gate, xq_gate_, ids, count, h_.data());
    tensor::matvec_rows(pool, w.up, same ? xq_gate_ : xq_up_, ids, count, u_.data());
    gate_activation(w.activation, h_.data(), u_.data(), h_.data(), count);
    tensor::axpy_rows(pool, w.down_t, ids, h_.data(), count, y);
}

}  // namespace powerinfer::backend
