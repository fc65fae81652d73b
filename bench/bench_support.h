// What the decode benchmarks share: medians, deterministic prompt ids, our
// dense runtime's prompt and decode speed, and llama.cpp's on the same file
// and ids (through the reference venv's llama-cpp-python), in one run.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/model.h"
#include "tensor/quant.h"

namespace powerinfer::bench {

using Clock = std::chrono::steady_clock;

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Speeds {
    double prompt = 0, decode = 0;  // tokens per second
};

// Token ids spread over the vocabulary (deterministic; same for llama.cpp).
inline std::vector<int32_t> prompt_ids(int n, int64_t n_vocab) {
    std::vector<int32_t> ids;
    for (int i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>((1000 + 7919LL * i) % n_vocab));
    return ids;
}

inline Speeds run_ours(std::shared_ptr<const gguf::GgufFile> file, int threads,
                       const std::vector<int32_t>& prompt, int n_decode, int runs) {
    tensor::ThreadPool pool(threads);
    model::Model m(file, pool, 1024, 256);
    const int64_t V = m.config().n_vocab;
    std::vector<float> logits(static_cast<size_t>(V));
    std::vector<double> pp, tg;
    for (int r = 0; r < runs + 1; ++r) {  // the first run warms caches
        auto t0 = Clock::now();
        m.forward(prompt.data(), static_cast<int64_t>(prompt.size()), 0, 1, logits.data());
        const double t_pp = std::chrono::duration<double>(Clock::now() - t0).count();
        int64_t pos = static_cast<int64_t>(prompt.size());
        t0 = Clock::now();
        for (int i = 0; i < n_decode; ++i) {
            const auto tok = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) -
                                                  logits.begin());
            m.forward(&tok, 1, pos++, 1, logits.data());
        }
        const double t_tg = std::chrono::duration<double>(Clock::now() - t0).count();
        if (r == 0) continue;
        pp.push_back(prompt.size() / t_pp);
        tg.push_back(n_decode / t_tg);
    }
    return {median(pp), median(tg)};
}

// llama.cpp through llama-cpp-python: eval the same prompt ids, then decode
// greedily token by token; prints "pp tg" (tokens/s, medians).
inline const char* kPython = R"PY(
import sys, time, statistics
import numpy as np
import llama_cpp
model, threads, n_decode, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
prompt = [int(t) for t in sys.argv[5].split(',')]
llm = llama_cpp.Llama(model_path=model, n_ctx=1024, n_batch=256, n_threads=threads,
                      n_threads_batch=threads, verbose=False)
pp, tg = [], []
for r in range(runs + 1):
    llm.reset()
    t0 = time.perf_counter(); llm.eval(prompt); t_pp = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(n_decode):
        tok = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        llm.eval([tok])
    t_tg = time.perf_counter() - t0
    if r:
        pp.append(len(prompt) / t_pp); tg.append(n_decode / t_tg)
print(statistics.median(pp), statistics.median(tg))
)PY";

inline bool run_llama_cpp(const std::string& python, const std::string& model, int threads,
                          const std::vector<int32_t>& prompt, int n_decode, int runs, Speeds& out) {
    const auto dir = std::filesystem::temp_directory_path();
    const auto script = dir / "powerinfer_bench_llama_cpp.py";
    const auto result = dir / "powerinfer_bench_llama_cpp.out";
    std::ofstream(script) << kPython;
    std::string ids;
    for (size_t i = 0; i < prompt.size(); ++i) {
        if (i) ids += ',';
        ids += std::to_string(prompt[i]);
    }
    const std::string cmd = "\"" + python + "\" \"" + script.string() + "\" \"" + model + "\" " +
                            std::to_string(threads) + " " + std::to_string(n_decode) + " " +
                            std::to_string(runs) + " " + ids + " > \"" + result.string() + "\"";
    if (std::system(cmd.c_str()) != 0) return false;
    std::ifstream in(result);
    return static_cast<bool>(in >> out.prompt >> out.decode);
}

// llama.cpp's own native `llama-bench` (scripts/build-llama-bench): prompt
// processing of n_prompt tokens (-p N -n 0) and n_decode tokens decoded after
// a prompt of n_prompt (-p 0 -n M -d N, as ours), each the median of its
// `runs` samples (samples_ts of its JSON output).
inline bool run_llama_bench(const std::string& bin, const std::string& model, int threads,
                            int n_prompt, int n_decode, int runs, Speeds& out) {
    const auto result = std::filesystem::temp_directory_path() / "powerinfer_llama_bench.json";
    auto one = [&](const std::string& test, double& ts) {
        const std::string cmd = "\"" + bin + "\" -m \"" + model + "\" -t " +
                                std::to_string(threads) + " -r " + std::to_string(runs) +
                                " -o json " + test + " > \"" + result.string() + "\" 2>/dev/null";
        if (std::system(cmd.c_str()) != 0) return false;
        std::ifstream in(result);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        const size_t at = text.find("\"samples_ts\"");
        const size_t open = text.find('[', at);
        const size_t close = text.find(']', open);
        if (at == std::string::npos || open == std::string::npos || close == std::string::npos)
            return false;
        std::stringstream list(text.substr(open + 1, close - open - 1));
        std::vector<double> samples;
        for (std::string v; std::getline(list, v, ',');) samples.push_back(std::atof(v.c_str()));
        if (samples.empty()) return false;
        ts = median(samples);
        return true;
    };
    const std::string p = std::to_string(n_prompt), n = std::to_string(n_decode);
    return one("-p " + p + " -n 0", out.prompt) && one("-p 0 -n " + n + " -d " + p, out.decode);
}

// The side-by-side table (ours vs llama.cpp, per thread count) and the final
// JSON line the benchmarks print; llama.cpp's columns read n/a without the
// reference venv. decode_digits: decimals of the decode columns.
// With llama_bench set, the reference is that native binary instead of
// llama-cpp-python, and ours and it alternate `rounds` times per thread count
// (the medians over the rounds' medians).
inline void print_vs_llama_cpp(std::shared_ptr<const gguf::GgufFile> file, const std::string& model,
                               const std::string& python, bool have_ref,
                               const std::vector<int>& threads, const std::vector<int32_t>& prompt,
                               int n_decode, int runs, int decode_digits,
                               const std::string& llama_bench = {}, int rounds = 1) {
    std::printf(
        "| threads | ours pp tok/s | ours decode tok/s | llama.cpp pp tok/s | "
        "llama.cpp decode tok/s | pp ratio | decode ratio |\n|---|---|---|---|---|---|---|\n");
    std::string json_threads, json_decode, json_pp;
    auto append = [](std::string& list, const std::string& item) {
        list += (list.empty() ? "" : ", ") + item;
    };
    auto ratio = [](double a, double b) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", a / b);
        return std::string(buf);
    };
    const int d = decode_digits;
    for (int t : threads) {
        Speeds ours, ref;
        bool ok = true;
        if (llama_bench.empty()) {
            ours = run_ours(file, t, prompt, n_decode, runs);
            ok = have_ref && run_llama_cpp(python, model, t, prompt, n_decode, runs, ref);
        } else {
            std::vector<double> opp, otg, rpp, rtg;
            for (int r = 0; r < std::max(1, rounds) && ok; ++r) {
                const Speeds o = run_ours(file, t, prompt, n_decode, runs);
                Speeds l;
                ok = run_llama_bench(llama_bench, model, t, int(prompt.size()), n_decode, runs, l);
                opp.push_back(o.prompt), otg.push_back(o.decode);
                rpp.push_back(l.prompt), rtg.push_back(l.decode);
            }
            ours = {median(opp), median(otg)};
            ref = {median(rpp), median(rtg)};
        }
        append(json_threads, std::to_string(t));
        append(json_decode, ok ? ratio(ours.decode, ref.decode) : "null");
        append(json_pp, ok ? ratio(ours.prompt, ref.prompt) : "null");
        if (ok) {
            std::printf("| %d | %.1f | %.*f | %.1f | %.*f | %.2fx | %.2fx |\n", t, ours.prompt, d,
                        ours.decode, ref.prompt, d, ref.decode, ours.prompt / ref.prompt,
                        ours.decode / ref.decode);
        } else {
            std::printf("| %d | %.1f | %.*f | n/a | n/a | | |\n", t, ours.prompt, d, ours.decode);
        }
        std::fflush(stdout);
    }
    std::string cpu;
    for (char c : tensor::cpu_model())
        if (c != '"' && c != '\\') cpu += c;
    std::printf(
        "{\"cpu\": \"%s\", \"level\": \"%s\", \"threads\": [%s], \"decode_ratio\": [%s], "
        "\"pp_ratio\": [%s]}\n",
        cpu.c_str(), tensor::simd_level().c_str(), json_threads.c_str(), json_decode.c_str(),
        json_pp.c_str());
}

}  // namespace powerinfer::bench
