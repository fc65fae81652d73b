// The engine's public facade, shared by the CLI, the GUI and the server.
// Qt-free. Errors a user can cause (bad file, bad option) are thrown as
// powerinfer::EngineError with a message that says what to do; nothing here
// aborts on bad input.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "powerinfer/error.h"

namespace powerinfer {

// The live knobs (docs/architecture.md, "Knobs"). Same keys in config.json.
struct Tuning {
    double hot_neuron_threshold = 0.85;
    double predictor_threshold = 0.5;
    int cache_window_size = 8;
    int prefetch_depth = 2;
    int chunk_size = 256;
    std::vector<int> force_full_precision_layers;
    int64_t vram_budget_mb = -1;  // -1 = auto
    bool sparse = true;
    // CPU-side activation sparsity (exact activity, sparse engine v2): the
    // fraction of FFN neurons skipped per token; -1 = the sidecar's
    // calibrated setting.
    double activation_sparsity = -1;
    // The output head's preview (CPU sparse mode, a sidecar with a head
    // basis): the number of vocabulary rows computed exactly per decoded
    // token, the rest from the low-rank preview; -1 = the default (4096, at
    // most an eighth of the vocabulary), 0 = the whole head, dense.
    int head_candidates = -1;
};

struct LoadOptions {
    std::filesystem::path model_path;
    std::filesystem::path sidecar_path;  // empty: MODEL.powerinfer.gguf next to the model
    int n_threads = 0;                   // 0: all cores
    int n_ctx = 2048;                    // context length (capped by the model's)
    std::string device = "auto";         // "auto", "cpu", "cuda:N"
    // Layer offload (llama.cpp's -ngl): the first N transformer layers run
    // wholly on the GPU (dense; not combined with sparse inference).
    // -1 = as many as fit the VRAM budget, 0 = none. Without a GPU the model
    // runs on the CPU and ModelInfo::offload_status says why.
    int gpu_layers = 0;
    // Sparse inference on a GPU (PowerInfer's placement): the attention half
    // of the first N layers (norms, Q/K/V, RoPE, KV cache, attention, output
    // projection) and the output head run on the GPU, the FFN stays hybrid
    // (hot neurons on the GPU, cold on the CPU). The VRAM budget goes to the
    // predictors first, then attention, then hot neurons. -1 = as many layers
    // as fit, 0 = none (only predictors and hot neurons on the GPU).
    int gpu_attention_layers = -1;
    // Run the engine's worker threads below normal priority (a GUI process
    // sets this, and lowers the thread that calls generate() itself with
    // powerinfer/threads.h): replies stay as fast on an idle machine, and
    // the GUI thread is never starved.
    bool low_priority_threads = false;
    // Workers of the CPU device (sparse mode without a GPU), which run beside
    // the model's pool while hot and cold neurons overlap; 0 = n_threads.
    int device_threads = 0;
    // The CPU sparse engine (no GPU): 2 (the default) skips FFN neurons by
    // their exact activity; 3 skips inputs of every matrix (attention, FFN,
    // output head) from input-major copies. v3 is measured slower than v2
    // and dense on the small models so far (docs/benchmarks.md, "Sparse
    // engine v3"), hence opt-in.
    int sparse_engine = 2;
    Tuning tuning;
    // Called with progress in [0,1]; return false to cancel (load throws
    // LoadCancelled).
    std::function<bool(float)> progress;
};

// A progress callback returned false (a model load, or a calibration:
// powerinfer/calibration.h).
class LoadCancelled : public EngineError {
public:
    LoadCancelled() : EngineError("model load cancelled") {}

protected:
    explicit LoadCancelled(const std::string& what) : EngineError(what) {}
};

// generate() refused a prompt that does not fit the context (OpenAI's
// context_length_exceeded).
class ContextLengthExceeded : public EngineError {
public:
    using EngineError::EngineError;
};

struct SamplingParams {
    float temperature = 0.7f;  // 0 = greedy
    int top_k = 40;            // 0 = off
    float top_p = 0.95f;       // 1 = off
    float min_p = 0.05f;       // 0 = off
    float repeat_penalty = 1.0f;
    int repeat_last_n = 64;
    uint64_t seed = 0;  // 0: random
};

struct ChatMessage {
    std::string role;  // "system", "user", "assistant"
    std::string content;
};

// Structured output: the reply is `prefix`, one JSON document valid under
// `json_schema`, then `suffix`, enforced while sampling (tokens that cannot
// continue such a text are never drawn; the reply ends when the document
// does). Near max_tokens only tokens that leave the document closable in the
// tokens left are drawn, so a reply always parses when max_tokens allows the
// shortest valid document. A schema feature the sampler cannot enforce makes generate() throw
// EngineError naming it (powerinfer/structured_output.h checks up front).
struct OutputConstraint {
    std::string json_schema = "{}";  // "{}": any JSON value; {"type":"object"}: JSON mode
    std::string prefix, suffix;      // literal text around the document (a tool call's tags)
};

struct GenerateRequest {
    // Either a chat (formatted with the model's template and a generation
    // prompt) or a raw prompt (used as is; BOS added per the model).
    std::vector<ChatMessage> messages;
    std::string prompt;
    int max_tokens = 256;
    SamplingParams sampling;
    std::vector<std::string> stop;  // stop strings (not included in the output)
    // Reuse the KV cache for a shared token prefix with the previous request
    // (multi-turn chat only evaluates new tokens).
    bool reuse_cache = true;
    // An OpenAI-style conversation as JSON, {"messages": [...], "tools":
    // [...]}, whose messages may carry "tool_calls" (arguments as JSON text)
    // and role "tool": rendered through the model's template with the tools
    // (ModelInfo::tool_call_format says how). When set, `messages` and
    // `prompt` are not used.
    std::string chat_json;
    std::optional<OutputConstraint> constraint;
};

// Per-token metrics sample (cheap; collected always).
struct TokenMetrics {
    int64_t token_index = 0;
    double token_ms = 0;            // wall time of this token
    double predictor_ms = 0;        // sparse only
    double device_ms = 0;           // hot part
    double cpu_ms = 0;              // cold part
    int64_t ffn_neurons_total = 0;  // over all layers
    int64_t active = 0;             // predicted active
    int64_t hot_hits = 0;
    int64_t cache_hits = 0;
    int64_t cold_misses = 0;
    double hit_rate() const {
        return active ? double(hot_hits + cache_hits) / double(active) : 0.0;
    }
    double sparsity() const {
        return ffn_neurons_total ? 1.0 - double(active) / double(ffn_neurons_total) : 0.0;
    }
    std::vector<float> layer_hit_rate;         // per layer (sparse only)
    std::vector<float> layer_active_fraction;  // per layer (sparse only)
    double recall = -1;                        // validate mode sample, -1 if none
    // Sparse engine v3 (input sparsity on every matrix): the share of all
    // products' inputs skipped. The weight bytes this token read against
    // what the dense products read (v3; v2 on the CPU: its FFN's skipped rows
    // and columns and the head's preview), 0 when not measured.
    double input_sparsity = 0;
    double weight_bytes = 0, dense_weight_bytes = 0;
    // Mixture-of-experts models (0 / empty for dense ones): expert routings
    // (token x layer x selected expert) since the previous sample, how many
    // a device expert served (placed or in the expert cache; 0 with every
    // expert on the CPU), how many of those the cache did, and prefetched
    // experts that were routed.
    int64_t experts_routed = 0, expert_hits = 0, expert_cache_hits = 0;
    int64_t expert_prefetch_useful = 0;
    double expert_hit_rate() const {
        return experts_routed ? double(expert_hits) / double(experts_routed) : 0.0;
    }
    // The heatmap: per layer and expert ([layer][n_expert], flattened), the
    // share of the layer's routings since the model was loaded.
    int n_expert = 0;
    std::vector<float> expert_heatmap;
};

struct TokenEvent {
    std::string piece;  // complete UTF-8 (may be empty while a character is pending)
    int32_t token = -1;
    TokenMetrics metrics;
};

enum class FinishReason { Length, Stop, Cancelled, ContextFull, Error };

struct GenerateResult {
    std::string text;
    FinishReason finish = FinishReason::Length;
    int prompt_tokens = 0;            // tokens in the prompt
    int evaluated_prompt_tokens = 0;  // not served from the KV cache
    int generated_tokens = 0;
    double prompt_tokens_per_s = 0;
    double decode_tokens_per_s = 0;
    double time_to_first_token_ms = 0;
    std::string notice;  // e.g. "context full: oldest tokens dropped"
};

// Memory by category, for the metrics panel and /metrics.
struct MemoryReport {
    std::string device_name;  // "CPU device (simulated budget)" or the GPU's name
    bool simulated = true;
    int64_t budget_bytes = 0;
    int64_t dense_weights = 0, hot_neurons = 0, neuron_cache = 0, kv_cache = 0, predictors = 0;
    int64_t scratch = 0;       // device work buffers and transfer staging
    int64_t host_weights = 0;  // what stays in RAM
    // The KV cache in RAM: the layers the CPU runs (none for layers whose
    // attention runs on the GPU; their cache is counted in kv_cache).
    int64_t host_kv_cache = 0;
    // Why fewer neurons are on the device than placed (an allocation the
    // GPU refused during generation); "" if none.
    std::string note;
};

// The sidecar's measured sparsity curve (powerinfer-calibrate): the CPU's
// exact path at a few levels over held-out text, against dense.
struct SparsityCurvePoint {
    double level = 0, delivered = 0;  // asked for / delivered sparsity
    double ppl_rise = 0;              // perplexity / dense perplexity - 1
    double mean_kl = 0, top1 = 0;     // KL(dense || sparse), argmax agreement
    double speed = 0;                 // decode against dense on the calibrating CPU (0: not timed)
    double bytes = 0;  // weight bytes per decoded token against dense's (0: not counted)
};
struct SparsityCurve {
    std::vector<SparsityCurvePoint> points;  // ascending levels; empty: not measured
    double bound = 0;                        // the perplexity-rise bound (0.02)
    double recommended = -1;                 // the highest level within it (-1: none)
    // What activation_sparsity -1 runs at (-1: the calibrated target): the
    // fastest timed level within the bound, else the recommendation.
    double default_level = -1;
    double dense_ppl = 0;
    int64_t tokens_scored = 0;  // per level
    // The timed points' rounds (from the first point; a point's speed is
    // the median of its rounds), as the default was chosen from them.
    std::vector<std::vector<double>> speed_rounds;
};

struct ModelInfo {
    std::string architecture;  // e.g. "llama"
    std::string name;
    std::string quant;  // general.file_type's name ("Q4_K_M"), else the dominant weight type
    int64_t n_params = 0;
    int64_t file_bytes = 0;
    int n_layers = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, n_vocab = 0;
    int n_ctx_train = 0, n_ctx = 0;
    std::string chat_template_name;  // recognised template ("chatml", ...)
    std::string template_warning;    // why the model's own template is not used as is ("" if it is)
    // How tools reach the model: "native" (its template renders them and
    // writes <tool_call> JSON) or "prompted" (instructions to answer with
    // <tool_call> JSON go into the system message).
    std::string tool_call_format;
    bool has_sidecar = false;
    std::string sparse_status;     // "sparse: ..." or why it runs dense
    SparsityCurve sparsity_curve;  // of the sidecar in use (sparse mode)
    std::string device;            // where it runs
    int gpu_layers = 0;            // layers running on the GPU (layer offload)
    int gpu_attention_layers = 0;  // sparse mode: layers whose attention runs on the GPU
    // Layer offload, or in sparse mode where attention runs: what runs
    // where, or why not ("no CUDA device: running on CPU (...)").
    std::string offload_status;
};

// What one sequence of a batched step produced (Engine::step).
struct SequenceUpdate {
    int sequence = -1;
    std::vector<TokenEvent> events;  // pieces, in order (the last may carry no token)
    bool finished = false;
    GenerateResult result;  // when finished
};

class Engine {
public:
    // Throws EngineError (missing file, not a GGUF, unsupported architecture,
    // corrupt data) or LoadCancelled.
    static std::unique_ptr<Engine> load(const LoadOptions& options);
    virtual ~Engine() = default;

    virtual const ModelInfo& info() const = 0;

    // Generates until max_tokens, EOS/EOT, a stop string, or cancel becomes
    // true (checked between tokens; the partial text is returned). on_token
    // may be null. Throws EngineError only for invalid requests.
    virtual GenerateResult generate(const GenerateRequest& request,
                                    const std::function<void(const TokenEvent&)>& on_token,
                                    const std::atomic<bool>* cancel = nullptr) = 0;

    // Evaluates the request's prompt into its conversation's context and
    // generates nothing, so that a next request whose prompt starts with it
    // (the next turn of a chat) evaluates only what is new. A reply's own
    // decoded keys and values are never reused (they differ in their last
    // bits from a prompt evaluation's, and a reply must be the one a fresh
    // context gives), so a chat front end calls this with the conversation
    // including the last reply while the user writes the next message.
    // Stops between chunks when cancel becomes true, keeping what it
    // evaluated. Returns the number of tokens evaluated. Same thread as
    // generate(); a prompt that does not fit the context evaluates nothing.
    virtual int prefill(const GenerateRequest& request, const std::atomic<bool>* cancel = nullptr) {
        (void)request;
        (void)cancel;
        return 0;
    }

    // Why generate() would refuse this request before generating ("" if it
    // would not): an unsupported structured-output schema, for one. Cheap
    // and safe to call from any thread while another generates.
    virtual std::string request_problem(const GenerateRequest& request) const {
        (void)request;
        return {};
    }

    // Continuous batching: up to max_sequences() generations advance
    // together, one forward pass per step() over all of them (each with its
    // own KV cache and sampler); new ones join between steps, and a prompt
    // is evaluated one chunk per step, so it does not stall the others.
    // Greedy replies are the ones generate() gives. Same thread as
    // generate(), which it must not overlap.
    // Sets the number of sequences (allocates their KV caches; 1 = none
    // besides generate()'s). Throws EngineError when the engine cannot run
    // several (a model on the GPU, an architecture without it).
    virtual void set_max_sequences(int n) {
        if (n != 1) throw EngineError("this engine runs one sequence at a time");
    }
    virtual int max_sequences() const { return 1; }
    // Starts a generation in a free sequence and returns its id; throws
    // EngineError for a request generate() would refuse, or when none is free.
    virtual int start_sequence(const GenerateRequest& request) {
        (void)request;
        throw EngineError("this engine runs one sequence at a time");
    }
    // The sequence finishes (Cancelled) at the next step and frees its slot.
    virtual void cancel_sequence(int sequence) { (void)sequence; }
    // One step; returns what each sequence produced (finished ones are
    // reported once, then forgotten).
    virtual std::vector<SequenceUpdate> step() { return {}; }
    virtual int active_sequences() const { return 0; }
    // A note on how batched steps run ("" if nothing to say): e.g. that a
    // sparse model computes the FFN of steps with several sequences dense.
    virtual std::string batching_note() const { return {}; }

    // Conversation contexts: generate() keeps the tokens and KV cache of up
    // to n conversations (sequence slots; n = 1: the last one only) and runs
    // each request in the one whose tokens its prompt continues, so that
    // switching between conversations evaluates only each one's new turn;
    // without one, in the least recently used. Engines that cannot keep
    // several ignore it and keep one (conversation_contexts() says how many).
    // Same slots as set_max_sequences().
    virtual void set_conversation_contexts(int n) { (void)n; }
    virtual int conversation_contexts() const { return 1; }
    // The prompt's length in tokens as generate() will see it (the engine
    // that remembers the last prompt's tokens encodes a turn once).
    virtual int count_prompt_tokens(const GenerateRequest& request) const {
        const std::string text = request.messages.empty() && request.chat_json.empty()
                                     ? request.prompt
                                     : format_chat(request.messages);
        return static_cast<int>(tokenize(text, true).size());
    }

    // Formats messages with the model's chat template (with generation prompt).
    virtual std::string format_chat(const std::vector<ChatMessage>& messages) const = 0;
    virtual std::vector<int32_t> tokenize(const std::string& text, bool add_special) const = 0;
    virtual std::string detokenize(const std::vector<int32_t>& tokens) const = 0;

    // Live knobs: applied before the next token, no reload.
    virtual void set_tuning(const Tuning& tuning) = 0;
    virtual Tuning tuning() const = 0;
    virtual TokenMetrics last_metrics() const = 0;
    virtual MemoryReport memory() const = 0;
    // Drops the KV cache (a new conversation).
    virtual void reset() = 0;
};

// Per-model config.json (same keys as the knobs). Missing file → defaults.
// Malformed JSON throws EngineError naming the file and the problem.
Tuning load_tuning(const std::filesystem::path& config_json);
void save_tuning(const std::filesystem::path& config_json, const Tuning& tuning);

std::string version_string();

}  // namespace powerinfer
