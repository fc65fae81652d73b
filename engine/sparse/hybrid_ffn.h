// The hybrid sparse FFN executor (docs/architecture.md, "Sparse subsystem").
//
// Per decoded token and layer: the layer's predictor (on the device) gives
// the active set; active neurons resident on the device (hot set + neuron
// cache) run there (Device::run_hot, asynchronous), the rest ("cold misses")
// run on the model's CPU pool at the same time (gate/up row-sparse, down
// column-sparse over a neuron-major copy); the two partial outputs are added
// in a fixed order, so results are deterministic. Prefill (n_tokens > 1),
// force_full_precision_layers and sparse=false go to the dense executor.
//
// Neuron cache: cold neurons active within the last cache_window_size tokens
// are uploaded to the device (into what the placement left free, LRU by last
// active token). Prefetch: after layer l, the predictors of layers
// l+1..l+prefetch_depth run on l's FFN input and their predicted cold neurons
// are staged into the cache, overlapping with the next attention block.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "backend/device.h"
#include "backend/neuron_ffn.h"
#include "model/ffn_executor.h"
#include "powerinfer/engine.h"
#include "sparse/exact_ffn.h"
#include "sparse/input_sparsity.h"
#include "sparse/placement.h"
#include "sparse/sidecar.h"
#include "sparse/sparse_head.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

namespace powerinfer::sparse {

struct HybridOptions {
    // Neuron-major down copy: Q8_0 by default (1.06 bytes per weight: the
    // column-sparse down part is bandwidth-bound, and F32 would read 4 bytes
    // per weight where the dense Q4 down reads ~0.6; its added error is below
    // the 8-bit activation rounding the dense path applies, see
    // docs/benchmarks.md), F32 (lossless vs the dequantized model) or F16.
    GgmlType down_type = GgmlType::Q8_0;
    // Every Nth decoded token also runs the dense FFN and measures recall
    // and output error (0 = off).
    int validate_every = 0;
    // Device bytes the rest of the model takes (dense weights placed on the
    // device, KV cache, scratch): counted before any neuron is placed.
    int64_t dense_device_bytes = 0;
    int64_t kv_cache_bytes = 0;
    // Device bytes another part holds on this same device (the attention
    // blocks a layer executor puts on the GPU in sparse mode, allocated
    // there after this executor is built): counted before any neuron is
    // placed, like the two above, but not allocated here.
    int64_t reserved_device_bytes = 0;
    // Synthetic models: the active set is drawn from the sidecar's power law
    // (the predictor still runs, its answer is ignored). Defaults to the
    // sidecar's `synthetic` flag.
    bool synthetic_activity = false;
    // Run batches (prefill, perplexity) token by token through the sparse
    // path instead of dense (fidelity measurements).
    bool sparse_prefill = false;
    // Without a GPU (the device is simulated): exact activity on the CPU
    // (sparse/exact_ffn.h) instead of predictors and an emulated device.
    bool cpu_exact = true;
    // The one-token products of the whole model (attention, FFN, head): with
    // them, the CPU exact path is sparse engine v3's input sparsity
    // (sparse/input_sparsity.h) instead of v2's FFN-only executor.
    std::vector<SiteMatrices> input_products;
    // The model's output head (data null: none): with a sidecar that holds
    // a head basis, decoded tokens' logits come from the low-rank preview
    // and the likely rows only (sparse/sparse_head.h; CPU path).
    tensor::WeightView head;
    // The weight bytes a decoded token reads on the dense path (every
    // matrix but the embedding table): with it, v2's token metrics report
    // the bytes read against it (the FFN's skipped rows and columns, the
    // head's preview); 0: not reported (v3 counts its own).
    double token_weight_bytes = 0;
    // The file the weights are mapped from (null: none): v2's and v3's
    // copies are built from mapped rows that the dense path, reading panels,
    // had released; with it they are released again once read.
    const gguf::GgufFile* file = nullptr;
    // The owner (the model) drops a matrix's row panels. v3: called with
    // each matrix before its input-major copy is built (and with slices of
    // it as the build reads its rows, from the pool's threads); the copy
    // then serves every product of that matrix, prompts and level 0
    // included, with the dense bits, and the model's weights are held once
    // (peak RSS about dense's). Without it v3 keeps both layouts. v2 and
    // v3: called with the head when its preview takes its products, whose
    // likeliest rows come from the file's rows (the head's panels, AVX-512's
    // Q8_0 ones, would hold it twice; a dense head runs over the rows, the
    // same bits).
    std::function<void(const tensor::WeightView&)> drop_panels;
    uint64_t seed = 1234;
};

// A sidecar curve point as the engine's API reports it.
inline SparsityCurvePoint public_point(const CurvePoint& p) {
    return {p.level, p.delivered, p.ppl_rise, p.mean_kl, p.top1, p.speed, p.bytes};
}

// Accumulated per-layer counters (the --metrics table).
struct LayerSummary {
    int64_t tokens = 0;
    int64_t active = 0, hot_hits = 0, cache_hits = 0, cold_misses = 0;
    int64_t up_rows = 0;    // exact CPU path: up rows computed (the rest skipped by the gate bound)
    // Exact CPU path: the FFN's weight bytes read, and the dense FFN's, over
    // the tokens (ExactCounts; level 0 reads the dense bytes).
    double ffn_bytes = 0, ffn_dense_bytes = 0;
    int64_t hot_count = 0;  // placement
    int64_t n_ff = 0;
    double recall_sum = 0;
    int64_t recall_samples = 0;
    double rel_err_sum = 0;
    bool dense = false;
};

class HybridFfn final : public model::FfnExecutor {
public:
    // `dense` is the exact executor (prefill, dense layers, sparse=false,
    // validation); layers are the model's FFN weights. Throws EngineError if
    // the sidecar does not match the model's shapes.
    HybridFfn(tensor::ThreadPool& pool, std::vector<model::FfnWeights> layers, Sidecar sidecar,
              std::unique_ptr<backend::Device> device, model::FfnExecutor& dense,
              const Tuning& tuning, const HybridOptions& options);
    ~HybridFfn() override;

    void run(int layer, const float* x, int64_t n_tokens, float* out) override;
    void end_token() override;
    backend::MatvecHook* matvec_hook() override;

    // Thread-safe: takes effect before the next token (placement re-runs if
    // the threshold, budget or dense layers changed).
    void set_tuning(const Tuning& tuning);
    Tuning tuning() const;

    // Thread-safe copies (memory: as of the last token or placement).
    TokenMetrics last_metrics() const;
    std::vector<LayerSummary> layer_summary() const;
    MemoryReport memory() const;
    std::string status() const;

    // Replaces HybridOptions::reserved_device_bytes (what the other part
    // really holds, e.g. fewer attention layers than planned) and places the
    // hot neurons again. Call from the thread that runs the model.
    void set_reserved_device_bytes(int64_t bytes);

    const Sidecar& sidecar() const { return sidecar_; }
    // The sidecar's measured curve, for ModelInfo::sparsity_curve.
    SparsityCurve sparsity_curve() const;
    backend::Device& device() { return *device_; }
    const Placement& placement() const { return placement_; }
    // The CPU-native exact path (null when a GPU holds neurons).
    const ExactSparseFfn* exact() const { return exact_.get(); }
    // Sparse engine v3's input sparsity (null unless it runs).
    const InputSparsity* input_sparsity() const { return input_.get(); }
    // v3: what the decoded tokens since load (or reset_summary) read.
    InputCounts input_counts() const;
    int64_t input_tokens() const;
    // Its default level (activation_sparsity -1): the sidecar's timed one
    // (calibration: the fastest of kInputDefaultCandidates on that CPU), else
    // kInputDefaultLevel.
    double input_default_level() const;
    // Measured within +2 % perplexity on SmolLM2 (0.1-0.2) and Qwen2.5-Coder-0.5B
    // (about 0.2), docs/benchmarks.md "Sparse engine v3".
    static constexpr double kInputDefaultLevel = 0.15;
    // The levels calibration times for v3's default: those up to it.
    static constexpr double kInputDefaultCandidates[] = {0.0, 0.1, kInputDefaultLevel};
    void reset_summary();
    void set_sparse_prefill(bool on) { opt_.sparse_prefill = on; }
    // What the decoded tokens read of the output head's preview since load
    // or reset_summary (zeros without one: no head basis in the sidecar, or
    // the head not on the CPU). From the thread that runs the model.
    HeadCounts head_counts() const;

private:
    struct LayerState;
    void apply_tuning_locked();
    std::string status_without_head() const;
    // Copies the device's accounting for memory(), which other threads read.
    void snapshot_memory_locked();
    void place();
    void run_sparse(int layer, const float* x, float* out);
    void cold_part(int layer, const float* x, const std::vector<int32_t>& ids, float* y);
    void cache_insert(int layer, const std::vector<int32_t>& ids);
    void prefetch(int layer, const float* x);
    void validate(int layer, const float* x, const std::vector<int32_t>& active, const float* out);
    void sample_synthetic(int layer, std::vector<int32_t>& active);
    bool layer_dense(int layer) const;

    tensor::ThreadPool& pool_;
    std::vector<model::FfnWeights> weights_;
    Sidecar sidecar_;
    std::unique_ptr<backend::Device> device_;
    model::FfnExecutor& dense_;
    // The host backend's ops over the pool (validation's dense FFN).
    std::unique_ptr<backend::Compute> host_;
    HybridOptions opt_;
    std::vector<std::unique_ptr<LayerState>> layers_;
    std::unique_ptr<ExactSparseFfn> exact_;
    std::unique_ptr<InputSparsity> input_;
    std::unique_ptr<SparseHead> head_;
    bool head_preview_built_ = false;  // the sidecar had none (status says so)
    // The host backend's hook: the head's preview for the head, v3's input
    // sparsity for the other products.
    class Products final : public backend::MatvecHook {
    public:
        explicit Products(HybridFfn& owner) : owner_(owner) {}
        bool matvec(std::span<const tensor::WeightView> ws, const float* x,
                    std::span<float* const> ys) override;
        bool matmul(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                    std::span<float* const> ys) override;
        void observe(std::span<const tensor::WeightView> ws, const float* x,
                     int64_t rows) override;

    private:
        HybridFfn& owner_;
    };
    Products products_{*this};
    InputCounts total_inputs_;  // v3: every decoded token since load / reset_summary
    int64_t input_tokens_ = 0;
    Placement placement_;
    int64_t fixed_bytes_ = 0;
    int64_t token_ = 0;
    std::mt19937_64 rng_;

    Tuning tuning_;  // applied
    mutable std::mutex mu_;
    Tuning pending_;
    bool pending_set_ = false;
    TokenMetrics current_, last_;
    MemoryReport memory_;
    std::vector<LayerSummary> summary_;
    bool validating_ = false;

    // Scratch.
    std::vector<int32_t> active_, dev_ids_, cold_ids_, pred_;
    std::vector<float> y_dev_, y_cpu_, a_, dense_out_;
    backend::NeuronFfn cold_;  // the cold neurons' FFN
};

// The per-layer table `powerinfer-cli --metrics` prints: tokens, active
// fraction, hit rate, hot/cache/cold shares, hot set size, sampled recall.
std::string format_layer_table(const std::vector<LayerSummary>& layers);

// Loads the sidecar for `model_path` and builds the hybrid executor with a
// CpuDevice (or `device` if given). On any problem (no sidecar, mismatch,
// sparse=false) returns nullptr and sets `status` to a user-facing reason;
// the caller then runs dense.
struct SparseSetup {
    std::filesystem::path model_path;
    std::filesystem::path sidecar_path;  // empty: default_sidecar_path(model_path)
    std::string model_hash;              // model_hash() of the loaded file
    Tuning tuning;
    HybridOptions options;
    std::unique_ptr<backend::Device> device;  // null: a CpuDevice
    // CpuDevice workers; 0: as many as the model's pool (on a CPU-only
    // machine the hot part is most of the FFN work, and the pool waits).
    int device_threads = 0;
    bool low_priority = false;  // the CPU device's threads below normal priority
};
std::unique_ptr<HybridFfn> make_hybrid_ffn(tensor::ThreadPool& pool,
                                           std::vector<model::FfnWeights> layers,
                                           model::FfnExecutor& dense, SparseSetup setup,
                                           std::string& status);

}  // namespace powerinfer::sparse
