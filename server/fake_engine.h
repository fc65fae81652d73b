// A scripted powerinfer::Engine for the server's tests: it "generates" the
// words of a fixed text, one token per word, with a configurable delay, and
// honours max_tokens, stop strings, seeds and cancellation the way the facade
// promises, so the HTTP layer can be tested without a model.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::server::testing {

class ScriptedEngine final : public powerinfer::Engine {
public:
    struct Script {
        // Tokens are this text's space-separated words (with their space).
        std::string text =
            "It was on a dreary night of November that I beheld the accomplishment of my toils. "
            "With an anxiety that almost amounted to agony, I collected the instruments of life "
            "around me, that I might infuse a spark of being into the lifeless thing that lay at "
            "my feet.";
        std::chrono::milliseconds tokenDelay{1};
        int nCtx = 2048;
    };

    explicit ScriptedEngine(Script script);

    const powerinfer::ModelInfo& info() const override { return info_; }
    powerinfer::GenerateResult generate(
        const powerinfer::GenerateRequest& request,
        const std::function<void(const powerinfer::TokenEvent&)>& on_token,
        const std::atomic<bool>* cancel) override;
    std::string format_chat(const std::vector<powerinfer::ChatMessage>& messages) const override;
    std::vector<int32_t> tokenize(const std::string& text, bool add_special) const override;
    std::string detokenize(const std::vector<int32_t>& tokens) const override;
    void set_tuning(const powerinfer::Tuning& tuning) override { tuning_ = tuning; }
    powerinfer::Tuning tuning() const override { return tuning_; }
    powerinfer::TokenMetrics last_metrics() const override;
    powerinfer::MemoryReport memory() const override;
    void reset() override {}

    // The words a request with this seed and temperature starts from: greedy
    // (temperature 0) always starts at word 0, else the seed picks the start.
    size_t startWord(const powerinfer::SamplingParams& sampling) const;

    // Prompts containing these make generate() throw, to test error paths.
    static constexpr const char* kRejectMarker = "<<reject>>";  // EngineError
    static constexpr const char* kCrashMarker = "<<crash>>";    // std::runtime_error

private:
    Script script_;
    std::vector<std::string> words_;
    powerinfer::ModelInfo info_;
    powerinfer::Tuning tuning_;
    mutable std::mutex mutex_;
    powerinfer::TokenMetrics last_;
    int64_t tokensServed_ = 0;
};

}  // namespace powerinfer::server::testing
