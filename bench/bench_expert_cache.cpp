// Expert hit rates of the expert placement (model/moe_offload.h) on a
// Zipf-routed synthetic qwen3moe model, run on the budgeted CPU stand-in for
// a GPU (its staging is a copy, so this measures which experts are where,
// not speed). For several device budgets (a share of all expert bytes) and
// knob values (hot_neuron_threshold = the routed share the placed set aims
// at, the rest of the budget being the expert cache; cache_window_size;
// prefetch_depth) it decodes the same token sequence one token at a time
// and prints the share of routings that a placed or a cached expert served,
// beside what the calibration's counts predict for the placed set alone.
//
//   bench_expert_cache [--layers 8] [--experts 64] [--used 4] [--zipf 1.0]
//                      [--calib 512] [--tokens 128] [--write MODEL.gguf]
//
// --write keeps the model at MODEL.gguf with its expert-routing sidecar
// (MODEL.powerinfer.gguf, from the calibration pass) and prints no table:
// a MoE model for the app (docs/screenshots).
//
// The routing comes from a calibration pass (prompts of other ids, in
// batches, as powerinfer-calibrate runs them); the evaluation feeds ids of
// its own (teacher-forced, not greedy: random weights would repeat a token).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "backend/device.h"
#include "calibrate/synth_model.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "model/moe_offload.h"
#include "sparse/sidecar.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;

namespace {

std::vector<int32_t> ids(int n, int64_t n_vocab, uint64_t seed) {
    std::vector<int32_t> out;
    uint64_t s = seed;
    for (int i = 0; i < n; ++i) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        out.push_back(static_cast<int32_t>((s >> 33) % static_cast<uint64_t>(n_vocab)));
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    calibrate::SynthMoeSpec spec;
    spec.arch = "qwen3moe";
    spec.n_layer = 8;
    spec.n_embd = 256;
    spec.n_ff_exp = 256;
    spec.n_expert = 64;
    spec.n_expert_used = 4;
    spec.zipf_s = 1.0;
    int calib = 512, tokens = 128;
    std::string write;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--layers")
            spec.n_layer = std::atoi(next());
        else if (a == "--experts")
            spec.n_expert = std::atoi(next());
        else if (a == "--used")
            spec.n_expert_used = std::atoi(next());
        else if (a == "--zipf")
            spec.zipf_s = std::atof(next());
        else if (a == "--calib")
            calib = std::atoi(next());
        else if (a == "--tokens")
            tokens = std::atoi(next());
        else if (a == "--write")
            write = next();
        else {
            std::fprintf(stderr,
                         "usage: bench_expert_cache [--layers N] [--experts N] [--used K] "
                         "[--zipf S] [--calib N] [--tokens N] [--write MODEL.gguf]\n");
            return 2;
        }
    }
    const std::filesystem::path path =
        write.empty() ? std::filesystem::temp_directory_path() / "pi_bench_expert_cache.gguf"
                      : std::filesystem::path(write);
    calibrate::write_synthetic_moe_model(path, spec);
    const auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    tensor::ThreadPool pool(2);
    const int64_t n_ctx = calib + tokens + 8;
    model::Model m(file, pool, n_ctx, 128);
    const model::ModelConfig& cfg = m.config();
    const int64_t V = cfg.n_vocab;

    // Calibration: the routing counts of prompts of other ids.
    const std::vector<int32_t> corpus = ids(calib, V, 7);
    std::vector<float> logits(static_cast<size_t>(V));
    m.forward(corpus.data(), calib, 0, 1, logits.data());
    model::ExpertRoutingStats stats;
    stats.n_layer = cfg.n_layer;
    stats.n_expert = cfg.n_expert;
    stats.n_expert_used = cfg.n_expert_used;
    stats.calib_tokens = static_cast<uint64_t>(calib);
    stats.counts = m.moe_ffn()->expert_counts();
    if (!write.empty()) {
        stats.model_hash = sparse::model_hash(*file);
        stats.model_bytes = file->file_size();
        std::filesystem::path sidecar = path;
        sidecar.replace_extension(".powerinfer.gguf");
        model::write_expert_sidecar(sidecar, stats);
        std::printf("wrote %s and %s\n", path.string().c_str(), sidecar.string().c_str());
        return 0;
    }

    std::vector<model::MoeWeights> layers;
    for (int il = 0; il < cfg.n_layer; ++il) layers.push_back(m.layer(il).moe);
    const int64_t one = layers[0].expert_bytes();
    const int64_t all = one * cfg.n_layer * cfg.n_expert;
    const std::vector<int32_t> eval = ids(tokens, V, 99);

    std::printf(
        "# expert hit rates, synthetic qwen3moe: %lld layers, %lld experts (top-%lld) of "
        "%.1f KiB, Zipf s = %.2f; calibration %d tokens, evaluation %d decoded tokens\n",
        static_cast<long long>(cfg.n_layer), static_cast<long long>(cfg.n_expert),
        static_cast<long long>(cfg.n_expert_used), double(one) / 1024, spec.zipf_s, calib, tokens);
    std::printf(
        "| budget (of all experts) | hot_neuron_threshold | cache_window_size | "
        "prefetch_depth | placed | cache room | expected (placed) | hit rate | placed "
        "hits | cache hits | prefetched (useful) |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    struct Knobs {
        double threshold;
        int window, depth;
    };
    const Knobs knobs[] = {{1.0, 0, 0}, {1.0, 8, 2}, {0.85, 8, 2}, {0.5, 0, 0}, {0.5, 2, 0},
                           {0.5, 8, 0}, {0.5, 8, 1}, {0.5, 8, 2},  {0.3, 8, 2}};
    for (const double share : {0.125, 0.25, 0.5}) {
        for (const Knobs& k : knobs) {
            auto device = backend::make_cpu_device({});
            auto stand_in = backend::make_budgeted_cpu_compute(pool, *device);
            model::ExpertOffload::Setup setup;
            setup.stats = stats;
            setup.coverage = k.threshold;
            setup.knobs = {k.window, k.depth};
            setup.max_rows = 1;
            const int64_t scratch =
                model::ExpertOffload::plan_for(cfg, std::vector<int64_t>(layers.size(), one), setup)
                    .scratch_bytes;
            setup.budget_bytes = scratch + static_cast<int64_t>(share * static_cast<double>(all));
            model::ExpertOffload offload(*stand_in, pool, cfg, layers, setup);
            m.moe_ffn()->set_offload(&offload);
            for (int i = 0; i < tokens; ++i)
                m.forward(&eval[static_cast<size_t>(i)], 1, i, 1, logits.data());
            m.moe_ffn()->set_offload(nullptr);
            const model::ExpertCacheStats& s = offload.cache().stats();
            std::printf(
                "| %.1f %% | %.2f | %d | %d | %lld | %lld | %.1f %% | **%.1f %%** | %.1f %% | "
                "%.1f %% | %lld (%lld) |\n",
                100 * share, k.threshold, k.window, k.depth,
                static_cast<long long>(offload.placement().placed_experts),
                static_cast<long long>(offload.cache().cache_bytes() / one),
                100 * offload.placement().routed_share, 100 * s.hit_rate(),
                100.0 * double(s.placed_hits) / double(s.routed),
                100.0 * double(s.cache_hits) / double(s.routed),
                static_cast<long long>(s.prefetched), static_cast<long long>(s.prefetch_useful));
            std::fflush(stdout);
        }
    }
    std::filesystem::remove(path);
    return 0;
}
