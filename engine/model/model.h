// A transformer of one of the architecture units (architecture.h) over
// weights bound straight from the mmap'd GGUF (no copies), with an F16 KV
// cache and, for layers that keep one, a per-sequence state. forward() runs
// a batch of tokens at consecutive positions in chunks through the shared
// pass (forward_pass.cpp) and the unit's layer graph, written once over the
// op-level backend interface (backend/compute.h); a GraphPlan says, as data,
// where each layer's attention and FFN run: all on the CPU, whole layers on
// a device (layer offload), or attention on a device with the FFN on the
// host (sparse placement). Every host-side feed-forward block goes through
// an FfnExecutor (dense by default), so the sparse executor can be
// installed on a loaded model.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "common/weight_memory.h"
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

// An architecture unit's own tensors of a layer, in a type of its own (its
// bind_layer sets them; only the unit looks inside).
struct UnitWeights {
    virtual ~UnitWeights() = default;
};

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
    // The unit's own tensors of the layer (null when it has none).
    std::shared_ptr<const UnitWeights> unit;
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
    // What a decoded token reads on the dense path: every matrix, the head
    // included, the embedding table only where it is the head.
    int64_t decode_weight_bytes() const {
        return weight_bytes_ -
               (tied_output_ ? 0 : static_cast<int64_t>(tok_embd_.row_bytes) * tok_embd_.rows);
    }
    // Bytes of the row-panel copies the CPU kernels read instead of the
    // file's rows (0 where the CPU has no panel kernels).
    int64_t panel_bytes() const { return panel_bytes_; }
    // Bytes of panel-capable matrices left in their rows because the panels
    // would not have fitted in the RAM free at load.
    int64_t panels_skipped_bytes() const { return panels_skipped_bytes_; }
    // Frees the row panels of the matrix whose rows start at `data` (every
    // view of it this model holds forgets them): another layout serves its
    // products now (sparse engine v3's input-major copies).
    void drop_panels(const uint8_t* data);
    // The host KV cache held: the layers this model runs itself.
    int64_t kv_cache_bytes() const;
    int64_t n_params() const { return n_params_; }

    // Tokens re-evaluated to rebuild per-sequence state that could not be
    // rewound (sequence_state: a forward() at an earlier position than the
    // slot's, from its latest snapshot at or before it), since load.
    int64_t state_replayed_tokens() const { return state_replayed_; }
    // Snapshots of per-sequence state each slot keeps: a copy at the end of
    // every forward() of 2+ tokens (a prompt), the latest ones.
    static constexpr int kStateSnapshots = 2;

    // ---- What the architecture units' layer graphs work with -------------
    // Activations of one backend, [rows][width] each.
    struct Scratch {
        void* buffer = nullptr;
        int64_t rows = 0;
        float *x = nullptr, *xn = nullptr, *q = nullptr, *k = nullptr, *v = nullptr;
        float *attn = nullptr, *tmp = nullptr;
        backend::RopeTable rope;
    };
    // An architecture's layer (Architecture::layer): layer il of m over the
    // n rows at n_past.. of the residual stream in s, on be.
    using LayerGraph = void (*)(Model& m, int il, backend::Compute& be, Scratch& s, int64_t n,
                                int64_t n_past);
    // Layer il's weights where it runs (a device copy for a placed layer).
    const LayerWeights& placed(int il) const { return resident_[static_cast<size_t>(il)].w; }
    // forward_pass.cpp: the blocks the layers share.
    // x += FFN(rms_norm(x) * ffn_norm).
    void ffn_block(int il, backend::Compute& be, Scratch& s, int64_t n);
    // The FFN of a layer on `be` or through the host executor: tmp = FFN(xn).
    void run_ffn(int il, backend::Compute& be, Scratch& s, int64_t n);
    // s.attn = attention of s.q over layer il's cache after s.k and s.v went
    // into it (one sequence; window > 0: a sliding window).
    void cached_attention(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past,
                          float scale, int64_t window);
    // RoPE of s.q and s.k at the rows' positions, then their attention over
    // layer il's cache (one sequence, or each row in its own).
    void positioned_attention(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past,
                              float scale);
    // The RoPE table of sliding-window layers (their own base; host memory).
    backend::RopeTable sliding_rope() const {
        return {rope_cos_swa_.data(), rope_sin_swa_.data(), cfg_.n_rot,
                cfg_.rope_style == RopeStyle::Neox};
    }
    // Layer il's per-sequence state (Architecture::memory, host memory) in
    // the sequence slot of row `row` of the pass under way: zeros for a new
    // sequence, then what the layer wrote there.
    float* sequence_state(int il, int64_t row) const;
    // Host floats a unit's layer may use as temporaries during one call
    // (reused: grown, never shrunk).
    float* layer_temporaries(int64_t n_floats);

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
    void bind_weights();
    void pack_panels(int64_t limit_bytes);
    void alloc_host_scratch();
    void release_device();
    void place_host_kv(int il);
    void forward_chunk(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits,
                       float* logits);
    // The per-sequence state of the layers that keep one (nothing when none
    // does): one block per slot; a slot continues at n_past where its state
    // stands, or rebuilt from zeros over its first n_past tokens.
    void resize_sequence_state(int n_slots);
    void rewind_sequence_state(int64_t n_past);
    void record_state_tokens(int slot, const int32_t* tokens, int64_t n);
    // Keeps a copy of slot_'s state where it stands (in place of the
    // snapshot furthest back).
    void snapshot_state();
    // Whether layer il has a KV cache (Architecture::memory).
    bool has_kv_cache(int il) const;

    backend::AttentionShape attention_shape(float scale, int64_t window) const;
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
    std::vector<WeightBuffer> panel_store_;  // row-panel copies (pack_panels)
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

    // Per-sequence state per slot (host memory, accounted as KV cache):
    // layer il's Architecture::memory floats at state_offset_[il] (-1: none)
    // of state_floats_; the tokens each slot's state has consumed (it cannot
    // be rewound: a forward() at an earlier position re-evaluates them).
    std::vector<float*> seq_state_;
    std::vector<std::vector<int32_t>> state_tokens_;
    // A slot's state after its first `at` tokens (-1: none yet), so that a
    // forward() at or after `at` replays from there instead of from zeros.
    struct StateSnapshot {
        float* state = nullptr;
        int64_t at = -1;
    };
    std::vector<std::array<StateSnapshot, kStateSnapshots>> state_snapshots_;
    std::vector<int64_t> state_offset_;
    int64_t state_floats_ = 0;
    int64_t state_replayed_ = 0;
    std::vector<float> layer_temps_;  // layer_temporaries()

    // RoPE cos/sin per position and rotated pair: [n_ctx][n_rot / 2]; the
    // second pair for sliding-window layers (their own base; gemma3).
    std::vector<float> rope_cos_, rope_sin_, rope_cos_swa_, rope_sin_swa_;
};

}  // namespace powerinfer::model
