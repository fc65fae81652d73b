#include "runtime/local_engine.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "chat/chat_template.h"
#include "gguf/gguf.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "powerinfer/utf8_path.h"
#include "runtime/device_select.h"
#include "runtime/json_grammar.h"
#include "runtime/moe_runtime.h"
#include "runtime/stop_strings.h"
#include "runtime/tool_prompt.h"
#include "sparse/hybrid_ffn.h"
#include "sparse/sidecar.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"
#include "tokenizer/tokenizer.h"

namespace powerinfer::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
}

// The weight type holding most bytes among the matrices ("Q4_1").
std::string dominant_quant(const gguf::GgufFile& f) {
    std::map<std::string, uint64_t> bytes;
    for (const auto& t : f.tensors())
        if (t.shape.size() >= 2) bytes[std::string(ggml_type_name(t.type))] += t.n_bytes;
    std::string best;
    uint64_t most = 0;
    for (const auto& [name, b] : bytes)
        if (b > most) {
            most = b;
            best = name;
        }
    return best;
}

// Safety margin below the driver's free memory when no budget is set.
constexpr int64_t kVramSafetyMargin = int64_t{512} << 20;

}  // namespace

model::SparseOffloadPlan plan_sparse_attention(const model::Model& model,
                                               const LoadOptions& options,
                                               int64_t device_free_bytes, int64_t predictor_bytes,
                                               int64_t device_held_bytes) {
    const int64_t budget = model::offload_budget_bytes(
        device_free_bytes, options.tuning.vram_budget_mb, kVramSafetyMargin, device_held_bytes);
    return model::plan_sparse_offload(
        model::layer_offload_costs(model, model::Model::kDeviceTokenBatch,
                                   model::OffloadParts::Attention),
        std::max<int64_t>(0, predictor_bytes), options.gpu_attention_layers, budget);
}

std::unique_ptr<LocalEngine> LocalEngine::load(const LoadOptions& options) {
    auto report = [&](float p) {
        if (options.progress && !options.progress(p)) throw LoadCancelled();
    };
    report(0.0f);
    parse_device(options.device);
    std::error_code ec;
    const auto& path = options.model_path;
    if (path.empty()) throw EngineError("no model file given: choose a .gguf model");
    if (!std::filesystem::exists(path, ec))
        throw EngineError(path_to_utf8(path) +
                          ": file not found: check the path or download the model");
    if (std::filesystem::is_directory(path, ec))
        throw EngineError(path_to_utf8(path) +
                          ": is a folder, not a model file: choose a .gguf file");

    std::unique_ptr<LocalEngine> e(new LocalEngine());
    e->file_ = gguf::GgufFile::open(path);
    report(0.05f);
    const auto& f = *e->file_;

    // Reading the weights once both reports real progress on a cold disk
    // and spares the first prompt the page faults.
    {
        const auto bytes = f.bytes();
        const size_t step = size_t(1) << 22;
        volatile uint8_t sink = 0;
        for (size_t off = 0; off < bytes.size(); off += step) {
            const size_t end = std::min(bytes.size(), off + step);
            for (size_t p = off; p < end; p += 4096) sink = sink + bytes[p];
            report(0.05f + 0.75f * float(end) / float(bytes.size()));
        }
    }

    int threads = options.n_threads;
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    e->pool_ = std::make_unique<tensor::ThreadPool>(threads, options.low_priority_threads);
    e->tuning_ = options.tuning;
    e->model_ = std::make_unique<model::Model>(e->file_, *e->pool_, std::max(16, options.n_ctx),
                                               std::max(1, options.tuning.chunk_size));
    report(0.85f);
    e->tokenizer_ = Tokenizer::from_gguf(f);
    if (e->tokenizer_->n_vocab() != e->model_->config().n_vocab)
        throw EngineError(path_to_utf8(path) + ": the vocabulary has " +
                          std::to_string(e->tokenizer_->n_vocab()) + " tokens but the model " +
                          std::to_string(e->model_->config().n_vocab) + ": the file is corrupt");
    // The template renders with the model's own BOS/EOS texts; a model
    // without one gets its vocabulary's turn format where that is clear
    // (Gemma's <start_of_turn>), else ChatML, with a warning either way.
    const std::string source = f.get_string("tokenizer.chat_template").value_or("");
    ChatTokens tk;
    const Tokenizer& tok = *e->tokenizer_;
    if (tok.bos() >= 0 && tok.bos() < tok.n_vocab()) tk.bos = tok.token_text(tok.bos());
    if (tok.eos() >= 0 && tok.eos() < tok.n_vocab()) tk.eos = tok.token_text(tok.eos());
    tk.add_bos = tok.add_bos();
    e->template_ = std::make_unique<ChatTemplate>(ChatTemplate::detect(source, tk));
    if (source.empty() && tok.find_token("<start_of_turn>") >= 0) {
        if (auto gemma = ChatTemplate::from_name("gemma")) {
            *e->template_ = *gemma;
            e->template_->warning =
                "The model has no chat template; using Gemma's turn format (its vocabulary has "
                "<start_of_turn>). If replies look wrong, it may be a base model (not tuned for "
                "chat): use the file of its instruction-tuned (-it) version.";
        }
    }
    e->tool_native_ = template_writes_tool_calls(source) && e->template_->jinja.has_value();
    report(0.95f);

    const auto& c = e->model_->config();
    ModelInfo& info = e->info_;
    info.architecture = c.arch;
    info.name = c.name.empty() ? path_to_utf8(path.stem()) : c.name;
    // The file's own quantization (general.file_type: "Q4_K_M"), else the
    // weight type holding most bytes.
    const std::string_view ftype = llama_ftype_name(f.get_int("general.file_type").value_or(-1));
    info.quant = ftype.empty() ? dominant_quant(f) : std::string(ftype);
    info.n_params = e->model_->n_params();
    info.file_bytes = static_cast<int64_t>(f.file_size());
    info.n_layers = static_cast<int>(c.n_layer);
    info.n_embd = static_cast<int>(c.n_embd);
    info.n_ff = static_cast<int>(c.n_ff);
    info.n_head = static_cast<int>(c.n_head);
    info.n_head_kv = static_cast<int>(c.n_head_kv);
    info.n_vocab = static_cast<int>(c.n_vocab);
    info.n_ctx_train = static_cast<int>(c.n_ctx_train);
    info.n_ctx = static_cast<int>(e->model_->n_ctx());
    info.chat_template_name = e->template_->name;
    info.template_warning = e->template_->warning;
    info.tool_call_format = e->tool_native_ ? "native" : "prompted";
    auto sidecar = options.sidecar_path;
    if (sidecar.empty()) {
        sidecar = path;
        sidecar.replace_extension(".powerinfer.gguf");
    }
    info.has_sidecar = std::filesystem::exists(sidecar, ec);
    std::string gpu_note;
    // Sparse mode on a GPU: the attention blocks' plan, reserved before the
    // hot neurons are placed (null: no GPU).
    std::unique_ptr<model::SparseOffloadPlan> attention_plan;
    std::string moe_status;  // experts: where they run (moe_runtime.h)
    if (c.moe()) e->moe_ = std::make_unique<MoeRuntime>(*e->model_, options, sidecar, moe_status);
    if (!options.tuning.sparse) {
        info.sparse_status = "dense: sparse inference is off in the settings";
    } else if (c.moe()) {
        info.sparse_status = moe_status;
    } else if (!info.has_sidecar) {
        info.sparse_status = "dense: no sidecar " + path_to_utf8(sidecar.filename()) +
                             " (run powerinfer-calibrate to create one)";
    } else {
        // The hybrid sparse executor; a refused sidecar leaves the model
        // dense, with the reason in sparse_status.
        sparse::SparseSetup setup;
        setup.model_path = path;
        setup.sidecar_path = sidecar;
        setup.model_hash = sparse::model_hash(f);
        setup.tuning = options.tuning;
        setup.low_priority = options.low_priority_threads;
        setup.device_threads = options.device_threads;
        setup.options.kv_cache_bytes = e->model_->kv_cache_bytes();
        std::vector<model::FfnWeights> ffn;
        int64_t ffn_bytes = 0;
        for (int64_t l = 0; l < c.n_layer; ++l) {
            ffn.push_back(e->model_->ffn_weights(static_cast<int>(l)));
            for (const auto* w : {&ffn.back().gate, &ffn.back().up, &ffn.back().down})
                ffn_bytes += static_cast<int64_t>(w->row_bytes) * w->rows;
        }
        setup.options.dense_device_bytes = e->model_->weight_bytes() - ffn_bytes;
        DeviceChoice device = choose_device(options);
        gpu_note = device.description;
        if (device.device && !device.device->memory().simulated) {
            // A GPU: attention is planned (and then allocated) for real, so
            // no placeholders for the dense weights and KV cache.
            setup.options.dense_device_bytes = 0;
            setup.options.kv_cache_bytes = 0;
            const backend::DeviceMemoryInfo mem = device.device->memory();
            attention_plan = std::make_unique<model::SparseOffloadPlan>(
                plan_sparse_attention(*e->model_, options, mem.device_free_bytes,
                                      sparse::sidecar_predictor_bytes(sidecar), mem.used_total()));
            const backend::Compute* compute = device.device->compute();
            const std::string why =
                compute ? e->model_->unsupported_on(*compute, model::OffloadParts::Attention)
                        : "this device runs no layers";
            if (!why.empty()) {
                attention_plan->hot_neuron_bytes += attention_plan->attention.bytes;
                attention_plan->attention = model::LayerPlan{};
                attention_plan->attention.note = why;
            }
            setup.options.reserved_device_bytes = attention_plan->attention.bytes;
        }
        // Without a GPU the CPU's own paths: v3's input sparsity (opt-in) and
        // the head's preview.
        if (!device.device || device.device->memory().simulated) {
            // v3's copies replace the panels (the weights are held once), and
            // a head whose preview takes its products keeps only its rows.
            setup.options.drop_panels = [m = e->model_.get()](const tensor::WeightView& w) {
                m->drop_panels(w.data);
            };
            if (options.sparse_engine == 3)
                setup.options.input_products = e->model_->decode_products();
            setup.options.head = e->model_->output();
            setup.options.file = &e->model_->file();
            setup.options.token_weight_bytes = double(e->model_->decode_weight_bytes());
        }
        setup.device = std::move(device.device);
        e->sparse_ = sparse::make_hybrid_ffn(*e->pool_, std::move(ffn), e->model_->dense_ffn(),
                                             std::move(setup), info.sparse_status);
        if (e->sparse_) e->model_->set_ffn_executor(e->sparse_.get());
        if (e->sparse_) info.sparsity_curve = e->sparse_->sparsity_curve();
    }
    info.device = "CPU (" + std::to_string(threads) + " threads, " + tensor::simd_level() + ")";
    if (const int64_t skipped = e->model_->panels_skipped_bytes(); skipped > 0)
        info.device += "; " + std::to_string(skipped >> 20) +
                       " MiB of weights in the slower row layout (no free RAM for their row "
                       "panels at load: close other programs and load again)";
    if (e->sparse_ && !gpu_note.empty()) info.device += "; hot neurons: " + gpu_note;
    if (e->sparse_) {
        e->setup_sparse_attention(options, attention_plan.get(), gpu_note);
    } else {
        e->setup_layer_offload(options);
    }
    if (!info.offload_status.empty() && info.device.find(info.offload_status) == std::string::npos)
        info.device += "; " + info.offload_status;
    report(1.0f);
    return e;
}

// One generation, alone (generate) or batched (start_sequence .. step): the
// same state and the same token loop (next_token) for both.
struct LocalEngine::Sequence {
    GenerateRequest request;
    std::vector<int32_t> prompt;
    int slot = 0;
    size_t n_keep = 0;     // prompt tokens found in the slot's cache
    size_t evaluated = 0;  // prompt tokens in the slot's cache so far
    bool decoding = false;
    bool cancelled = false;
    int shift_keep = -1;  // worked out on the first shift (it tokenizes the system prompt)
    int dropped = 0;      // tokens the context shifts dropped
    Sampler sampler;
    std::unique_ptr<StreamingDetokenizer> detok;
    std::unique_ptr<StopStringMatcher> stops;
    std::unique_ptr<GrammarMatcher> matcher;
    std::vector<float> logits;
    GenerateResult result;
    Clock::time_point t_start, t_prompt, t_token, t_first;
};

LocalEngine::~LocalEngine() {
    if (model_) model_->set_plan({}, nullptr);  // before the devices its buffers are on
}

void LocalEngine::setup_sparse_attention(const LoadOptions& options,
                                         const model::SparseOffloadPlan* plan,
                                         const std::string& device_note) {
    info_.gpu_attention_layers = 0;
    if (parse_device(options.device) < 0) {
        info_.offload_status = "attention on the CPU: the device is set to cpu";
    } else if (!plan) {
        info_.offload_status = device_note;  // "no CUDA device: running on CPU (...)"
    } else if (plan->attention.n_gpu_layers == 0) {
        info_.offload_status =
            options.gpu_attention_layers == 0
                ? "attention on the CPU (gpu_attention_layers = 0)"
                : (plan->attention.note.empty() ? "attention on the CPU" : plan->attention.note);
    } else {
        // On the HybridFfn's device (one stream and one accounting for the
        // hot neurons and the attention blocks).
        backend::Device& dev = sparse_->device();
        backend::Compute* compute = dev.compute();
        const std::string note =
            compute
                ? model_->set_plan(
                      model::graph_plan(plan->attention, model::OffloadParts::Attention), compute)
                : "this device runs no layers";
        const backend::DeviceMemoryInfo mem = dev.memory();
        const int64_t held = mem.used_by(backend::MemCategory::DenseWeights) +
                             mem.used_by(backend::MemCategory::KvCache) +
                             mem.used_by(backend::MemCategory::Scratch);
        // What the plan really holds (fewer layers when an allocation
        // failed): the hot neurons get the rest.
        sparse_->set_reserved_device_bytes(held);
        info_.gpu_attention_layers = model_->plan().device_layers();
        if (info_.gpu_attention_layers == 0) {
            info_.offload_status = note.empty() ? "attention on the CPU" : note;
        } else {
            const bool head = model_->plan().output == model::Site::Device;
            info_.offload_status = "attention: " + std::to_string(info_.gpu_attention_layers) +
                                   " of " + std::to_string(model_->config().n_layer) +
                                   " layers on " + dev.name() +
                                   (head ? " with the output head" : "") + ", " +
                                   std::to_string((held + (int64_t{1} << 19)) >> 20) +
                                   " MiB; FFN: hot neurons on the GPU, cold neurons on the CPU";
            std::string more = note;
            if (!compute->note().empty()) more += (more.empty() ? "" : "; ") + compute->note();
            if (!more.empty()) info_.offload_status += " (" + more + ")";
        }
    }
    if (options.gpu_layers != 0)
        info_.offload_status +=
            "; --gpu-layers is for dense inference: sparse mode places attention by the VRAM "
            "budget (gpu_attention_layers)";
}

void LocalEngine::setup_layer_offload(const LoadOptions& options) {
    info_.gpu_layers = 0;
    if (options.gpu_layers == 0) return;
    if (parse_device(options.device) < 0) {
        info_.offload_status = "layer offload off: the device is set to cpu";
        return;
    }
    DeviceChoice choice = choose_device(options);
    if (!choice.device) {
        info_.offload_status = choice.description;  // "no CUDA device: running on CPU (...)"
        return;
    }
    backend::Compute* compute = choice.device->compute();
    if (!compute) {
        info_.offload_status = choice.description + " runs no layers: running on CPU";
        return;
    }
    const backend::DeviceMemoryInfo mem = choice.device->memory();
    const int64_t budget =
        std::min(mem.available(),
                 model::offload_budget_bytes(mem.device_free_bytes, options.tuning.vram_budget_mb,
                                             kVramSafetyMargin));
    const model::LayerPlan plan = model::plan_layer_offload(
        model::layer_offload_costs(*model_, model::Model::kDeviceTokenBatch), options.gpu_layers,
        budget);
    std::string note =
        plan.n_gpu_layers > 0
            ? model_->set_plan(model::graph_plan(plan, model::OffloadParts::WholeLayers), compute)
            : plan.note;
    info_.gpu_layers = model_->plan().device_layers();
    if (info_.gpu_layers == 0) {
        info_.offload_status = note.empty() ? "layer offload off: running on CPU" : note;
        return;
    }
    if (note.empty()) note = plan.note;
    if (!compute->note().empty()) note += (note.empty() ? "" : "; ") + compute->note();
    offload_device_ = std::move(choice.device);
    const auto used = offload_device_->memory().used_total();
    const bool head = model_->plan().output == model::Site::Device;
    info_.offload_status = "layers: " + std::to_string(info_.gpu_layers) + " of " +
                           std::to_string(model_->config().n_layer) + " on " +
                           offload_device_->name() + (head ? " with the output head" : "") + ", " +
                           std::to_string((used + (int64_t{1} << 19)) >> 20) + " MiB";
    if (!note.empty()) info_.offload_status += " (" + note + ")";
}

std::string LocalEngine::request_problem(const GenerateRequest& request) const {
    if (!request.constraint) return {};
    try {
        compile_json_schema_text(request.constraint->json_schema, request.constraint->prefix,
                                 request.constraint->suffix);
    } catch (const EngineError& e) {
        return e.what();
    }
    return {};
}

std::string LocalEngine::format_chat(const std::vector<ChatMessage>& messages) const {
    return template_->format(messages, true);
}

std::vector<int32_t> LocalEngine::tokenize(const std::string& text, bool add_special) const {
    return tokenizer_->encode(text, add_special, true);
}

std::string LocalEngine::detokenize(const std::vector<int32_t>& tokens) const {
    return tokenizer_->decode(tokens);
}

void LocalEngine::set_tuning(const Tuning& tuning) {
    std::lock_guard lock(mutex_);
    tuning_ = tuning;
    tuning_dirty_ = true;
    if (sparse_) sparse_->set_tuning(tuning);  // thread-safe; applied before the next token
    if (moe_) moe_->set_tuning(tuning);        // the same
}

Tuning LocalEngine::tuning() const {
    std::lock_guard lock(mutex_);
    return tuning_;
}

TokenMetrics LocalEngine::last_metrics() const {
    std::lock_guard lock(mutex_);
    return last_metrics_;
}

MemoryReport LocalEngine::memory() const {
    if (sparse_) {
        MemoryReport m = sparse_->memory();
        m.host_weights = model_->weight_bytes();
        m.host_kv_cache = model_->kv_cache_bytes();
        return m;
    }
    MemoryReport m;
    m.device_name = "CPU device";
    m.simulated = false;  // the dense path has no device budget to simulate
    m.dense_weights = model_->weight_bytes();
    m.kv_cache = model_->kv_cache_bytes();
    m.host_weights = model_->weight_bytes();
    m.host_kv_cache = model_->kv_cache_bytes();
    if (offload_device_) {
        const backend::DeviceMemoryInfo d = offload_device_->memory();
        m.device_name = d.name;
        m.budget_bytes = d.budget_bytes;
        m.dense_weights = d.used_by(backend::MemCategory::DenseWeights);
        m.kv_cache = d.used_by(backend::MemCategory::KvCache);
    }
    if (moe_) moe_->fill(m);
    return m;
}

void LocalEngine::reset() {
    cached_.clear();
    for (auto& c : slot_cached_) c.clear();
    slot_prefilled_.assign(slot_prefilled_.size(), 0);
}

size_t& LocalEngine::prefilled(int slot) {
    if (slot_prefilled_.size() <= static_cast<size_t>(slot))
        slot_prefilled_.resize(static_cast<size_t>(slot) + 1, 0);
    return slot_prefilled_[static_cast<size_t>(slot)];
}

void LocalEngine::apply_pending_tuning() {
    Tuning t;
    {
        std::lock_guard lock(mutex_);
        if (!tuning_dirty_) return;
        tuning_dirty_ = false;
        t = tuning_;
    }
    model_->set_chunk_size(std::max(1, t.chunk_size));
}

std::vector<int32_t> LocalEngine::prompt_tokens(const GenerateRequest& request) const {
    const bool chat = !request.messages.empty() || !request.chat_json.empty();
    std::string text;
    if (chat)
        text = request.chat_json.empty()
                   ? format_chat(request.messages)
                   : render_tool_conversation(*template_, tool_native_, request.chat_json);
    const std::string& key = chat ? text : request.prompt;
    {
        // The same prompt as last time (count_prompt_tokens() and then
        // generate() for one turn): its tokens, not a second encoding.
        std::lock_guard lock(memo_mutex_);
        if (memo_valid_ && memo_chat_ == chat && memo_text_ == key) return memo_tokens_;
    }
    std::vector<int32_t> tokens;
    if (chat) {
        // Templates that write the BOS text themselves must not get a second one.
        const bool has_bos =
            tokenizer_->bos() >= 0 && text.rfind(tokenizer_->token_text(tokenizer_->bos()), 0) == 0;
        tokens = tokenizer_->encode(text, !has_bos, true);
    } else {
        tokens = tokenizer_->encode(request.prompt, true, false);
    }
    prompt_encodings_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(memo_mutex_);
    memo_valid_ = true;
    memo_chat_ = chat;
    memo_text_ = key;
    memo_tokens_ = tokens;
    return tokens;
}

int LocalEngine::count_prompt_tokens(const GenerateRequest& request) const {
    return static_cast<int>(prompt_tokens(request).size());
}

void LocalEngine::set_conversation_contexts(int n) {
    n = std::clamp(n, 1, 16);
    if (n == max_sequences() || (n == 1 && seqs_.empty())) return;
    try {
        set_max_sequences(n);
    } catch (const EngineError&) {
        // An architecture or a GPU plan with one KV cache: the last
        // conversation's context only, as before.
    }
}

int LocalEngine::pick_context(const std::vector<int32_t>& prompt, bool reuse) {
    const auto n = static_cast<int>(std::max<size_t>(1, seqs_.size()));
    if (slot_used_.size() != static_cast<size_t>(n)) slot_used_.assign(static_cast<size_t>(n), 0);
    // The free context holding this conversation: the longest shared
    // prefix that is at least half of what that context holds (a next turn
    // shares all of it, a regenerated reply all but the old reply). A short
    // shared start (BOS, a common system prompt) is another conversation's:
    // that one keeps its context and the least recently used is taken.
    int best = -1, lru = -1;
    size_t best_common = 0;
    for (int i = 0; i < n; ++i) {
        if (!seqs_.empty() && seqs_[static_cast<size_t>(i)]) continue;
        const std::vector<int32_t>& cache = slot_tokens(i);
        const size_t common = reuse ? common_prefix(cache, prompt) : 0;
        if (common > best_common && 2 * common >= cache.size()) {
            best = i;
            best_common = common;
        }
        if (lru < 0 || slot_used_[static_cast<size_t>(i)] < slot_used_[static_cast<size_t>(lru)])
            lru = i;
    }
    if (lru < 0) throw EngineError("every context is busy with a batched sequence");
    const int slot = best >= 0 ? best : lru;
    slot_used_[static_cast<size_t>(slot)] = ++use_clock_;
    return slot;
}

bool LocalEngine::evaluate(const std::vector<int32_t>& tokens, size_t from, int slot,
                           float* logits, const std::atomic<bool>* cancel) {
    // Chunk by chunk (the model's own batching, so results are unchanged),
    // so that Stop also interrupts a long prompt.
    const auto chunk = static_cast<size_t>(model_->chunk_size());
    std::vector<int32_t>& cache = slot_tokens(slot);
    cache.resize(from);
    size_t& exact = prefilled(slot);
    exact = std::min(exact, from);
    while (from < tokens.size()) {
        if (cancel && cancel->load()) return false;
        const size_t n = std::min(chunk, tokens.size() - from);
        const bool last = from + n == tokens.size();
        model_->forward(tokens.data() + from, static_cast<int64_t>(n), static_cast<int64_t>(from),
                        last ? 1 : 0, last ? logits : nullptr, slot);
        cache.insert(cache.end(), tokens.begin() + static_cast<std::ptrdiff_t>(from),
                     tokens.begin() + static_cast<std::ptrdiff_t>(from + n));
        // A token alone in its chunk is not reusable inside a later prompt
        // (reusable_prefix).
        if (exact == from && n > 1) exact = cache.size();
        from += n;
    }
    return true;
}

// Tokens kept at the start when the context shifts: the system prompt when
// there is one (so the assistant keeps its instructions), else the first few
// tokens, which attention leans on heavily.
int LocalEngine::keep_on_shift(const GenerateRequest& request,
                               const std::vector<int32_t>& prompt) const {
    size_t keep = std::min<size_t>(4, prompt.size());
    if (!request.messages.empty() && request.messages.front().role == "system") {
        GenerateRequest system_only;
        system_only.messages = {request.messages.front()};
        const auto sys = prompt_tokens(system_only);
        keep = std::max(keep, common_prefix(sys, prompt));
    }
    return static_cast<int>(std::min<size_t>(keep, static_cast<size_t>(model_->n_ctx() / 2)));
}

int LocalEngine::shift_context(Sequence& q) {
    if (q.shift_keep < 0) q.shift_keep = keep_on_shift(q.request, q.prompt);
    const std::vector<int32_t>& cache = slot_tokens(q.slot);
    const int n_past = static_cast<int>(cache.size());
    const int n_discard = (n_past - q.shift_keep) / 2;
    if (n_discard <= 0) return 0;
    std::vector<int32_t> kept(cache.begin(), cache.begin() + q.shift_keep);
    kept.insert(kept.end(), cache.begin() + q.shift_keep + n_discard, cache.end());
    // Positions after the dropped block change, so their keys (rotated by
    // position) are recomputed; the kept prefix stays valid in the cache.
    evaluate(kept, static_cast<size_t>(q.shift_keep), q.slot, q.logits.data());
    q.dropped += n_discard;
    return n_discard;
}

std::vector<int32_t> LocalEngine::checked_prompt(const GenerateRequest& request) const {
    std::vector<int32_t> prompt = prompt_tokens(request);
    const int64_t n_ctx = model_->n_ctx();
    if (prompt.empty()) throw EngineError("the prompt is empty: type something to continue");
    if (static_cast<int64_t>(prompt.size()) >= n_ctx)
        throw ContextLengthExceeded("prompt is " + std::to_string(prompt.size()) +
                                    " tokens but the context holds " + std::to_string(n_ctx) +
                                    ": shorten the conversation or raise the context size");
    return prompt;
}

std::unique_ptr<GrammarMatcher> LocalEngine::constraint_matcher(const GenerateRequest& request) {
    if (!request.constraint) return nullptr;
    // Compiled before any work: an unsupported feature is the request's error.
    auto m = std::make_unique<GrammarMatcher>(compile_json_schema_text(
        request.constraint->json_schema, request.constraint->prefix, request.constraint->suffix));
    if (pieces_.empty()) {
        pieces_.resize(static_cast<size_t>(tokenizer_->n_vocab()));
        for (int32_t t = 0; t < tokenizer_->n_vocab(); ++t)
            pieces_[static_cast<size_t>(t)] = tokenizer_->token_to_piece(t);
    }
    return m;
}

std::vector<std::string> LocalEngine::stop_strings(const GenerateRequest& request,
                                                   bool constrained) const {
    // A chat turn also ends at the template's end-of-turn text, in case the
    // model writes it out instead of emitting the control token (not for
    // constrained output: its grammar says where it ends, and the text could
    // occur inside a JSON string).
    std::vector<std::string> out = request.stop;
    if ((!request.messages.empty() || !request.chat_json.empty()) && !constrained)
        out.insert(out.end(), template_->stop_strings.begin(), template_->stop_strings.end());
    return out;
}

int32_t LocalEngine::sample_token(Sampler& sampler, const float* logits,
                                  std::span<const int32_t> recent, GrammarMatcher* matcher,
                                  int64_t left) {
    const int64_t n_vocab = model_->config().n_vocab;
    if (!matcher) return sampler.sample(logits, n_vocab, recent);
    // Only tokens that continue a valid document; end-of-generation only
    // where the document may end; and each must leave the document closable
    // in the tokens that remain, so that a reply always parses.
    int32_t token = sampler.sample(logits, n_vocab, recent, [&](int32_t t) {
        if (tokenizer_->is_eog(t)) return matcher->accepting();
        const std::string& piece = pieces_[static_cast<size_t>(t)];
        if (piece.empty()) return false;
        const int64_t rest = matcher->finish_bytes_after(piece);
        return rest >= 0 && rest <= left;
    });
    if (token < 0) {
        // The bound counts bytes and tokens may hold several: when it cannot
        // be kept, the reply takes the shortest way to the end (every byte
        // of the token one the document still needs; tokens of several such
        // bytes get there in time); then any way closer; a budget too small
        // even for that ends with finish "length".
        const int64_t now = matcher->finish_bytes();
        for (const bool shortest : {true, false}) {
            token = sampler.sample(logits, n_vocab, recent, [&](int32_t t) {
                if (tokenizer_->is_eog(t)) return matcher->accepting();
                const std::string& piece = pieces_[static_cast<size_t>(t)];
                if (piece.empty()) return false;
                const int64_t rest = matcher->finish_bytes_after(piece);
                if (rest < 0) return false;
                return shortest ? rest == now - static_cast<int64_t>(piece.size()) : rest < now;
            });
            if (token >= 0) break;
        }
    }
    return token;
}

TokenMetrics LocalEngine::token_metrics(int64_t index, double token_ms) {
    TokenMetrics m;
    m.token_index = index;
    m.token_ms = token_ms;
    m.cpu_ms = token_ms;
    // Dense: every FFN neuron of every layer is computed.
    m.ffn_neurons_total = model_->config().n_layer * model_->config().n_ff;
    m.active = m.ffn_neurons_total;
    if (sparse_) {
        TokenMetrics sm = sparse_->last_metrics();
        if (sm.ffn_neurons_total > 0) {
            sm.token_index = index;
            sm.token_ms = token_ms;
            m = std::move(sm);
        }
    }
    if (moe_) moe_->fill(m);
    std::lock_guard lock(mutex_);
    last_metrics_ = m;
    return m;
}

std::unique_ptr<LocalEngine::Sequence> LocalEngine::new_sequence(const GenerateRequest& request) {
    auto q = std::make_unique<Sequence>();
    q->t_start = Clock::now();
    apply_pending_tuning();
    q->prompt = checked_prompt(request);
    q->matcher = constraint_matcher(request);
    q->request = request;
    q->sampler.reset(request.sampling);
    q->detok = std::make_unique<StreamingDetokenizer>(*tokenizer_);
    q->stops = std::make_unique<StopStringMatcher>(stop_strings(request, q->matcher != nullptr));
    q->logits.resize(static_cast<size_t>(model_->config().n_vocab));
    q->result.prompt_tokens = static_cast<int>(q->prompt.size());
    q->t_prompt = q->t_start;
    return q;
}

void LocalEngine::prompt_done(Sequence& q) {
    q.decoding = true;
    q.result.evaluated_prompt_tokens = static_cast<int>(q.prompt.size() - q.n_keep);
    const double ms = ms_since(q.t_prompt);
    q.result.prompt_tokens_per_s = ms > 0 ? q.result.evaluated_prompt_tokens * 1000.0 / ms : 0.0;
    q.t_token = q.t_start;  // the first token's time includes the prompt
}

bool LocalEngine::next_token(Sequence& q, const Emit& emit) {
    const auto end = [&](FinishReason reason) {
        q.result.finish = reason;
        return false;
    };
    if (q.result.generated_tokens >= q.request.max_tokens) return end(FinishReason::Length);
    if (q.cancelled) return end(FinishReason::Cancelled);
    std::vector<int32_t>& cache = slot_tokens(q.slot);
    const size_t hist =
        std::min(cache.size(), static_cast<size_t>(std::max(0, q.request.sampling.repeat_last_n)));
    const int32_t token =
        sample_token(q.sampler, q.logits.data(),
                     std::span<const int32_t>(cache.data() + cache.size() - hist, hist),
                     q.matcher.get(), int64_t{q.request.max_tokens} - q.result.generated_tokens - 1);
    if (token < 0) {
        q.result.notice = "no token of the vocabulary can continue the structured output";
        return end(FinishReason::Error);
    }
    if (tokenizer_->is_eog(token)) return end(FinishReason::Stop);
    if (q.matcher) q.matcher->accept(pieces_[static_cast<size_t>(token)]);
    ++q.result.generated_tokens;
    const double token_ms = ms_since(q.t_token);
    if (q.result.generated_tokens == 1) {
        q.t_first = Clock::now();
        q.result.time_to_first_token_ms = ms_since(q.t_start);
    }
    TokenEvent ev;
    ev.piece = q.stops->feed(q.detok->feed(token));
    ev.token = token;
    ev.metrics = token_metrics(q.result.generated_tokens - 1, token_ms);
    q.result.text += ev.piece;
    emit(std::move(ev));
    q.t_token = Clock::now();
    if (q.stops->stopped() || (q.matcher && q.matcher->finished())) return end(FinishReason::Stop);
    // The last token needs no evaluation.
    if (q.result.generated_tokens >= q.request.max_tokens) return end(FinishReason::Length);
    if (q.cancelled) return end(FinishReason::Cancelled);
    if (static_cast<int64_t>(cache.size()) >= model_->n_ctx() && shift_context(q) == 0)
        return end(FinishReason::ContextFull);
    cache.push_back(token);
    return true;
}

GenerateResult LocalEngine::finish_sequence(Sequence& q, const Emit& emit) {
    // Whatever was held back (an incomplete character, a partial stop string
    // that never completed) goes out with a final event carrying no token.
    std::string tail = q.detok->flush();
    tail = q.stops->stopped() ? std::string() : q.stops->feed(tail) + q.stops->flush();
    if (!tail.empty()) {
        q.result.text += tail;
        TokenEvent ev;
        ev.piece = std::move(tail);
        ev.metrics = token_metrics(q.result.generated_tokens - 1, 0.0);
        emit(std::move(ev));
    }
    if (q.result.generated_tokens > 1) {
        const double ms = std::chrono::duration<double, std::milli>(q.t_token - q.t_first).count();
        if (ms > 0) q.result.decode_tokens_per_s = (q.result.generated_tokens - 1) * 1000.0 / ms;
    }
    if (!q.decoding)  // stopped in its prompt: what was evaluated stays cached
        q.result.evaluated_prompt_tokens = static_cast<int>(slot_tokens(q.slot).size() - q.n_keep);
    if (q.dropped > 0)
        q.result.notice = "context full: the oldest " + std::to_string(q.dropped) +
                          " tokens were dropped to continue";
    return std::move(q.result);
}

// A prompt is evaluated in chunks of chunk_size tokens, and a token alone in
// its chunk does not get the bits it gets in a chunk of two or more (with
// four sequence slots, a prompt served from its own cache and re-evaluating
// only its last token, alone, replied "Hola in Spanish!" where the fresh
// prompt replies "Hola in English!": tst_batched_generation). Reusing a
// cached prefix must therefore not change which remaining token is alone:
// at most prompt_size - 1 tokens are kept (the last one's logits are
// needed); one fewer where the rest would end on a lone token and the fresh
// evaluation does not; a whole number of chunks where the fresh evaluation
// ends on a lone token.
size_t LocalEngine::reusable_prefix(size_t cached, size_t prompt_size) const {
    if (prompt_size == 0) return 0;
    const size_t n = std::min(cached, prompt_size - 1);
    const auto chunk = static_cast<size_t>(std::max<int64_t>(1, model_->chunk_size()));
    const auto lone = [&](size_t rest) { return chunk == 1 || rest % chunk == 1; };
    if (lone(prompt_size - n) == lone(prompt_size)) return n;
    return lone(prompt_size) ? n / chunk * chunk : n - 1;
}

GenerateResult LocalEngine::generate(const GenerateRequest& request,
                                     const std::function<void(const TokenEvent&)>& on_token,
                                     const std::atomic<bool>* cancel) {
    const std::unique_ptr<Sequence> q = new_sequence(request);
    // The conversation's own context (a free sequence slot whose cache
    // starts with this prompt, else the least recently used one); reuse the
    // cached prefix; the last prompt token is always evaluated so that its
    // logits are fresh.
    q->slot = gen_slot_ = pick_context(q->prompt, request.reuse_cache);
    // Only the keys and values a prompt evaluation wrote are reused: a
    // decoded token's (one row at a time) differ in their last bits from
    // the same token's in a prompt, and a reply must be the one a fresh
    // context gives, so the last reply is evaluated again with the new turn.
    const size_t common = request.reuse_cache ? common_prefix(slot_tokens(q->slot), q->prompt) : 0;
    q->n_keep = reusable_prefix(std::min(common, prefilled(q->slot)), q->prompt.size());
    q->t_prompt = Clock::now();
    const Emit emit = [&](TokenEvent&& ev) {
        if (on_token) on_token(ev);
    };
    if (!evaluate(q->prompt, q->n_keep, q->slot, q->logits.data(), cancel)) {
        // Stopped during the prompt: what was evaluated stays cached.
        q->result.finish = FinishReason::Cancelled;
        return finish_sequence(*q, emit);
    }
    prompt_done(*q);
    for (;;) {
        q->cancelled = cancel && cancel->load();
        if (!next_token(*q, emit)) break;
        apply_pending_tuning();
        const std::vector<int32_t>& cache = slot_tokens(q->slot);
        model_->forward(&cache.back(), 1, static_cast<int64_t>(cache.size() - 1), 1,
                        q->logits.data(), q->slot);
    }
    return finish_sequence(*q, emit);
}

int LocalEngine::prefill(const GenerateRequest& request, const std::atomic<bool>* cancel) {
    if (active_sequences() > 0)
        throw EngineError("sequences are running: prefill runs between batched steps' replies");
    const std::vector<int32_t> prompt = prompt_tokens(request);
    if (prompt.empty() || static_cast<int64_t>(prompt.size()) >= model_->n_ctx()) return 0;
    // The context generate() would pick for it, from what a prompt
    // evaluation wrote there (as generate() keeps it).
    const int slot = gen_slot_ = pick_context(prompt, request.reuse_cache);
    const size_t common = request.reuse_cache ? common_prefix(slot_tokens(slot), prompt) : 0;
    const size_t keep = std::min(common, prefilled(slot));
    if (keep == prompt.size()) return 0;
    std::vector<float> logits(static_cast<size_t>(model_->config().n_vocab));
    evaluate(prompt, keep, slot, logits.data(), cancel);
    return static_cast<int>(slot_tokens(slot).size() - keep);
}

void LocalEngine::set_max_sequences(int n) {
    if (n < 1 || n > 64) throw EngineError("the number of sequences must be between 1 and 64");
    if (active_sequences() > 0)
        throw EngineError("sequences are running: finish or cancel them first");
    if (n > model_->chunk_size())
        throw EngineError(std::to_string(n) + " sequences need a chunk_size of at least " +
                          std::to_string(n));
    model_->set_sequence_slots(n);
    seqs_.clear();
    seqs_.resize(static_cast<size_t>(n));
    // Slot 0 keeps its cache (the model keeps its KV); the others start empty.
    slot_cached_.assign(static_cast<size_t>(n), {});
    slot_used_.assign(static_cast<size_t>(n), 0);
    slot_prefilled_.resize(1);
    slot_prefilled_.resize(static_cast<size_t>(n), 0);
    gen_slot_ = 0;
}

int LocalEngine::active_sequences() const {
    int n = 0;
    for (const auto& s : seqs_) n += s != nullptr;
    return n;
}

std::string LocalEngine::batching_note() const {
    if (!sparse_) return {};
    return "sparse model: steps with several sequences compute the FFN dense (the sparse FFN "
           "runs one token at a time); a lone sequence stays sparse";
}

int LocalEngine::start_sequence(const GenerateRequest& request) {
    std::unique_ptr<Sequence> seq = new_sequence(request);
    // The free slot whose cache shares the longest prefix with the prompt.
    int slot = -1;
    size_t best = 0;
    for (size_t i = 0; i < seqs_.size(); ++i) {
        if (seqs_[i]) continue;
        const size_t common = common_prefix(slot_tokens(static_cast<int>(i)), seq->prompt);
        if (slot < 0 || common > best) {
            slot = static_cast<int>(i);
            best = common;
        }
    }
    if (slot < 0)
        throw EngineError(seqs_.empty()
                              ? "batched generation is off (set_max_sequences)"
                              : "all " + std::to_string(seqs_.size()) + " sequences are busy");
    seq->slot = slot;
    seq->n_keep = request.reuse_cache
                      ? reusable_prefix(std::min(best, prefilled(slot)), seq->prompt.size())
                      : 0;
    prefilled(slot) = std::min(prefilled(slot), seq->n_keep);
    seq->evaluated = seq->n_keep;
    slot_tokens(slot).resize(seq->n_keep);
    seqs_[static_cast<size_t>(slot)] = std::move(seq);
    return slot;
}

void LocalEngine::cancel_sequence(int sequence) {
    if (sequence >= 0 && static_cast<size_t>(sequence) < seqs_.size() &&
        seqs_[static_cast<size_t>(sequence)])
        seqs_[static_cast<size_t>(sequence)]->cancelled = true;
}

std::vector<SequenceUpdate> LocalEngine::step() {
    std::vector<SequenceUpdate> out;
    apply_pending_tuning();
    auto finish = [&](Sequence& q, SequenceUpdate& up) {
        up.result = finish_sequence(q, [&up](TokenEvent&& ev) { up.events.push_back(std::move(ev)); });
        up.finished = true;
        seqs_[static_cast<size_t>(q.slot)].reset();  // the slot is free (its cache stays reusable)
    };
    for (size_t i = 0; i < seqs_.size(); ++i) {
        if (!seqs_[i] || !seqs_[i]->cancelled) continue;
        SequenceUpdate up;
        up.sequence = static_cast<int>(i);
        seqs_[i]->result.finish = FinishReason::Cancelled;
        finish(*seqs_[i], up);
        out.push_back(std::move(up));
    }
    // One prompt chunk, of the sequences still in their prompt in turn.
    for (size_t k = 0; k < seqs_.size(); ++k) {
        const size_t i = (next_prefill_ + k) % seqs_.size();
        if (!seqs_[i] || seqs_[i]->decoding) continue;
        Sequence& q = *seqs_[i];
        const int slot = static_cast<int>(i);
        const size_t n =
            std::min(static_cast<size_t>(model_->chunk_size()), q.prompt.size() - q.evaluated);
        const bool last = q.evaluated + n == q.prompt.size();
        model_->forward(q.prompt.data() + q.evaluated, static_cast<int64_t>(n),
                        static_cast<int64_t>(q.evaluated), last ? 1 : 0,
                        last ? q.logits.data() : nullptr, slot);
        auto& cache = slot_tokens(slot);
        cache.insert(cache.end(), q.prompt.begin() + static_cast<std::ptrdiff_t>(q.evaluated),
                     q.prompt.begin() + static_cast<std::ptrdiff_t>(q.evaluated + n));
        if (prefilled(slot) == q.evaluated && n > 1) prefilled(slot) = cache.size();
        q.evaluated += n;
        if (last) prompt_done(q);
        next_prefill_ = i + 1;
        break;
    }
    // One token for every sequence past its prompt (next_token, as alone:
    // a full context shifts here too), then one forward pass over all of them.
    std::vector<int32_t> tokens;
    std::vector<int> slots;
    std::vector<int64_t> positions;
    for (size_t i = 0; i < seqs_.size(); ++i) {
        if (!seqs_[i] || !seqs_[i]->decoding) continue;
        Sequence& q = *seqs_[i];
        SequenceUpdate up;
        up.sequence = q.slot;
        if (next_token(q, [&up](TokenEvent&& ev) { up.events.push_back(std::move(ev)); })) {
            const auto& cache = slot_tokens(q.slot);
            tokens.push_back(cache.back());
            slots.push_back(q.slot);
            positions.push_back(static_cast<int64_t>(cache.size() - 1));
        } else {
            finish(q, up);
        }
        if (up.finished || !up.events.empty()) out.push_back(std::move(up));
    }
    if (!tokens.empty()) {
        const auto n_vocab = static_cast<size_t>(model_->config().n_vocab);
        std::vector<float> logits(tokens.size() * n_vocab);
        model_->forward_sequences(tokens.data(), slots.data(), positions.data(),
                                  static_cast<int64_t>(tokens.size()), logits.data());
        for (size_t r = 0; r < slots.size(); ++r)
            std::copy(logits.begin() + static_cast<std::ptrdiff_t>(r * n_vocab),
                      logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * n_vocab),
                      seqs_[static_cast<size_t>(slots[r])]->logits.begin());
    }
    return out;
}

}  // namespace powerinfer::runtime

namespace powerinfer {

std::unique_ptr<Engine> Engine::load(const LoadOptions& options) {
    return runtime::LocalEngine::load(options);
}

}  // namespace powerinfer
