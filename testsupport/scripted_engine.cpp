#include "scripted_engine.h"

#include <cmath>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "powerinfer/threads.h"

namespace powerinfer::testing {

EngineScript EngineScript::words(std::string text) {
    EngineScript s;
    s.tokens.clear();
    std::istringstream in(text);
    std::string word;
    while (in >> word) s.tokens.push_back(s.tokens.empty() ? word : " " + word);
    s.tokenDelay = std::chrono::milliseconds(1);
    s.endless = true;
    s.seededStart = true;
    s.tokenizer = Tokenizer::Words;
    s.promptTokensPerMessage = 0;
    s.nCtx = 2048;
    s.stopAtContextEnd = true;
    s.modelName = "Scripted test engine";
    s.layers = 2;
    s.kvBytesPerToken = 4096;
    return s;
}

ScriptedEngine::ScriptedEngine(EngineScript script, const powerinfer::LoadOptions& options)
    : script_(std::move(script)) {
    if (script_.tokens.empty()) script_.tokens.push_back(" ");
    info_.architecture = "llama";
    info_.name = script_.modelName;
    info_.template_warning = script_.templateWarning;
    info_.quant = "Q4_1";
    info_.n_params = 135'000'000;
    info_.n_layers = script_.layers;
    info_.n_ff = 1536;
    info_.has_sidecar = script_.sidecar;
    if (script_.sidecar) info_.sparsity_curve = script_.curve;
    info_.n_ctx_train = std::max(8192, script_.nCtx);
    info_.n_ctx = script_.nCtx > 0 ? script_.nCtx : options.n_ctx;
    info_.chat_template_name = "chatml";
    info_.sparse_status = script_.sidecar ? "sparse: fake sidecar, simulated device"
                                          : "dense: no sidecar next to the model (fake engine)";
    info_.device = "CPU (fake engine)";
    tuning_ = options.tuning;
    threads_ = options.n_threads;
    low_priority_ = options.low_priority_threads;
}

std::unique_ptr<ScriptedEngine> ScriptedEngine::load(const powerinfer::LoadOptions& options,
                                                     EngineScript script) {
    for (float step : script.loadSteps) {
        if (options.progress && !options.progress(step)) throw powerinfer::LoadCancelled();
        std::this_thread::sleep_for(script.loadStepDelay);
    }
    if (!script.loadError.empty()) throw powerinfer::EngineError(script.loadError);
    return std::make_unique<ScriptedEngine>(std::move(script), options);
}

size_t ScriptedEngine::startPiece(const powerinfer::SamplingParams& sampling) const {
    if (!script_.seededStart || sampling.temperature <= 0) return 0;
    const uint64_t seed = sampling.seed ? sampling.seed : std::random_device{}();
    return size_t(std::mt19937_64(seed)() % script_.tokens.size());
}

int ScriptedEngine::prefill(const powerinfer::GenerateRequest& request,
                            const std::atomic<bool>* cancel) {
    size_t index = 0;
    {
        std::lock_guard lock(mutex_);
        index = prefills_.size();
        prefills_.push_back({request.messages, false});
    }
    bool cancelled = false;
    const auto end = std::chrono::steady_clock::now() + script_.prefillDelay;
    while (std::chrono::steady_clock::now() < end && !cancelled) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        cancelled = cancel && cancel->load();
    }
    std::lock_guard lock(mutex_);
    prefills_[index].cancelled = cancelled;
    return cancelled ? 0 : static_cast<int>(request.messages.size());
}

std::vector<ScriptedEngine::Prefill> ScriptedEngine::prefills() const {
    std::lock_guard lock(mutex_);
    return prefills_;
}

powerinfer::GenerateResult ScriptedEngine::generate(
    const powerinfer::GenerateRequest& request,
    const std::function<void(const powerinfer::TokenEvent&)>& on_token,
    const std::atomic<bool>* cancel) {
    generate_nice_ = powerinfer::current_thread_nice();
    lastRequest_ = request;
    const std::string prompt =
        request.messages.empty() ? request.prompt : format_chat(request.messages);
    if (prompt.find(kRejectMarker) != std::string::npos)
        throw powerinfer::EngineError("the prompt was rejected by the scripted engine");
    if (prompt.find(kCrashMarker) != std::string::npos)
        throw std::runtime_error("scripted engine failure");
    // Like the runtime: a prompt that does not fit the context is refused.
    const int promptLength = int(tokenize(prompt, true).size());
    if (info_.n_ctx > 0 && promptLength >= info_.n_ctx)
        throw powerinfer::EngineError(
            "the prompt has " + std::to_string(promptLength) + " tokens but the context holds " +
            std::to_string(info_.n_ctx) + ": shorten the conversation or raise the context size");

    powerinfer::GenerateResult r;
    r.prompt_tokens = script_.promptTokensPerMessage > 0
                          ? int(request.messages.size()) * script_.promptTokensPerMessage
                          : promptLength;
    r.evaluated_prompt_tokens = r.prompt_tokens;
    const auto start = std::chrono::steady_clock::now();
    const size_t n = script_.tokens.size();
    const size_t maxTokens = size_t(std::max(0, request.max_tokens));
    size_t limit = script_.endless ? maxTokens : std::min(n, maxTokens);
    r.finish = script_.endless || n > maxTokens ? powerinfer::FinishReason::Length
                                                : powerinfer::FinishReason::Stop;
    if (script_.replyTokens > 0) {
        limit = size_t(script_.replyTokens);
        r.finish = powerinfer::FinishReason::Stop;
    }
    const size_t first = startPiece(request.sampling);
    for (size_t i = 0; i < limit; ++i) {
        if (cancel && cancel->load()) {
            r.finish = powerinfer::FinishReason::Cancelled;
            break;
        }
        if (script_.stopAtContextEnd && info_.n_ctx > 0 && promptLength + int(i) >= info_.n_ctx) {
            r.finish = powerinfer::FinishReason::ContextFull;
            break;
        }
        std::this_thread::sleep_for(script_.tokenDelay);
        powerinfer::TokenEvent ev;
        ev.piece = script_.tokens[(first + i) % n];
        ev.token = int32_t((first + i) % n);
        ev.metrics = metricsFor(int64_t(i));
        {
            std::lock_guard lock(mutex_);
            last_ = ev.metrics;
            ++tokensServed_;
        }
        r.text += ev.piece;
        ++r.generated_tokens;
        // A stop string ends the reply; it is not part of the text.
        size_t cut = std::string::npos;
        for (const auto& stop : request.stop)
            if (!stop.empty()) cut = std::min(cut, r.text.find(stop));
        if (cut != std::string::npos) {
            r.text.resize(cut);
            r.finish = powerinfer::FinishReason::Stop;
            if (on_token) on_token(ev);
            break;
        }
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

std::string ScriptedEngine::format_chat(
    const std::vector<powerinfer::ChatMessage>& messages) const {
    std::string out;
    for (const auto& m : messages) out += "<|" + m.role + "|>" + m.content + "\n";
    return out + "<|assistant|>";
}

std::vector<int32_t> ScriptedEngine::tokenize(const std::string& text, bool add_special) const {
    if (script_.tokenizer == EngineScript::Tokenizer::Bytes)
        return std::vector<int32_t>(text.begin(), text.end());
    std::vector<int32_t> tokens;
    if (add_special) tokens.push_back(1);
    std::istringstream in(text);
    std::string word;
    while (in >> word) tokens.push_back(int32_t(std::hash<std::string>{}(word) % 30000) + 2);
    return tokens;
}

std::string ScriptedEngine::detokenize(const std::vector<int32_t>& tokens) const {
    if (script_.tokenizer == EngineScript::Tokenizer::Bytes)
        return std::string(tokens.begin(), tokens.end());
    return std::to_string(tokens.size()) + " tokens";
}

void ScriptedEngine::set_tuning(const powerinfer::Tuning& tuning) {
    std::lock_guard lock(mutex_);
    tuning_ = tuning;
    tuningCalls_.push_back(tuning);
}

powerinfer::Tuning ScriptedEngine::tuning() const {
    std::lock_guard lock(mutex_);
    return tuning_;
}

std::vector<powerinfer::Tuning> ScriptedEngine::tuningCalls() const {
    std::lock_guard lock(mutex_);
    return tuningCalls_;
}

powerinfer::TokenMetrics ScriptedEngine::metricsFor(int64_t i) const {
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

powerinfer::MemoryReport ScriptedEngine::memory() const {
    const powerinfer::Tuning t = tuning();
    std::lock_guard lock(mutex_);
    powerinfer::MemoryReport m;
    m.device_name = "CPU (fake engine)";
    m.simulated = true;
    constexpr int64_t MiB = 1 << 20;
    m.budget_bytes = (t.vram_budget_mb >= 0 ? t.vram_budget_mb : 160) * MiB;
    m.dense_weights = 40 * MiB;
    m.kv_cache = 12 * MiB + script_.kvBytesPerToken * tokensServed_;
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

}  // namespace powerinfer::testing
