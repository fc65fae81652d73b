// The exact (dense) gated feed-forward block on the host backend:
// out = W_down (act(W_gate x) * W_up x). The reference the sparse executor is
// measured against; the op itself is the backend's (backend/compute.h).
#pragma once

#include <vector>

#include "backend/compute.h"
#include "model/ffn_executor.h"

namespace powerinfer::model {

class DenseFfn final : public FfnExecutor {
public:
    // `layers` holds every layer's weights; the backend must outlive this.
    DenseFfn(backend::Compute& compute, std::vector<FfnWeights> layers)
        : compute_(compute), layers_(std::move(layers)) {}

    void run(int layer, const float* x, int64_t n_tokens, float* out) override {
        compute_.gated_ffn(layers_.at(static_cast<size_t>(layer)), x, n_tokens, out);
    }

    // Its views of the matrix whose rows start at `data` forget their panels
    // (Model::drop_panels).
    void forget_panels(const uint8_t* data) {
        for (FfnWeights& f : layers_)
            for (tensor::WeightView* w : {&f.gate, &f.up, &f.down})
                if (w->data == data && w->panels) w->panels = nullptr;
    }

private:
    backend::Compute& compute_;
    std::vector<FfnWeights> layers_;
};

}  // namespace powerinfer::model
