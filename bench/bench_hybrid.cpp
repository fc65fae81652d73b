// Decode speed of the engine's placements on one synthetic llama-shaped
// model (random weights and a power-law sidecar, written to a temporary
// file — nothing is downloaded), all through the one model graph and the
// engine's own loader, under one VRAM budget:
//   cpu      every layer on the CPU, dense
//   offload  whole layers on the GPU up to the budget, the rest on the CPU
//            (what llama.cpp's -ngl does)
//   hybrid   PowerInfer's placement: attention first, then predictors, then
//            hot FFN neurons per byte on the GPU; cold neurons on the CPU
//   gpu      every layer on the GPU, no budget (the ceiling when it fits)
// Each row decodes the same token ids (teacher-forced) after a short prompt;
// tok/s is the median of --runs runs. Without a GPU only the cpu row runs,
// and the table says why.
//
//   bench_hybrid [--preset smollm2-135m|llama-7b] [--layers N] [--budget-fraction 0.25]
//                [--sparsity 0.5,0.7] [--tokens 32] [--runs 3] [--threads 8]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "backend/gpu_backend.h"
#include "calibrate/synth_model.h"
#include "common/error.h"
#include "model/model.h"
#include "powerinfer/engine.h"
#include "runtime/local_engine.h"
#include "tensor/quant.h"

using namespace powerinfer;
namespace fs = std::filesystem;

namespace {

struct Options {
    std::string preset = "smollm2-135m";
    int64_t layers = 0;  // 0: the preset's
    double budget_fraction = 0.25;
    std::vector<double> sparsities = {0.5, 0.7};
    int tokens = 32;
    int runs = 3;
    int threads = 8;
};

std::vector<double> parse_list(const std::string& s) {
    std::vector<double> out;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) out.push_back(std::stod(item));
    return out;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw EngineError(a + " needs a value");
            return argv[++i];
        };
        if (a == "--preset") o.preset = next();
        else if (a == "--layers") o.layers = std::stoll(next());
        else if (a == "--budget-fraction") o.budget_fraction = std::stod(next());
        else if (a == "--sparsity") o.sparsities = parse_list(next());
        else if (a == "--tokens") o.tokens = std::stoi(next());
        else if (a == "--runs") o.runs = std::stoi(next());
        else if (a == "--threads") o.threads = std::stoi(next());
        else throw EngineError("unknown option " + a + " (see the comment at the top of bench_hybrid.cpp)");
    }
    return o;
}

struct Row {
    std::string placement;
    double sparsity = 0;
    double tok_s = 0;
    std::string where;
};

// Median decode tok/s of `runs` runs of `tokens` teacher-forced steps after
// an 8-token prompt.
double decode_tok_s(runtime::LocalEngine& e, int tokens, int runs) {
    model::Model& m = e.model();
    const int64_t V = m.config().n_vocab;
    std::vector<float> logits(static_cast<size_t>(8 * V));
    std::vector<double> rates;
    for (int r = 0; r < runs; ++r) {
        std::vector<int32_t> ids;
        for (int i = 0; i < 8 + tokens; ++i) ids.push_back(static_cast<int32_t>(3 + (i * 37 + r) % (V - 3)));
        m.forward(ids.data(), 8, 0, 1, logits.data());
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < tokens; ++i) m.forward(&ids[static_cast<size_t>(8 + i)], 1, 8 + i, 1, logits.data());
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        rates.push_back(tokens / s);
    }
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options o = parse(argc, argv);
        calibrate::SynthSpec spec = calibrate::synth_preset(o.preset);
        if (o.layers > 0) spec.n_layer = o.layers;
        spec.n_ctx = 256;
        const fs::path dir = fs::temp_directory_path() / "pi_bench_hybrid";
        fs::create_directories(dir);

        // The model's bytes decide the budget; the GPU, if any, decides the rows.
        std::string gpu_why;
        bool gpu = false;
        if (const backend::GpuBackend* g = backend::gpu_backend()) {
            try {
                auto dev = g->make_device({});
                gpu_why = dev->name();
                gpu = true;
            } catch (const EngineError& e) {
                gpu_why = e.what();
            }
        } else {
            gpu_why = "this build has no GPU backend";
        }
        std::printf("## bench_hybrid: %s, %lld layers, n_embd %lld, n_ff %lld\n\n", o.preset.c_str(),
                    static_cast<long long>(spec.n_layer), static_cast<long long>(spec.n_embd),
                    static_cast<long long>(spec.n_ff));
        std::printf("CPU: %s, %d threads, %s; GPU: %s\n\n", tensor::cpu_model().c_str(), o.threads,
                    tensor::simd_level().c_str(), gpu_why.c_str());

        std::vector<Row> rows;
        for (const double sp : o.sparsities) {
            spec.sparsity = sp;
            const fs::path path = dir / ("model-" + std::to_string(int(sp * 100)) + ".gguf");
            calibrate::write_synthetic_model(path, spec);
            const int64_t model_mb = static_cast<int64_t>(fs::file_size(path) >> 20);
            const int64_t budget_mb = std::max<int64_t>(1, int64_t(model_mb * o.budget_fraction));
            auto load = [&](const std::string& device, int gpu_layers, bool sparse, int64_t vram_mb) {
                LoadOptions lo;
                lo.model_path = path;
                lo.n_threads = o.threads;
                lo.n_ctx = static_cast<int>(spec.n_ctx);
                lo.device = device;
                lo.gpu_layers = gpu_layers;
                lo.tuning.sparse = sparse;
                lo.tuning.vram_budget_mb = vram_mb;
                return runtime::LocalEngine::load(lo);
            };
            struct Placement {
                const char* name;
                std::string device;
                int gpu_layers;
                bool sparse;
                int64_t vram_mb;
                bool needs_gpu;
            };
            const Placement placements[] = {{"cpu", "cpu", 0, false, -1, false},
                                            {"offload", "cuda:0", -1, false, budget_mb, true},
                                            {"hybrid", "cuda:0", 0, true, budget_mb, true},
                                            {"gpu", "cuda:0", -1, false, -1, true}};
            for (const Placement& p : placements) {
                if (p.needs_gpu && !gpu) continue;
                auto e = load(p.device, p.gpu_layers, p.sparse, p.vram_mb);
                Row r;
                r.placement = p.name;
                r.sparsity = sp;
                r.tok_s = decode_tok_s(*e, o.tokens, o.runs);
                r.where = e->info().offload_status.empty() ? e->info().device
                                                           : e->info().offload_status;
                if (p.sparse) r.where = e->info().sparse_status + "; " + r.where;
                rows.push_back(r);
            }
            std::printf("sparsity %.2f: model %lld MiB, VRAM budget %lld MiB\n", sp,
                        static_cast<long long>(model_mb), static_cast<long long>(budget_mb));
        }
        std::printf("\n| placement | sidecar sparsity | decode tok/s | x cpu | where |\n|---|---|---|---|---|\n");
        for (const Row& r : rows) {
            double cpu = 0;
            for (const Row& c : rows)
                if (c.placement == "cpu" && c.sparsity == r.sparsity) cpu = c.tok_s;
            std::printf("| %s | %.2f | %.1f | %.2f | %s |\n", r.placement.c_str(), r.sparsity,
                        r.tok_s, cpu > 0 ? r.tok_s / cpu : 0.0, r.where.c_str());
        }
        fs::remove_all(dir);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_hybrid: %s\n", e.what());
        return 1;
    }
}
