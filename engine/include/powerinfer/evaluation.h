// Measuring a model through the facade: perplexity (llama.cpp's procedure,
// dense, or with the scored halves decoded through the sparse path and
// compared with dense), sparse-vs-dense fidelity over prompts, and the sparse
// executor's per-layer counters (the --metrics table).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer {

// ---- Perplexity on an engine loaded with Engine::load ----------------------

// The text's tokens the way llama.cpp's perplexity tool reads it: BOS as the
// model adds it, special-token texts kept as plain text (Engine::tokenize
// parses them).
std::vector<int32_t> tokenize_corpus(const Engine& engine, const std::string& text);

struct PerplexityOptions {
    int64_t max_windows = 0;  // <= 0: every window of info().n_ctx tokens
    // Decode the scored half of every window token by token (the path a
    // sparse FFN takes; batches run dense). Implied by skip != 0,
    // compare_dense and a sparse engine.
    bool decoded = false;
    int64_t skip = 0;  // tokens left out before the first window (e.g. the calibration part)
    // Sparse engines: also run every window dense and compare (mean KL
    // divergence KL(dense || sparse), top-1 agreement).
    bool compare_dense = false;
    // After every window: (windows done, windows total, perplexity so far).
    std::function<void(int64_t, int64_t, double)> progress;
};

struct PerplexityReport {
    double ppl = 0;  // of the path asked for (decoded when decoded)
    double mean_nll = 0;
    int64_t windows = 0, tokens_scored = 0;
    bool decoded = false;
    double dense_ppl = 0;  // with compare_dense
    double mean_kl = 0, top1 = 0;
    // Sparse engines: 1 - active / total neurons over the decoded tokens
    // (-1: dense engine).
    double delivered_sparsity = -1;
};

// Throws EngineError if the engine is not the engine's own (Engine::load),
// the text is shorter than a window, compare_dense asks for a comparison a
// dense engine cannot make, or the sparse engine's sidecar was refused.
// Resets the per-layer counters (sparse_layer_table) first.
PerplexityReport evaluate_perplexity(Engine& engine, const std::vector<int32_t>& tokens,
                                     const PerplexityOptions& options);

// ---- The sparse executor's per-layer counters -----------------------------

struct SparseLayerMetrics {
    int64_t tokens = 0;  // sparse decode steps counted
    int64_t active = 0, hot_hits = 0, cache_hits = 0, cold_misses = 0;
    int64_t up_rows = 0;    // exact CPU path: up rows computed
    int64_t hot_count = 0;  // neurons placed on the device
    int64_t n_ff = 0;
    double recall = -1;  // mean sampled recall (-1: no samples)
    bool dense = false;  // the layer runs dense (force_full_precision_layers)
};

// Since the load or the last reset; empty for a dense engine.
std::vector<SparseLayerMetrics> sparse_layer_metrics(const Engine& engine);
// The table `powerinfer-cli --metrics` prints ("" for a dense engine).
std::string sparse_layer_table(const Engine& engine);
void reset_sparse_layer_metrics(Engine& engine);

// ---- Sparse-vs-dense fidelity (loads the model itself) --------------------

// Per prompt, dense greedy decoding of N tokens, then the sparse executor
// teacher-forced on the same tokens (same prefix at every step) counting how
// often its argmax agrees; plus decode speed of both, sparsity, hit rate,
// sampled recall and (optionally) perplexity on a held-out text.
struct FidelityOptions {
    std::filesystem::path model_path;
    std::filesystem::path sidecar_path;  // empty: the default next to the model
    std::vector<std::string> prompts;
    int n_predict = 32;
    Tuning tuning;
    int n_threads = 0;
    int device_threads = 0;          // 0: n_threads
    std::string down_type = "Q8_0";  // neuron-major down copy: Q8_0, F16 or F32
    int validate_every = 4;          // recall / output-error samples
    // Perplexity on this text (skipped if empty): `ppl_windows` windows of
    // `ppl_ctx` tokens starting at token `ppl_offset` (past the calibration part).
    std::filesystem::path ppl_text;
    int64_t ppl_ctx = 256;
    int64_t ppl_windows = 8;
    int64_t ppl_offset = 30000;
    std::function<void(const std::string&)> on_json_line;  // one JSON object per prompt
};

struct FidelityResult {
    double agreement = 0;  // fraction of teacher-forced steps where sparse argmax == dense token
    double mean_kl = 0;    // mean KL(dense || sparse) of the next-token distributions per step
    double sparsity = 0;   // 1 - active / total over sparse decode steps
    double hit_rate = 0;   // (hot + cache hits) / active
    double recall = -1;    // sampled against dense activity (-1: no samples)
    double rel_err = -1;   // FFN output relative error at the samples
    double dense_tok_s = 0, sparse_tok_s = 0;
    // Per sparse decode step: predictor, device (hot part), CPU (cold part) ms.
    double predictor_ms = 0, device_ms = 0, cpu_ms = 0;
    double ppl_dense = 0, ppl_sparse = 0;
    int64_t steps = 0;
    std::string sparse_status;
    std::string layer_table;  // the per-layer table over the decode steps
    std::string summary_json() const;
};

// Throws EngineError if the model cannot be loaded or the sidecar is refused.
FidelityResult evaluate_fidelity(const FidelityOptions& options);

}  // namespace powerinfer
