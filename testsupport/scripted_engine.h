// The one scripted powerinfer::Engine of the project, for the tests of the
// app and of the server and for the desktop demo executable: it streams the
// pieces of a script with a delay, reports scripted load progress or errors,
// produces per-token metrics shaped by the tuning (sparse with a sidecar,
// dense without), and honours max_tokens, stop strings, seeds, cancellation
// and the context the way the facade promises, so that everything above the
// facade can be exercised without a model or the runtime.
//
// It depends only on the facade header (engine/include) and pi_common, so
// both pi_app's and pi_server's test targets may link it.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::testing {

struct EngineScript {
    // The reply's pieces, in order (cycled when a reply is longer).
    std::vector<std::string> tokens = {"Hello", "!", " How", " can", " I", " help", "?"};
    std::chrono::milliseconds tokenDelay{5};
    // Stream pieces (cycling) until max_tokens or cancel, ignoring EOS;
    // otherwise a reply ends (FinishReason::Stop) after the last piece.
    bool endless = false;
    // > 0: every reply is exactly this many tokens (cycling, whatever
    // max_tokens asks), then ends as at an end of turn (the demo's long replies).
    int replyTokens = 0;
    // With a temperature above 0 the request's seed picks the first piece
    // (the same seed, the same reply); greedy requests start at piece 0.
    bool seededStart = false;
    // How text becomes tokens: one per byte, or BOS plus one per
    // whitespace-separated word.
    enum class Tokenizer { Bytes, Words };
    Tokenizer tokenizer = Tokenizer::Bytes;
    // > 0: GenerateResult::prompt_tokens is this many per message; 0: the
    // tokenizer's count of the formatted prompt.
    int promptTokensPerMessage = 10;
    // > 0: the context length (else LoadOptions::n_ctx). A prompt that does
    // not fit is refused; with stopAtContextEnd a reply that fills the
    // context ends with FinishReason::ContextFull.
    int nCtx = 0;
    bool stopAtContextEnd = false;

    std::vector<float> loadSteps = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f};
    std::chrono::milliseconds loadStepDelay{5};
    std::string loadError;  // non-empty: load throws EngineError with it
    std::string modelName = "Fake model";
    std::string templateWarning;  // ModelInfo::template_warning
    // With a sidecar the engine reports sparse metrics (per-layer arrays,
    // shaped by the tuning) while tuning.sparse is on; without one it is dense.
    bool sidecar = true;
    int layers = 30;
    // > 0: the decode speed reported with tuning.sparse off / on instead of the
    // measured one, so a decision on speed does not hang on the machine's load.
    double denseTokensPerSecond = 0;
    double sparseTokensPerSecond = 0;
    // The sidecar's measured sparsity curve (ModelInfo::sparsity_curve).
    powerinfer::SparsityCurve curve;
    // The KV cache reported in RAM (MemoryReport::host_kv_cache), the device
    // KV cache's growth per token served (so /metrics can be seen following
    // the engine), and how many conversation contexts the engine can keep
    // (Engine::set_conversation_contexts).
    int64_t hostKvCacheBytes = 0;
    int64_t kvBytesPerToken = 0;
    int maxConversationContexts = 1;
    // How long prefill() takes (it returns early when cancelled).
    std::chrono::milliseconds prefillDelay{0};

    // The server tests' script: the words of `text` (each with its leading
    // space), endless, word tokens, seeded starts, a 2,048-token context.
    static EngineScript words(std::string text = kDefaultText);
    static constexpr const char* kDefaultText =
        "It was on a dreary night of November that I beheld the accomplishment of my toils. "
        "With an anxiety that almost amounted to agony, I collected the instruments of life "
        "around me, that I might infuse a spark of being into the lifeless thing that lay at "
        "my feet.";
};

class ScriptedEngine : public powerinfer::Engine {
public:
    using Script = EngineScript;
    // Prompts containing these make generate() throw, to test error paths.
    static constexpr const char* kRejectMarker = "<<reject>>";  // EngineError
    static constexpr const char* kCrashMarker = "<<crash>>";    // std::runtime_error

    explicit ScriptedEngine(EngineScript script, const powerinfer::LoadOptions& options = {});
    // Plays the load script (progress, cancel, error), then returns the engine.
    static std::unique_ptr<ScriptedEngine> load(const powerinfer::LoadOptions& options,
                                                EngineScript script);

    const powerinfer::ModelInfo& info() const override { return info_; }
    powerinfer::GenerateResult generate(
        const powerinfer::GenerateRequest& request,
        const std::function<void(const powerinfer::TokenEvent&)>& on_token,
        const std::atomic<bool>* cancel) override;
    std::string format_chat(const std::vector<powerinfer::ChatMessage>& messages) const override;
    std::vector<int32_t> tokenize(const std::string& text, bool add_special) const override;
    std::string detokenize(const std::vector<int32_t>& tokens) const override;
    void set_tuning(const powerinfer::Tuning& tuning) override;
    powerinfer::Tuning tuning() const override;
    powerinfer::TokenMetrics last_metrics() const override {
        std::lock_guard lock(mutex_);
        return last_;
    }
    powerinfer::MemoryReport memory() const override;
    int prefill(const powerinfer::GenerateRequest& request,
                const std::atomic<bool>* cancel) override;
    void reset() override { ++resets_; }
    void set_conversation_contexts(int n) override {
        contexts_ = std::clamp(n, 1, std::max(1, script_.maxConversationContexts));
    }
    int conversation_contexts() const override { return contexts_; }

    // Every prefill() call (from its start): its messages and whether it
    // was cancelled (thread-safe: tests read it while the engine thread works).
    struct Prefill {
        std::vector<powerinfer::ChatMessage> messages;
        bool cancelled = false;
    };
    std::vector<Prefill> prefills() const;

    // The piece a request with this sampling starts from.
    size_t startPiece(const powerinfer::SamplingParams& sampling) const;
    // What the last request asked for (tests inspect it).
    const powerinfer::GenerateRequest& lastRequest() const { return lastRequest_; }
    int resets() const { return resets_; }
    int loadedThreads() const { return threads_; }
    bool loadedLowPriority() const { return low_priority_; }
    // The nice value of the thread that ran the last generate() (Linux).
    int generateThreadNice() const { return generate_nice_.load(); }
    // Every set_tuning call, in order (thread-safe: tests read it while the
    // engine thread generates).
    std::vector<powerinfer::Tuning> tuningCalls() const;
    // The sample the engine reports for token i under the current tuning.
    powerinfer::TokenMetrics metricsFor(int64_t i) const;

private:
    EngineScript script_;
    powerinfer::ModelInfo info_;
    mutable std::mutex mutex_;
    powerinfer::Tuning tuning_;
    std::vector<powerinfer::Tuning> tuningCalls_;
    std::vector<Prefill> prefills_;
    powerinfer::TokenMetrics last_;
    powerinfer::GenerateRequest lastRequest_;
    int64_t tokensServed_ = 0;
    int resets_ = 0;
    int contexts_ = 1;
    int threads_ = 0;
    bool low_priority_ = false;
    std::atomic<int> generate_nice_{-100};
};

}  // namespace powerinfer::testing
