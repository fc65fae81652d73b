// A scripted powerinfer::Engine for tests and the demo executable: it streams
// given tokens with delays, reports scripted load progress or errors, and
// produces metrics, so the app can be exercised without a model or runtime.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::app {

struct FakeScript {
    std::vector<std::string> tokens = {"Hello", "!", " How", " can", " I", " help", "?"};
    std::chrono::milliseconds tokenDelay{5};
    // Stream tokens (cycling) until max_tokens or cancel, ignoring EOS.
    bool endless = false;
    // > 0: every reply is exactly this many tokens (cycling, whatever
    // max_tokens asks), then ends as at an end of turn (the demo's long replies).
    int replyTokens = 0;
    std::vector<float> loadSteps = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f};
    std::chrono::milliseconds loadStepDelay{5};
    std::string loadError;  // non-empty: load throws EngineError with it
    std::string modelName = "Fake model";
    int promptTokensPerMessage = 10;
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
    // The KV cache reported in RAM (MemoryReport::host_kv_cache) and how many
    // conversation contexts the engine can keep (Engine::set_conversation_contexts).
    int64_t hostKvCacheBytes = 0;
    int maxConversationContexts = 1;
};

class FakeEngine : public powerinfer::Engine {
public:
    // Plays the load script (progress, cancel, error), then returns the engine.
    static std::unique_ptr<FakeEngine> load(const powerinfer::LoadOptions& options,
                                            FakeScript script);

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
    void reset() override { ++resets_; }
    void set_conversation_contexts(int n) override {
        contexts_ = std::clamp(n, 1, std::max(1, script_.maxConversationContexts));
    }
    int conversation_contexts() const override { return contexts_; }

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
    FakeScript script_;
    powerinfer::ModelInfo info_;
    mutable std::mutex mutex_;
    powerinfer::Tuning tuning_;
    std::vector<powerinfer::Tuning> tuningCalls_;
    powerinfer::TokenMetrics last_;
    powerinfer::GenerateRequest lastRequest_;
    int resets_ = 0;
    int contexts_ = 1;
    int threads_ = 0;
    bool low_priority_ = false;
    std::atomic<int> generate_nice_{-100};
};

}  // namespace powerinfer::app
