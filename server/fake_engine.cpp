#include "fake_engine.h"

#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace powerinfer::server::testing {

ScriptedEngine::ScriptedEngine(Script script) : script_(std::move(script)) {
    std::istringstream in(script_.text);
    std::string word;
    bool first = true;
    while (in >> word) {
        words_.push_back(first ? word : " " + word);
        first = false;
    }
    info_.architecture = "llama";
    info_.name = "Scripted test engine";
    info_.quant = "F32";
    info_.n_params = 1000;
    info_.n_layers = 2;
    info_.n_ff = 64;
    info_.n_ctx = script_.nCtx;
    info_.n_ctx_train = script_.nCtx;
    info_.chat_template_name = "test";
    info_.sparse_status = "sparse: scripted";
    info_.device = "cpu";
}

size_t ScriptedEngine::startWord(const powerinfer::SamplingParams& sampling) const {
    if (sampling.temperature <= 0 || words_.empty()) return 0;
    const uint64_t seed = sampling.seed ? sampling.seed : std::random_device{}();
    return size_t(std::mt19937_64(seed)() % words_.size());
}

powerinfer::GenerateResult ScriptedEngine::generate(
    const powerinfer::GenerateRequest& request,
    const std::function<void(const powerinfer::TokenEvent&)>& on_token,
    const std::atomic<bool>* cancel) {
    const std::string prompt =
        request.messages.empty() ? request.prompt : format_chat(request.messages);
    if (prompt.find(kRejectMarker) != std::string::npos)
        throw powerinfer::EngineError("the prompt was rejected by the scripted engine");
    if (prompt.find(kCrashMarker) != std::string::npos)
        throw std::runtime_error("scripted engine failure");

    powerinfer::GenerateResult result;
    result.prompt_tokens = int(tokenize(prompt, true).size());
    result.evaluated_prompt_tokens = result.prompt_tokens;
    if (result.prompt_tokens >= script_.nCtx)
        throw powerinfer::EngineError("the prompt is longer than the context");
    result.finish = powerinfer::FinishReason::Length;

    size_t word = startWord(request.sampling);
    for (int i = 0; i < request.max_tokens; ++i) {
        if (cancel && cancel->load()) {
            result.finish = powerinfer::FinishReason::Cancelled;
            break;
        }
        if (result.prompt_tokens + i >= script_.nCtx) {
            result.finish = powerinfer::FinishReason::ContextFull;
            break;
        }
        std::this_thread::sleep_for(script_.tokenDelay);
        const std::string piece = words_[word];
        word = (word + 1) % words_.size();
        result.text += piece;
        ++result.generated_tokens;

        powerinfer::TokenEvent event;
        event.token = int32_t(i);
        event.piece = piece;
        event.metrics.token_index = i;
        event.metrics.token_ms = double(script_.tokenDelay.count());
        event.metrics.ffn_neurons_total = info_.n_ff * info_.n_layers;
        event.metrics.active = 10 + i % 20;
        event.metrics.hot_hits = event.metrics.active / 2;
        event.metrics.cache_hits = 1;
        event.metrics.cold_misses = event.metrics.active - event.metrics.hot_hits - 1;
        {
            std::lock_guard lock(mutex_);
            last_ = event.metrics;
            ++tokensServed_;
        }
        // A stop string ends the reply; it is not part of the text.
        size_t cut = std::string::npos;
        for (const auto& stop : request.stop) cut = std::min(cut, result.text.find(stop));
        if (cut != std::string::npos) {
            result.text.resize(cut);
            result.finish = powerinfer::FinishReason::Stop;
            if (on_token) on_token(event);
            break;
        }
        if (on_token) on_token(event);
    }
    result.decode_tokens_per_s = 1000.0 / double(std::max<int64_t>(1, script_.tokenDelay.count()));
    return result;
}

std::string ScriptedEngine::format_chat(
    const std::vector<powerinfer::ChatMessage>& messages) const {
    std::string out;
    for (const auto& m : messages) out += "<|" + m.role + "|> " + m.content + "\n";
    return out + "<|assistant|>";
}

std::vector<int32_t> ScriptedEngine::tokenize(const std::string& text, bool add_special) const {
    std::vector<int32_t> tokens;
    if (add_special) tokens.push_back(1);
    std::istringstream in(text);
    std::string word;
    while (in >> word) tokens.push_back(int32_t(std::hash<std::string>{}(word) % 30000) + 2);
    return tokens;
}

std::string ScriptedEngine::detokenize(const std::vector<int32_t>& tokens) const {
    return std::to_string(tokens.size()) + " tokens";
}

powerinfer::TokenMetrics ScriptedEngine::last_metrics() const {
    std::lock_guard lock(mutex_);
    return last_;
}

powerinfer::MemoryReport ScriptedEngine::memory() const {
    std::lock_guard lock(mutex_);
    powerinfer::MemoryReport m;
    m.device_name = "Scripted device";
    m.simulated = true;
    m.budget_bytes = 64 << 20;
    m.dense_weights = 1 << 20;
    m.hot_neurons = 2 << 20;
    m.predictors = 1 << 16;
    // Grows with use, so tests can see /metrics follow the engine.
    m.kv_cache = 4096 * tokensServed_;
    m.host_weights = 8 << 20;
    return m;
}

}  // namespace powerinfer::server::testing
