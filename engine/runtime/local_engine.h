// The in-process engine behind powerinfer::Engine: tokenizer + chat template
// + model graph + sampler, with KV-cache reuse across turns and a context
// shift when generation fills the context.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "powerinfer/engine.h"
#include "runtime/json_grammar.h"
#include "runtime/sampler.h"

namespace powerinfer {
class Tokenizer;
namespace gguf {
class GgufFile;
}
namespace model {
class Model;
struct SparseOffloadPlan;
}  // namespace model
namespace backend {
class Device;
}
namespace tensor {
class ThreadPool;
}
namespace sparse {
class HybridFfn;
}
struct ChatTemplate;
}  // namespace powerinfer

namespace powerinfer::runtime {

class MoeRuntime;

// Sparse mode on a GPU: the plan of the predictors, the attention blocks
// (LoadOptions::gpu_attention_layers) and the room left for hot neurons, for
// a device reporting device_free_bytes free, already holding
// device_held_bytes of its own (staging) and a sidecar whose predictors take
// predictor_bytes (the budget rule is model::offload_budget_bytes: -1 = free
// memory minus 512 MiB, 0 = nothing, N = N MiB including what the device
// holds).
model::SparseOffloadPlan plan_sparse_attention(const model::Model& model,
                                               const LoadOptions& options,
                                               int64_t device_free_bytes, int64_t predictor_bytes,
                                               int64_t device_held_bytes = 0);

class LocalEngine final : public Engine {
public:
    static std::unique_ptr<LocalEngine> load(const LoadOptions& options);
    ~LocalEngine() override;

    const ModelInfo& info() const override { return info_; }
    GenerateResult generate(const GenerateRequest& request,
                            const std::function<void(const TokenEvent&)>& on_token,
                            const std::atomic<bool>* cancel = nullptr) override;
    std::string request_problem(const GenerateRequest& request) const override;
    void set_max_sequences(int n) override;
    int max_sequences() const override { return static_cast<int>(seqs_.size()); }
    int start_sequence(const GenerateRequest& request) override;
    void cancel_sequence(int sequence) override;
    std::vector<SequenceUpdate> step() override;
    int active_sequences() const override;
    std::string batching_note() const override;
    std::string format_chat(const std::vector<ChatMessage>& messages) const override;
    std::vector<int32_t> tokenize(const std::string& text, bool add_special) const override;
    std::string detokenize(const std::vector<int32_t>& tokens) const override;
    void set_tuning(const Tuning& tuning) override;
    Tuning tuning() const override;
    TokenMetrics last_metrics() const override;
    MemoryReport memory() const override;
    int prefill(const GenerateRequest& request, const std::atomic<bool>* cancel = nullptr) override;
    void reset() override;

    // For the CLI, tests and calibration (same thread as generate()).
    model::Model& model() { return *model_; }
    sparse::HybridFfn* sparse_ffn() { return sparse_.get(); }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    tensor::ThreadPool& pool() { return *pool_; }
    // Tokens whose keys/values are in the cache of the last generate()'s
    // context, in order.
    const std::vector<int32_t>& cached_tokens() const {
        return gen_slot_ == 0 ? cached_ : slot_cached_[static_cast<size_t>(gen_slot_)];
    }
    // The context (sequence slot) the last generate() ran in.
    int last_context() const { return gen_slot_; }
    // The prompt tokens generate() would evaluate for this request (the
    // last prompt's tokens are remembered: asking again costs no encoding).
    std::vector<int32_t> prompt_tokens(const GenerateRequest& request) const;
    // How many times a prompt was encoded (tests: one per chat turn).
    int64_t prompt_encodings() const { return prompt_encodings_.load(); }
    int count_prompt_tokens(const GenerateRequest& request) const override;
    void set_conversation_contexts(int n) override;
    int conversation_contexts() const override { return std::max(1, max_sequences()); }

private:
    LocalEngine() = default;
    void apply_pending_tuning();
    // Puts the first options.gpu_layers layers on the GPU when asked and
    // possible; fills info_.gpu_layers and info_.offload_status.
    void setup_layer_offload(const LoadOptions& options);
    // Sparse mode: puts the planned attention blocks on the HybridFfn's GPU
    // (plan null: no GPU; device_note says why); fills
    // info_.gpu_attention_layers and info_.offload_status.
    void setup_sparse_attention(const LoadOptions& options, const model::SparseOffloadPlan* plan,
                                const std::string& device_note);
    // A generation's state (local_engine.cpp), alone or batched.
    struct Sequence;
    // Evaluates tokens[from..) over slot's cached prefix tokens[0..from),
    // leaving the last token's logits in `logits`; false if cancel became
    // true first (the slot's cache then holds what was evaluated).
    bool evaluate(const std::vector<int32_t>& tokens, size_t from, int slot, float* logits,
                  const std::atomic<bool>* cancel = nullptr);
    // The context for a generate() of this prompt (see set_conversation_contexts).
    int pick_context(const std::vector<int32_t>& prompt, bool reuse);
    // Frees room in q's full context (drops half of what follows the kept
    // start); returns the number of dropped tokens (0: nothing to drop).
    int shift_context(Sequence& q);
    // The one token loop of generate() and step(): a checked prompt and its
    // sampler, detokenizer, stops and grammar; the prompt's figures once it
    // is evaluated; then per token: sample, stream, decide whether the
    // reply ends (q.result.finish) or the token is appended to the slot's
    // cache for evaluation (true), shifting a full context first; and the
    // result, with the held-back tail as a last event. Events go to `emit`
    // as they happen (a token is streamed before a shift it triggers).
    std::unique_ptr<Sequence> new_sequence(const GenerateRequest& request);
    void prompt_done(Sequence& q);
    using Emit = std::function<void(TokenEvent&&)>;
    bool next_token(Sequence& q, const Emit& emit);
    GenerateResult finish_sequence(Sequence& q, const Emit& emit);
    int keep_on_shift(const GenerateRequest& request, const std::vector<int32_t>& prompt) const;
    // The prompt's tokens checked as generate() checks them (throws).
    std::vector<int32_t> checked_prompt(const GenerateRequest& request) const;
    // The request's grammar, with the vocabulary's pieces ready (null:
    // unconstrained).
    std::unique_ptr<GrammarMatcher> constraint_matcher(const GenerateRequest& request);
    // The stop strings of a request (a chat turn's end text unless constrained).
    std::vector<std::string> stop_strings(const GenerateRequest& request, bool constrained) const;
    // The next token (-1: none can continue the structured output): with a
    // matcher only tokens that continue the document and leave it closable
    // in `left` more tokens.
    int32_t sample_token(Sampler& sampler, const float* logits, std::span<const int32_t> recent,
                         GrammarMatcher* matcher, int64_t left);
    TokenMetrics token_metrics(int64_t index, double token_ms);
    std::vector<int32_t>& slot_tokens(int slot) {
        return slot == 0 ? cached_ : slot_cached_[static_cast<size_t>(slot)];
    }

    ModelInfo info_;
    std::shared_ptr<const gguf::GgufFile> file_;
    std::unique_ptr<tensor::ThreadPool> pool_;
    std::unique_ptr<model::Model> model_;
    // The hybrid sparse FFN executor (null: dense); declared after model_ so
    // that it is destroyed first.
    std::unique_ptr<sparse::HybridFfn> sparse_;
    // Mixture-of-experts models: expert placement, its knobs and metrics
    // (null for dense models); destroyed before model_ too.
    std::unique_ptr<MoeRuntime> moe_;
    // Layer offload: the GPU whose backend runs the model's first layers (the
    // destructor takes the plan back from the model before any device goes).
    // In sparse mode the attention runs on sparse_'s device.
    std::unique_ptr<backend::Device> offload_device_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::unique_ptr<ChatTemplate> template_;
    bool tool_native_ = false;  // the template writes <tool_call> itself
    // Each token's bytes (control tokens: ""), for constrained sampling;
    // filled on the first constrained request.
    std::vector<std::string> pieces_;
    // Continuous batching: one entry per sequence slot (null: free); slot
    // 0's cache is generate()'s (cached_), the others' tokens are in
    // slot_cached_.
    std::vector<std::unique_ptr<Sequence>> seqs_;
    std::vector<std::vector<int32_t>> slot_cached_;
    size_t next_prefill_ = 0;  // round-robin over sequences still in their prompt

    std::vector<int32_t> cached_;
    // Conversation contexts: the slot generate() runs in and each slot's
    // last use (for the least recently used one).
    int gen_slot_ = 0;
    std::vector<uint64_t> slot_used_;
    // Per slot: how many leading cached tokens a prompt evaluation wrote
    // (the rest were decoded one at a time: not reused, see generate()).
    std::vector<size_t> slot_prefilled_;
    size_t& prefilled(int slot);
    // How many of a prompt's first tokens may come from `cached` reusable
    // ones so that the rest evaluates as in a fresh context (see the .cpp).
    size_t reusable_prefix(size_t cached, size_t prompt_size) const;
    uint64_t use_clock_ = 0;
    // The last prompt's text and tokens (prompt_tokens()).
    mutable std::mutex memo_mutex_;
    mutable bool memo_valid_ = false;
    mutable bool memo_chat_ = false;
    mutable std::string memo_text_;
    mutable std::vector<int32_t> memo_tokens_;
    mutable std::atomic<int64_t> prompt_encodings_{0};

    mutable std::mutex mutex_;  // guards the members below (read from other threads)
    Tuning tuning_;
    bool tuning_dirty_ = false;
    TokenMetrics last_metrics_;
};

}  // namespace powerinfer::runtime
