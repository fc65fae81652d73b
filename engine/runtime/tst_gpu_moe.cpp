// Expert placement on a real GPU (model/moe_offload.h over CudaCompute): a
// tiny random-weight qwen3moe (4 layers, 8 experts, top-2) whose own routing
// counts stand in for a calibration's, experts split between the GPU (placed,
// cached, prefetched) and the CPU, against the CPU plan: a 6-token prompt in
// one batch, then 10 decode steps fed the CPU's greedy tokens; the device's
// accounting equals what the offload allocated; the engine facade on cuda:0
// with an expert sidecar (status, memory report, generation). Plain C++ with
// no CUDA header (the GPU through backend::gpu_backend()); exits 77 without
// a GPU.
//
// Tolerance: the CPU quantizes activations (Q8_K for the K-quant experts)
// for its dot products and the GPU keeps them in F32 (F16 in the batched
// prefill products through cuBLAS), so logits differ by rounding. We require
// a relative RMS difference of the logits below kLogitsRelRms (as
// tst_gpu_model) at every step and the same greedy token wherever the CPU's
// top two logits are further apart than 3x the largest logit difference of
// that step.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "backend/device.h"
#include "calibrate/synth_model.h"
#include "gguf/gguf.h"
#include "model/expert_placement.h"
#include "model/model.h"
#include "model/moe_offload.h"
#include "model/plan_test_support.h"
#include "powerinfer/engine.h"
#include "runtime/gpu_test.h"
#include "runtime/local_engine.h"
#include "sparse/sidecar.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
using gputest::argmax;
using gputest::compare_logits;
using gputest::top_gap;
namespace fs = std::filesystem;

namespace {

constexpr double kLogitsRelRms = 0.03;
constexpr int kSteps = 10;

// The prompt's last logits and each decode step's, the tokens fed after the
// prompt (the CPU's greedy choices when `tokens` is empty on entry).
struct Run {
    std::vector<std::vector<float>> logits;
    std::vector<int32_t> tokens;
};

Run run_greedy(model::Model& m, std::vector<int32_t> tokens) {
    const int64_t V = m.config().n_vocab;
    const bool fixed = !tokens.empty();
    Run r;
    std::vector<int32_t> prompt = {1, 300, 301, 302, 303, 304};
    std::vector<float> all(static_cast<size_t>(6 * V));
    m.forward(prompt.data(), 6, 0, 6, all.data());
    r.logits.emplace_back(all.end() - V, all.end());
    for (int step = 0; step < kSteps; ++step) {
        const int32_t tok = fixed ? tokens[static_cast<size_t>(step)]
                                  : static_cast<int32_t>(argmax(r.logits.back().data(), V));
        r.tokens.push_back(tok);
        std::vector<float> l(static_cast<size_t>(V));
        m.forward(&tok, 1, 6 + step, 1, l.data());
        r.logits.push_back(std::move(l));
    }
    return r;
}

void test_offload(gputest::Counter& c, const fs::path& path, tensor::ThreadPool& pool) {
    const auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    model::Model cpu(file, pool, 64), gpu(file, pool, 64);
    const model::ModelConfig& cfg = cpu.config();
    const Run want = run_greedy(cpu, {});
    const int64_t V = cfg.n_vocab;

    const model::ExpertRoutingStats stats = model::testing::routing_stats(cpu, 6 + kSteps);
    const int64_t B = cpu.layer(0).moe.expert_bytes();
    const int64_t all = cfg.n_layer * cfg.n_expert;
    std::vector<model::MoeWeights> layers;
    std::vector<int64_t> per_layer;
    for (int il = 0; il < cfg.n_layer; ++il) {
        layers.push_back(cpu.layer(il).moe);
        per_layer.push_back(layers.back().expert_bytes());
    }

    struct Case {
        std::string what;
        int64_t experts;  // budget beyond the scratch, in experts
        double coverage;
        model::ExpertCacheKnobs knobs;
        int64_t max_rows;
    };
    const Case cases[] = {
        {"3 placed, no cache", 3, 1.0, {0, 0}, 256},
        {"placed + cache + prefetch", 12, 0.3, {2, 2}, 256},
        {"cache only", 6, 0.0, {4, 1}, 256},
        // The prompt's device experts in groups of 4 rows.
        {"placed + cache, rows of 4", 10, 0.3, {4, 1}, 4},
        {"every expert placed", all, 1.0, {8, 2}, 256},
    };
    for (const Case& k : cases) {
        const std::string name = "offload, " + k.what;
        model::ExpertOffload::Setup setup;
        setup.stats = stats;
        setup.coverage = k.coverage;
        setup.knobs = k.knobs;
        setup.max_rows = k.max_rows;
        setup.device_workspace = true;
        const int64_t scratch = model::ExpertOffload::plan_for(cfg, per_layer, setup).scratch_bytes;
        setup.budget_bytes = scratch + k.experts * B;
        auto dev = gputest::gpu_device(setup.budget_bytes);
        const int64_t staging = gputest::base_staging(*dev);
        const int64_t base_allocs = dev->memory().device_allocations;
        backend::Compute* compute = dev->compute();
        c.check(compute != nullptr, name + ": the GPU has a Compute");
        if (!compute) continue;
        auto offload = std::make_unique<model::ExpertOffload>(*compute, pool, cfg, layers, setup);
        if (k.coverage == 1.0)
            c.check(offload->placement().placed_experts == std::min(k.experts, all),
                    name + ": the budget's experts placed (" +
                        std::to_string(offload->placement().placed_experts) + ")");
        gpu.moe_ffn()->set_offload(offload.get());
        const Run got = run_greedy(gpu, want.tokens);
        double worst = 0;
        int agree = 0, ties = 0, disagree = 0;
        for (size_t s = 0; s < want.logits.size(); ++s) {
            const auto cmp = compare_logits(got.logits[s].data(), want.logits[s].data(), V);
            worst = std::max(worst, cmp.rel_rms);
            if (top_gap(want.logits[s].data(), V) > 3 * cmp.max_abs) {
                (argmax(got.logits[s].data(), V) == argmax(want.logits[s].data(), V) ? agree
                                                                                      : disagree)++;
            } else {
                ++ties;
            }
        }
        c.check(worst < kLogitsRelRms,
                name + ": logits against the CPU plan, worst rel RMS " + std::to_string(worst));
        c.check(disagree == 0, name + ": greedy tokens agree (" + std::to_string(agree) +
                                   " clear, " + std::to_string(ties) + " near ties)");
        const model::ExpertCacheStats& s = offload->cache().stats();
        c.check(s.placed_hits + s.cache_hits > 0 && (s.misses > 0) == (k.experts < all),
                name + ": experts ran on both sides (GPU " +
                    std::to_string(s.placed_hits + s.cache_hits) + ", CPU " +
                    std::to_string(s.misses) + " routings)");
        const backend::DeviceMemoryInfo mem = dev->memory();
        const int64_t cached = offload->cached_bytes() / B;  // one expert size in this model
        c.check(mem.used_by(backend::MemCategory::HotNeurons) == offload->placed_bytes() &&
                    mem.used_by(backend::MemCategory::NeuronCache) == offload->cached_bytes() &&
                    mem.used_by(backend::MemCategory::Scratch) == scratch &&
                    mem.used_by(backend::MemCategory::Staging) == staging &&
                    mem.used_total() <= staging + setup.budget_bytes,
                name + ": the device holds the placed and cached experts and the scratch (" +
                    std::to_string(mem.used_total()) + " of " +
                    std::to_string(staging + setup.budget_bytes) + " bytes)");
        c.check(mem.device_allocations ==
                    base_allocs + 1 + offload->placement().placed_experts + cached,
                name + ": one allocation per expert on the device and one scratch (" +
                    std::to_string(mem.device_allocations) + ")");
        gpu.moe_ffn()->set_offload(nullptr);
        offload.reset();
        c.check(dev->memory().used_total() == staging &&
                    dev->memory().device_allocations == base_allocs,
                name + ": all released");
    }

    // A budget that does not hold the scratch: refused at construction.
    {
        model::ExpertOffload::Setup setup;
        setup.stats = stats;
        setup.device_workspace = true;
        const int64_t scratch = model::ExpertOffload::plan_for(cfg, per_layer, setup).scratch_bytes;
        setup.budget_bytes = scratch / 2;
        auto dev = gputest::gpu_device(scratch / 2);
        bool refused = false;
        try {
            model::ExpertOffload o(*dev->compute(), pool, cfg, layers, setup);
        } catch (const backend::DeviceOutOfMemory&) {
            refused = true;
        }
        c.check(refused && dev->memory().used_total() == gputest::base_staging(*dev),
                "offload: a budget below the scratch is refused, nothing left allocated");
    }
}

// The facade: the expert sidecar next to the model, device cuda:0 at a
// budget that places some of the experts, against device cpu.
void test_engine(gputest::Counter& c, const fs::path& path) {
    const auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    tensor::ThreadPool pool(2);
    model::Model m(file, pool, 64);
    run_greedy(m, {});  // the routing counts of the sidecar
    model::ExpertRoutingStats stats = model::testing::routing_stats(m, 6 + kSteps);
    stats.model_hash = sparse::model_hash(*file);
    stats.model_bytes = file->file_size();
    const fs::path sidecar = path.parent_path() / "experts.sidecar.gguf";
    model::write_expert_sidecar(sidecar, stats);
    const int64_t B = m.layer(0).moe.expert_bytes();

    auto load = [&](const std::string& device, int64_t budget_mb) {
        LoadOptions o;
        o.model_path = path;
        o.sidecar_path = sidecar;
        o.device = device;
        o.n_threads = 2;
        o.n_ctx = 256;
        o.tuning.vram_budget_mb = budget_mb;
        o.tuning.hot_neuron_threshold = 1.0;
        return runtime::LocalEngine::load(o);
    };
    const std::string gpu_name = gputest::gpu_device()->name();
    // The device's own 32 MiB transfer arena, the scratch (about 5.5 MiB at
    // chunk_size 256) and about 2 MiB for experts: some of the 32 placed.
    auto gpu = load("cuda:0", 40);
    auto cpu = load("cpu", 40);
    const std::string status = gpu->info().sparse_status;
    std::printf("  engine: %s\n", status.c_str());
    c.check(status.find("placed on " + gpu_name) != std::string::npos,
            "engine: experts placed on " + gpu_name);
    c.check(cpu->info().sparse_status.find("the device is set to cpu") != std::string::npos,
            "engine, device cpu: every expert on the CPU");
    const MemoryReport mr = gpu->memory();
    c.check(!mr.simulated && mr.device_name == gpu_name, "engine memory report names the GPU");
    c.check(mr.hot_neurons > 0 && mr.hot_neurons % B == 0 && mr.neuron_cache % B == 0 &&
                mr.hot_neurons + mr.neuron_cache + mr.scratch <= mr.budget_bytes &&
                mr.budget_bytes <= int64_t{40} << 20,
            "engine memory report: placed and cached experts and scratch within the budget (" +
                std::to_string(mr.hot_neurons) + " + " + std::to_string(mr.neuron_cache) + " + " +
                std::to_string(mr.scratch) + " of " + std::to_string(mr.budget_bytes) + ")");
    GenerateRequest r;
    r.prompt = "the quick brown fox jumps over the lazy dog";
    r.max_tokens = 16;
    r.sampling.temperature = 0;
    const auto a = cpu->generate(r, nullptr), b = gpu->generate(r, nullptr);
    c.check(b.generated_tokens > 0, "engine with experts on the GPU generates");
    const TokenMetrics tm = gpu->last_metrics();
    c.check(tm.experts_routed > 0 && tm.expert_hits > 0,
            "engine: the GPU served routings (" + std::to_string(tm.expert_hits) + " of " +
                std::to_string(tm.experts_routed) + " in the last token)");
    std::printf("  engine greedy, CPU: '%s'\n  engine greedy, GPU: '%s'\n", a.text.c_str(),
                b.text.c_str());
    std::printf("  engine decode tok/s: CPU %.1f, GPU experts %.1f\n", a.decode_tokens_per_s,
                b.decode_tokens_per_s);
}

}  // namespace

int main() {
    if (!gputest::gpu_present()) return 77;
    gputest::Counter c;
    const fs::path dir = fs::temp_directory_path() / "pi_tst_gpu_moe";
    fs::create_directories(dir);
    try {
        const fs::path path = dir / "tiny-qwen3moe.gguf";
        calibrate::write_synthetic_moe_model(path, calibrate::synth_moe_preset("tiny-qwen3moe"));
        tensor::ThreadPool pool(2);
        test_offload(c, path, pool);
        test_engine(c, path);
    } catch (const EngineError& e) {
        c.check(false, std::string("unexpected error: ") + e.what());
    }
    fs::remove_all(dir);
    return c.finish();
}
