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

// The same procedure with the scored half of every window decoded token by
// token (the first half is one prefill), which is how a sparse FFN runs;
// with `set_sparse` given, each window also runs dense (set_sparse(false),
// one batch) and the result compares the two: mean KL divergence of the
// decoded distribution from the dense one (llama.cpp's --kl-divergence
// convention, KL(dense || decoded)) and top-1 agreement. skip: tokens of the
// text left out before the first window (e.g. the calibration tokens).
struct DecodedPerplexity {
    PerplexityResult decoded;
    PerplexityResult dense;  // windows == 0 without set_sparse
    double mean_kl = 0;
    double top1 = 0;  // fraction of scored positions whose argmax agrees
};
DecodedPerplexity perplexity_decoded(
    model::Model& model, const std::vector<int32_t>& tokens, int64_t n_ctx, int64_t max_windows,
    int32_t bos, int64_t skip, const std::function<void(bool)>& set_sparse = {},
    const std::function<void(int64_t, int64_t, double)>& progress = {});

}  // namespace powerinfer::runtime
