#include "runtime/perplexity.h"

#include <cmath>
#include <string>

#include "common/error.h"
#include "model/model.h"

namespace powerinfer::runtime {

PerplexityResult perplexity(model::Model& model, const std::vector<int32_t>& tokens, int64_t n_ctx,
                            int64_t max_windows, int32_t bos,
                            const std::function<void(int64_t, int64_t, double)>& progress) {
    if (n_ctx < 4 || n_ctx > model.n_ctx())
        throw EngineError("perplexity context " + std::to_string(n_ctx) +
                          " must be between 4 and the loaded context (" +
                          std::to_string(model.n_ctx()) + "): adjust --ctx");
    int64_t windows = static_cast<int64_t>(tokens.size()) / n_ctx;
    if (windows == 0)
        throw EngineError("the text has " + std::to_string(tokens.size()) +
                          " tokens, fewer than one window of " + std::to_string(n_ctx) +
                          ": use a longer text or a smaller --ctx");
    if (max_windows > 0) windows = std::min(windows, max_windows);
    const int64_t first = n_ctx / 2;
    const int64_t n_vocab = model.config().n_vocab;
    std::vector<float> logits(static_cast<size_t>((n_ctx - first) * n_vocab));
    std::vector<int32_t> window(static_cast<size_t>(n_ctx));
    PerplexityResult r;
    double nll_sum = 0;
    for (int64_t w = 0; w < windows; ++w) {
        std::copy(tokens.begin() + w * n_ctx, tokens.begin() + (w + 1) * n_ctx, window.begin());
        if (bos >= 0) window[0] = bos;
        model.forward(window.data(), n_ctx, 0, n_ctx - first, logits.data());
        // Row j holds the logits at position first + j, predicting the next token.
        for (int64_t pos = first; pos < n_ctx - 1; ++pos) {
            const float* l = logits.data() + (pos - first) * n_vocab;
            double mx = l[0];
            for (int64_t i = 1; i < n_vocab; ++i) mx = std::max(mx, double(l[i]));
            double sum = 0;
            for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(double(l[i]) - mx);
            nll_sum += std::log(sum) + mx - double(l[window[static_cast<size_t>(pos + 1)]]);
            ++r.tokens_scored;
        }
        r.windows = w + 1;
        r.mean_nll = nll_sum / double(r.tokens_scored);
        r.ppl = std::exp(r.mean_nll);
        if (progress) progress(w + 1, windows, r.ppl);
    }
    return r;
}

}  // namespace powerinfer::runtime
