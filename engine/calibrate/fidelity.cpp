#include "calibrate/fidelity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/distribution.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "powerinfer/utf8_path.h"
#include "sparse/hybrid_ffn.h"
#include "sparse/sidecar.h"
#include "tensor/thread_pool.h"
#include "tokenizer/tokenizer.h"

namespace powerinfer::calibrate {
namespace {

using Clock = std::chrono::steady_clock;

int32_t argmax(const float* v, int64_t n) {
    return static_cast<int32_t>(std::max_element(v, v + n) - v);
}
int32_t argmax(const std::vector<float>& v) { return argmax(v.data(), int64_t(v.size())); }

std::string num(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}

// Mean NLL of the second half of each window (llama.cpp's perplexity scheme).
double perplexity(model::Model& m, const std::vector<int32_t>& text, int64_t ctx, int64_t windows,
                  int32_t bos) {
    const int64_t n_vocab = m.config().n_vocab;
    std::vector<float> logits(static_cast<size_t>(ctx * n_vocab));
    double nll = 0;
    int64_t count = 0;
    for (int64_t w = 0; w < windows; ++w) {
        const int64_t s = w * ctx;
        if (s + ctx > static_cast<int64_t>(text.size())) break;
        std::vector<int32_t> win(text.begin() + s, text.begin() + s + ctx);
        if (bos >= 0) win[0] = bos;
        m.forward(win.data(), ctx, 0, ctx, logits.data());
        for (int64_t i = ctx / 2; i < ctx - 1; ++i) {
            const float* z = logits.data() + i * n_vocab;
            const float mx = *std::max_element(z, z + n_vocab);
            double sum = 0;
            for (int64_t k = 0; k < n_vocab; ++k) sum += std::exp(double(z[k]) - mx);
            nll += std::log(sum) + mx - z[win[static_cast<size_t>(i + 1)]];
            ++count;
        }
    }
    if (count == 0) throw EngineError("the perplexity text is too short for one window");
    return std::exp(nll / double(count));
}

}  // namespace
}  // namespace powerinfer::calibrate

namespace powerinfer {
// The helpers above (unnamed namespace of powerinfer::calibrate).
using namespace calibrate;

std::string FidelityResult::summary_json() const {
    return "{\"summary\":true,\"agreement\":" + num(agreement) + ",\"mean_kl\":" + num(mean_kl) +
           ",\"steps\":" + std::to_string(steps) + ",\"sparsity\":" + num(sparsity) +
           ",\"hit_rate\":" + num(hit_rate) + ",\"recall\":" + num(recall) +
           ",\"ffn_rel_err\":" + num(rel_err) + ",\"dense_tok_s\":" + num(dense_tok_s) +
           ",\"sparse_tok_s\":" + num(sparse_tok_s) + ",\"ppl_dense\":" + num(ppl_dense) +
           ",\"ppl_sparse\":" + num(ppl_sparse) + ",\"predictor_ms\":" + num(predictor_ms) +
           ",\"device_ms\":" + num(device_ms) + ",\"cpu_ms\":" + num(cpu_ms) + "}";
}

FidelityResult evaluate_fidelity(const FidelityOptions& opt) {
    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(opt.model_path);
    auto tok = Tokenizer::from_gguf(*file);
    tensor::ThreadPool pool(opt.n_threads);
    model::Model m(file, pool, std::max<int64_t>(1024, opt.ppl_ctx), 256);
    std::vector<model::FfnWeights> layers;
    for (int64_t l = 0; l < m.config().n_layer; ++l)
        layers.push_back(m.ffn_weights(static_cast<int>(l)));
    sparse::SparseSetup setup;
    setup.model_path = opt.model_path;
    setup.sidecar_path = opt.sidecar_path;
    setup.model_hash = sparse::model_hash(*file);
    setup.tuning = opt.tuning;
    setup.tuning.sparse = true;
    setup.options.validate_every = opt.validate_every;
    setup.device_threads = opt.device_threads;
    if (opt.down_type == "F32") {
        setup.options.down_type = GgmlType::F32;
    } else if (opt.down_type == "F16") {
        setup.options.down_type = GgmlType::F16;
    } else if (opt.down_type == "Q8_0") {
        setup.options.down_type = GgmlType::Q8_0;
    } else {
        throw EngineError("--down-type must be Q8_0, F16 or F32");
    }
    FidelityResult res;
    auto hybrid =
        sparse::make_hybrid_ffn(pool, layers, m.dense_ffn(), std::move(setup), res.sparse_status);
    if (!hybrid) throw EngineError(res.sparse_status);
    hybrid->set_tuning(opt.tuning);

    const int64_t n_vocab = m.config().n_vocab;
    std::vector<float> logits(static_cast<size_t>(n_vocab));
    std::vector<float> dense_logits;  // the dense steps of one prompt
    int64_t agree_total = 0, steps_total = 0, active = 0, hits = 0, neurons = 0;
    double kl_total = 0;
    double dense_s = 0, sparse_s = 0;
    for (size_t p = 0; p < opt.prompts.size(); ++p) {
        const auto prompt = tok->encode(opt.prompts[p], true, false);
        const int64_t np = static_cast<int64_t>(prompt.size());
        if (np == 0 || np + opt.n_predict >= m.n_ctx()) continue;
        // Dense greedy reference.
        m.set_ffn_executor(nullptr);
        m.forward(prompt.data(), np, 0, 1, logits.data());
        std::vector<int32_t> ref = {argmax(logits)};
        dense_logits.resize(static_cast<size_t>(opt.n_predict * n_vocab));
        auto t0 = Clock::now();
        for (int i = 1; i < opt.n_predict; ++i) {
            float* dl = dense_logits.data() + static_cast<size_t>(i * n_vocab);
            m.forward(&ref.back(), 1, np + i - 1, 1, dl);
            ref.push_back(argmax(dl, n_vocab));
        }
        dense_s += std::chrono::duration<double>(Clock::now() - t0).count();
        // Sparse, teacher-forced on the dense tokens (prefill runs dense).
        m.set_ffn_executor(hybrid.get());
        m.forward(prompt.data(), np, 0, 1, logits.data());
        int64_t agree = 0, steps = 0, p_active = 0, p_hits = 0, p_neurons = 0;
        t0 = Clock::now();
        for (int i = 1; i < opt.n_predict; ++i) {
            m.forward(&ref[static_cast<size_t>(i - 1)], 1, np + i - 1, 1, logits.data());
            agree += argmax(logits) == ref[static_cast<size_t>(i)];
            const float* dl = dense_logits.data() + static_cast<size_t>(i * n_vocab);
            kl_total += kl_divergence(dl, log_sum_exp(dl, n_vocab), logits.data(),
                                      log_sum_exp(logits.data(), n_vocab), n_vocab);
            ++steps;
            const TokenMetrics tm = hybrid->last_metrics();
            p_active += tm.active;
            p_hits += tm.hot_hits + tm.cache_hits;
            p_neurons += tm.ffn_neurons_total;
            res.predictor_ms += tm.predictor_ms;
            res.device_ms += tm.device_ms;
            res.cpu_ms += tm.cpu_ms;
        }
        sparse_s += std::chrono::duration<double>(Clock::now() - t0).count();
        m.set_ffn_executor(nullptr);
        agree_total += agree;
        steps_total += steps;
        active += p_active;
        hits += p_hits;
        neurons += p_neurons;
        if (opt.on_json_line) {
            opt.on_json_line(
                "{\"prompt\":" + std::to_string(p) + ",\"steps\":" + std::to_string(steps) +
                ",\"agreement\":" + num(steps ? double(agree) / double(steps) : 1.0) +
                ",\"sparsity\":" +
                num(p_neurons ? 1.0 - double(p_active) / double(p_neurons) : 0.0) +
                ",\"hit_rate\":" + num(p_active ? double(p_hits) / double(p_active) : 0.0) + "}");
        }
    }
    res.steps = steps_total;
    if (steps_total > 0) {
        res.predictor_ms /= double(steps_total);
        res.device_ms /= double(steps_total);
        res.cpu_ms /= double(steps_total);
    }
    res.agreement = steps_total ? double(agree_total) / double(steps_total) : 0.0;
    res.mean_kl = steps_total ? kl_total / double(steps_total) : 0.0;
    res.sparsity = neurons ? 1.0 - double(active) / double(neurons) : 0.0;
    res.hit_rate = active ? double(hits) / double(active) : 0.0;
    res.dense_tok_s = dense_s > 0 ? double(steps_total) / dense_s : 0.0;
    res.sparse_tok_s = sparse_s > 0 ? double(steps_total) / sparse_s : 0.0;
    double rs = 0, es = 0;
    int64_t rn = 0;
    for (const auto& s : hybrid->layer_summary()) {
        rs += s.recall_sum;
        es += s.rel_err_sum;
        rn += s.recall_samples;
    }
    if (rn > 0) {
        res.recall = rs / double(rn);
        res.rel_err = es / double(rn);
    }
    res.layer_table = sparse::format_layer_table(hybrid->layer_summary());
    if (!opt.ppl_text.empty()) {
        std::ifstream in(opt.ppl_text, std::ios::binary);
        if (!in) throw EngineError("cannot read " + path_to_utf8(opt.ppl_text));
        std::stringstream ss;
        ss << in.rdbuf();
        auto text = tok->encode(ss.str(), false, false);
        const int64_t off =
            std::min<int64_t>(opt.ppl_offset, static_cast<int64_t>(text.size()) / 2);
        text.erase(text.begin(), text.begin() + off);
        const int32_t bos = tok->add_bos() ? tok->bos() : -1;
        m.set_ffn_executor(nullptr);
        res.ppl_dense = perplexity(m, text, opt.ppl_ctx, opt.ppl_windows, bos);
        hybrid->set_sparse_prefill(true);
        m.set_ffn_executor(hybrid.get());
        res.ppl_sparse = perplexity(m, text, opt.ppl_ctx, opt.ppl_windows, bos);
        m.set_ffn_executor(nullptr);
    }
    return res;
}

}  // namespace powerinfer
