#include "backend/neuron_ffn.h"

#include <algorithm>
#include <numeric>

namespace powerinfer::backend {

void NeuronFfn::run(tensor::ThreadPool& pool, const NeuronFfnWeights& w, const float* x,
                    const int32_t* ids, int64_t count, float* y) {
    std::fill(y, y + w.down_t.cols, 0.0f);
    if (count <= 0) return;
    tensor::quantize_activations(w.gate.type, x, w.gate.cols, xq_gate_);
    const bool same = tensor::vec_dot_type(w.up.type) == tensor::vec_dot_type(w.gate.type);
    if (!same) tensor::quantize_activations(w.up.type, x, w.up.cols, xq_up_);
    hidden(pool, w, xq_gate_, same ? xq_gate_ : xq_up_, ids, 0, count, nullptr);
    tensor::axpy_rows(pool, w.down_t, ids_.data(), h_.data(), active_, y);
}

void NeuronFfn::hidden(tensor::ThreadPool& pool, const NeuronFfnWeights& w,
                       const tensor::QuantizedVector& xq_gate,
                       const tensor::QuantizedVector& xq_up, const int32_t* ids, int64_t first,
                       int64_t count, const NeuronSelect* select) {
    const size_t n = static_cast<size_t>(count);
    up_rows_ = active_ = 0;
    if (count <= 0) return;
    const bool range = ids == nullptr;
    if (range) {
        set_.resize(n);
        std::iota(set_.begin(), set_.end(), static_cast<int32_t>(first));
        ids = set_.data();
    }
    a_.resize(n);
    u_.resize(n);
    h_.resize(n);
    cand_.resize(n);
    keep_.resize(n);
    ids_.resize(n);
    if (range) {
        tensor::matvec_q(pool, w.gate.slice(first, first + count), xq_gate, a_.data());
    } else {
        tensor::matvec_rows(pool, w.gate, xq_gate, ids, count, a_.data());
    }
    // a = act(g) * 1 (exact), then h = a * u below: the fused kernel's bits.
    ones_.resize(n, 1.0f);
    gate_activation(w.activation, a_.data(), ones_.data(), a_.data(), count);
    // The up rows needed, as positions into the set.
    int64_t nc = count;
    if (select) nc = select->need_up(ids, a_.data(), count, keep_.data());
    if (!select || (range && up_rows_all(nc, count))) {
        // All rows (over a range, when most are needed).
        std::iota(keep_.begin(), keep_.begin() + count, 0);
        nc = count;
        if (range) {
            tensor::matvec_q(pool, w.up.slice(first, first + count), xq_up, u_.data());
        } else {
            tensor::matvec_rows(pool, w.up, xq_up, ids, count, u_.data());
        }
    } else {
        for (int64_t k = 0; k < nc; ++k)
            cand_[static_cast<size_t>(k)] = ids[keep_[static_cast<size_t>(k)]];
        tensor::matvec_rows(pool, w.up, xq_up, cand_.data(), nc, u_.data());
    }
    up_rows_ = nc;
    for (int64_t k = 0; k < nc; ++k) {
        const int32_t p = keep_[static_cast<size_t>(k)];
        ids_[static_cast<size_t>(k)] = ids[p];
        h_[static_cast<size_t>(k)] = a_[static_cast<size_t>(p)] * u_[static_cast<size_t>(k)];
    }
    if (!select) {
        active_ = nc;
        return;
    }
    // The active ones, compacted in place (positions only move down).
    const int64_t na = select->active(ids_.data(), h_.data(), nc, keep_.data());
    for (int64_t k = 0; k < na; ++k) {
        const int32_t p = keep_[static_cast<size_t>(k)];
        ids_[static_cast<size_t>(k)] = ids_[static_cast<size_t>(p)];
        h_[static_cast<size_t>(k)] = h_[static_cast<size_t>(p)];
    }
    active_ = na;
}

}  // namespace powerinfer::backend
