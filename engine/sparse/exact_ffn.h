// Exact activation sparsity on the CPU (sparse engine v2): what decides a
// neuron's activity is computed for real, and only the rest is skipped.
//
// Per decoded token and layer, with x the normalised FFN input:
//   1. gate = W_gate x for every neuron, a = silu(gate);
//   2. up only for the neurons that can still matter: |a_i| * B_i * ||x|| >= t,
//      B_i = U_i * ||W_down col i||, U_i a calibrated bound on |u_i| / ||x||
//      (per neuron: mean + 4 sigma; older sidecars: the layer's 99.9th
//      percentile of |u_i| / (||W_up row i|| ||x||) times ||W_up row i||);
//   3. h = a * u and the active set |h_i| * ||W_down col i|| >= t;
//   4. down over the active set only, from a lossless neuron-major copy
//      (tensor/sparse_down.h).
// t is the layer's threshold for the chosen sparsity level, interpolated in
// the sidecar's calibrated quantiles. Two parallel regions per layer (fixed
// neuron blocks, each start to end; then the down product over all blocks'
// active sets, split by outputs), no predictor, no device emulation, no
// allocation per token once the buffers have grown; results depend neither on
// the thread count nor on timing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/neuron_ffn.h"
#include "model/ffn_executor.h"
#include "sparse/sidecar.h"
#include "tensor/quant.h"
#include "tensor/sparse_down.h"
#include "tensor/thread_pool.h"

namespace powerinfer::sparse {

// What one layer did for one token.
struct ExactCounts {
    int64_t up_rows = 0;  // up rows computed
    int64_t active = 0;   // down columns used
    // The FFN's weight bytes read (gate, the up rows computed, the down
    // copy's used columns and its used groups' scales, or the dense down),
    // and what the dense FFN reads.
    double bytes = 0, dense_bytes = 0;
};

class ExactSparseFfn {
public:
    // Called with a layer's down and up once its copies are built from
    // their rows: where the dense path reads panels, those mapped rows can
    // leave the resident set again (the same callback as InputSparsity's).
    using ReleaseRows = std::function<void(const tensor::WeightView&)>;
    // Throws EngineError if the sidecar's shapes do not match the weights.
    ExactSparseFfn(tensor::ThreadPool& pool, const std::vector<model::FfnWeights>& layers,
                   const Sidecar& sidecar, ReleaseRows release_rows = {});

    // The sparsity level to run at: < 0 = the sidecar's default (its
    // default_sparsity, the measured recommendation, where it has one; else
    // its calibrated target's threshold); otherwise a fraction in [0, 0.99]
    // mapped through exact_levels (a sidecar without them only has its
    // calibrated threshold: see level_note()).
    void set_level(double sparsity);
    double level() const { return level_; }
    // The level the thresholds stand for now: level(), or for < 0 the
    // sidecar's default (default_sparsity, else the calibrated target).
    double effective_level() const;
    // What level -1 stands for: default_sparsity, else the calibrated target.
    double default_level() const { return default_level_ >= 0 ? default_level_ : target_; }
    // Empty, or why the level knob cannot act (an older sidecar).
    const std::string& level_note() const { return note_; }

    // out[n_embd] = FFN(x) for one token of layer `layer`.
    ExactCounts run(int layer, const float* x, float* out);
    // run() for n tokens x[n][n_embd] -> out[n][n_embd], with the same bits
    // and active sets: gate and up as one batch product each (matmul keeps
    // the matvec's bits per row), then per token the same selection and
    // down product. For calibration's curve, which scores a batch of tokens
    // at each level (run() reads gate and up once per token). Returns the
    // down columns used over the n tokens.
    int64_t run_batch(int layer, const float* x, int64_t n, float* out);

    // RAM this executor has added to the model (neuron-major down copies,
    // norms): a layer's are built the first time it runs, so at level 0
    // none; planned_bytes() is about what all of them take.
    int64_t extra_bytes() const { return built_bytes_.load(std::memory_order_relaxed); }
    int64_t planned_bytes() const { return planned_bytes_; }
    // Layers whose down matrix has no neuron-major copy (unsupported type):
    // their down product runs dense over the masked h.
    int64_t dense_down_layers() const;

private:
    struct Layer {
        model::FfnWeights w;
        tensor::NeuronMajorDown down;  // empty: dense down
        std::vector<float> down_norm;  // ||W_down col i||
        std::vector<float>
            up_factor;  // up_bound * ||W_up row i|| * ||W_down col i||; empty: no pre-filter
        std::vector<float> thresholds;  // per exact level; empty: only `calibrated`
        float calibrated = 0;
        float t = 0;  // current threshold
        std::vector<float> up_scale;  // the sidecar's, until prepared
        float up_bound = 0;
        bool prepared = false;  // down_norm, down, up_factor built
    };
    // A fixed slice of a layer's neurons: the subset FFN's hidden half over
    // it (its scratch grown once) and its active set prepared for the down
    // product.
    struct Block {
        backend::NeuronFfn ffn;
        tensor::SparseDownInput in;
    };
    static constexpr int64_t kBlocks = 8;
    void run_block(Layer& L, Block& B, int64_t n0, int64_t n1, float xn);
    void prepare(Layer& L);

    tensor::ThreadPool& pool_;
    std::vector<Layer> layers_;
    ReleaseRows release_rows_;
    std::atomic<int64_t> built_bytes_{0};
    int64_t planned_bytes_ = 0;
    std::vector<Block> blocks_;
    const tensor::QuantizedVector* xq_up_used_ = nullptr;
    std::vector<float> levels_;
    double level_ = -1;
    double default_level_ = -1;  // Sidecar::default_sparsity (needs exact levels)
    double target_ = 0;          // Sidecar::target_sparsity
    std::string note_;
    backend::GateActivation act_;
    tensor::QuantizedVector xq_, xq_up_;
    std::vector<float> masked_, gate_, up_, ones_;
    // run_batch's per-thread scratch (tokens run in parallel, each whole).
    struct TokenScratch {
        std::vector<int32_t> ids, keep;
        std::vector<float> h;
        tensor::SparseDownInput in;
        int64_t active = 0;
    };
    std::vector<TokenScratch> token_scratch_;
    std::vector<int32_t> ids_;         // 0..n_ff-1
    tensor::SparseDownInput down_in_;  // the layer's active set (all blocks)
};

}  // namespace powerinfer::sparse
