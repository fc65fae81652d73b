#include "fake_engine.h"

#include <chrono>
#include <thread>

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
    engine->info_.n_layers = 30;
    engine->info_.n_ctx_train = 8192;
    engine->info_.n_ctx = options.n_ctx;
    engine->info_.chat_template_name = "chatml";
    engine->info_.sparse_status = "dense (fake engine)";
    engine->info_.device = "CPU (fake engine)";
    engine->tuning_ = options.tuning;
    engine->threads_ = options.n_threads;
    engine->script_ = std::move(script);
    return engine;
}

powerinfer::GenerateResult FakeEngine::generate(
    const powerinfer::GenerateRequest& request,
    const std::function<void(const powerinfer::TokenEvent&)>& on_token,
    const std::atomic<bool>* cancel) {
    lastRequest_ = request;
    powerinfer::GenerateResult r;
    r.prompt_tokens = int(request.messages.size()) * script_.promptTokensPerMessage;
    r.evaluated_prompt_tokens = r.prompt_tokens;
    const auto start = std::chrono::steady_clock::now();
    const size_t n = script_.tokens.size();
    const size_t limit =
        script_.endless ? size_t(request.max_tokens) : std::min(n, size_t(request.max_tokens));
    r.finish = script_.endless || n > size_t(request.max_tokens) ? powerinfer::FinishReason::Length
                                                                 : powerinfer::FinishReason::Stop;
    for (size_t i = 0; i < limit; ++i) {
        if (cancel && cancel->load()) {
            r.finish = powerinfer::FinishReason::Cancelled;
            break;
        }
        std::this_thread::sleep_for(script_.tokenDelay);
        powerinfer::TokenEvent ev;
        ev.piece = script_.tokens[i % n];
        ev.token = int32_t(i % n);
        ev.metrics.token_index = int64_t(i);
        ev.metrics.ffn_neurons_total = 1000;
        ev.metrics.active = 200;
        ev.metrics.hot_hits = 150;
        ev.metrics.cache_hits = 30;
        ev.metrics.cold_misses = 20;
        last_ = ev.metrics;
        r.text += ev.piece;
        ++r.generated_tokens;
        if (on_token) on_token(ev);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.decode_tokens_per_s = seconds > 0 ? r.generated_tokens / seconds : 0;
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

powerinfer::MemoryReport FakeEngine::memory() const {
    powerinfer::MemoryReport m;
    m.device_name = "CPU (fake engine)";
    return m;
}

}  // namespace powerinfer::app
