// Continuous batching on the default model, two tables:
//  1. Batched decode step: one forward pass over B sequences (B = 1, 2, 4,
//     8), each at its own position in its own KV cache after a 64-token
//     prompt; step milliseconds, tokens/s and the cost relative to B
//     single-sequence steps (weights are read once per step, so batch 4
//     should cost far less than 4x batch 1). Median of --runs.
//  2. The engine's batched generation (Engine::start_sequence/step, what
//     powerinfer-server --concurrency N runs) at concurrency 1, 2, 4, 8:
//     N x --requests greedy chat requests of --tokens tokens, N in flight
//     at a time: aggregate decode tokens/s, time to first token p50/p95 and
//     per-request tokens/s; concurrency 1 runs through generate() (what the
//     server runs without --concurrency) for the reference.
//
//   bench_batched_decode [MODEL] [--threads 2] [--runs 5] [--tokens 32] [--requests 2]
//                        [--layout rows|panels|all] [--batch B] [--step-only]
//
// --layout and --batch narrow table 1 to one layout or one batch size, and
// --step-only skips table 2 (to profile one step shape under perf).
//
// Table 1 is measured for both weight layouts in the same run, alternating
// step by step: the GGUF's rows and the row panels (tensor/panels.h; where
// the CPU has no panel kernels only the rows are shown). Table 2 runs the
// engine as it loads by default.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "model/model.h"
#include "runtime/local_engine.h"
#include "tensor/panels.h"
#include "tensor/quant.h"

using namespace powerinfer;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const size_t i = size_t(std::max(0.0, std::ceil(p * double(v.size())) - 1));
    return v[std::min(i, v.size() - 1)];
}

const char* kPrompts[] = {
    "Tell me about the history of Paris.",
    "Write a short poem about the sea.",
    "Explain how a bicycle works.",
    "What do cats like to eat?",
    "Describe a sunny day in the park.",
    "List some uses of a paperclip.",
    "Why is the sky blue?",
    "Give me a recipe for pancakes.",
};

}  // namespace

int main(int argc, char** argv) {
    std::string model = std::getenv("POWERINFER_MODEL") ? std::getenv("POWERINFER_MODEL") : "";
    int threads = 2, runs = 5, tokens = 32, requests = 2, only_batch = 0;
    std::string layout = "all";
    bool step_only = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
        if (a == "--threads")
            threads = next();
        else if (a == "--runs")
            runs = std::max(1, next());
        else if (a == "--tokens")
            tokens = std::max(2, next());
        else if (a == "--requests")
            requests = std::max(1, next());
        else if (a == "--batch")
            only_batch = next();
        else if (a == "--step-only")
            step_only = true;
        else if (a == "--layout" && i + 1 < argc)
            layout = argv[++i];
        else if (a[0] != '-')
            model = a;
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    if (model.empty()) {
        std::fprintf(stderr, "usage: bench_batched_decode MODEL (or set POWERINFER_MODEL)\n");
        return 2;
    }
    if (layout != "all" && layout != "rows" && layout != "panels") {
        std::fprintf(stderr, "--layout takes rows, panels or all, not %s\n", layout.c_str());
        return 2;
    }
    if (only_batch != 0 && (only_batch < 1 || only_batch > 8)) {
        std::fprintf(stderr, "--batch takes 1 to 8\n");
        return 2;
    }
    LoadOptions o;
    o.model_path = model;
    o.n_threads = threads;
    o.n_ctx = 512;
    o.tuning.sparse = false;
    std::unique_ptr<runtime::LocalEngine> engine;
    try {
        engine = runtime::LocalEngine::load(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_batched_decode: %s\n", e.what());
        return 1;
    }
    std::printf("CPU: %s\nmodel: %s, SIMD: %s, %d threads, dense\n\n", tensor::cpu_model().c_str(),
                std::filesystem::path(model).filename().string().c_str(),
                tensor::simd_level().c_str(), threads);

    // 1. One step over B sequences, rows against panels (alternating).
    std::vector<std::unique_ptr<runtime::LocalEngine>> rows_engine;
    tensor::set_panels_enabled(false);
    rows_engine.push_back(runtime::LocalEngine::load(o));
    tensor::set_panels_enabled(true);
    struct Layout {
        const char* name;
        model::Model* m;
    };
    std::vector<Layout> layouts;
    if (layout != "panels") layouts.push_back({"rows", &rows_engine[0]->model()});
    if (layout != "rows" && engine->model().panel_bytes() > 0)
        layouts.push_back({"panels", &engine->model()});
    if (layouts.empty()) {
        std::fprintf(stderr, "this CPU has no panel kernels: use --layout rows\n");
        return 2;
    }
    const int max_batch = 8;
    const int64_t V = engine->model().config().n_vocab;
    std::vector<int32_t> prompt;
    for (int i = 0; i < 64; ++i) prompt.push_back(int32_t((1000 + 7919LL * i) % V));
    for (const Layout& l : layouts) {
        l.m->set_sequence_slots(max_batch);
        for (int s = 0; s < max_batch; ++s)
            l.m->forward(prompt.data(), int64_t(prompt.size()), 0, 0, nullptr, s);
    }
    std::vector<float> logits(size_t(max_batch * V));
    std::printf("| layout | batch | step ms | tokens/s | step cost vs batch 1 | vs %s |\n",
                "B x batch 1");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
    std::vector<double> one(layouts.size(), 0);
    for (const int b : {1, 2, 4, 8}) {
        if (only_batch != 0 && b != only_batch) continue;
        std::vector<int32_t> toks(static_cast<size_t>(b));
        std::vector<int> slots(static_cast<size_t>(b));
        std::vector<int64_t> pos(static_cast<size_t>(b));
        std::vector<std::vector<double>> ms(layouts.size());
        for (int r = 0; r < runs + 1; ++r) {  // the first run warms up
            for (int i = 0; i < b; ++i) {
                toks[size_t(i)] = int32_t((4242 + 31 * i + r) % V);
                slots[size_t(i)] = i;
                pos[size_t(i)] = int64_t(prompt.size()) + r;  // rewrites the same positions
            }
            for (size_t li = 0; li < layouts.size(); ++li) {
                // The other engine's workers spin for a while after its step
                // (tensor/thread_pool.cpp): let them go to sleep first.
                if (layouts.size() > 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
                const auto t0 = Clock::now();
                layouts[li].m->forward_sequences(toks.data(), slots.data(), pos.data(), b,
                                                 logits.data());
                if (r > 0) ms[li].push_back(seconds_since(t0) * 1000.0);
            }
        }
        for (size_t li = 0; li < layouts.size(); ++li) {
            const double step = median(ms[li]);
            if (b == 1 || b == only_batch) one[li] = step;
            std::printf("| %s | %d | %.2f | %.1f | %.2fx | %.2f |\n", layouts[li].name, b, step,
                        b * 1000.0 / step, step / one[li], step / (b * one[li]));
        }
    }
    rows_engine.clear();
    if (step_only) return 0;

    // 2. Batched generation through the facade.
    std::printf("\n%d requests per slot, %d tokens each (greedy chat):\n\n", requests, tokens);
    std::printf(
        "| concurrency | aggregate decode tok/s | vs concurrency 1 | TTFT p50 ms | TTFT p95 ms "
        "| per-request tok/s |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: |\n");
    double base = 0;
    for (const int c : {1, 2, 4, 8}) {
        const int n = c * requests;
        std::vector<double> ttft, per_request;
        int64_t generated = 0;
        const auto t0 = Clock::now();
        auto request = [&](int i) {
            GenerateRequest r;
            r.messages = {{"user", kPrompts[i % 8] + std::string(" (") + std::to_string(i) + ")"}};
            r.max_tokens = tokens;
            r.sampling.temperature = 0;
            r.reuse_cache = false;
            return r;
        };
        if (c == 1) {
            for (int i = 0; i < n; ++i) {
                const GenerateResult res = engine->generate(request(i), nullptr);
                ttft.push_back(seconds_since(t0) * 1000.0 - 0);  // queued since t0
                generated += res.generated_tokens;
                per_request.push_back(res.decode_tokens_per_s);
            }
        } else {
            engine->set_max_sequences(c);
            int started = 0, finished = 0;
            std::vector<double> first(size_t(n), -1);
            std::vector<int> index_of(size_t(c), -1);
            while (finished < n) {
                while (started < n && engine->active_sequences() < c)
                    index_of[size_t(engine->start_sequence(request(started)))] = started, ++started;
                for (const SequenceUpdate& u : engine->step()) {
                    const int i = index_of[size_t(u.sequence)];
                    if (!u.events.empty() && first[size_t(i)] < 0)
                        first[size_t(i)] = seconds_since(t0) * 1000.0;
                    if (u.finished) {
                        ++finished;
                        generated += u.result.generated_tokens;
                        per_request.push_back(u.result.decode_tokens_per_s);
                        ttft.push_back(first[size_t(i)]);
                    }
                }
            }
            engine->set_max_sequences(1);
        }
        const double wall = seconds_since(t0);
        const double agg = double(generated) / wall;
        if (c == 1) base = agg;
        std::printf("| %d | %.1f | %.2fx | %.0f | %.0f | %.1f |\n", c, agg, agg / base,
                    percentile(ttft, 0.5), percentile(ttft, 0.95), median(per_request));
    }
    std::printf(
        "\nTTFT counts from the moment all requests are queued (as a load of N x %d "
        "requests sees it).\n",
        requests);
    return 0;
}
