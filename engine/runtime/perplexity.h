// Perplexity the way llama.cpp's perplexity tool computes it: non-overlapping
// windows of n_ctx tokens, each from an empty cache (first token replaced by
// BOS when the model adds one), scoring the second half of each window.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace powerinfer::model {
class Model;
}

namespace powerinfer::runtime {

struct PerplexityResult {
    double ppl = 0;
    double mean_nll = 0;
    int64_t windows = 0;
    int64_t tokens_scored = 0;
};

// max_windows <= 0: all windows. bos < 0: keep each window's first token.
// progress(window_done, windows_total, ppl_so_far) after every window.
// Throws EngineError if n_ctx exceeds the model's context or the text has
// fewer than n_ctx tokens.
PerplexityResult perplexity(model::Model& model, const std::vector<int32_t>& tokens, int64_t n_ctx,
                            int64_t max_windows, int32_t bos,
                            const std::function<void(int64_t, int64_t, double)>& progress = {});

}  // namespace powerinfer::runtime
