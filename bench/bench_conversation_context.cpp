// Per-conversation contexts: the time to the first token of a conversation's
// third turn when another conversation had a turn in between (the user went
// to another chat and came back), with the engine keeping each
// conversation's context (Engine::set_conversation_contexts, 3) against one
// context for everything (the engine before: the other chat's turn evicted
// it, so the whole history is evaluated again) and no cache reuse at all.
// Median of --runs; the replies of all three are checked to be the same
// tokens (greedy).
//
//   bench_conversation_context [MODEL] [--runs 5] [--threads 2] [--reply 32]
//
// The last line is one JSON object for scripts: {"cpu": .., "ttft_ms":
// {"contexts": .., "one_context": .., "no_reuse": ..}, "prompt_tokens": ..,
// "evaluated": {...}}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/local_engine.h"
#include "tensor/quant.h"

using namespace powerinfer;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Turn3 {
    double ttft_ms = 0;
    int prompt_tokens = 0, evaluated = 0;
    std::vector<int32_t> tokens;  // the third reply of conversation A
};

const char* kSystem =
    "You are a helpful assistant. Answer in plain sentences, be concrete, and keep each "
    "answer short unless the user asks for details.";
const std::vector<std::string> kA = {
    "I am planning a small vegetable garden on a balcony that gets about five hours of sun a "
    "day. Which vegetables grow well in pots there?",
    "Good. How often should I water tomatoes in pots during a hot summer, and how do I know "
    "that they get too much water?",
    "Which of these plants can share one large pot without crowding each other?"};
const std::vector<std::string> kB = {
    "Explain in simple words what a hash table is.",
    "What happens when two keys land in the same bucket?",
    "Which is faster for lookups, a hash table or a sorted array?"};

// A1 B1 A2 B2 (A3 timed); mode 0: contexts, 1: one context, 2: no reuse.
Turn3 run(runtime::LocalEngine& engine, int mode, int reply) {
    engine.set_conversation_contexts(mode == 0 ? 3 : 1);
    engine.reset();
    std::vector<ChatMessage> a = {{"system", kSystem}}, b = a;
    Turn3 out;
    const auto turn = [&](std::vector<ChatMessage>& h, const std::string& user, bool timed) {
        h.push_back({"user", user});
        GenerateRequest r;
        r.messages = h;
        r.max_tokens = reply;
        r.sampling.temperature = 0;
        r.reuse_cache = mode != 2;
        const GenerateResult g = engine.generate(r, [&](const TokenEvent& ev) {
            if (timed && ev.token >= 0) out.tokens.push_back(ev.token);
        });
        h.push_back({"assistant", g.text});
        if (timed) {
            out.ttft_ms = g.time_to_first_token_ms;
            out.prompt_tokens = g.prompt_tokens;
            out.evaluated = g.evaluated_prompt_tokens;
        }
    };
    turn(a, kA[0], false);
    turn(b, kB[0], false);
    turn(a, kA[1], false);
    turn(b, kB[1], false);
    turn(a, kA[2], true);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string model;
    int runs = 5, threads = 2, reply = 32;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool value = i + 1 < argc;
        if (a == "--runs" && value) {
            runs = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--threads" && value) {
            threads = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--reply" && value) {
            reply = std::max(1, std::atoi(argv[++i]));
        } else if (a.rfind("--", 0) == 0) {
            std::fprintf(stderr,
                         "unknown option %s\nusage: bench_conversation_context [MODEL] [--runs N] "
                         "[--threads N] [--reply N]\n",
                         a.c_str());
            return 2;
        } else {
            model = a;
        }
    }
    if (model.empty() && std::getenv("POWERINFER_MODEL")) model = std::getenv("POWERINFER_MODEL");
    if (model.empty()) {
        std::fprintf(stderr, "give a model (or set POWERINFER_MODEL)\n");
        return 2;
    }
    LoadOptions o;
    o.model_path = model;
    o.n_threads = threads;
    o.n_ctx = 2048;
    std::unique_ptr<runtime::LocalEngine> engine;
    try {
        engine = runtime::LocalEngine::load(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    engine->set_conversation_contexts(3);
    if (engine->conversation_contexts() < 3) {
        std::fprintf(stderr, "this model keeps one context only (%s)\n",
                     engine->info().architecture.c_str());
        return 1;
    }
    std::printf(
        "CPU: %s\nmodel: %s, SIMD: %s, %d threads, context 2048, replies %d tokens (greedy), "
        "median of %d\nturns A1 B1 A2 B2, then A3 timed\n\n",
        tensor::cpu_model().c_str(), std::filesystem::path(model).filename().string().c_str(),
        tensor::simd_level().c_str(), threads, reply, runs);
    const char* names[] = {"a context per conversation (3)", "one context (before)",
                           "no cache reuse"};
    std::vector<double> ttft[3];
    Turn3 last[3];
    for (int r = 0; r < runs; ++r)
        for (int mode = 0; mode < 3; ++mode) {
            last[mode] = run(*engine, mode, reply);
            ttft[mode].push_back(last[mode].ttft_ms);
        }
    const bool same = last[0].tokens == last[1].tokens && last[0].tokens == last[2].tokens;
    std::printf("| %-32s | prompt tokens | evaluated | TTFT ms (median) | vs one context |\n",
                "turn A3");
    std::printf("|%s|---------------|-----------|------------------|----------------|\n",
                std::string(34, '-').c_str());
    double med[3];
    for (int mode = 0; mode < 3; ++mode) med[mode] = median(ttft[mode]);
    for (int mode = 0; mode < 3; ++mode)
        std::printf("| %-32s | %13d | %9d | %16.1f | %13.2fx |\n", names[mode],
                    last[mode].prompt_tokens, last[mode].evaluated, med[mode],
                    med[mode] > 0 ? med[1] / med[mode] : 0.0);
    std::printf("\nthe third reply is %s in all three (%zu tokens)\n",
                same ? "the same tokens" : "NOT the same", last[0].tokens.size());
    std::printf(
        "{\"cpu\": \"%s\", \"ttft_ms\": {\"contexts\": %.1f, \"one_context\": %.1f, "
        "\"no_reuse\": %.1f}, \"prompt_tokens\": %d, \"evaluated\": {\"contexts\": %d, "
        "\"one_context\": %d, \"no_reuse\": %d}, \"same_tokens\": %s}\n",
        tensor::cpu_model().c_str(), med[0], med[1], med[2], last[0].prompt_tokens,
        last[0].evaluated, last[1].evaluated, last[2].evaluated, same ? "true" : "false");
    return same ? 0 : 1;
}
