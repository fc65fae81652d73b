// The seam for running layers on another device: the model hands the
// residual stream to a LayerExecutor for its first n_layers() layers and runs
// the rest itself. Two kinds exist: whole layers (layer offload, llama.cpp's
// -ngl: attention and the dense FFN on the device) and attention only
// (sparse mode, PowerInfer's placement: the device runs each layer's
// attention half and calls back into the model's FfnExecutor, which keeps the
// hybrid hot/cold FFN). The CUDA implementation lives in kernels/; the model
// never depends on it.
#pragma once

#include <cstdint>

#include "model/ffn_executor.h"

namespace powerinfer::model {

class LayerExecutor {
public:
    virtual ~LayerExecutor() = default;
    // Layers [0, n_layers()) run here (attention with its own KV cache, and
    // the FFN unless runs_ffn() is false).
    virtual int n_layers() const = 0;
    // False for an attention-only executor: per layer it computes the
    // attention block and the FFN input norm, then calls
    // ffn.run(layer, xn, rows, out) with xn in host memory (the same call the
    // model makes for its own layers) and adds out to the residual stream.
    virtual bool runs_ffn() const { return true; }
    // True when the output norm and head run here too (only when every layer
    // does).
    virtual bool runs_output() const = 0;
    // x[n][n_embd] (host): the token embeddings in, the residual stream after
    // layer n_layers() - 1 out, for tokens at positions n_past..n_past+n-1.
    // ffn is the model's FFN executor (used when runs_ffn() is false).
    // Throws EngineError when the device fails.
    virtual void run_layers(float* x, int64_t n, int64_t n_past, FfnExecutor& ffn) = 0;
    // logits[n][n_vocab] = head(rms_norm(x[i], output_norm)) for n rows of
    // the final residual stream (host memory).
    virtual void run_output(const float* x, int64_t n, float* logits) = 0;
};

}  // namespace powerinfer::model
