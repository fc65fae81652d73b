// Sparse-vs-dense fidelity: per prompt, dense greedy decoding of N tokens,
// then the sparse executor teacher-forced on the same tokens (same prefix at
// every step) counting how often its argmax agrees; plus decode speed of
// both, sparsity, hit rate, sampled recall and (optionally) perplexity on a
// held-out text. Drives the model directly, like calibration.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::calibrate {

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
    std::string layer_table;  // sparse::format_layer_table over the decode steps
    std::string summary_json() const;
};

// Throws EngineError if the model cannot be loaded or the sidecar is refused.
FidelityResult evaluate_fidelity(const FidelityOptions& options);

}  // namespace powerinfer::calibrate
