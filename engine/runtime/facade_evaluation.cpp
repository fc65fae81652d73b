// powerinfer/evaluation.h on the engine's own LocalEngine: perplexity and the
// sparse executor's per-layer counters (evaluate_fidelity lives in
// engine/calibrate, which loads the model itself).
#include <string>

#include "model/model.h"
#include "powerinfer/evaluation.h"
#include "runtime/local_engine.h"
#include "runtime/perplexity.h"
#include "sparse/hybrid_ffn.h"
#include "tokenizer/tokenizer.h"

namespace powerinfer {
namespace {

runtime::LocalEngine& local(Engine& engine) {
    auto* e = dynamic_cast<runtime::LocalEngine*>(&engine);
    if (!e) throw EngineError("this needs an engine loaded with powerinfer::Engine::load");
    return *e;
}

// Reading the counters does not change the engine (HybridFfn copies them
// under its lock); LocalEngine only hands the executor out mutable.
sparse::HybridFfn* sparse_of(const Engine& engine) {
    return local(const_cast<Engine&>(engine)).sparse_ffn();
}

}  // namespace

std::vector<int32_t> tokenize_corpus(const Engine& engine, const std::string& text) {
    return local(const_cast<Engine&>(engine)).tokenizer().encode(text, true, false);
}

PerplexityReport evaluate_perplexity(Engine& engine, const std::vector<int32_t>& tokens,
                                     const PerplexityOptions& o) {
    runtime::LocalEngine& e = local(engine);
    const Tokenizer& tok = e.tokenizer();
    const int64_t n_ctx = e.model().n_ctx();
    const int32_t bos = tok.add_bos() ? tok.bos() : -1;
    sparse::HybridFfn* ffn = e.sparse_ffn();
    PerplexityReport out;
    out.decoded = o.decoded || o.skip != 0 || o.compare_dense || ffn;
    if (!out.decoded) {
        const auto r =
            runtime::perplexity(e.model(), tokens, n_ctx, o.max_windows, bos, o.progress);
        out.ppl = r.ppl;
        out.mean_nll = r.mean_nll;
        out.windows = r.windows;
        out.tokens_scored = r.tokens_scored;
        return out;
    }
    if (o.compare_dense && !ffn)
        throw EngineError("comparing with dense needs sparse inference: " + e.info().sparse_status);
    std::function<void(bool)> set_sparse;
    if (o.compare_dense)
        set_sparse = [&](bool on) { e.model().set_ffn_executor(on ? ffn : nullptr); };
    if (ffn) ffn->reset_summary();
    const auto r = runtime::perplexity_decoded(e.model(), tokens, n_ctx, o.max_windows, bos, o.skip,
                                               set_sparse, o.progress);
    out.ppl = r.decoded.ppl;
    out.mean_nll = r.decoded.mean_nll;
    out.windows = r.decoded.windows;
    out.tokens_scored = r.decoded.tokens_scored;
    out.dense_ppl = r.dense.ppl;
    out.mean_kl = r.mean_kl;
    out.top1 = r.top1;
    if (ffn && ffn->input_sparsity()) {
        out.delivered_sparsity = ffn->input_counts().delivered();  // v3: every product's inputs
    } else if (ffn) {
        int64_t active = 0, total = 0;
        for (const auto& l : ffn->layer_summary()) {
            active += l.active;
            total += l.tokens * l.n_ff;
        }
        if (total > 0) out.delivered_sparsity = 1.0 - double(active) / double(total);
    }
    return out;
}

std::vector<SparseLayerMetrics> sparse_layer_metrics(const Engine& engine) {
    std::vector<SparseLayerMetrics> out;
    const sparse::HybridFfn* ffn = sparse_of(engine);
    if (!ffn) return out;
    for (const sparse::LayerSummary& s : ffn->layer_summary()) {
        SparseLayerMetrics m;
        m.tokens = s.tokens;
        m.active = s.active;
        m.hot_hits = s.hot_hits;
        m.cache_hits = s.cache_hits;
        m.cold_misses = s.cold_misses;
        m.up_rows = s.up_rows;
        m.hot_count = s.hot_count;
        m.n_ff = s.n_ff;
        m.recall = s.recall_samples > 0 ? s.recall_sum / double(s.recall_samples) : -1.0;
        m.dense = s.dense;
        out.push_back(m);
    }
    return out;
}

std::string sparse_layer_table(const Engine& engine) {
    const sparse::HybridFfn* ffn = sparse_of(engine);
    return ffn ? sparse::format_layer_table(ffn->layer_summary()) : std::string();
}

void reset_sparse_layer_metrics(Engine& engine) {
    if (sparse::HybridFfn* ffn = local(engine).sparse_ffn()) ffn->reset_summary();
}

}  // namespace powerinfer
