// The exact (dense) SwiGLU feed-forward block: out = W_down (silu(W_gate x) * W_up x).
// The reference the sparse executor is measured against.
#pragma once

#include <vector>

#include "model/ffn_executor.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

namespace powerinfer::model {

class DenseFfn final : public FfnExecutor {
public:
    // `layers` holds every layer's weights; the pool must outlive this object.
    DenseFfn(tensor::ThreadPool& pool, std::vector<FfnWeights> layers);

    void run(int layer, const float* x, int64_t n_tokens, float* out) override;

private:
    tensor::ThreadPool& pool_;
    std::vector<FfnWeights> layers_;
    // Scratch kept between calls so that decoding allocates nothing.
    std::vector<float> gate_, up_;
    tensor::QuantizedVector xq_;
};

}  // namespace powerinfer::model
