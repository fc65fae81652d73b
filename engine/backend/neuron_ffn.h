// The gated FFN over a subset of its neurons: the sparse executors' form of
// the one FFN operation (Compute::gated_ffn is the whole-layer form).
//
//   y = sum over i < count of h_i * down[:, ids[i]],
//   h_i = act(gate row ids[i] . x) * (up row ids[i] . x),
//
// with the down matrix given neuron-major (row j = W_down's column j, e.g.
// a sparse executor's copy or a device's neuron slab). Rows of the gate and
// up products are computed only for the listed neurons; the neurons are
// summed in the given order, each worker owning a slice of y, so y depends
// neither on the thread count nor on timing. Used for the CPU part of the
// hybrid executor (its cold neurons) and for the hot part of the CPU
// device that stands in for a GPU.
#pragma once

#include <cstdint>
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
    tensor::WeightView down_t;  // neuron-major down: a row of n_embd per neuron
    GateActivation activation = GateActivation::SiLU;
};

class NeuronFfn {
public:
    // y[n_embd] = the FFN of x over neurons ids[0..count) (overwritten; zero
    // when count is 0). Grows its buffers once; not thread-safe.
    void run(tensor::ThreadPool& pool, const NeuronFfnWeights& w, const float* x,
             const int32_t* ids, int64_t count, float* y);

private:
    tensor::QuantizedVector xq_gate_, xq_up_;
    std::vector<float> h_, u_;
};

}  // namespace powerinfer::backend
