// Layer offload through the engine facade and the CLI, runnable without a
// GPU: with no CUDA device (or device "cpu") a request for GPU layers runs
// the model on the CPU, says so, and gives the same tokens as no offload.
// With a GPU it checks that layers were placed (accuracy: tst_cuda_model).
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
#include "powerinfer/engine.h"
#include "runtime/local_engine.h"

using namespace powerinfer;
namespace fs = std::filesystem;

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

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

int exit_code(int status) {
#ifdef _WIN32
    return status;
#else
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void test_engine(plaintest::Counter& c, const fs::path& model) {
    auto cpu = load(model, 0);
    const std::string want = greedy(*cpu);
    c.check(cpu->info().gpu_layers == 0 && cpu->info().offload_status.empty(),
            "gpu_layers 0: nothing offloaded, no status");

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
        const std::string cmd = std::string("\"") + POWERINFER_CLI + "\" " + args + " > \"" +
                                (dir / "stdout.txt").string() + "\" 2> \"" + err.string() + "\"";
        return exit_code(std::system(cmd.c_str()));
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
        test_engine(c, model);
        test_cli(c, model, dir);
    } catch (const std::exception& e) {
        std::printf("FAIL: exception: %s\n", e.what());
        c.failed++;
    }
    fs::remove_all(dir);
    return c.finish();
}
