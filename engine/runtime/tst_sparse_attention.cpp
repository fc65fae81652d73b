// Sparse mode's placement through the runtime, runnable without a GPU: the
// budget rule and plan the engine uses (predictors first, then attention
// blocks, then hot neurons), the sidecar's predictor bytes read from its
// headers, and the status the engine and the CLI give (sparse + a CUDA
// device says where attention runs; without a GPU "no CUDA device: running
// on CPU"). With a GPU it checks that attention was placed; accuracy and
// VRAM accounting are in kernels/tst_cuda_sparse.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#ifndef _WIN32
#include <sys/wait.h>
#endif

#include "calibrate/synth_model.h"
#include "common/plain_test.h"
#include "gguf/gguf.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "powerinfer/engine.h"
#include "runtime/local_engine.h"
#include "sparse/sidecar.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
namespace fs = std::filesystem;

namespace {

using plaintest::contains;
using plaintest::read_file;

size_t count_of(const std::string& s, const std::string& part) {
    size_t n = 0;
    for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
    return n;
}

// The runtime's budget rule and the sidecar's predictor bytes.
void test_runtime_plan(plaintest::Counter& c, const fs::path& dir) {
    tensor::ThreadPool pool(1);
    calibrate::SynthSpec spec;
    spec.n_layer = 3;
    spec.n_embd = 128;
    spec.n_ff = 256;
    spec.n_ctx = 256;
    spec.write_sidecar = true;
    const fs::path path = dir / "sparse.gguf";
    calibrate::write_synthetic_model(path, spec);
    const auto sc = sparse::read_sidecar(sparse::default_sidecar_path(path));
    int64_t want = 0;
    for (const auto& l : sc.layers) want += l.predictor.view(sc.n_embd, sc.n_ff).bytes();
    const int64_t got = sparse::sidecar_predictor_bytes(sparse::default_sidecar_path(path));
    c.check(want > 0 && got == want, "sidecar predictor bytes from the headers (" +
                                         std::to_string(got) + ") = the device accounting (" +
                                         std::to_string(want) + ")");
    c.check(sparse::sidecar_predictor_bytes(dir / "missing.gguf") == -1,
            "sidecar predictor bytes of a missing file: -1");

    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(path);
    model::Model m(file, pool, 64);
    const auto costs = model::layer_offload_costs(m, 128, model::OffloadParts::Attention);
    const int64_t mib = int64_t{1} << 20;
    LoadOptions o;
    o.tuning.vram_budget_mb = -1;
    auto p = runtime::plan_sparse_attention(m, o, 700 * mib, got);
    c.check(p.budget_bytes == 188 * mib && p.predictor_bytes == got &&
                p.attention.n_gpu_layers == 3 && p.attention.output_on_gpu &&
                p.hot_neuron_bytes == 188 * mib - got - costs.scratch.bytes -
                                          3 * (costs.layers[0].bytes + costs.kv_bytes_per_layer) -
                                          costs.output.bytes,
            "runtime plan, auto budget: free minus 512 MiB, predictors, 3 layers and the head, "
            "the rest for hot neurons");
    c.check(runtime::plan_sparse_attention(m, o, 100 * mib, got).budget_bytes == 0,
            "runtime plan: less free memory than the margin: budget 0");
    c.check(
        runtime::plan_sparse_attention(m, o, 700 * mib, got, 40 * mib).budget_bytes == 188 * mib,
        "runtime plan, auto budget: the device's own staging is already out of free memory");
    o.tuning.vram_budget_mb = 3;
    p = runtime::plan_sparse_attention(m, o, 700 * mib, got);
    c.check(p.budget_bytes == 3 * mib, "runtime plan: vram_budget_mb wins");
    o.tuning.vram_budget_mb = 100;
    p = runtime::plan_sparse_attention(m, o, 700 * mib, got, 32 * mib);
    c.check(p.budget_bytes == 68 * mib,
            "runtime plan: a set budget less the device's own staging (32 MiB)");
    p = runtime::plan_sparse_attention(m, o, 50 * mib, got);
    c.check(p.budget_bytes == 50 * mib, "runtime plan: a set budget capped at the free memory");
    o.tuning.vram_budget_mb = 0;
    p = runtime::plan_sparse_attention(m, o, 700 * mib, got);
    c.check(p.budget_bytes == 0 && !p.predictors_fit && p.attention.n_gpu_layers == 0 &&
                p.hot_neuron_bytes == 0,
            "runtime plan: vram_budget_mb 0 puts nothing on the GPU");
    o.gpu_attention_layers = 1;
    o.tuning.vram_budget_mb = 100;
    p = runtime::plan_sparse_attention(m, o, 700 * mib, got);
    c.check(p.attention.n_gpu_layers == 1 && !p.attention.output_on_gpu,
            "runtime plan: gpu_attention_layers 1 caps the attention layers");
}

std::unique_ptr<runtime::LocalEngine> load(const fs::path& model, const std::string& device,
                                           int gpu_attention = -1, int gpu_layers = 0,
                                           int64_t vram_budget_mb = -1) {
    LoadOptions o;
    o.tuning.vram_budget_mb = vram_budget_mb;
    o.model_path = model;
    o.n_threads = 2;
    o.n_ctx = 128;
    o.device = device;
    o.gpu_attention_layers = gpu_attention;
    o.gpu_layers = gpu_layers;
    o.tuning.sparse = true;
    o.tuning.prefetch_depth = 0;
    return runtime::LocalEngine::load(o);
}

std::string greedy(runtime::LocalEngine& e) {
    GenerateRequest r;
    r.prompt = "the quick brown fox";
    r.max_tokens = 12;
    r.sampling.temperature = 0;
    return e.generate(r, nullptr).text;
}

void test_engine(plaintest::Counter& c, const fs::path& model) {
    auto cpu = load(model, "cpu");
    const ModelInfo& ci = cpu->info();
    c.check(cpu->sparse_ffn() != nullptr && ci.gpu_attention_layers == 0 &&
                ci.offload_status == "attention on the CPU: the device is set to cpu" &&
                contains(ci.device, ci.offload_status),
            "sparse, device cpu: attention on the CPU, said so (" + ci.device + ")");
    const std::string want = greedy(*cpu);

    auto any = load(model, "auto");
    const ModelInfo& info = any->info();
    std::printf("sparse, device auto: %s\n", info.device.c_str());
    c.check(any->sparse_ffn() != nullptr, "sparse, device auto: the hybrid FFN runs");
    if (info.gpu_attention_layers == 0) {
        c.check(contains(info.offload_status, "no CUDA device: running on CPU"),
                "no GPU: the status says so (" + info.offload_status + ")");
        c.check(count_of(info.device, "no CUDA device") == 1,
                "no GPU: the device line says it once (" + info.device + ")");
        c.check(greedy(*any) == want, "no GPU: same tokens as the CPU device");
        auto none = load(model, "cuda:0", 0);
        c.check(none->info().gpu_attention_layers == 0 &&
                    contains(none->info().offload_status, "running on CPU"),
                "no GPU, gpu_attention_layers 0: CPU, said so");
    } else {
        c.check(info.gpu_attention_layers == info.n_layers &&
                    contains(info.offload_status, "attention: ") &&
                    contains(info.offload_status, "with the output head") &&
                    contains(info.offload_status, "hot neurons on the GPU"),
                "GPU: the attention of every layer and the head on the GPU (" +
                    info.offload_status + ")");
        c.check(!greedy(*any).empty(), "GPU: generates");
        const MemoryReport m = any->memory();
        c.check(!m.simulated && m.dense_weights > 0 && m.kv_cache > 0 && m.predictors > 0,
                "GPU: memory report counts attention weights, KV cache and predictors");
        c.check(m.host_kv_cache == 0, "GPU: every layer's attention there, no KV cache in RAM");
        auto none = load(model, "cuda:0", 0);
        c.check(
            none->info().gpu_attention_layers == 0 &&
                none->info().offload_status == "attention on the CPU (gpu_attention_layers = 0)",
            "GPU, gpu_attention_layers 0: hot neurons only, said so");
    }
    // vram_budget_mb 0: sparse on the CPU device with no hot neurons, GPU or
    // not; the same tokens as the CPU device (hot and cold parts compute the
    // same neurons).
    auto zero = load(model, "auto", -1, 0, 0);
    const ModelInfo& zi = zero->info();
    const MemoryReport zm = zero->memory();
    c.check(zero->sparse_ffn() != nullptr && zi.gpu_attention_layers == 0 &&
                contains(zi.offload_status, "nothing on the GPU (vram_budget_mb = 0)") &&
                zm.hot_neurons == 0 && zm.neuron_cache == 0 && zm.budget_bytes == 0,
            "vram_budget_mb 0: nothing on the GPU, no hot neurons (" + zi.offload_status + ")");
    c.check(greedy(*zero) == want, "vram_budget_mb 0: same tokens as the CPU device");
    auto ngl = load(model, "cpu", -1, 2);
    c.check(ngl->info().gpu_layers == 0 &&
                contains(ngl->info().offload_status, "--gpu-layers is for dense inference"),
            "sparse with --gpu-layers: layer offload off, said so (" + ngl->info().offload_status +
                ")");
}

void test_cli(plaintest::Counter& c, const fs::path& model, const fs::path& dir) {
#ifdef POWERINFER_CLI
    const fs::path err = dir / "stderr.txt";
    auto run = [&](const std::string& args) {
        return plaintest::run_program(POWERINFER_CLI, args, dir);
    };
    const std::string m =
        "-m \"" + model.string() + "\" -p hello -n 4 --temp 0 --threads 2 --ctx 64 --sparse ";
    int rc = run(m + "--device cuda:0");
    std::string e = read_file(err);
    c.check(
        rc == 0 && (contains(e, "no CUDA device: running on CPU") || contains(e, "attention: ")),
        "cli --sparse --device cuda:0 says where attention runs: " + e.substr(0, 300));
    rc = run(m + "--gpu-attention 0 --device cpu");
    e = read_file(err);
    c.check(rc == 0 && contains(e, "attention on the CPU: the device is set to cpu"),
            "cli --sparse --device cpu: attention on the CPU, said so");
    rc = run(m + "--gpu-attention -2");
    c.check(rc == 2 && contains(read_file(err), "--gpu-attention must be -1"),
            "cli --gpu-attention -2: usage error");
    rc = run(m + "--gpu-attention all");
    c.check(rc == 2 && contains(read_file(err), "--gpu-attention expects a number"),
            "cli --gpu-attention all: usage error");
    rc = run("--help");
    c.check(rc == 0 && contains(read_file(dir / "stdout.txt"), "--gpu-attention N"),
            "cli --help lists --gpu-attention");
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
    const fs::path dir = fs::temp_directory_path() / "pi_tst_sparse_attention";
    fs::create_directories(dir);
    try {
        test_runtime_plan(c, dir);
        calibrate::SynthSpec spec;
        spec.n_layer = 4;
        spec.n_embd = 128;
        spec.n_ff = 256;
        spec.n_head = 4;
        spec.n_head_kv = 2;
        spec.n_ctx = 256;
        spec.random_norms = true;
        spec.write_sidecar = true;
        spec.sparsity = 0.7;
        const fs::path model = dir / "synth.gguf";
        calibrate::write_synthetic_model(model, spec);
        test_engine(c, model);
        test_cli(c, model, dir);
    } catch (const std::exception& e) {
        std::printf("FAIL: exception: %s\n", e.what());
        c.failed++;
    }
    fs::remove_all(dir);
    return c.finish();
}
