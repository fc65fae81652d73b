// A transformer of one of the architecture units (architecture.h: llama
// family, Gemma 3, Qwen3.5) over weights bound straight from the mmap'd GGUF
// (no copies), with an F16 KV cache. forward() runs a batch of tokens at
// consecutive positions in chunks through the shared pass (forward_pass.cpp)
// and the unit's layer graph, written once over the op-level backend
// interface (backend/compute.h); a GraphPlan says, as data,
// where each layer's attention and FFN run: all on the CPU, whole layers on
// a device (layer offload), or attention on a device with the FFN on the
// host (sparse placement). Every host-side feed-forward block goes through
// an FfnExecutor (dense by default), so the sparse executor can be
// installed on a loaded model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "model/dense_ffn.h"
#include "model/ffn_executor.h"
#include "model/input_sites.h"
#include "model/layer_plan.h"
#include "model/model_config.h"
#include "model/moe_ffn.h"
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
    const float* attn_post_norm = nullptr;  // gemma3: on the attention output
    const float* ffn_post_norm = nullptr;   // gemma3: on the FFN output
    FfnWeights ffn;                         // dense layers
    MoeWeights moe;                         // mixture-of-experts layers (config().moe())
    // qwen35 Gated DeltaNet layers (qwen35_graph.cpp): q|k|v for the
    // convolution, the output gate z, the write strength and decay inputs,
    // the output; the F32 conv taps [conv_dim][kernel], dt bias, A, norm.
    tensor::WeightView ssm_qkv, ssm_z, ssm_beta, ssm_alpha, ssm_out;
    const float* ssm_conv = nullptr;
    const float* ssm_dt = nullptr;
    const float* ssm_a = nullptr;
    const float* ssm_norm = nullptr;
};

class Model {
public:
    // Binds and validates every tensor (shape and type against the config;
    // a mismatch throws EngineError naming the tensor). n_ctx is capped by
    // the training context. The file and the pool must outlive the model.
    // panel_limit_bytes caps the row-panel copies (tensor/panels.h); -1: the
    // RAM free at load less 1 GiB.
    Model(std::shared_ptr<const gguf::GgufFile> file, tensor::ThreadPool& pool, int64_t n_ctx,
          int64_t chunk_size = 256, int64_t panel_limit_bytes = -1);
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

    // Every one-token product of a dense model's graph, by its input
    // (model/input_sites.h); empty for mixture-of-experts models.
    std::vector<SiteMatrices> decode_products() const;

    // Installs the FFN executor every layer calls; nullptr restores the
    // built-in dense one. The executor must outlive its use.
    void set_ffn_executor(FfnExecutor* executor);
    FfnExecutor& ffn_executor() { return *ffn_; }
    // The experts' executor of a mixture-of-experts model (null when dense):
    // every layer's FFN runs through it on the host, whatever executor is
    // installed; its routing counts are the expert statistics.
    MoeFfn* moe_ffn() { return moe_ffn_.get(); }
    const MoeFfn* moe_ffn() const { return moe_ffn_.get(); }
    DenseFfn& dense_ffn() { return *dense_ffn_; }

    // Where each layer part runs (see GraphPlan). Places the plan's device
    // parts on `device` (which must outlive its use; null = host only):
    // copies their weights there and gives their layers a KV cache there,
    // releasing the host's. Layers that do not fit stay on the host, and so
    // does the output head unless every layer moved; returns what happened
    // ("" when everything fits). Re-evaluate the context after a change.
    // Never throws for lack of device memory.
    std::string set_plan(const GraphPlan& plan, backend::Compute* device);
    // Why `device` cannot take these parts of the layers and the head ("" if
    // it can): a capability the architecture needs that the backend lacks
    // (Architecture::needs, Compute::supports), layers the architecture
    // keeps on the host, a matrix its kernels do not multiply.
    std::string unsupported_on(const backend::Compute& device, OffloadParts parts) const;
    // The plan in effect (after set_plan's fitting).
    const GraphPlan& plan() const { return plan_; }
    backend::Compute* device() const { return device_; }
    // Tokens that ran through the device since set_plan(): in chunks of 2+
    // rows on a backend that multiplies batches as one (prefill GEMMs), or
    // row by row.
    struct DeviceTokens {
        int64_t batched = 0, single = 0;
    };
    const DeviceTokens& device_tokens() const { return device_tokens_; }
    backend::Compute& host() { return *host_; }

    // RoPE cos/sin per position and rotated pair ([n_ctx][n_rot / 2]) and the
    // output norm, for executors that copy them.
    const std::vector<float>& rope_cos() const { return rope_cos_; }
    const std::vector<float>& rope_sin() const { return rope_sin_; }
    const float* output_norm() const { return output_norm_; }
    // The device layout of the layers' tensors, KV cache and scratch that
    // set_plan() uses (layer_offload_costs at its token batch).
    static constexpr int64_t kDeviceTokenBatch = 128;

    // Prompt tokens per prefill batch (the `chunk_size` knob), >= 1.
    void set_chunk_size(int64_t chunk_size);
    int64_t chunk_size() const { return chunk_size_; }

    // Evaluates tokens[0..n) at positions n_past..n_past+n-1, writing their
    // keys/values into the cache (positions >= n_past are overwritten). The
    // logits of the last n_logits tokens (0..n) go to logits, row-major
    // [n_logits][n_vocab]. Throws EngineError for out-of-vocabulary tokens
    // or positions beyond n_ctx.
    void forward(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits, float* logits);

    // Several sequences at once (continuous batching). Slot 0 is the cache
    // forward() has always used; slots 1..n_slots-1 get KV caches of their
    // own (n_ctx positions each, host memory). Host plans of architectures
    // that run several sequences (Architecture::several_sequences) only:
    // throws EngineError naming why otherwise. Shrinking frees
    // the dropped slots' caches.
    void set_sequence_slots(int n_slots);
    int sequence_slots() const { return 1 + static_cast<int>(extra_kv_.size()); }
    // forward() over slot `slot`'s cache.
    void forward(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits, float* logits,
                 int slot);
    // One decode step of n sequences: row i is tokens[i] at position
    // positions[i] of slot seq_slots[i] (distinct slots, n <= chunk_size());
    // logits[n][n_vocab]. Every matrix is read once for all rows, and each
    // row's numbers are the bits forward() gives it alone (matmul keeps the
    // matvec's accumulation order; attention runs per row on its own cache).
    void forward_sequences(const int32_t* tokens, const int* seq_slots, const int64_t* positions,
                           int64_t n, float* logits);

    // The residual stream after the last forward() for its final token
    // ([n_embd], before the output norm); used by calibration.
    const float* last_hidden() const;

    int64_t weight_bytes() const { return weight_bytes_; }  // bound tensor bytes
    // Bytes of the row-panel copies the CPU kernels read instead of the
    // file's rows (0 where the CPU has no panel kernels).
    int64_t panel_bytes() const { return panel_bytes_; }
    // Bytes of panel-capable matrices left in their rows because the panels
    // would not have fitted in the RAM free at load.
    int64_t panels_skipped_bytes() const { return panels_skipped_bytes_; }
    // The host KV cache held: the layers this model runs itself.
    int64_t kv_cache_bytes() const;
    int64_t n_params() const { return n_params_; }

private:
    // Where one layer's attention half (and its KV cache) lives, with its
    // tensors' addresses there.
    struct Resident {
        LayerWeights w;
        backend::Compute* on = nullptr;
        void* weights = nullptr;  // device copy (null on the host: w points into the mmap)
        void* kv = nullptr;       // keys, then values at kv_values
        int64_t kv_values = 0;
    };
    // Activations of one backend, [rows][width] each.
    struct Scratch {
        void* buffer = nullptr;
        int64_t rows = 0;
        float *x = nullptr, *xn = nullptr, *q = nullptr, *k = nullptr, *v = nullptr;
        float *attn = nullptr, *tmp = nullptr;
        backend::RopeTable rope;
    };
    // An architecture's layer (Architecture::layer): layer il over the n
    // rows at n_past.. of the residual stream in s, on be.
    using LayerGraph = void (Model::*)(int il, backend::Compute& be, Scratch& s, int64_t n,
                                       int64_t n_past);
    friend struct Architecture;  // its units name their layer graph

    void bind_weights();
    void pack_panels(int64_t limit_bytes);
    void alloc_host_scratch();
    void release_device();
    void place_host_kv(int il);
    void forward_chunk(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits,
                       float* logits);
    // The units' layers (LayerGraph): llama_graph.cpp, gemma3_graph.cpp,
    // qwen35_graph.cpp.
    void llama_layer(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past);
    void gemma3_layer(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past);
    void qwen35_layer(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past);
    void gated_attention_block(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past);
    void delta_net_block(int il, backend::Compute& be, Scratch& s, int64_t n);
    // qwen35_graph.cpp: the recurrent state (nothing without recurrent layers).
    void resize_recurrent_state(int n_slots);
    void rewind_recurrent_state(int64_t n_past);
    void record_recurrent_tokens(int slot, const int32_t* tokens, int64_t n);

    // forward_pass.cpp: what the layers share.
    // x += FFN(rms_norm(x) * ffn_norm).
    void ffn_block(int il, backend::Compute& be, Scratch& s, int64_t n);
    void cached_attention(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past,
                          float scale, int64_t window);
    // RoPE of s.q and s.k at the rows' positions, then their attention over
    // layer il's cache (one sequence, or each row in its own: rows_).
    void positioned_attention(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past,
                              float scale);
    backend::AttentionShape attention_shape(float scale, int64_t window) const;
    // The FFN of a layer on `be` or through the host executor: tmp = FFN(xn).
    void run_ffn(int il, backend::Compute& be, Scratch& s, int64_t n);
    void output_block(backend::Compute& be, Scratch& s, int64_t from, int64_t n, float* logits);

    std::shared_ptr<const gguf::GgufFile> file_;
    tensor::ThreadPool& pool_;
    ModelConfig cfg_;
    int64_t n_ctx_ = 0;
    int64_t chunk_size_ = 256;

    tensor::WeightView tok_embd_, output_;
    const float* output_norm_ = nullptr;
    bool tied_output_ = false;
    std::vector<LayerWeights> layers_;
    int64_t weight_bytes_ = 0;
    std::vector<std::unique_ptr<uint8_t[]>> panel_store_;  // row-panel copies (pack_panels)
    int64_t panel_bytes_ = 0, panels_skipped_bytes_ = 0;
    int64_t n_params_ = 0;

    std::unique_ptr<backend::Compute> host_;
    std::unique_ptr<DenseFfn> dense_ffn_;
    FfnExecutor* ffn_ = nullptr;
    std::unique_ptr<MoeFfn> moe_ffn_;

    GraphPlan plan_;
    backend::Compute* device_ = nullptr;
    std::vector<Resident> resident_;  // per layer
    // Sequence slots 1.. ([slot - 1][layer]: keys, then values at the
    // layer's kv_values), the slot forward() runs on, and the per-row slots
    // and positions of a forward_sequences() step (null otherwise).
    struct SequenceRows {
        const int* seq_slots;
        const int64_t* positions;
    };
    std::vector<std::vector<void*>> extra_kv_;
    int slot_ = 0;
    const SequenceRows* rows_ = nullptr;
    void* kv_of(int il) const;
    void release_sequence_slots(size_t keep);
    Scratch host_s_, device_s_;
    void* device_out_ = nullptr;  // output norm, head and one logits row on the device
    tensor::WeightView device_head_;
    const float* device_out_norm_ = nullptr;
    float* device_logits_ = nullptr;
    DeviceTokens device_tokens_;

    // Qwen3.5's recurrent state per sequence slot (host memory, accounted as
    // KV cache): every Gated DeltaNet layer's DeltaNetConfig::state_floats()
    // at recurrent_offset_[layer]; the tokens each slot's state has consumed
    // (a rewind re-evaluates them); the layer's temporaries.
    std::vector<float*> recurrent_state_;
    std::vector<std::vector<int32_t>> recurrent_tokens_;
    std::vector<int64_t> recurrent_offset_;
    int64_t recurrent_floats_ = 0;
    std::vector<float> q35_scratch_;

    // RoPE cos/sin per position and rotated pair: [n_ctx][n_rot / 2]; the
    // second pair for sliding-window layers (their own base; gemma3).
    std::vector<float> rope_cos_, rope_sin_, rope_cos_swa_, rope_sin_swa_;
};

}  // namespace powerinfer::model
