// The architecture registry and the capability query: an unknown
// general.architecture is refused naming it and what runs; a backend
// without a capability a unit needs gets the plan refused up front, naming
// the missing piece, on tiny synthetic files.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "backend/compute.h"
#include "backend/device.h"
#include "calibrate/synth_model.h"
#include "common/error.h"
#include "common/plain_test.h"
#include "gguf/gguf.h"
#include "model/architecture.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
using backend::Capability;
using plaintest::contains;

namespace {

namespace fs = std::filesystem;

constexpr Capability kEvery[] = {Capability::ActivationScale, Capability::AttentionScale,
                                 Capability::SlidingWindow, Capability::GeGLU,
                                 Capability::GatedDeltaNet};

void registry(plaintest::Counter& c) {
    std::set<std::string_view> seen;
    for (const model::Architecture* unit : model::kArchitectures)
        for (std::string_view name : unit->names) {
            c.check(seen.insert(name).second, "each name in one unit: " + std::string(name));
            c.check(&model::architecture_for(name) == unit,
                    "the registry finds " + std::string(name));
        }
    for (const char* name : {"llama", "mistral", "qwen2", "qwen2moe", "qwen3", "qwen3moe"})
        c.check(&model::architecture_for(name) == &model::Architecture::llama,
                std::string(name) + " runs the llama unit");
    c.check(&model::architecture_for("gemma3") == &model::Architecture::gemma3, "gemma3");
    c.check(&model::architecture_for("qwen35moe") == &model::Architecture::qwen35, "qwen35moe");

    std::string why;
    try {
        model::architecture_for("gpt2");
    } catch (const EngineError& e) {
        why = e.what();
    }
    c.check(contains(why, "unsupported architecture 'gpt2'"), "gpt2 refused by name: " + why);
    for (std::string_view name : seen)
        c.check(contains(why, std::string(name)), "the refusal lists " + std::string(name));
}

void backends(plaintest::Counter& c, tensor::ThreadPool& pool) {
    auto cpu = backend::make_cpu_compute(pool);
    auto device = backend::make_cpu_device({});
    auto without = backend::make_budgeted_cpu_compute(pool, *device, {Capability::SlidingWindow});
    for (Capability cap : kEvery) {
        const std::string name(backend::capability_name(cap));
        c.check(cpu->supports(cap), "the CPU runs " + name);
        c.check(without->supports(cap) == (cap != Capability::SlidingWindow),
                "the stand-in lacks only sliding windows: " + name);
    }

    // Gemma 3's needs follow its config and the parts placed.
    model::ModelConfig gemma;
    gemma.arch = "gemma3";
    gemma.unit = &model::Architecture::gemma3;
    gemma.swa_window = 512;
    auto no_geglu = backend::make_budgeted_cpu_compute(
        pool, *device, {Capability::SlidingWindow, Capability::GeGLU});
    const auto attention = model::OffloadParts::Attention;
    const auto whole = model::OffloadParts::WholeLayers;
    std::string why = model::missing_capabilities(*gemma.unit, gemma, *no_geglu, attention);
    c.check(contains(why, "sliding-window attention") && !contains(why, "GeGLU") &&
                contains(why, no_geglu->name()) && contains(why, "gemma3"),
            "attention alone needs the window, not GeGLU: " + why);
    why = model::missing_capabilities(*gemma.unit, gemma, *no_geglu, whole);
    c.check(contains(why, "sliding-window attention and the GeGLU"),
            "whole layers need both: " + why);
    gemma.swa_window = 0;
    why = model::missing_capabilities(*gemma.unit, gemma, *no_geglu, attention);
    c.check(why.empty(), "no window, no sliding: " + why);
    why = model::missing_capabilities(*gemma.unit, gemma, *cpu, whole);
    c.check(why.empty(), "the CPU runs Gemma 3: " + why);
}

// A loaded model asks the backend before it places a layer there.
void plans(plaintest::Counter& c, tensor::ThreadPool& pool, const fs::path& dir) {
    auto device = backend::make_cpu_device({});
    model::LayerPlan lp;
    lp.n_gpu_layers = 4;

    const fs::path qwen35 = dir / "tiny-qwen35.gguf";
    calibrate::write_synthetic_moe_model(qwen35, calibrate::synth_moe_preset("tiny-qwen35"));
    {
        model::Model m(gguf::GgufFile::open(qwen35), pool, 64, 4);
        auto without =
            backend::make_budgeted_cpu_compute(pool, *device, {Capability::GatedDeltaNet});
        const std::string missing(backend::capability_name(Capability::GatedDeltaNet));
        std::string why = m.unsupported_on(*without, model::OffloadParts::Attention);
        c.check(contains(why, without->name() + " cannot run " + missing),
                "a backend without the delta rule is named with it: " + why);
        const std::string note =
            m.set_plan(model::graph_plan(lp, model::OffloadParts::Attention), without.get());
        c.check(contains(note, missing) && contains(note, "running on the CPU"),
                "the plan refused up front, saying so: " + note);
        c.check(!m.plan().any_device(), "nothing placed");
        // With the capability the unit still keeps its host-computed layers.
        auto full = backend::make_budgeted_cpu_compute(pool, *device);
        why = m.unsupported_on(*full, model::OffloadParts::Attention);
        c.check(!why.empty() && !contains(why, "cannot run"),
                "the unit's own reason, not a capability: " + why);
        c.check(m.unsupported_on(m.host(), model::OffloadParts::WholeLayers).empty(),
                "the host runs it");
    }

    // The llama family needs nothing beyond the common ops.
    calibrate::SynthSpec spec;
    spec.write_sidecar = false;
    const fs::path llama = dir / "tiny-llama.gguf";
    calibrate::write_synthetic_model(llama, spec);
    model::Model m(gguf::GgufFile::open(llama), pool, 64, 4);
    auto bare = backend::make_budgeted_cpu_compute(
        pool, *device, std::vector<Capability>(std::begin(kEvery), std::end(kEvery)));
    const std::string why = m.unsupported_on(*bare, model::OffloadParts::WholeLayers);
    c.check(why.empty(), "llama layers go to a backend with only the common ops: " + why);
}

}  // namespace

int main() {
    plaintest::Counter c;
    tensor::ThreadPool pool(2);
    const fs::path dir = fs::temp_directory_path() / "pi_tst_architecture";
    fs::create_directories(dir);
    try {
        registry(c);
        backends(c, pool);
        plans(c, pool, dir);
    } catch (const std::exception& e) {
        c.check(false, std::string("threw: ") + e.what());
    }
    fs::remove_all(dir);
    return c.finish();
}
