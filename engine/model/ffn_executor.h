// The seam between the model graph and the sparse subsystem: the graph calls
// an FfnExecutor for every layer's feed-forward block. DenseFfn (model/) is
// the exact reference; the hybrid sparse executor (sparse/) implements the
// same interface, so the graph never depends on sparse/.
#pragma once

#include <cstdint>

#include "backend/compute.h"

namespace powerinfer::model {

// One layer's gated FFN weights as stored in the GGUF (row-major, ggml order):
// gate/up: n_ff rows of n_embd; down: n_embd rows of n_ff.
using FfnWeights = backend::GatedFfnWeights;

class FfnExecutor {
public:
    virtual ~FfnExecutor() = default;
    // out[n_tokens][n_embd] = FFN(x[n_tokens][n_embd]) for layer `layer`;
    // x is the RMS-normalised FFN input. n_tokens > 1 during prefill.
    virtual void run(int layer, const float* x, int64_t n_tokens, float* out) = 0;
    // Called once per generated/evaluated token after all layers ran (metrics,
    // cache windows).
    virtual void end_token() {}
    // The host backend's one-token products go through this hook while the
    // executor is the model's (sparse engine v3's input sparsity); null: none.
    virtual backend::MatvecHook* matvec_hook() { return nullptr; }
};

}  // namespace powerinfer::model
