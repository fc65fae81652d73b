// Dense runtime vs llama.cpp: prompt processing (a 128-token prompt) and
// decoding (64 tokens, one at a time with logits) on the default model, at 1
// and 2 threads, median of 3 runs. When the reference venv with llama_cpp is
// present, the same token ids go through llama.cpp in the same run.
//
//   bench_decode [MODEL] [--prompt 128] [--decode 64] [--runs 3] [--threads 1,2]
//                [--level avx2] [--python /root/.cache/powerinfer/ref-venv/bin/python]
//                [--no-panels]   (our matrices in the GGUF's row layout: tensor/panels.h)
//                [--llama-bench PATH [--rounds 3]]  (the reference: llama.cpp's own native
//                 llama-bench from scripts/build-llama-bench instead of llama-cpp-python;
//                 ours and it alternate --rounds times per thread count)
//   bench_decode MODEL --sparse SIDECAR [--sparsity S1,S2,..] [--threads 2[,1]] [--runs 5]
//                [--engine v3|v2] [--head-candidates N]
//
// With --sparse: dense and sparse decode of the same tokens in one process,
// alternating run by run, median of --runs, per level; v3 (the default) is
// input sparsity on every matrix (sparse/input_sparsity.h), v2 the FFN-only
// exact executor. The table has the delivered sparsity per input site, the
// share of the layers' weights skipped (v3; TEAL's count, each matrix by its
// size, the head left out: the field's speed-ups are quoted at it), the
// weight bytes read per token against dense's, and the process's RSS before
// the sparse executor was built and after its runs (v3 here keeps the dense
// layout beside its copies, so that dense and sparse runs alternate in one
// process; the engine's v3 replaces it: powerinfer-cli's peak RSS is the
// number for that, docs/benchmarks.md, tenth session). The last line is
// {"dense_tok_s": .., "sparse_tok_s": .., "ratio": .., "sparsity": .., "threads": ..}
// for the last level (sparsity: v3 the share of all products' inputs skipped,
// v2 of FFN neurons). With a sidecar that holds a head basis the output head
// runs from its preview (sparse/sparse_head.h): --head-candidates N rows exact
// (-1: the default, 0: the dense head); the table says what the head read.
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

#include "bench_support.h"
#include "common/weight_memory.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "sparse/hybrid_ffn.h"
#include "tensor/panels.h"
#include "tensor/quant.h"

using namespace powerinfer;
using namespace powerinfer::bench;

namespace {

std::string fmt(const char* f, double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

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

// The process's resident memory now, in MB (VmRSS).
double rss_mb() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    return 0;
}

int run_sparse(const std::string& model, const std::string& sidecar,
               const std::vector<double>& levels, int threads, int n_prompt, int n_decode, int runs,
               bool v3, int head_candidates) {
    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(model);
    tensor::ThreadPool pool(threads);
    model::Model m(file, pool, 1024, 256);
    const auto prompt = prompt_ids(n_prompt, m.config().n_vocab);
    decode_once(m, prompt, 4);  // the dense path's pages in memory
    const double rss_dense = rss_mb();
    std::vector<model::FfnWeights> ffn;
    for (int64_t l = 0; l < m.config().n_layer; ++l)
        ffn.push_back(m.ffn_weights(static_cast<int>(l)));
    sparse::SparseSetup setup;
    setup.model_path = model;
    setup.sidecar_path = sidecar;
    setup.model_hash = sparse::model_hash(*file);
    setup.tuning.activation_sparsity = levels.empty() ? -1 : levels[0];
    setup.tuning.head_candidates = head_candidates;
    if (v3) setup.options.input_products = m.decode_products();
    setup.options.head = m.output();
    setup.options.file = file.get();
    std::string status;
    const auto t_build = Clock::now();
    auto hybrid =
        sparse::make_hybrid_ffn(pool, std::move(ffn), m.dense_ffn(), std::move(setup), status);
    const double build_s = std::chrono::duration<double>(Clock::now() - t_build).count();
    if (!hybrid) {
        std::fprintf(stderr, "error: %s\n", status.c_str());
        return 1;
    }
    std::printf(
        "CPU: %s\nmodel: %s, SIMD: %s, %d threads, prompt %d tokens, decode %d tokens, "
        "median of %d (dense and sparse alternate), engine %s (built in %.1f s), huge pages: "
        "%s\n%s\n\n",
        tensor::cpu_model().c_str(), std::filesystem::path(model).filename().string().c_str(),
        tensor::simd_level().c_str(), threads, n_prompt, n_decode, runs, v3 ? "v3" : "v2", build_s,
        huge_page_mode().c_str(), status.c_str());
    std::printf(
        "%s| level | dense tok/s | sparse tok/s | ratio | delivered | layers' weights skipped | "
        "q/k/v | attn out | gate/up | down | head | head rows exact | head read vs dense | "
        "bytes/token vs dense | RSS MB dense -> sparse |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        v3 ? "(RSS: this benchmark keeps the dense layout beside v3's copies; the engine's v3 "
             "replaces it)\n\n"
           : "");
    const double token_bytes = double(m.decode_weight_bytes());
    double md = 0, ms = 0, delivered = 0;
    for (double level : levels) {
        Tuning tuning = hybrid->tuning();
        tuning.activation_sparsity = level;
        tuning.head_candidates = head_candidates;
        hybrid->set_tuning(tuning);
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
        md = median(dense);
        ms = median(sparse_runs);
        const sparse::InputCounts c = hybrid->input_counts();
        const sparse::HeadCounts hc = hybrid->head_counts();
        // The head's saving on top of what the matrices' inputs saved (v3
        // counts the head among its products; the preview replaces that).
        const double head_saved = hc.saved_per_token();
        // v2's FFN: the up rows and the down columns it skipped (the last run's).
        double ffn_saved = 0;
        for (const auto& l : hybrid->layer_summary())
            if (l.tokens > 0) ffn_saved += (l.ffn_dense_bytes - l.ffn_bytes) / double(l.tokens);
        const double bytes_ratio = (c.dense_bytes > 0 ? c.bytes / c.dense_bytes : 1.0) -
                                   (head_saved + ffn_saved) / token_bytes;
        delivered = v3 ? c.delivered() : total ? 1.0 - double(active) / double(total) : 0.0;
        auto site = [&](sparse::InputSite st) { return v3 ? c.delivered(st) : 0.0; };
        std::printf(
            "| %.2f | %.1f | %.1f | %.3fx | %.3f | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s | "
            "%s | %.3f | %.0f -> %.0f |\n",
            level, md, ms, ms / md, delivered,
            v3 ? fmt("%.3f", c.delivered_weights()).c_str() : "-", site(sparse::InputSite::AttnIn),
            site(sparse::InputSite::AttnOut), site(sparse::InputSite::FfnIn),
            site(sparse::InputSite::FfnMid), site(sparse::InputSite::Head),
            hc.tokens > 0 ? fmt("%.0f", double(hc.exact_rows) / double(hc.tokens)).c_str() : "all",
            hc.tokens > 0 ? fmt("%.3f", double(hc.bytes) / double(hc.dense_bytes)).c_str() : "1",
            bytes_ratio, rss_dense, rss_mb());
        std::fflush(stdout);
    }
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
    std::string llama_bench;
    int n_prompt = 128, n_decode = 64, runs = 3, rounds = 3;
    std::string sidecar;
    std::vector<double> sparsities{-1};
    bool v3 = true;
    int head_candidates = -1;
    std::vector<int> threads{1, 2};
    bool threads_given = false;  // --sparse runs 2 threads unless told
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
        else if (a == "--llama-bench")
            llama_bench = next();
        else if (a == "--rounds")
            rounds = std::max(1, std::atoi(next().c_str()));
        else if (a == "--sparse")
            sidecar = next();
        else if (a == "--head-candidates")
            head_candidates = std::atoi(next().c_str());
        else if (a == "--no-panels")
            tensor::set_panels_enabled(false);
        else if (a == "--sparsity") {
            sparsities.clear();
            std::stringstream list(next());
            for (std::string v; std::getline(list, v, ',');)
                if (!v.empty()) sparsities.push_back(std::atof(v.c_str()));
        } else if (a == "--engine") {
            const std::string e = next();
            if (e != "v2" && e != "v3") {
                std::fprintf(stderr, "--engine takes v3 or v2, not %s\n", e.c_str());
                return 2;
            }
            v3 = e == "v3";
        } else if (a == "--level") {
            const std::string level = next();
            if (!tensor::force_simd_level(level)) {
                std::fprintf(stderr, "SIMD level '%s' is not available on this CPU\n",
                             level.c_str());
                return 2;
            }
        } else if (a == "--threads") {
            threads_given = true;
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
        if (!sidecar.empty()) {
            // One table per thread count asked for.
            int rc = 0;
            for (int t : threads_given && !threads.empty() ? threads : std::vector<int>{2})
                rc = std::max(rc, run_sparse(model, sidecar, sparsities, t, n_prompt, n_decode,
                                             runs, v3, head_candidates));
            return rc;
        }
        std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(model);
        const auto cfg = model::ModelConfig::from_gguf(*file);
        const auto prompt = prompt_ids(n_prompt, cfg.n_vocab);
        if (!llama_bench.empty() && !std::filesystem::exists(llama_bench)) {
            std::fprintf(stderr, "%s does not exist: run scripts/build-llama-bench\n",
                         llama_bench.c_str());
            return 2;
        }
        const bool have_ref = std::filesystem::exists(python);
        std::printf(
            "CPU: %s\nmodel: %s, SIMD: %s%s, huge pages: %s, prompt %d tokens, decode %d tokens, "
            "median of %d\nreference: %s\n\n",
            tensor::cpu_model().c_str(), std::filesystem::path(model).filename().string().c_str(),
            tensor::simd_level().c_str(), tensor::panels_enabled() ? " (row panels)" : "",
            huge_page_mode().c_str(), n_prompt, n_decode, runs,
            llama_bench.empty() ? "llama-cpp-python (the reference venv)"
                                : ("native llama-bench " + llama_bench + ", alternating " +
                                   std::to_string(rounds) + " rounds, medians")
                                      .c_str());
        print_vs_llama_cpp(file, model, python, have_ref, threads, prompt, n_decode, runs, 1,
                           llama_bench, rounds);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
