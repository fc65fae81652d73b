// Dense runtime vs llama.cpp: prompt processing (a 128-token prompt) and
// decoding (64 tokens, one at a time with logits) on the default model, at 1
// and 2 threads, median of 3 runs. When the reference venv with llama_cpp is
// present, the same token ids go through llama.cpp in the same run.
//
//   bench_decode [MODEL] [--prompt 128] [--decode 64] [--runs 3] [--threads 1,2]
//                [--level avx2] [--python /root/.cache/powerinfer/ref-venv/bin/python]
//                [--no-panels]   (our matrices in the GGUF's row layout: tensor/panels.h)
//   bench_decode MODEL --sparse SIDECAR [--sparsity S] [--threads 2] [--runs 5]
//
// With --sparse: dense and sparse decode of the same tokens in one process,
// alternating run by run, median of --runs; the last line is
// {"dense_tok_s": .., "sparse_tok_s": .., "ratio": .., "sparsity": .., "threads": ..}
// (sparsity: the delivered fraction of FFN neurons skipped).
//
// The table's header names the CPU and the SIMD level; the last line is one
// JSON object for scripts: {"cpu": .., "level": .., "threads": [..],
// "decode_ratio": [..], "pp_ratio": [..]} (null ratios without llama.cpp).
// The reference venv is the one tests/reference/make-fixtures creates, with
// the build flags these VMs need (a default llama-cpp-python build uses AMX
// where cpuid advertises it and crashes where the hypervisor refuses it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/model.h"
#include "sparse/hybrid_ffn.h"
#include "tensor/panels.h"
#include "tensor/quant.h"
#include "bench_support.h"

using namespace powerinfer;
using namespace powerinfer::bench;

namespace {

// Decode tok/s of n_decode greedy steps after the prompt (one run).
double decode_once(model::Model& m, const std::vector<int32_t>& prompt, int n_decode) {
    const int64_t V = m.config().n_vocab;
    std::vector<float> logits(static_cast<size_t>(V));
    m.forward(prompt.data(), static_cast<int64_t>(prompt.size()), 0, 1, logits.data());
    int64_t pos = static_cast<int64_t>(prompt.size());
    const auto t0 = Clock::now();
    for (int i = 0; i < n_decode; ++i) {
        const auto tok =
            static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        m.forward(&tok, 1, pos++, 1, logits.data());
    }
    return n_decode / std::chrono::duration<double>(Clock::now() - t0).count();
}

int run_sparse(const std::string& model, const std::string& sidecar, double sparsity, int threads,
               int n_prompt, int n_decode, int runs) {
    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(model);
    tensor::ThreadPool pool(threads);
    model::Model m(file, pool, 1024, 256);
    std::vector<model::FfnWeights> ffn;
    for (int64_t l = 0; l < m.config().n_layer; ++l)
        ffn.push_back(m.ffn_weights(static_cast<int>(l)));
    sparse::SparseSetup setup;
    setup.model_path = model;
    setup.sidecar_path = sidecar;
    setup.model_hash = sparse::model_hash(*file);
    setup.tuning.activation_sparsity = sparsity;
    std::string status;
    auto hybrid =
        sparse::make_hybrid_ffn(pool, std::move(ffn), m.dense_ffn(), std::move(setup), status);
    if (!hybrid) {
        std::fprintf(stderr, "error: %s\n", status.c_str());
        return 1;
    }
    const auto prompt = prompt_ids(n_prompt, m.config().n_vocab);
    std::printf(
        "CPU: %s\nmodel: %s, SIMD: %s, %d threads, prompt %d tokens, decode %d tokens, "
        "median of %d (dense and sparse alternate)\n%s\n\n",
        tensor::cpu_model().c_str(), std::filesystem::path(model).filename().string().c_str(),
        tensor::simd_level().c_str(), threads, n_prompt, n_decode, runs, status.c_str());
    std::vector<double> dense, sparse_runs;
    int64_t active = 0, total = 0;
    for (int r = 0; r < runs + 1; ++r) {  // the first pair warms caches
        m.set_ffn_executor(nullptr);
        const double d = decode_once(m, prompt, n_decode);
        m.set_ffn_executor(hybrid.get());
        hybrid->reset_summary();
        const double s = decode_once(m, prompt, n_decode);
        if (r == 0) continue;
        dense.push_back(d);
        sparse_runs.push_back(s);
        for (const auto& l : hybrid->layer_summary()) {
            active += l.active;
            total += l.tokens * l.n_ff;
        }
    }
    const double md = median(dense), ms = median(sparse_runs);
    const double delivered = total ? 1.0 - double(active) / double(total) : 0.0;
    std::printf(
        "| threads | dense decode tok/s | sparse decode tok/s | ratio | delivered sparsity |\n");
    std::printf("|---|---|---|---|---|\n| %d | %.1f | %.1f | %.3fx | %.3f |\n", threads, md, ms,
                ms / md, delivered);
    std::printf(
        "{\"dense_tok_s\": %.2f, \"sparse_tok_s\": %.2f, \"ratio\": %.4f, \"sparsity\": %.4f, "
        "\"threads\": %d}\n",
        md, ms, ms / md, delivered, threads);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string model = std::getenv("POWERINFER_MODEL") ? std::getenv("POWERINFER_MODEL") : "";
    std::string python = "/root/.cache/powerinfer/ref-venv/bin/python";
    int n_prompt = 128, n_decode = 64, runs = 3;
    std::string sidecar;
    double sparsity = -1;
    std::vector<int> threads{1, 2};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--prompt")
            n_prompt = std::atoi(next().c_str());
        else if (a == "--decode")
            n_decode = std::atoi(next().c_str());
        else if (a == "--runs")
            runs = std::max(1, std::atoi(next().c_str()));
        else if (a == "--python")
            python = next();
        else if (a == "--sparse")
            sidecar = next();
        else if (a == "--no-panels")
            tensor::set_panels_enabled(false);
        else if (a == "--sparsity")
            sparsity = std::atof(next().c_str());
        else if (a == "--level") {
            const std::string level = next();
            if (!tensor::force_simd_level(level)) {
                std::fprintf(stderr, "SIMD level '%s' is not available on this CPU\n",
                             level.c_str());
                return 2;
            }
        } else if (a == "--threads") {
            threads.clear();
            std::stringstream ss(next());
            for (std::string t; std::getline(ss, t, ',');) threads.push_back(std::atoi(t.c_str()));
        } else
            model = a;
    }
    if (model.empty()) {
        std::fprintf(stderr, "usage: bench_decode MODEL.gguf (or set POWERINFER_MODEL)\n");
        return 2;
    }
    try {
        if (!sidecar.empty())
            return run_sparse(model, sidecar, sparsity, threads.empty() ? 2 : threads.back(),
                              n_prompt, n_decode, runs);
        std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(model);
        const auto cfg = model::ModelConfig::from_gguf(*file);
        const auto prompt = prompt_ids(n_prompt, cfg.n_vocab);
        const bool have_ref = std::filesystem::exists(python);
        std::printf(
            "CPU: %s\nmodel: %s, SIMD: %s%s, prompt %d tokens, decode %d tokens, median of %d\n\n",
            tensor::cpu_model().c_str(), std::filesystem::path(model).filename().string().c_str(),
            tensor::simd_level().c_str(),
            tensor::panels_enabled() ? " (Q4_1 row panels)" : "",
            n_prompt, n_decode, runs);
        print_vs_llama_cpp(file, model, python, have_ref, threads, prompt, n_decode, runs, 1);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
