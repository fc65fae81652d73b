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
#include "model/layer_executor.h"
#include "model/model.h"
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

// The model's GGUF cut after its first n_layer layers.
std::vector<uint8_t> first_layers(const gguf::GgufFile& f, int64_t n_layer) {
    gguf::GgufWriter w;
    const std::string block_count = *f.get_string("general.architecture") + ".block_count";
    for (const auto& [key, value] : f.metadata())
        w.set(key, key == block_count ? gguf::Value::u32(static_cast<uint32_t>(n_layer)) : value);
    for (const auto& t : f.tensors()) {
        if (t.name.rfind("blk.", 0) == 0 && std::stoll(t.name.substr(4)) >= n_layer) continue;
        w.add_tensor(t.name, t.type, t.shape, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
    }
    return w.to_bytes();
}

// A CPU stand-in for the GPU's layer executor: the first layers run in a
// model cut after them (with its own KV cache), one token at a time; the
// executor sees only embeddings, so the test says which token it is.
class CutModelLayers final : public model::LayerExecutor {
public:
    explicit CutModelLayers(model::Model& front) : front_(front) {}
    int n_layers() const override { return static_cast<int>(front_.config().n_layer); }
    bool runs_output() const override { return false; }
    void run_layers(float* x, int64_t n, int64_t n_past, model::FfnExecutor&) override {
        if (n != 1) throw EngineError("the stand-in executor runs one token at a time");
        front_.forward(&token, 1, n_past, 0, nullptr);
        std::copy_n(front_.last_hidden(), front_.config().n_embd, x);
    }
    void run_output(const float*, int64_t, float*) override {}
    int32_t token = 0;

private:
    model::Model& front_;
};

// The host KV cache holds only the layers the CPU runs, and those layers
// give the same logits (bit for bit) as the whole model on the CPU, with the
// executor taking 3 layers, then 1 (their host cache comes back), then none.
void test_host_kv_cache(plaintest::Counter& c, const fs::path& path) {
    const auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    tensor::ThreadPool pool(2);
    const int64_t n_ctx = 64;
    model::Model whole(file, pool, n_ctx), back(file, pool, n_ctx);
    const model::ModelConfig& cfg = whole.config();
    const int64_t per_layer = n_ctx * (cfg.kv_dim() + cfg.v_dim()) * 2;  // F16
    c.check(whole.kv_cache_bytes() == cfg.n_layer * per_layer,
            "no executor: the host KV cache holds every layer");

    // Greedy, one token at a time, on the whole model: the reference.
    const int steps = 16;
    std::vector<int32_t> tokens = {1, 300, 301, 302, 303};
    std::vector<std::vector<float>> want;
    for (int pos = 0; pos < steps; ++pos) {
        std::vector<float> logits(static_cast<size_t>(cfg.n_vocab));
        whole.forward(&tokens[static_cast<size_t>(pos)], 1, pos, 1, logits.data());
        if (pos + 1 >= static_cast<int>(tokens.size()))
            tokens.push_back(static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) -
                                                  logits.begin()));
        want.push_back(std::move(logits));
    }

    for (const int64_t n_front : {int64_t{3}, int64_t{1}, int64_t{0}}) {
        const std::string what = std::to_string(n_front) + " of " + std::to_string(cfg.n_layer) +
                                 " layers on the stand-in";
        const std::vector<uint8_t> bytes = first_layers(*file, std::max<int64_t>(n_front, 1));
        const auto front_file =
            std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::from_memory(bytes));
        model::Model front(front_file, pool, n_ctx);
        CutModelLayers stand_in(front);
        back.set_layer_executor(n_front > 0 ? &stand_in : nullptr);
        c.check(back.kv_cache_bytes() == (cfg.n_layer - n_front) * per_layer,
                what + ": the host KV cache holds the other layers only (" +
                    std::to_string(back.kv_cache_bytes()) + " bytes)");
        bool same = true;
        for (int pos = 0; pos < steps; ++pos) {
            std::vector<float> logits(static_cast<size_t>(cfg.n_vocab));
            stand_in.token = tokens[static_cast<size_t>(pos)];
            back.forward(&tokens[static_cast<size_t>(pos)], 1, pos, 1, logits.data());
            same = same && std::memcmp(logits.data(), want[static_cast<size_t>(pos)].data(),
                                       logits.size() * sizeof(float)) == 0;
        }
        c.check(same, what + ": the same logits as the whole model on the CPU, bit for bit");
        back.set_layer_executor(nullptr);
    }
    c.check(back.kv_cache_bytes() == cfg.n_layer * per_layer,
            "executor removed: the host KV cache holds every layer again");
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
        test_host_kv_cache(c, model);
        test_engine(c, model);
        test_cli(c, model, dir);
    } catch (const std::exception& e) {
        std::printf("FAIL: exception: %s\n", e.what());
        c.failed++;
    }
    fs::remove_all(dir);
    return c.finish();
}
