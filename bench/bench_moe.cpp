// Mixture-of-experts decode and prompt processing vs llama.cpp on a
// synthetic MoE of Qwen3-30B-A3B's layer shapes (4 layers, 128 experts of
// 768, top-8, Zipf-skewed routing; calibrate/synth_model.h), at 1 and 2
// threads, median of 3 runs, ours and llama.cpp's on the same file and
// prompt ids in one run. The model is written on first use (about 1.7 GB,
// in the temp folder) unless a file is given.
//
//   bench_moe [MODEL.gguf] [--prompt 128] [--decode 32] [--runs 3] [--threads 1,2]
//             [--python /root/.cache/powerinfer/ref-venv/bin/python]
//   bench_moe --write PRESET OUT.gguf    # tiny-qwen3moe, tiny-mixtral, qwen3-30b-a3b[-q4k]
//
// Before the table: the routing skew our runtime measured on the prompt and
// the decoded tokens (share of the selections that went to each layer's 8
// and 16 most routed experts, experts never routed). The last line is one
// JSON object for scripts: {"cpu", "level", "threads", "decode_ratio",
// "pp_ratio"} (null ratios without llama.cpp).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "bench_support.h"
#include "calibrate/synth_model.h"
#include "tensor/panels.h"
#include "tensor/quant.h"

using namespace powerinfer;
using namespace powerinfer::bench;

namespace {

// Routes the prompt and n_decode greedy tokens through our runtime and prints
// how concentrated the routing is.
void print_routing(std::shared_ptr<const gguf::GgufFile> file, const std::vector<int32_t>& prompt,
                   int n_decode) {
    tensor::ThreadPool pool(2);
    // The load's cost of the row panels (tensor/panels.h): a load with
    // panels off first (which reads no weights), then the one used here.
    tensor::set_panels_enabled(false);
    auto t0 = Clock::now();
    { model::Model plain(file, pool, 1024, 256); }
    const double t_plain = std::chrono::duration<double>(Clock::now() - t0).count();
    tensor::set_panels_enabled(true);
    t0 = Clock::now();
    model::Model m(file, pool, 1024, 256);
    const double t_load = std::chrono::duration<double>(Clock::now() - t0).count();
    std::printf("load: %.0f ms with row panels (%.0f MB packed), %.0f ms without\n", 1e3 * t_load,
                static_cast<double>(m.panel_bytes()) / 1e6, 1e3 * t_plain);
    std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
    m.forward(prompt.data(), static_cast<int64_t>(prompt.size()), 0, 1, logits.data());
    int64_t pos = static_cast<int64_t>(prompt.size());
    for (int i = 0; i < n_decode; ++i) {
        const auto tok =
            static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        m.forward(&tok, 1, pos++, 1, logits.data());
    }
    double top8 = 0, top16 = 0;
    int64_t unused = 0;
    const auto& counts = m.moe_ffn()->expert_counts();
    for (auto c : counts) {
        std::sort(c.begin(), c.end(), std::greater<>());
        int64_t total = 0, t8 = 0, t16 = 0;
        for (size_t e = 0; e < c.size(); ++e) {
            total += c[e];
            if (e < 8) t8 += c[e];
            if (e < 16) t16 += c[e];
            unused += c[e] == 0;
        }
        top8 += double(t8) / double(total);
        top16 += double(t16) / double(total);
    }
    const double n_layer = static_cast<double>(counts.size());
    std::printf(
        "routing (ours, %zu prompt + %d decoded tokens): %.1f %% of selections to each layer's 8 "
        "most routed experts, %.1f %% to its 16 (uniform: %.1f %%, %.1f %%); %lld of %lld "
        "expert slots never routed\n\n",
        prompt.size(), n_decode, 100 * top8 / n_layer, 100 * top16 / n_layer,
        800.0 / double(m.config().n_expert), 1600.0 / double(m.config().n_expert),
        static_cast<long long>(unused),
        static_cast<long long>(m.config().n_expert * m.config().n_layer));
}

}  // namespace

int main(int argc, char** argv) {
    std::string model;
    std::string python = "/root/.cache/powerinfer/ref-venv/bin/python";
    int n_prompt = 128, n_decode = 32, runs = 3;
    std::vector<int> threads{1, 2};
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) throw EngineError("missing value after " + a);
                return argv[++i];
            };
            if (a == "--write") {
                const std::string preset = next();
                const std::string out = next();
                calibrate::write_synthetic_moe_model(out, calibrate::synth_moe_preset(preset));
                return 0;
            } else if (a == "--prompt") {
                n_prompt = std::atoi(next().c_str());
            } else if (a == "--decode") {
                n_decode = std::atoi(next().c_str());
            } else if (a == "--runs") {
                runs = std::max(1, std::atoi(next().c_str()));
            } else if (a == "--python") {
                python = next();
            } else if (a == "--threads") {
                threads.clear();
                std::stringstream ss(next());
                for (std::string t; std::getline(ss, t, ',');)
                    threads.push_back(std::atoi(t.c_str()));
            } else if (!a.empty() && a[0] == '-') {
                throw EngineError("unknown option " + a +
                                  " (bench_moe [MODEL] [--prompt N] [--decode N] [--runs N] "
                                  "[--threads 1,2] [--python P] | --write PRESET OUT)");
            } else {
                model = a;
            }
        }
        if (model.empty()) {
            const auto dir = std::filesystem::temp_directory_path() / "powerinfer-bench";
            std::filesystem::create_directories(dir);
            model = (dir / "synthetic-qwen3-30b-a3b-4layers.gguf").string();
            if (!std::filesystem::exists(model)) {
                std::fprintf(stderr, "writing %s ...\n", model.c_str());
                calibrate::write_synthetic_moe_model(model,
                                                     calibrate::synth_moe_preset("qwen3-30b-a3b"));
            }
        }
        std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(model);
        const auto cfg = model::ModelConfig::from_gguf(*file);
        if (!cfg.moe()) throw EngineError(model + " is not a mixture-of-experts model");
        const auto prompt = prompt_ids(n_prompt, cfg.n_vocab);
        const bool have_ref = std::filesystem::exists(python);
        std::printf(
            "CPU: %s\nmodel: %s (%s, %lld layers, n_embd %lld, %lld experts of %lld, top-%lld, "
            "%.2f GB), SIMD: %s, prompt %d tokens, decode %d tokens, median of %d\n",
            tensor::cpu_model().c_str(), std::filesystem::path(model).filename().string().c_str(),
            cfg.arch.c_str(), static_cast<long long>(cfg.n_layer),
            static_cast<long long>(cfg.n_embd), static_cast<long long>(cfg.n_expert),
            static_cast<long long>(cfg.n_ff_exp), static_cast<long long>(cfg.n_expert_used),
            static_cast<double>(file->file_size()) / 1e9, tensor::simd_level().c_str(), n_prompt,
            n_decode, runs);
        print_routing(file, prompt, n_decode);
        print_vs_llama_cpp(file, model, python, have_ref, threads, prompt, n_decode, runs, 2);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
