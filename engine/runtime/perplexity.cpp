#include "runtime/perplexity.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/distribution.h"
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
            nll_sum += log_sum_exp(l, n_vocab) - double(l[window[static_cast<size_t>(pos + 1)]]);
            ++r.tokens_scored;
        }
        r.windows = w + 1;
        r.mean_nll = nll_sum / double(r.tokens_scored);
        r.ppl = std::exp(r.mean_nll);
        if (progress) progress(w + 1, windows, r.ppl);
    }
    return r;
}

DecodedPerplexity perplexity_decoded(
    model::Model& model, const std::vector<int32_t>& all_tokens, int64_t n_ctx, int64_t max_windows,
    int32_t bos, int64_t skip, const std::function<void(bool)>& set_sparse,
    const std::function<void(int64_t, int64_t, double)>& progress) {
    if (n_ctx < 4 || n_ctx > model.n_ctx())
        throw EngineError("perplexity context " + std::to_string(n_ctx) +
                          " must be between 4 and the loaded context (" +
                          std::to_string(model.n_ctx()) + "): adjust --ctx");
    if (skip < 0 || skip >= static_cast<int64_t>(all_tokens.size()))
        throw EngineError("cannot skip " + std::to_string(skip) + " of the text's " +
                          std::to_string(all_tokens.size()) + " tokens");
    const int32_t* tokens = all_tokens.data() + skip;
    const int64_t n_tokens = static_cast<int64_t>(all_tokens.size()) - skip;
    int64_t windows = n_tokens / n_ctx;
    if (windows == 0)
        throw EngineError("the text has " + std::to_string(n_tokens) +
                          " tokens after the skipped ones, fewer than one window of " +
                          std::to_string(n_ctx) + ": use a longer text or a smaller --ctx");
    if (max_windows > 0) windows = std::min(windows, max_windows);
    const int64_t first = n_ctx / 2, n_vocab = model.config().n_vocab;
    std::vector<float> dense_logits(static_cast<size_t>((n_ctx - first) * n_vocab));
    std::vector<float> logits(static_cast<size_t>(n_vocab));
    std::vector<int32_t> window(static_cast<size_t>(n_ctx));
    DecodedPerplexity r;
    double nll = 0, nll_dense = 0, kl = 0;
    int64_t agree = 0, count = 0;
    for (int64_t w = 0; w < windows; ++w) {
        std::copy(tokens + w * n_ctx, tokens + (w + 1) * n_ctx, window.begin());
        if (bos >= 0) window[0] = bos;
        if (set_sparse) {
            set_sparse(false);
            model.forward(window.data(), n_ctx, 0, n_ctx - first, dense_logits.data());
            set_sparse(true);
        }
        // Prefill up to the first scored position, then one token at a time.
        model.forward(window.data(), first + 1, 0, 1, logits.data());
        for (int64_t pos = first; pos < n_ctx - 1; ++pos) {
            if (pos > first)
                model.forward(&window[static_cast<size_t>(pos)], 1, pos, 1, logits.data());
            const int32_t next = window[static_cast<size_t>(pos + 1)];
            const double ln = log_sum_exp(logits.data(), n_vocab);
            nll += ln - double(logits[static_cast<size_t>(next)]);
            if (set_sparse) {
                const float* d = dense_logits.data() + (pos - first) * n_vocab;
                const double dln = log_sum_exp(d, n_vocab);
                nll_dense += dln - double(d[next]);
                kl += kl_divergence(d, dln, logits.data(), ln, n_vocab);
                agree += std::max_element(d, d + n_vocab) - d ==
                         std::max_element(logits.begin(), logits.end()) - logits.begin();
            }
            ++count;
        }
        r.decoded.windows = w + 1;
        r.decoded.tokens_scored = count;
        r.decoded.mean_nll = nll / double(count);
        r.decoded.ppl = std::exp(r.decoded.mean_nll);
        if (set_sparse) {
            r.dense.windows = w + 1;
            r.dense.tokens_scored = count;
            r.dense.mean_nll = nll_dense / double(count);
            r.dense.ppl = std::exp(r.dense.mean_nll);
            r.mean_kl = kl / double(count);
            r.top1 = double(agree) / double(count);
        }
        if (progress) progress(w + 1, windows, r.decoded.ppl);
    }
    return r;
}

}  // namespace powerinfer::runtime
