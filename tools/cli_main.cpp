// powerinfer-cli: completion, interactive chat, model info and perplexity
// from the command line (Qt-free; the same engine as the desktop app).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "powerinfer/console.h"
#include "powerinfer/engine.h"
#include "powerinfer/evaluation.h"
#include "powerinfer/model_file.h"
#include "powerinfer/utf8_path.h"
#include "render_chat.h"

using namespace powerinfer;

namespace {

std::atomic<bool> g_cancel{false};
std::atomic<bool> g_generating{false};

// Ctrl-C stops the reply being generated; at the prompt (nothing to stop)
// it quits.
extern "C" void on_sigint(int) {
    if (g_generating.load()) {
        g_cancel.store(true);
        std::signal(SIGINT, on_sigint);  // some platforms reset the handler
    } else {
        std::_Exit(130);
    }
}

const char* kUsage =
    "usage: powerinfer-cli -m MODEL [-p PROMPT] [-n N] [options]\n"
    "       powerinfer-cli -m MODEL --chat [--system TEXT] [options]\n"
    "       powerinfer-cli -m MODEL --perplexity FILE [--ctx 512] [--chunks K]\n"
    "         [--sparse [--sidecar S] [--kl-divergence]] [--skip N]\n"
    "       powerinfer-cli --info MODEL\n"
    "       powerinfer-cli --render-chat TEMPLATE_FILE MESSAGES_JSON [--bos TEXT --eos TEXT]\n"
    "                      [--no-generation-prompt]   (the prompt a chat template renders)\n"
    "       powerinfer-cli --version\n"
    "options:\n"
    "  -m, --model FILE       GGUF model\n"
    "  -p, --prompt TEXT      prompt for a plain completion\n"
    "  -n, --n-predict N      tokens to generate (default 128)\n"
    "  --temp T               temperature, 0 = greedy (default 0.7)\n"
    "  --top-k K              (default 40, 0 = off)\n"
    "  --top-p P              (default 0.95, 1 = off)\n"
    "  --min-p P              (default 0.05, 0 = off)\n"
    "  --repeat-penalty R     (default 1.0 = off)\n"
    "  --seed S               sampling seed (default 0 = random)\n"
    "  --threads T            CPU threads (default: all cores)\n"
    "  --ctx N                context length (default 2048; 512 for --perplexity)\n"
    "  --chat                 interactive chat with the model's template; replies run to\n"
    "                         the end of the turn unless -n is given; /help lists the\n"
    "                         commands (/clear, /reset, /exit), Ctrl-C stops a reply,\n"
    "                         Ctrl-C at the prompt quits\n"
    "  --system TEXT          system message for --chat\n"
    "  --perplexity FILE      perplexity of a text file\n"
    "  --chunks K             windows to score with --perplexity (default: all)\n"
    "  --skip N               --perplexity: leave out the text's first N tokens\n"
    "                         (held-out text: skip the calibration tokens)\n"
    "  --kl-divergence        --perplexity --sparse: also run dense, print the mean KL\n"
    "                         divergence and top-1 agreement of sparse vs dense\n"
    "  --activation-sparsity S  CPU exact sparsity level in [0, 1) (-1: calibrated)\n"
    "  --head-candidates N    output-head rows computed exactly per token, the rest\n"
    "                         from the sidecar's low-rank preview (-1: default, 0: dense)\n"
    "  --info MODEL           print the model's metadata and tensors\n"
    "  -ngl, --gpu-layers N   run the first N layers wholly on the GPU (dense; -1 = as\n"
    "                         many as fit the VRAM budget; default 0 = none); with\n"
    "                         --device cpu or no GPU the model runs on the CPU\n"
    "sparse inference (needs MODEL.powerinfer.gguf from powerinfer-calibrate):\n"
    "  --sparse               run the hybrid sparse FFN (default: dense)\n"
    "  --sidecar PATH         sidecar file (default: next to the model)\n"
    "  --sparse-engine v2|v3  CPU sparse engine: v2 (default) FFN neurons by exact activity,\n"
    "                         v3 input sparsity on every matrix (opt-in: slower so far)\n"
    "  --device D             where hot neurons (or --gpu-layers) live: auto (GPU if\n"
    "                         present), cpu, cuda:N\n"
    "  --gpu-attention N      with a GPU: attention of the first N layers (and the\n"
    "                         output head) on the GPU, after the predictors and\n"
    "                         before hot neurons (-1 = as many as fit, default;\n"
    "                         0 = none)\n"
    "  --gpu N                same as --device cuda:N\n"
    "  --hot-neuron-threshold F, --predictor-threshold F, --prefetch-depth N,\n"
    "  --cache-window N       the tuning knobs\n"
    "  --vram-budget-mb N     GPU memory the engine may use, its own buffers included:\n"
    "                         -1 = free memory minus 512 MiB (default), 0 = nothing\n"
    "                         on the GPU, N = N MiB (capped at what is free)\n"
    "  --metrics              per-layer sparse metrics table at the end\n"
    "  --eval-fidelity FILE   prompts (one per line): dense vs sparse agreement over\n"
    "                         -n tokens, JSON line per prompt + summary\n";

constexpr int kMinContext = 16, kMaxContext = 1 << 20;

struct Args {
    std::string model, prompt, system, perplexity_file, info;
    bool chat = false, version = false, help = false;
    bool sparse = false, metrics = false;
    std::string sidecar, eval_file;
    int sparse_engine = 2;
    std::string device = "auto";
    Tuning tuning;
    int n_predict = 128, threads = 0, ctx = -1, chunks = 0, gpu_layers = 0;
    bool n_predict_set = false;  // chat: without -n a reply runs to the end of its turn
    int gpu_attention = -1;
    int64_t skip = 0;
    bool kl = false;
    SamplingParams sampling;
};

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

template <typename T>
T parse_number(const std::string& flag, const std::string& text) {
    std::istringstream in(text);
    T v{};
    in >> v;
    if (!in || !in.eof())
        throw UsageError("option " + flag + " expects a number, got '" + text + "'");
    return v;
}

Args parse_args(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string f = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError("option " + f + " needs a value");
            return argv[++i];
        };
        if (f == "-m" || f == "--model")
            a.model = value();
        else if (f == "-p" || f == "--prompt")
            a.prompt = value();
        else if (f == "-n" || f == "--n-predict") {
            a.n_predict = parse_number<int>(f, value());
            a.n_predict_set = true;
        } else if (f == "--temp")
            a.sampling.temperature = parse_number<float>(f, value());
        else if (f == "--top-k")
            a.sampling.top_k = parse_number<int>(f, value());
        else if (f == "--top-p")
            a.sampling.top_p = parse_number<float>(f, value());
        else if (f == "--min-p")
            a.sampling.min_p = parse_number<float>(f, value());
        else if (f == "--repeat-penalty")
            a.sampling.repeat_penalty = parse_number<float>(f, value());
        else if (f == "--seed")
            a.sampling.seed = parse_number<uint64_t>(f, value());
        else if (f == "--threads" || f == "-t")
            a.threads = parse_number<int>(f, value());
        else if (f == "--ctx" || f == "-c")
            a.ctx = parse_number<int>(f, value());
        else if (f == "--chat")
            a.chat = true;
        else if (f == "--system")
            a.system = value();
        else if (f == "--perplexity")
            a.perplexity_file = value();
        else if (f == "--chunks")
            a.chunks = parse_number<int>(f, value());
        else if (f == "--info")
            a.info = value();
        else if (f == "--version")
            a.version = true;
        else if (f == "--sparse")
            a.sparse = true;
        else if (f == "--sidecar")
            a.sidecar = value();
        else if (f == "--sparse-engine") {
            const std::string v = value();
            if (v != "v2" && v != "v3")
                throw UsageError("--sparse-engine takes v2 or v3, not '" + v + "'");
            a.sparse_engine = v == "v3" ? 3 : 2;
        } else if (f == "--device")
            a.device = value();
        else if (f == "--gpu")
            a.device = "cuda:" + std::to_string(parse_number<int>(f, value()));
        else if (f == "--hot-neuron-threshold")
            a.tuning.hot_neuron_threshold = parse_number<double>(f, value());
        else if (f == "--predictor-threshold")
            a.tuning.predictor_threshold = parse_number<double>(f, value());
        else if (f == "--prefetch-depth")
            a.tuning.prefetch_depth = parse_number<int>(f, value());
        else if (f == "--cache-window")
            a.tuning.cache_window_size = parse_number<int>(f, value());
        else if (f == "--vram-budget-mb")
            a.tuning.vram_budget_mb = parse_number<int64_t>(f, value());
        else if (f == "--head-candidates")
            a.tuning.head_candidates = parse_number<int>(f, value());
        else if (f == "--activation-sparsity")
            a.tuning.activation_sparsity = parse_number<double>(f, value());
        else if (f == "--skip")
            a.skip = parse_number<int64_t>(f, value());
        else if (f == "--kl-divergence")
            a.kl = true;
        else if (f == "--gpu-layers" || f == "-ngl")
            a.gpu_layers = parse_number<int>(f, value());
        else if (f == "--gpu-attention")
            a.gpu_attention = parse_number<int>(f, value());
        else if (f == "--metrics")
            a.metrics = true;
        else if (f == "--eval-fidelity")
            a.eval_file = value();
        else if (f == "-h" || f == "--help")
            a.help = true;
        else
            throw UsageError("unknown option '" + f + "'");
    }
    if (a.n_predict < 0) throw UsageError("-n must be >= 0");
    // The model needs room for a prompt and a reply; above 2^20 no model
    // here was trained (the engine caps --ctx at the model's own length).
    if (a.ctx != -1 && (a.ctx < kMinContext || a.ctx > kMaxContext))
        throw UsageError("--ctx must be between " + std::to_string(kMinContext) + " and " +
                         std::to_string(kMaxContext) + " tokens, got " + std::to_string(a.ctx));
    if (a.tuning.head_candidates < -1)
        throw UsageError("--head-candidates must be a row count, 0 (dense) or -1 (the default)");
    if (a.tuning.activation_sparsity >= 1.0 || a.tuning.activation_sparsity < -1.0)
        throw UsageError("--activation-sparsity must be in [0, 1) (or -1: the calibrated level)");
    if ((a.skip != 0 || a.kl) && a.perplexity_file.empty())
        throw UsageError("--skip and --kl-divergence go with --perplexity");
    if (a.kl && !a.sparse)
        throw UsageError("--kl-divergence compares sparse with dense: add --sparse");
    if (a.threads < 0) throw UsageError("--threads must be >= 0");
    if (a.gpu_layers < -1) throw UsageError("--gpu-layers must be -1 (as many as fit), 0 or more");
    if (a.gpu_attention < -1)
        throw UsageError("--gpu-attention must be -1 (as many as fit), 0 or more");
    return a;
}

void print_timings(const GenerateResult& r) {
    std::fprintf(stderr,
                 "\n[prompt: %d tokens (%d evaluated), %.1f tok/s | first token %.0f ms | "
                 "decode: %d tokens, %.1f tok/s]\n",
                 r.prompt_tokens, r.evaluated_prompt_tokens, r.prompt_tokens_per_s,
                 r.time_to_first_token_ms, r.generated_tokens, r.decode_tokens_per_s);
    if (!r.notice.empty()) std::fprintf(stderr, "[%s]\n", r.notice.c_str());
}

GenerateResult stream(Engine& engine, const GenerateRequest& req) {
    g_cancel = false;
    g_generating = true;
    const auto r = engine.generate(
        req,
        [](const TokenEvent& ev) {
            std::fwrite(ev.piece.data(), 1, ev.piece.size(), stdout);
            std::fflush(stdout);
        },
        &g_cancel);
    g_generating = false;
    return r;
}

std::unique_ptr<Engine> load(const Args& a, int default_ctx) {
    if (a.model.empty()) throw UsageError("no model given: pass -m MODEL.gguf");
    LoadOptions o;
    o.model_path = path_from_utf8(a.model);
    o.n_threads = a.threads;
    o.n_ctx = a.ctx > 0 ? a.ctx : default_ctx;
    o.tuning = a.tuning;
    o.tuning.sparse = a.sparse;
    o.sidecar_path = path_from_utf8(a.sidecar);
    o.sparse_engine = a.sparse_engine;
    o.device = a.device;
    o.gpu_layers = a.gpu_layers;
    o.gpu_attention_layers = a.gpu_attention;
    auto engine = Engine::load(o);
    if (a.ctx > engine->info().n_ctx)
        std::fprintf(stderr, "[context: %d tokens, the model's maximum (--ctx asked for %d)]\n",
                     engine->info().n_ctx, a.ctx);
    if (a.gpu_layers != 0) std::fprintf(stderr, "[%s]\n", engine->info().offload_status.c_str());
    if (a.sparse)
        std::fprintf(stderr, "[%s; device: %s]\n", engine->info().sparse_status.c_str(),
                     engine->info().device.c_str());
    return engine;
}

void print_sparse_metrics(const Engine& engine) {
    const std::string table = sparse_layer_table(engine);
    if (table.empty()) return;
    std::fputs(table.c_str(), stderr);
    const MemoryReport m = engine.memory();
    std::fprintf(stderr,
                 "[%s: budget %.1f MiB, dense %.1f, hot %.1f, cache %.1f, KV %.1f, predictors "
                 "%.1f MiB]\n",
                 m.device_name.c_str(), m.budget_bytes / 1048576.0, m.dense_weights / 1048576.0,
                 m.hot_neurons / 1048576.0, m.neuron_cache / 1048576.0, m.kv_cache / 1048576.0,
                 m.predictors / 1048576.0);
}

int run_eval_fidelity(const Args& a) {
    if (a.model.empty()) throw UsageError("no model given: pass -m MODEL.gguf");
    std::ifstream in(path_from_utf8(a.eval_file));
    if (!in) throw EngineError(a.eval_file + ": cannot be read: check the path");
    FidelityOptions o;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) o.prompts.push_back(line);
    o.model_path = path_from_utf8(a.model);
    o.sidecar_path = path_from_utf8(a.sidecar);
    o.n_predict = a.n_predict;
    o.n_threads = a.threads;
    o.tuning = a.tuning;
    o.on_json_line = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
    const auto r = evaluate_fidelity(o);
    std::fprintf(stderr, "[%s]\n", r.sparse_status.c_str());
    if (a.metrics) std::fputs(r.layer_table.c_str(), stderr);
    std::printf("%s\n", r.summary_json().c_str());
    return 0;
}

int run_perplexity(const Args& a) {
    std::ifstream in(path_from_utf8(a.perplexity_file), std::ios::binary);
    if (!in) throw EngineError(a.perplexity_file + ": cannot be read: check the path");
    std::stringstream ss;
    ss << in.rdbuf();
    auto engine = load(a, 512);
    const auto tokens = tokenize_corpus(*engine, ss.str());
    std::fprintf(stderr, "perplexity: %zu tokens, windows of %lld\n", tokens.size(),
                 static_cast<long long>(engine->info().n_ctx));
    PerplexityOptions po;
    po.max_windows = a.chunks;
    po.progress = [](int64_t done, int64_t total, double ppl) {
        std::fprintf(stderr, "[%lld/%lld] %.4f\n", static_cast<long long>(done),
                     static_cast<long long>(total), ppl);
    };
    if (!a.sparse && a.skip == 0) {
        std::printf("perplexity: %.4f\n", evaluate_perplexity(*engine, tokens, po).ppl);
        return 0;
    }
    const bool sparse = !sparse_layer_table(*engine).empty();
    if (a.sparse && !sparse)
        throw EngineError("--sparse cannot be honoured: " + engine->info().sparse_status);
    if (sparse) std::fprintf(stderr, "[%s]\n", engine->info().sparse_status.c_str());
    // The scored half of every window is decoded token by token: the path a
    // sparse FFN takes (batches run dense).
    po.decoded = true;
    po.skip = a.skip;
    po.compare_dense = a.kl;
    const PerplexityReport r = evaluate_perplexity(*engine, tokens, po);
    if (sparse) {
        if (a.metrics) std::fputs(sparse_layer_table(*engine).c_str(), stderr);
        if (r.delivered_sparsity >= 0)
            std::printf("delivered sparsity: %.4f\n", r.delivered_sparsity);
    }
    if (a.kl) {
        std::printf("dense perplexity: %.4f\n", r.dense_ppl);
        std::printf("mean KL divergence: %.6f\n", r.mean_kl);
        std::printf("top-1 agreement: %.4f\n", r.top1);
    }
    std::printf("perplexity: %.4f\n", r.ppl);
    return 0;
}

constexpr const char* kChatHelp =
    "commands (not sent to the model):\n"
    "  /help           this list\n"
    "  /clear, /reset  forget the conversation (the --system message stays)\n"
#ifdef _WIN32
    "  /exit, /quit    leave (also Ctrl-Z, Enter)\n"
#else
    "  /exit, /quit    leave (also Ctrl-D)\n"
#endif
    "Ctrl-C stops a reply; Ctrl-C at the prompt quits\n";

// Leaves out the oldest turns (never the system message or the newest
// message) until the prompt plus room for a reply fits the context, as the
// desktop app does. Returns how many messages were dropped.
size_t fit_to_context(const Engine& engine, std::vector<ChatMessage>& messages, int reply_room) {
    const int n_ctx = engine.info().n_ctx;
    const size_t first = !messages.empty() && messages.front().role == "system" ? 1 : 0;
    const auto tokens = [&] {
        return static_cast<int>(engine.tokenize(engine.format_chat(messages), true).size());
    };
    size_t dropped = 0;
    while (messages.size() > first + 1 && tokens() + reply_room > n_ctx) {
        messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(first));
        ++dropped;
        while (messages.size() > first + 1 && messages[first].role != "user") {
            messages.erase(messages.begin() + static_cast<std::ptrdiff_t>(first));
            ++dropped;
        }
    }
    return dropped;
}

// While the user writes the next message, the conversation so far (the
// last reply included) is evaluated into the context, so that the next
// turn's first token waits only for the new message: a reply's decoded keys
// and values are not reused (Engine::prefill). The engine is used again
// only after finish() (the next turn waits for what is left of it) or
// stop() (a command, the end: what was evaluated stays cached).
class ConversationPrefill {
public:
    explicit ConversationPrefill(Engine& engine) : engine_(engine) {}
    ~ConversationPrefill() { stop(); }
    void start(const std::vector<ChatMessage>& messages) {
        stop();
        cancel_ = false;
        GenerateRequest req;
        req.messages = messages;
        thread_ = std::thread([this, req = std::move(req)] {
            try {
                engine_.prefill(req, &cancel_);
            } catch (const std::exception&) {
                // The next turn evaluates it and says what is wrong.
            }
        });
    }
    void finish() {
        if (thread_.joinable()) thread_.join();
    }
    void stop() {
        cancel_ = true;
        finish();
    }

private:
    Engine& engine_;
    std::atomic<bool> cancel_{false};
    std::thread thread_;
};

int run_chat(const Args& a) {
    auto engine = load(a, 2048);
    ConversationPrefill prefill(*engine);
    std::vector<ChatMessage> messages;
    if (!a.system.empty()) messages.push_back({"system", a.system});
    const int n_ctx = engine->info().n_ctx;
#ifdef _WIN32
    constexpr const char* kEndOfInput = "Ctrl-Z, Enter";
#else
    constexpr const char* kEndOfInput = "Ctrl-D";
#endif
    std::fprintf(stderr, "chat with %s (%s); /help lists the commands, /exit or %s quits\n",
                 engine->info().name.c_str(), engine->info().chat_template_name.c_str(),
                 kEndOfInput);
    std::string first = a.prompt;
    for (;;) {
        std::string line;
        if (!first.empty()) {
            line = std::move(first);
            first.clear();
            std::fprintf(stderr, "> %s\n", line.c_str());
        } else {
            std::fprintf(stderr, "> ");
            std::fflush(stderr);
            if (!read_line_utf8(line)) break;
        }
        if (line == "/exit" || line == "/quit") break;
        if (line.empty()) continue;
        if (line == "/help") {
            std::fputs(kChatHelp, stderr);
            continue;
        }
        if (line == "/clear" || line == "/reset") {
            prefill.stop();
            messages.resize(a.system.empty() ? 0 : 1);
            engine->reset();
            std::fprintf(stderr, "[conversation cleared]\n");
            continue;
        }
        // A lone word after a slash is a command, never a message.
        if (line.size() > 1 && line[0] == '/' && line.find_first_of(" /", 1) == std::string::npos) {
            std::fprintf(stderr, "unknown command %s; /help lists the commands\n", line.c_str());
            continue;
        }
        prefill.finish();  // the message needs the conversation evaluated
        messages.push_back({"user", line});
        // Without -n a reply runs to its end of turn (bounded by the context).
        const int max_tokens = a.n_predict_set ? a.n_predict : n_ctx;
        try {
            if (const size_t dropped =
                    fit_to_context(*engine, messages, std::min(max_tokens, n_ctx / 4)))
                std::fprintf(stderr,
                             "[the conversation outgrew the context (%d tokens): the oldest %zu "
                             "messages were left out]\n",
                             n_ctx, dropped);
            GenerateRequest req;
            req.messages = messages;
            req.max_tokens = max_tokens;
            req.sampling = a.sampling;
            const auto r = stream(*engine, req);
            std::printf("\n");
            if (r.finish == FinishReason::Cancelled) std::fprintf(stderr, "[stopped]\n");
            if (r.finish == FinishReason::Length)
                std::fprintf(stderr,
                             a.n_predict_set ? "[cut at -n %d tokens: pass a larger -n, or none]\n"
                                             : "[cut at %d tokens: the context is full]\n",
                             max_tokens);
            print_timings(r);
            messages.push_back({"assistant", r.text});
            prefill.start(messages);
        } catch (const EngineError& e) {
            g_generating = false;
            // A turn that no longer fits: forget it and let the user go on.
            messages.pop_back();
            std::fprintf(stderr, "error: %s\n", e.what());
        }
    }
    prefill.stop();
    if (a.metrics) print_sparse_metrics(*engine);
    return 0;
}

int run(int argc, char** argv) {
    if (cli::wants_render_chat(argc, argv)) return cli::render_chat(argc, argv);
    const Args a = parse_args(argc, argv);
    if (a.help) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (a.version) {
        std::printf("powerinfer-cli %s\n", version_string().c_str());
        return 0;
    }
    if (!a.info.empty()) {
        const auto info_path = path_from_utf8(a.info);
        std::fputs(describe_model_file(info_path).c_str(), stdout);
        const std::string problem = model_file_problem(info_path);
        std::printf("supported: %s\n", problem.empty() ? "yes" : ("no (" + problem + ")").c_str());
        return 0;
    }
    std::signal(SIGINT, on_sigint);
    if (!a.eval_file.empty()) return run_eval_fidelity(a);
    if (!a.perplexity_file.empty()) return run_perplexity(a);
    if (a.chat) return run_chat(a);
    if (a.prompt.empty()) throw UsageError("no prompt given: pass -p TEXT, or --chat");
    auto engine = load(a, 2048);
    GenerateRequest req;
    req.prompt = a.prompt;
    req.max_tokens = a.n_predict;
    req.sampling = a.sampling;
    std::fwrite(a.prompt.data(), 1, a.prompt.size(), stdout);
    const auto r = stream(*engine, req);
    std::printf("\n");
    print_timings(r);
    if (a.metrics) print_sparse_metrics(*engine);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Utf8Arguments args(argc, argv);
    use_utf8_console();
    try {
        return run(args.argc(), args.argv());
    } catch (const UsageError& e) {
        std::fprintf(stderr, "error: %s\n\n%s", e.what(), kUsage);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
