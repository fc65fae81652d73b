// The llama-family transformer (llama/mistral, qwen2, qwen3) over weights
// bound straight from the mmap'd GGUF (no copies), with an F16 KV cache.
// forward() runs a batch of tokens at consecutive positions: prefill in
// chunks through tensor::matmul, single tokens through matvec. Every layer's
// feed-forward block goes through an FfnExecutor (dense by default), so the
// sparse executor can be installed on a loaded model.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/dense_ffn.h"
#include "model/ffn_executor.h"
#include "model/layer_executor.h"
#include "model/model_config.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

namespace powerinfer::gguf {
class GgufFile;
}

namespace powerinfer::model {

struct LayerWeights {
    const float* attn_norm = nullptr;
    tensor::WeightView q, k, v, o;
    const float* q_bias = nullptr;  // qwen2
    const float* k_bias = nullptr;
    const float* v_bias = nullptr;
    const float* q_norm = nullptr;  // qwen3, per head (head_dim)
    const float* k_norm = nullptr;
    const float* ffn_norm = nullptr;
    FfnWeights ffn;
};

class Model {
public:
    // Binds and validates every tensor (shape and type against the config;
    // a mismatch throws EngineError naming the tensor). n_ctx is capped by
    // the training context. The file and the pool must outlive the model.
    Model(std::shared_ptr<const gguf::GgufFile> file, tensor::ThreadPool& pool, int64_t n_ctx,
          int64_t chunk_size = 256);
    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const ModelConfig& config() const { return cfg_; }
    const gguf::GgufFile& file() const { return *file_; }
    int64_t n_ctx() const { return n_ctx_; }
    tensor::ThreadPool& pool() { return pool_; }

    const LayerWeights& layer(int il) const { return layers_.at(static_cast<size_t>(il)); }
    const FfnWeights& ffn_weights(int il) const { return layer(il).ffn; }
    const tensor::WeightView& token_embedding() const { return tok_embd_; }
    const tensor::WeightView& output() const { return output_; }
    bool tied_output() const { return tied_output_; }

    // Installs the FFN executor every layer calls; nullptr restores the
    // built-in dense one. The executor must outlive its use.
    void set_ffn_executor(FfnExecutor* executor);
    FfnExecutor& ffn_executor() { return *ffn_; }
    DenseFfn& dense_ffn() { return *dense_ffn_; }

    // Installs the executor of the first layers (layer offload, or their
    // attention in sparse mode); nullptr runs every layer here. It must
    // outlive its use. The host KV cache of the layers it takes is released
    // (they keep theirs on the device) and comes back, empty, for layers it
    // no longer takes: re-evaluate the context after changing it.
    void set_layer_executor(LayerExecutor* executor);
    LayerExecutor* layer_executor() const { return layer_exec_; }

    // RoPE cos/sin per position and rotated pair ([n_ctx][n_rot / 2]) and the
    // output norm, for executors that copy them.
    const std::vector<float>& rope_cos() const { return rope_cos_; }
    const std::vector<float>& rope_sin() const { return rope_sin_; }
    const float* output_norm() const { return output_norm_; }

    // Prompt tokens per prefill batch (the `chunk_size` knob), >= 1.
    void set_chunk_size(int64_t chunk_size);
    int64_t chunk_size() const { return chunk_size_; }

    // Evaluates tokens[0..n) at positions n_past..n_past+n-1, writing their
    // keys/values into the cache (positions >= n_past are overwritten). The
    // logits of the last n_logits tokens (0..n) go to logits, row-major
    // [n_logits][n_vocab]. Throws EngineError for out-of-vocabulary tokens
    // or positions beyond n_ctx.
    void forward(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits, float* logits);

    // The residual stream after the last forward() for its final token
    // ([n_embd], before the output norm); used by calibration.
    const float* last_hidden() const;

    int64_t weight_bytes() const { return weight_bytes_; }  // bound tensor bytes
    // The host KV cache held: the layers this model runs itself.
    int64_t kv_cache_bytes() const;
    int64_t n_params() const { return n_params_; }

private:
    void bind_weights();
    void alloc_scratch();
    void forward_chunk(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits,
                       float* logits);
    void attention(int il, int64_t n, int64_t n_past);
    void hold_host_kv(int first_layer);

    std::shared_ptr<const gguf::GgufFile> file_;
    tensor::ThreadPool& pool_;
    ModelConfig cfg_;
    int64_t n_ctx_ = 0;
    int64_t chunk_size_ = 256;

    tensor::WeightView tok_embd_, output_;
    const float* output_norm_ = nullptr;
    bool tied_output_ = false;
    bool qkv_fused_ = false;  // q, k, v take the same quantized input (decode)
    std::vector<LayerWeights> layers_;
    int64_t weight_bytes_ = 0;
    int64_t n_params_ = 0;

    std::unique_ptr<DenseFfn> dense_ffn_;
    FfnExecutor* ffn_ = nullptr;
    LayerExecutor* layer_exec_ = nullptr;

    // F16 KV cache: per layer, keys [n_head_kv][n_ctx][head_dim] and values
    // [n_head_kv][n_ctx][head_dim_v]; empty for layers [0, kv_first_layer_),
    // which the layer executor runs.
    std::vector<std::vector<uint16_t>> k_cache_, v_cache_;
    int kv_first_layer_ = 0;

    // RoPE cos/sin per position and rotated pair: [n_ctx][n_rot / 2].
    std::vector<float> rope_cos_, rope_sin_;

    // Scratch sized for chunk_size tokens (reused; decoding allocates nothing).
    std::vector<float> x_, xn_, q_, k_, v_, attn_, tmp_, scores_;
    tensor::QuantizedVector xq_;
    std::vector<uint16_t> head_q16_;  // per worker: one query head in F16
    std::vector<float> mix_scratch_;  // per worker: tensor::mix_f16 lanes
};

}  // namespace powerinfer::model
