// The one model graph on the GPU backend against the CPU plan (the
// reference): synthetic models of several architectures and quant types,
// all layers (with the output head) and half the layers on the GPU; budget
// accounting and graceful degradation when allocations fail; the engine
// facade. Plain C++ with no CUDA header (the backend is reached through
// backend::gpu_backend()); exits 77 without a GPU.
//
// Prefill with cuBLAS: a 37-token prompt through the batched path (one batch
// of 37; and chunks of 18, 18, 1 that mix batches at later positions with a
// single token) against a device with cuBLAS switched off (row by row) and
// the CPU, then decode on the KV cache the batches wrote.
//
// Tolerance: the CPU quantizes activations to Q8 for its quantized dot
// products and the GPU keeps them in F32 (F16 for the prefill GEMMs), so
// logits differ by rounding. We require a relative RMS difference of the
// logits below kLogitsRelRms and the same greedy token wherever the CPU's top
// two logits are further apart than 3x the largest logit difference seen at
// that step.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "calibrate/synth_model.h"
#include "gguf/gguf.h"
#include "runtime/gpu_test.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "powerinfer/engine.h"
#include "runtime/local_engine.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
using gputest::argmax;
using gputest::compare_logits;
using gputest::compare_rows;
using gputest::random_prompt;
using gputest::RowsCompare;
using gputest::top_gap;
namespace fs = std::filesystem;

namespace {

constexpr double kLogitsRelRms = 0.03;
constexpr int64_t kCtx = 96;

// ---- whole models ----------------------------------------------------------

using Case = gputest::ModelCase;

struct Models {
    fs::path path;
    std::shared_ptr<const gguf::GgufFile> file;
    std::unique_ptr<model::Model> cpu, gpu;
};

Models open_models(const fs::path& dir, const Case& k, tensor::ThreadPool& pool) {
    calibrate::SynthSpec spec = gputest::case_spec(k, 512);
    spec.write_sidecar = false;
    Models m;
    m.path = dir / (std::string(k.arch) + "-" + std::string(ggml_type_name(k.type)) + ".gguf");
    calibrate::write_synthetic_model(m.path, spec);
    m.file = gguf::GgufFile::open(m.path);
    m.cpu =
        std::make_unique<model::Model>(m.file, pool, kCtx, 5);  // chunks of 5: several per prompt
    m.gpu = std::make_unique<model::Model>(m.file, pool, kCtx, 5);
    return m;
}

// Prompt (all logits, several chunks) then teacher-forced greedy decode; the
// GPU model must track the CPU model.
void check_against_cpu(gputest::Counter& c, Models& m, const std::string& what,
                       int64_t n_prompt = 13) {
    const int64_t V = m.cpu->config().n_vocab;
    const std::vector<int32_t> prompt = random_prompt(n_prompt, V);
    const int64_t n = int64_t(prompt.size());
    std::vector<float> lc(size_t(n * V)), lg(size_t(n * V));
    m.cpu->forward(prompt.data(), n, 0, n, lc.data());
    m.gpu->forward(prompt.data(), n, 0, n, lg.data());
    const RowsCompare pc = compare_rows(lg.data(), lc.data(), n, V);
    const double worst_rms = pc.worst_rms;
    c.check(worst_rms < kLogitsRelRms, what + ": prompt logits (" + std::to_string(n) +
                                           " tokens, chunks of " +
                                           std::to_string(m.gpu->chunk_size()) +
                                           "), worst rel RMS " + std::to_string(worst_rms));
    c.check(pc.disagree == 0, what + ": prompt greedy tokens agree (" + std::to_string(pc.agree) +
                                  " clear, " + std::to_string(pc.ties) + " near ties)");
    // Hidden state after the last layer agrees as well (calibration reads it).
    const auto hc =
        compare_logits(m.gpu->last_hidden(), m.cpu->last_hidden(), m.cpu->config().n_embd);
    c.check(hc.rel_rms < kLogitsRelRms,
            what + ": last hidden state rel RMS " + std::to_string(hc.rel_rms));

    std::vector<float> dc(static_cast<size_t>(V)), dg(static_cast<size_t>(V));
    std::copy(lc.end() - V, lc.end(), dc.begin());
    std::copy(lg.end() - V, lg.end(), dg.begin());
    int agree = 0, ties = 0, disagree = 0;
    double decode_rms = 0;
    for (int64_t step = 0; step < 8; ++step) {
        const auto cmp = compare_logits(dg.data(), dc.data(), V);
        if (top_gap(dc.data(), V) > 3 * cmp.max_abs) {
            (argmax(dg.data(), V) == argmax(dc.data(), V) ? agree : disagree)++;
        } else {
            ++ties;
        }
        const int32_t tok = int32_t(argmax(dc.data(), V));
        m.cpu->forward(&tok, 1, n + step, 1, dc.data());
        m.gpu->forward(&tok, 1, n + step, 1, dg.data());
        decode_rms = std::max(decode_rms, compare_logits(dg.data(), dc.data(), V).rel_rms);
    }
    c.check(decode_rms < kLogitsRelRms,
            what + ": decode logits (8 steps), worst rel RMS " + std::to_string(decode_rms));
    c.check(disagree == 0, what + ": greedy tokens agree (" + std::to_string(agree) + " clear, " +
                               std::to_string(ties) + " near ties, " + std::to_string(disagree) +
                               " disagreements)");
    std::printf("  %s: prompt rel RMS %.2e, decode rel RMS %.2e, greedy %d/%d clear steps\n",
                what.c_str(), worst_rms, decode_rms, agree, agree + disagree);
}


// Everything the device holds besides its own staging.
int64_t held(backend::Device& dev) {
    const auto m = dev.memory();
    return m.used_total() - m.used_by(backend::MemCategory::Staging);
}

// Places a layer-offload plan of the model on the device's backend.
std::string place(model::Model& m, backend::Device& dev, const model::LayerPlan& plan) {
    return m.set_plan(model::graph_plan(plan, model::OffloadParts::WholeLayers), dev.compute());
}

model::LayerOffloadCosts costs_of(const model::Model& m) {
    return model::layer_offload_costs(m, model::Model::kDeviceTokenBatch);
}

void test_model(gputest::Counter& c, const fs::path& dir, const Case& k, tensor::ThreadPool& pool) {
    const std::string name = gputest::case_name(k);
    for (int part : {-1, 2}) {  // all layers with the head, then the first half
        Models m = open_models(dir, k, pool);
        auto dev = gputest::gpu_device(int64_t{1} << 30);
        const int64_t staging = gputest::base_staging(*dev);
        const auto plan = model::plan_layer_offload(costs_of(*m.gpu), part, dev->memory().available());
        const std::string note = place(*m.gpu, *dev, plan);
        const std::string what = name + (part < 0 ? ", all layers" : ", 2 of 4 layers");
        if (m.gpu->plan().device_layers() == 0) {
            c.check(false, what + ": layers placed (" + note + ")");
            continue;
        }
        c.check(m.gpu->plan().device_layers() == (part < 0 ? 4 : 2) &&
                    (m.gpu->plan().output == model::Site::Device) == (part < 0) && note.empty(),
                what + ": planned layers placed (" + note + ")");
        c.check(held(*dev) == plan.bytes &&
                    dev->memory().used_by(backend::MemCategory::Staging) == staging,
                what + ": device accounting equals the plan (" + std::to_string(plan.bytes) +
                    " bytes) plus the device's own staging");
        try {
            check_against_cpu(c, m, what);
        } catch (const std::exception& e) {
            c.check(false, what + ": threw " + e.what());
        }
        m.gpu->set_plan({}, nullptr);
        c.check(held(*dev) == 0, what + ": everything freed with the plan");
    }
}

// Prefill through cuBLAS GEMMs vs row by row (a device placed with cuBLAS
// switched off) vs the CPU model, on a 37-token prompt, all layers and the
// head on the GPU.
void test_prefill(gputest::Counter& c, const fs::path& dir, const Case& k,
                  tensor::ThreadPool& pool) {
    const std::string name = std::string(k.arch) + " " + std::string(ggml_type_name(k.type));
    constexpr int64_t kPrompt = 37, kDecode = 8;
    for (int64_t chunk : {int64_t{64}, int64_t{18}}) {
        Models m = open_models(dir, k, pool);
        m.cpu->set_chunk_size(chunk);
        m.gpu->set_chunk_size(chunk);
        // A third model runs the same layers row by row.
        model::Model token_model(m.file, pool, kCtx, chunk);
        auto dev = gputest::gpu_device(int64_t{1} << 30);
        auto dev2 = gputest::gpu_device(int64_t{1} << 30);
        const auto plan = model::plan_layer_offload(costs_of(*m.gpu), -1, int64_t{1} << 30);
        const std::string note = place(*m.gpu, *dev, plan);
        gputest::set_env("POWERINFER_NO_CUBLAS", "1");  // read when the plan is placed
        const std::string note2 = place(token_model, *dev2, plan);
        gputest::set_env("POWERINFER_NO_CUBLAS", nullptr);
        const std::string what = name + ", prefill in chunks of " + std::to_string(chunk);
        if (m.gpu->plan().device_layers() != 4 || token_model.plan().device_layers() != 4) {
            c.check(false, what + ": plans placed (" + note + " / " + note2 + ")");
            continue;
        }
        c.check(dev->compute()->batched_matmul() && dev->compute()->note().empty(),
                what + ": cuBLAS ready for prefill (" + dev->compute()->note() + ")");
        c.check(!dev2->compute()->batched_matmul() &&
                    dev2->compute()->note().find("token by token") != std::string::npos,
                what + ": cuBLAS off: the backend says so (" + dev2->compute()->note() + ")");

        const int64_t V = m.cpu->config().n_vocab;
        const auto prompt = random_prompt(kPrompt, V);
        std::vector<float> lc(size_t(kPrompt * V)), lg(lc.size()), lt(lc.size());
        try {
            m.cpu->forward(prompt.data(), kPrompt, 0, kPrompt, lc.data());
            m.gpu->forward(prompt.data(), kPrompt, 0, kPrompt, lg.data());
            token_model.forward(prompt.data(), kPrompt, 0, kPrompt, lt.data());
        } catch (const std::exception& e) {
            c.check(false, what + ": prompt threw " + e.what());
            continue;
        }
        const RowsCompare gc = compare_rows(lg.data(), lc.data(), kPrompt, V);
        const RowsCompare tc = compare_rows(lt.data(), lc.data(), kPrompt, V);
        const RowsCompare gt = compare_rows(lg.data(), lt.data(), kPrompt, V);
        c.check(gc.worst_rms < kLogitsRelRms && gc.disagree == 0,
                what + ": GEMM prefill vs CPU, worst rel RMS " + std::to_string(gc.worst_rms) +
                    ", greedy " + std::to_string(gc.agree) + " clear agree, " +
                    std::to_string(gc.disagree) + " disagree");
        c.check(tc.worst_rms < kLogitsRelRms && tc.disagree == 0,
                what + ": row-by-row prefill vs CPU, worst rel RMS " + std::to_string(tc.worst_rms));
        c.check(gt.worst_rms < kLogitsRelRms && gt.disagree == 0,
                what + ": GEMM vs row-by-row prefill, worst rel RMS " +
                    std::to_string(gt.worst_rms) + ", greedy " + std::to_string(gt.agree) +
                    " clear agree");
        // Decode on the KV cache the GEMM batches wrote.
        std::vector<float> dc(static_cast<size_t>(V)), dg(dc.size());
        double decode_rms = 0;
        int disagree = 0;
        int32_t tok = int32_t(argmax(lc.data() + (kPrompt - 1) * V, V));
        for (int64_t step = 0; step < kDecode; ++step) {
            m.cpu->forward(&tok, 1, kPrompt + step, 1, dc.data());
            m.gpu->forward(&tok, 1, kPrompt + step, 1, dg.data());
            const RowsCompare r = compare_rows(dg.data(), dc.data(), 1, V);
            decode_rms = std::max(decode_rms, r.worst_rms);
            disagree += r.disagree;
            tok = int32_t(argmax(dc.data(), V));
        }
        c.check(
            decode_rms < kLogitsRelRms && disagree == 0,
            what + ": decode after the GEMM prefill, worst rel RMS " + std::to_string(decode_rms));
        std::printf("  %s: rel RMS vs CPU: GEMM %.2e, row by row %.2e; GEMM vs row by row %.2e\n",
                    what.c_str(), gc.worst_rms, tc.worst_rms, gt.worst_rms);
        m.gpu->set_plan({}, nullptr);
        token_model.set_plan({}, nullptr);
    }
}

void test_degrade(gputest::Counter& c, const fs::path& dir, tensor::ThreadPool& pool) {
    const Case k{"llama", GgmlType::Q4_0, 8, 2, false};
    Models m = open_models(dir, k, pool);
    const auto costs = costs_of(*m.gpu);
    const int64_t per = costs.layers[0].bytes + costs.kv_bytes_per_layer;
    const int64_t two = costs.scratch.bytes + 2 * per;

    // The planner on a device whose budget holds exactly two layers.
    {
        auto dev = gputest::gpu_device(two);
        const auto plan = model::plan_layer_offload(costs, -1, dev->memory().available());
        c.check(plan.n_gpu_layers == 2 && !plan.output_on_gpu && plan.bytes == two,
                "plan on a two-layer budget: 2 layers, exact bytes");
    }
    // A plan that asks for more than the device's budget allows: the model
    // keeps what fits, says so, and still matches.
    {
        auto dev = gputest::gpu_device(two);
        model::LayerPlan greedy;
        greedy.n_gpu_layers = 4;
        greedy.output_on_gpu = true;
        const std::string note = place(*m.gpu, *dev, greedy);
        c.check(m.gpu->plan().device_layers() == 2 && m.gpu->plan().output == model::Site::Host &&
                    note.find("only 2") != std::string::npos,
                "over-budget plan degrades to 2 layers with a note (" + note + ")");
        c.check(held(*dev) == two, "degraded: accounting equals what was placed");
        if (m.gpu->plan().device_layers() == 2) check_against_cpu(c, m, "degraded to 2 layers");
        m.gpu->set_plan({}, nullptr);
    }
    // Not even the scratch fits: nothing placed, a note, nothing allocated.
    {
        auto dev = gputest::gpu_device(costs.scratch.bytes - 1);
        model::LayerPlan want;
        want.n_gpu_layers = 1;
        const std::string note = place(*m.gpu, *dev, want);
        c.check(m.gpu->plan().device_layers() == 0 &&
                    note.find("running on the CPU") != std::string::npos && held(*dev) == 0,
                "nothing fits: the CPU runs it, nothing left allocated (" + note + ")");
    }
}

// The facade: LocalEngine with gpu_layers -1 against gpu_layers 0.
void test_engine(gputest::Counter& c, const fs::path& dir) {
    calibrate::SynthSpec spec;
    spec.n_layer = 6;
    spec.n_embd = 256;
    spec.n_ff = 512;
    spec.n_head = 8;
    spec.n_head_kv = 4;
    spec.random_norms = true;
    spec.write_sidecar = false;
    const fs::path path = dir / "engine.gguf";
    calibrate::write_synthetic_model(path, spec);
    auto load = [&](int gpu_layers) {
        LoadOptions o;
        o.model_path = path;
        o.n_threads = 4;
        o.n_ctx = 256;
        o.gpu_layers = gpu_layers;
        o.tuning.sparse = false;
        return runtime::LocalEngine::load(o);
    };
    auto cpu = load(0);
    auto gpu = load(-1);
    auto half = load(3);
    std::printf("  engine: %s\n  engine: %s\n", gpu->info().offload_status.c_str(),
                half->info().offload_status.c_str());
    c.check(gpu->info().gpu_layers == 6 &&
                gpu->info().offload_status.find("with the output head") != std::string::npos,
            "engine gpu_layers -1: all 6 layers and the head on the GPU");
    c.check(half->info().gpu_layers == 3, "engine gpu_layers 3: 3 layers on the GPU");
    const MemoryReport mr = gpu->memory();
    c.check(mr.dense_weights > 0 && mr.kv_cache > 0 && !mr.simulated,
            "engine memory report: GPU weights and KV cache");
    GenerateRequest r;
    r.prompt = "the quick brown fox jumps over the lazy dog";
    r.max_tokens = 16;
    r.sampling.temperature = 0;
    const auto a = cpu->generate(r, nullptr), b = gpu->generate(r, nullptr);
    c.check(b.generated_tokens > 0, "engine on the GPU generates");
    std::printf("  engine greedy, CPU: '%s'\n  engine greedy, GPU: '%s'\n", a.text.c_str(),
                b.text.c_str());
    std::printf("  engine decode tok/s: CPU %.1f, GPU %.1f; prompt tok/s: CPU %.1f, GPU %.1f\n",
                a.decode_tokens_per_s, b.decode_tokens_per_s, a.prompt_tokens_per_s,
                b.prompt_tokens_per_s);
    c.check(gpu->info().offload_status.find("token by token") == std::string::npos,
            "engine: prompts use the cuBLAS GEMMs (" + gpu->info().offload_status + ")");
    // Multi-turn reuse of the GPU KV cache: a longer prompt sharing the prefix.
    r.prompt += " again";
    const auto b2 = gpu->generate(r, nullptr);
    c.check(b2.evaluated_prompt_tokens < b2.prompt_tokens && b2.generated_tokens > 0,
            "engine on the GPU reuses the cached prefix");
}

}  // namespace

int main() {
    if (!gputest::gpu_present()) return 77;
    gputest::Counter c;
    const fs::path dir = fs::temp_directory_path() / "pi_tst_gpu_model";
    fs::create_directories(dir);
    try {
        tensor::ThreadPool pool(4);
        const Case cases[] = {
            {"llama", GgmlType::Q4_0, 8, 2, false}, {"llama", GgmlType::Q8_0, 4, 4, false},
            {"qwen2", GgmlType::Q4_K, 8, 2, true},  {"qwen3", GgmlType::Q6_K, 4, 2, false},
            {"llama", GgmlType::F16, 4, 1, false},  {"llama", GgmlType::Q5_1, 8, 4, true},
        };
        for (const Case& k : cases) test_model(c, dir, k, pool);
        for (const Case& k : cases) test_prefill(c, dir, k, pool);
        test_degrade(c, dir, pool);
        test_engine(c, dir);
    } catch (const std::exception& e) {
        c.check(false, std::string("exception: ") + e.what());
    }
    fs::remove_all(dir);
    return c.finish();
}
