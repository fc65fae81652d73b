// The gated FFN over a subset of its neurons: the sparse executors' form of
// the one FFN operation (Compute::gated_ffn is the whole-layer form).
//
//   y = sum over the active neurons j of h_j * down[:, j],
//   h_j = act(gate row j . x) * (up row j . x),
//
// with the down matrix given neuron-major (row j = W_down's column j, e.g.
// a sparse executor's copy or a device's neuron slab). Gate and up rows are
// computed only for the neurons given: a list of ids (the hybrid executor's
// cold neurons, a device's hot ones) or a contiguous range (a block of
// sparse engine v2's layer). A NeuronSelect strategy may drop neurons
// between the stages (v2's exact activation sparsity: up rows only where
// the gate leaves a chance, down only where |h| passes the threshold);
// without one every given neuron is active.
//
// The activation is act(gate) * 1 and then times up: the same bits as
// ggml's fused SwiGLU/GeGLU, and over a range (blocks starting on 16-neuron
// boundaries) the dense FFN's bits, since ggml's vector exp covers 16-lane
// blocks and the tail uses expf. The down sum adds the neurons in order,
// each worker owning a slice of y: results depend neither on the thread
// count nor on timing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/device.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"

namespace powerinfer::tensor {
class ThreadPool;
}

namespace powerinfer::backend {

struct NeuronFfnWeights {
    tensor::WeightView gate;    // n_ff rows of n_embd (or a slab's rows)
    tensor::WeightView up;      // same rows
    tensor::WeightView down_t;  // neuron-major down (run() only): a row of n_embd per neuron
    GateActivation activation = GateActivation::SiLU;
};

// Over a range of `count` neurons of which `needed` need their up row: every
// up row instead, the contiguous product costing less than gathering most of
// them (a gathered row ~1.3x). NeuronFfn::hidden's rule, and the exact
// path's batch that must give its bits.
inline bool up_rows_all(int64_t needed, int64_t count) { return needed * 4 > count * 3; }

// Which neurons go on, decided between the stages. Both calls see neurons
// in order and write the positions (into the arrays given) they keep.
class NeuronSelect {
public:
    virtual ~NeuronSelect() = default;
    // Neurons ids[0..n) with a[k] = act(gate x) of ids[k]: the positions
    // whose up row is needed, into keep; returns how many.
    virtual int64_t need_up(const int32_t* ids, const float* a, int64_t n,
                            int32_t* keep) const = 0;
    // Neurons ids[0..n) with their h[0..n): the positions of the active ones,
    // into keep; returns how many.
    virtual int64_t active(const int32_t* ids, const float* h, int64_t n, int32_t* keep) const = 0;
};

class NeuronFfn {
public:
    // y[n_embd] = the FFN of x over neurons ids[0..count) (overwritten; zero
    // when count is 0), every one active. Quantizes x itself.
    void run(tensor::ThreadPool& pool, const NeuronFfnWeights& w, const float* x,
             const int32_t* ids, int64_t count, float* y);

    // The hidden half: the neurons ids[0..count), or with ids null the range
    // first..first + count, over x quantized for the gate (xq_gate) and the
    // up rows (xq_up, may be the same), optionally narrowed by `select`.
    // Leaves the active neurons, in order, and their h.
    void hidden(tensor::ThreadPool& pool, const NeuronFfnWeights& w,
                const tensor::QuantizedVector& xq_gate, const tensor::QuantizedVector& xq_up,
                const int32_t* ids, int64_t first, int64_t count, const NeuronSelect* select);
    std::span<const int32_t> active_ids() const { return {ids_.data(), static_cast<size_t>(active_)}; }
    std::span<const float> active_h() const { return {h_.data(), static_cast<size_t>(active_)}; }
    int64_t up_rows() const { return up_rows_; }  // up rows computed by the last hidden()

private:
    tensor::QuantizedVector xq_gate_, xq_up_;
    std::vector<int32_t> set_, cand_, keep_, ids_;
    std::vector<float> a_, u_, h_, ones_;
    int64_t up_rows_ = 0, active_ = 0;
};

}  // namespace powerinfer::backend
