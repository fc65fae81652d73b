// Layer offload through the engine facade and the CLI, runnable without a
// GPU: with no CUDA device (or device "cpu") a request for GPU layers runs
// the model on the CPU, says so, and gives the same tokens as no offload.
// With a GPU it checks that layers were placed (accuracy: tst_cuda_model).
// The host KV cache of offloaded layers is checked with a CPU stand-in for
// the GPU executor.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef _WIN32
#include <sys/wait.h>
#endif

#include "calibrate/synth_model.h"
#include "common/error.h"
#include "common/plain_test.h"
#include "gguf/gguf.h"
#include "backend/compute.h"
#include "backend/device.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "model/plan_test_support.h"
#include "powerinfer/engine.h"
#include "runtime/local_engine.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
namespace fs = std::filesystem;

namespace {

using plaintest::contains;
using plaintest::read_file;

std::unique_ptr<runtime::LocalEngine> load(const fs::path& model, int gpu_layers,
                                           const std::string& device = "auto",
                                           int64_t vram_budget_mb = -1) {
    LoadOptions o;
    o.model_path = model;
    o.n_threads = 2;
    o.n_ctx = 128;
    o.gpu_layers = gpu_layers;
    o.device = device;
    o.tuning.sparse = false;
    o.tuning.vram_budget_mb = vram_budget_mb;
    return runtime::LocalEngine::load(o);
}

std::string greedy(runtime::LocalEngine& e) {
    GenerateRequest r;
    r.prompt = "the quick brown fox";
    r.max_tokens = 12;
    r.sampling.temperature = 0;
    return e.generate(r, nullptr).text;
}

using model::testing::run_plan;

// The graph's plans on a stand-in for the GPU (the CPU backend on a budgeted
// CPU device: the same op code, so the plans must agree bit for bit with the
// plain CPU plan): whole layers (layer offload) with and without the head,
// attention only (sparse placement: FFN through the host executor), a budget
// that holds only some layers, and back to the CPU. The host KV cache holds
// only the layers the host runs; the device holds exactly what was planned.
void test_plans_on_stand_in(plaintest::Counter& c, const fs::path& path) {
    const auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    tensor::ThreadPool pool(2);
    const int64_t n_ctx = 64;
    model::Model m(file, pool, n_ctx);
    const model::ModelConfig& cfg = m.config();
    const int64_t per_layer = n_ctx * (cfg.kv_dim() + cfg.v_dim()) * 2;  // F16
    c.check(m.kv_cache_bytes() == cfg.n_layer * per_layer,
            "CPU plan: the host KV cache holds every layer");
    const int steps = 12;
    const auto want = run_plan(m, steps);

    auto device = backend::make_cpu_device({});
    auto stand_in = backend::make_budgeted_cpu_compute(pool, *device);
    struct Case {
        std::string what;
        int layers;
        model::OffloadParts parts;
        bool head;
    };
    const int L = static_cast<int>(cfg.n_layer);
    for (const Case& k : {Case{"3 whole layers", 3, model::OffloadParts::WholeLayers, false},
                          Case{"every layer and the head", L, model::OffloadParts::WholeLayers, true},
                          Case{"attention of 2 layers", 2, model::OffloadParts::Attention, false},
                          Case{"attention of every layer and the head", L,
                               model::OffloadParts::Attention, true}}) {
        model::LayerPlan lp;
        lp.n_gpu_layers = k.layers;
        lp.output_on_gpu = k.head;
        const std::string note = m.set_plan(model::graph_plan(lp, k.parts), stand_in.get());
        c.check(note.empty(), k.what + ": placed without a note (" + note + ")");
        c.check(m.plan().device_layers() == k.layers &&
                    (m.plan().output == model::Site::Device) == k.head,
                k.what + ": the plan in effect is the one asked for");
        c.check(m.kv_cache_bytes() == (cfg.n_layer - k.layers) * per_layer,
                k.what + ": the host KV cache holds the other layers only (" +
                    std::to_string(m.kv_cache_bytes()) + " bytes)");
        const auto costs =
            model::layer_offload_costs(m, model::Model::kDeviceTokenBatch, k.parts);
        const auto planned = model::plan_layer_offload(costs, k.layers, int64_t{1} << 40);
        const int64_t used = device->memory().used_total();
        c.check(used == planned.bytes, k.what + ": the device holds what was planned (" +
                                           std::to_string(used) + " of " +
                                           std::to_string(planned.bytes) + " bytes)");
        const auto got = run_plan(m, steps);
        bool same = got.size() == want.size();
        for (size_t i = 0; same && i < got.size(); ++i)
            same = std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)) == 0;
        c.check(same, k.what + ": the same logits as the CPU plan, bit for bit");
    }

    // A budget for the scratch and two layers: two placed, and said so.
    const auto costs = model::layer_offload_costs(m, model::Model::kDeviceTokenBatch);
    m.set_plan({}, nullptr);
    device->set_budget(costs.scratch.bytes + 2 * (costs.layers[0].bytes + costs.kv_bytes_per_layer));
    model::LayerPlan all;
    all.n_gpu_layers = L;
    const std::string note =
        m.set_plan(model::graph_plan(all, model::OffloadParts::WholeLayers), stand_in.get());
    c.check(m.plan().device_layers() == 2 && note.find("only 2") != std::string::npos,
            "a budget for 2 layers: 2 placed, and the note says so (" + note + ")");
    const auto got = run_plan(m, steps);
    c.check(std::memcmp(got.back().data(), want.back().data(), got.back().size() * sizeof(float)) ==
                0,
            "2 layers on the stand-in: the same logits");
    device->set_budget(0);
    const std::string none =
        m.set_plan(model::graph_plan(all, model::OffloadParts::WholeLayers), stand_in.get());
    c.check(m.plan().device_layers() == 0 && none.find("running on the CPU") != std::string::npos,
            "no room at all: nothing placed, the note says the CPU runs it (" + none + ")");

    m.set_plan({}, nullptr);
    c.check(m.kv_cache_bytes() == cfg.n_layer * per_layer && device->memory().used_total() == 0,
            "plan removed: the host KV cache holds every layer again, the device nothing");
}

void test_engine(plaintest::Counter& c, const fs::path& model) {
    auto cpu = load(model, 0);
    const std::string want = greedy(*cpu);
    c.check(cpu->info().gpu_layers == 0 && cpu->info().offload_status.empty(),
            "gpu_layers 0: nothing offloaded, no status");
    c.check(cpu->memory().host_kv_cache == cpu->memory().kv_cache &&
                cpu->memory().host_kv_cache == int64_t{4} * 128 * (64 + 64) * 2,
            "CPU: the memory report's host KV cache is every layer's");

    auto all = load(model, -1);
    const ModelInfo& info = all->info();
    std::printf("gpu_layers -1: %s\n", info.offload_status.c_str());
    if (info.gpu_layers == 0) {
        c.check(contains(info.offload_status, "running on CPU"),
                "no GPU: the status says the model runs on the CPU (" + info.offload_status + ")");
        c.check(contains(info.device, info.offload_status), "the device line carries the status");
        c.check(greedy(*all) == want, "no GPU: same tokens as without offload");
        c.check(all->memory().device_name == "CPU device", "no GPU: memory report is the CPU's");
    } else {
        c.check(info.gpu_layers == info.n_layers && contains(info.offload_status, "layers: "),
                "GPU: every layer of the small model offloaded (" + info.offload_status + ")");
        c.check(!greedy(*all).empty(), "GPU: generates");
        const MemoryReport m = all->memory();
        c.check(m.dense_weights > 0 && m.kv_cache > 0 && !m.simulated,
                "GPU: memory report counts the offloaded weights and KV cache");
        c.check(m.host_kv_cache == 0, "GPU: every layer offloaded, no KV cache in RAM");
    }

    auto forced_cpu = load(model, 3, "cpu");
    c.check(forced_cpu->info().gpu_layers == 0 &&
                forced_cpu->info().offload_status == "layer offload off: the device is set to cpu",
            "device cpu: offload off, said so");
    c.check(greedy(*forced_cpu) == want, "device cpu: same tokens");

    // vram_budget_mb 0 means nothing on the GPU (not "auto"), GPU or not.
    auto zero = load(model, -1, "auto", 0);
    c.check(zero->info().gpu_layers == 0 &&
                contains(zero->info().offload_status, "nothing on the GPU (vram_budget_mb = 0)"),
            "vram_budget_mb 0: no layer offloaded, said so (" + zero->info().offload_status + ")");
    c.check(greedy(*zero) == want, "vram_budget_mb 0: same tokens");
}

void test_cli(plaintest::Counter& c, const fs::path& model, const fs::path& dir) {
#ifdef POWERINFER_CLI
    const fs::path err = dir / "stderr.txt";
    auto run = [&](const std::string& args) {
        return plaintest::run_program(POWERINFER_CLI, args, dir);
    };
    const std::string m =
        "-m \"" + model.string() + "\" -p hello -n 4 --temp 0 --threads 2 --ctx 64 ";
    int rc = run(m + "--gpu-layers -1");
    std::string e = read_file(err);
    c.check(rc == 0 && (contains(e, "[no CUDA device: running on CPU") || contains(e, "[layers: ")),
            "cli --gpu-layers -1 runs and prints where the layers are: " + e.substr(0, 200));
    rc = run(m + "-ngl 2 --device cpu");
    e = read_file(err);
    c.check(rc == 0 && contains(e, "[layer offload off: the device is set to cpu]"),
            "cli -ngl 2 --device cpu: runs on the CPU and says so");
    rc = run(m + "--gpu-layers two");
    c.check(rc == 2 && contains(read_file(err), "--gpu-layers expects a number"),
            "cli --gpu-layers two: usage error");
    rc = run(m + "--gpu-layers -2");
    c.check(rc == 2 && contains(read_file(err), "--gpu-layers must be -1"),
            "cli --gpu-layers -2: usage error");
    rc = run("--help");
    c.check(rc == 0 && contains(read_file(dir / "stdout.txt"), "--gpu-layers N"),
            "cli --help lists --gpu-layers");
#else
    (void)c;
    (void)model;
    (void)dir;
    std::printf("powerinfer-cli not built: CLI checks skipped\n");
#endif
}

}  // namespace

int main() {
    plaintest::Counter c;
    const fs::path dir = fs::temp_directory_path() / "pi_tst_layer_offload";
    fs::create_directories(dir);
    try {
        calibrate::SynthSpec spec;
        spec.n_layer = 4;
        spec.n_embd = 128;
        spec.n_ff = 256;
        spec.n_head = 4;
        spec.n_head_kv = 2;
        spec.n_ctx = 256;
        spec.random_norms = true;
        spec.write_sidecar = false;
        const fs::path model = dir / "synth.gguf";
        calibrate::write_synthetic_model(model, spec);
        test_plans_on_stand_in(c, model);
        test_engine(c, model);
        test_cli(c, model, dir);
    } catch (const std::exception& e) {
        std::printf("FAIL: exception: %s\n", e.what());
        c.failed++;
    }
    fs::remove_all(dir);
    return c.finish();
}
