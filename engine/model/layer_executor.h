// The seam for whole-layer offload (llama.cpp's -ngl): the model hands the
// residual stream to a LayerExecutor for its first n_layers() layers and runs
// the rest itself. The CUDA implementation lives in kernels/; the model
// never depends on it.
#pragma once

#include <cstdint>

namespace powerinfer::model {

class LayerExecutor {
public:
    virtual ~LayerExecutor() = default;
    // Layers [0, n_layers()) run here (attention with its own KV cache, and
    // the dense FFN).
    virtual int n_layers() const = 0;
    // True when the output norm and head run here too (only when every layer
    // does).
    virtual bool runs_output() const = 0;
    // x[n][n_embd] (host): the token embeddings in, the residual stream after
    // layer n_layers() - 1 out, for tokens at positions n_past..n_past+n-1.
    // Throws EngineError when the device fails.
    virtual void run_layers(float* x, int64_t n, int64_t n_past) = 0;
    // logits[n][n_vocab] = head(rms_norm(x[i], output_norm)) for n rows of
    // the final residual stream (host memory).
    virtual void run_output(const float* x, int64_t n, float* logits) = 0;
};

}  // namespace powerinfer::model
