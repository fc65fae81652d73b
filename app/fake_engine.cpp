#include "fake_engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "powerinfer/threads.h"

namespace powerinfer::app {

std::unique_ptr<FakeEngine> FakeEngine::load(const powerinfer::LoadOptions& options,
                                             FakeScript script) {
    for (float step : script.loadSteps) {
        if (options.progress && !options.progress(step)) throw powerinfer::LoadCancelled();
        std::this_thread::sleep_for(script.loadStepDelay);
    }
    if (!script.loadError.empty()) throw powerinfer::EngineError(script.loadError);
    auto engine = std::unique_ptr<FakeEngine>(new FakeEngine);
    engine->info_.architecture = "llama";
    engine->info_.name = script.modelName;
    engine->info_.quant = "Q4_1";
    engine->info_.n_params = 135'000'000;
    engine->info_.n_layers = script.layers;
    engine->info_.n_ff = 1536;
    engine->info_.has_sidecar = script.sidecar;
    if (script.sidecar) engine->info_.sparsity_curve = script.curve;
    engine->info_.n_ctx_train = 8192;
    engine->info_.n_ctx = options.n_ctx;
    engine->info_.chat_template_name = "chatml";
    engine->info_.sparse_status = script.sidecar
                                      ? "sparse: fake sidecar, simulated device"
                                      : "dense: no sidecar next to the model (fake engine)";
    engine->info_.device = "CPU (fake engine)";
    engine->tuning_ = options.tuning;
    engine->threads_ = options.n_threads;
    engine->low_priority_ = options.low_priority_threads;
    engine->script_ = std::move(script);
    return engine;
}

powerinfer::GenerateResult FakeEngine::generate(
    const powerinfer::GenerateRequest& request,
    const std::function<void(const powerinfer::TokenEvent&)>& on_token,
    const std::atomic<bool>* cancel) {
    generate_nice_ = powerinfer::current_thread_nice();
    lastRequest_ = request;
    powerinfer::GenerateResult r;
    // Like the runtime: a prompt that does not fit the context is refused
    // (one fake token per byte of the formatted prompt).
    const size_t promptLength =
        request.messages.empty() ? request.prompt.size() : format_chat(request.messages).size();
    if (info_.n_ctx > 0 && promptLength >= size_t(info_.n_ctx))
        throw powerinfer::EngineError(
            "the prompt has " + std::to_string(promptLength) + " tokens but the context holds " +
            std::to_string(info_.n_ctx) + ": shorten the conversation or raise the context size");
    r.prompt_tokens = int(request.messages.size()) * script_.promptTokensPerMessage;
    r.evaluated_prompt_tokens = r.prompt_tokens;
    const auto start = std::chrono::steady_clock::now();
    const size_t n = script_.tokens.size();
    size_t limit =
        script_.endless ? size_t(request.max_tokens) : std::min(n, size_t(request.max_tokens));
    r.finish = script_.endless || n > size_t(request.max_tokens) ? powerinfer::FinishReason::Length
                                                                 : powerinfer::FinishReason::Stop;
    if (script_.replyTokens > 0) {
        limit = size_t(script_.replyTokens);
        r.finish = powerinfer::FinishReason::Stop;
    }
    for (size_t i = 0; i < limit; ++i) {
        if (cancel && cancel->load()) {
            r.finish = powerinfer::FinishReason::Cancelled;
            break;
        }
        std::this_thread::sleep_for(script_.tokenDelay);
        powerinfer::TokenEvent ev;
        ev.piece = script_.tokens[i % n];
        ev.token = int32_t(i % n);
        ev.metrics = metricsFor(int64_t(i));
        {
            std::lock_guard lock(mutex_);
            last_ = ev.metrics;
        }
        r.text += ev.piece;
        ++r.generated_tokens;
        if (on_token) on_token(ev);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.decode_tokens_per_s = seconds > 0 ? r.generated_tokens / seconds : 0;
    const double scripted = tuning().sparse && info_.has_sidecar ? script_.sparseTokensPerSecond
                                                                 : script_.denseTokensPerSecond;
    if (scripted > 0) r.decode_tokens_per_s = scripted;
    return r;
}

std::string FakeEngine::format_chat(const std::vector<powerinfer::ChatMessage>& messages) const {
    std::string out;
    for (const auto& m : messages) out += "<|" + m.role + "|>" + m.content + "\n";
    return out + "<|assistant|>";
}

std::vector<int32_t> FakeEngine::tokenize(const std::string& text, bool) const {
    return std::vector<int32_t>(text.begin(), text.end());
}

std::string FakeEngine::detokenize(const std::vector<int32_t>& tokens) const {
    return std::string(tokens.begin(), tokens.end());
}

void FakeEngine::set_tuning(const powerinfer::Tuning& tuning) {
    std::lock_guard lock(mutex_);
    tuning_ = tuning;
    tuningCalls_.push_back(tuning);
}

powerinfer::Tuning FakeEngine::tuning() const {
    std::lock_guard lock(mutex_);
    return tuning_;
}

std::vector<powerinfer::Tuning> FakeEngine::tuningCalls() const {
    std::lock_guard lock(mutex_);
    return tuningCalls_;
}

powerinfer::TokenMetrics FakeEngine::metricsFor(int64_t i) const {
    const powerinfer::Tuning t = tuning();
    powerinfer::TokenMetrics m;
    m.token_index = i;
    m.token_ms = double(script_.tokenDelay.count());
    if (!script_.sidecar || !t.sparse) {  // like the runtime's dense path
        m.cpu_ms = m.token_ms;
        m.ffn_neurons_total = m.active = 1000;
        return m;
    }
    // At the default knobs: 200 of 1000 active, 150 hot hits, 30 cache hits.
    m.ffn_neurons_total = 1000;
    m.active = std::clamp<int64_t>(
        std::llround(200.0 * std::sqrt(0.5 / std::max(0.05, t.predictor_threshold))), 1, 1000);
    m.hot_hits = std::min<int64_t>(
        m.active, std::llround(double(m.active) * 0.75 * t.hot_neuron_threshold / 0.85));
    m.cache_hits = std::min<int64_t>(
        m.active - m.hot_hits,
        std::llround(double(m.active) * 0.15 * std::min(1.0, t.cache_window_size / 8.0)));
    m.cold_misses = m.active - m.hot_hits - m.cache_hits;
    m.predictor_ms = 0.1 * m.token_ms;
    m.device_ms = 0.6 * m.token_ms;
    m.cpu_ms = 0.3 * m.token_ms;
    m.recall = 0.9 + 0.04 * std::sin(double(i) * 0.4);
    const double hit = m.hit_rate(), active = double(m.active) / double(m.ffn_neurons_total);
    for (int l = 0; l < script_.layers; ++l) {
        // A deterministic wobble so each layer and token differ.
        const double w = std::sin(double(l) * 0.7 + double(i) * 0.3);
        m.layer_hit_rate.push_back(float(std::clamp(hit + 0.08 * w - 0.004 * l, 0.0, 1.0)));
        m.layer_active_fraction.push_back(
            float(std::clamp(active * (0.6 + 0.03 * l) + 0.03 * w, 0.0, 1.0)));
    }
    return m;
}

powerinfer::MemoryReport FakeEngine::memory() const {
    const powerinfer::Tuning t = tuning();
    powerinfer::MemoryReport m;
    m.device_name = "CPU (fake engine)";
    m.simulated = true;
    constexpr int64_t MiB = 1 << 20;
    m.budget_bytes = (t.vram_budget_mb >= 0 ? t.vram_budget_mb : 160) * MiB;
    m.dense_weights = 40 * MiB;
    m.kv_cache = 12 * MiB;
    if (script_.sidecar && t.sparse) {
        m.predictors = 6 * MiB;
        m.hot_neurons =
            std::min<int64_t>(std::llround(60.0 * MiB * t.hot_neuron_threshold / 0.85),
                              m.budget_bytes - m.dense_weights - m.kv_cache - m.predictors);
        m.neuron_cache = std::min<int64_t>(
            int64_t(t.cache_window_size) * MiB,
            m.budget_bytes - m.dense_weights - m.kv_cache - m.predictors - m.hot_neurons);
        m.neuron_cache = std::max<int64_t>(0, m.neuron_cache);
        m.hot_neurons = std::max<int64_t>(0, m.hot_neurons);
    }
    m.host_weights = 90 * MiB;
    m.host_kv_cache = script_.hostKvCacheBytes;
    return m;
}

}  // namespace powerinfer::app
