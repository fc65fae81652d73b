#include "runtime/moe_runtime.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "common/error.h"
#include "model/expert_placement.h"
#include "model/layer_plan.h"
#include "powerinfer/utf8_path.h"
#include "runtime/device_select.h"
#include "sparse/sidecar.h"

namespace powerinfer::runtime {
namespace {

std::string mib(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    return buf;
}

model::ExpertCacheKnobs knobs_of(const Tuning& t) {
    return {std::max(0, t.cache_window_size), std::max(0, t.prefetch_depth)};
}

}  // namespace

std::vector<int64_t> layer_expert_bytes(const model::Model& model) {
    std::vector<int64_t> out;
    for (int il = 0; il < static_cast<int>(model.config().n_layer); ++il)
        out.push_back(model.layer(il).moe.expert_bytes());
    return out;
}

int64_t gpu_expert_room(const LoadOptions& options, int64_t free_bytes, int64_t held_bytes) {
    if (free_bytes < 0) return -1;
    if (options.tuning.vram_budget_mb == 0) return 0;  // nothing on the GPU
    const int64_t total = options.tuning.vram_budget_mb > 0
                              ? std::min(options.tuning.vram_budget_mb << 20, free_bytes + held_bytes)
                              : free_bytes + held_bytes - kGpuSafetyMargin;
    return std::max<int64_t>(0, total - held_bytes);
}

ExpertSetupChoice choose_expert_setup(const model::Model& model, const LoadOptions& options,
                                      const std::filesystem::path& sidecar,
                                      const std::string& gpu_name, int64_t gpu_room) {
    const model::ModelConfig& c = model.config();
    ExpertSetupChoice r;
    r.status = "mixture of experts: " + std::to_string(c.n_expert_used) + " of " +
               std::to_string(c.n_expert) +
               " experts per token and layer, chosen exactly by the router";
    auto on_cpu = [&](const std::string& why) {
        r.status += ", on the CPU (" + why + ")";
        return r;
    };
    if (!options.tuning.sparse) return on_cpu("sparse inference is off in the settings");
    std::error_code ec;
    if (!std::filesystem::exists(sidecar, ec))
        return on_cpu("no expert sidecar " + path_to_utf8(sidecar.filename()) +
                      ": run powerinfer-calibrate to place experts");
    model::ExpertRoutingStats stats;
    try {
        stats = model::read_expert_sidecar(sidecar, sparse::model_hash(model.file()));
    } catch (const EngineError& e) {
        return on_cpu(e.what());
    }
    if (stats.n_layer != c.n_layer || stats.n_expert != c.n_expert)
        return on_cpu(
            "the expert sidecar's shape does not match the model: run "
            "powerinfer-calibrate again");
    if (parse_device(options.device) < 0) return on_cpu("the device is set to cpu");
    if (!gpu_name.empty()) {
        if (gpu_room <= 0)
            return on_cpu(gpu_name + " has no room for experts (vram_budget_mb " +
                          std::to_string(options.tuning.vram_budget_mb) + ")");
        r.setup.budget_bytes = gpu_room;
        r.setup.device_workspace = true;
    } else if (options.tuning.vram_budget_mb <= 0) {
        return on_cpu("no GPU; vram_budget_mb > 0 simulates a device of that size for the experts");
    } else {
        r.setup.budget_bytes = options.tuning.vram_budget_mb << 20;
    }
    r.run = true;
    r.setup.stats = std::move(stats);
    r.setup.coverage = options.tuning.hot_neuron_threshold;
    r.setup.knobs = knobs_of(options.tuning);
    r.setup.max_rows = std::max(1, options.tuning.chunk_size);
    return r;
}

MoeRuntime::MoeRuntime(model::Model& model, const LoadOptions& options,
                       const std::filesystem::path& sidecar, std::string& status)
    : model_(model) {
    // A real GPU when the build has one, one is present and the options
    // allow it (choose_device); its budget is vram_budget_mb or what is free
    // less the safety margin.
    std::unique_ptr<backend::Device> gpu;
    if (parse_device(options.device) >= 0) {
        DeviceChoice choice = choose_device(options);
        if (choice.device && !choice.device->memory().simulated && choice.device->compute())
            gpu = std::move(choice.device);
    }
    int64_t room = gpu ? std::max<int64_t>(0, gpu->memory().available()) : -1;
    // Attention first: with gpu_layers the layer offload (its own device,
    // set up after this one) puts the MoE layers' attention halves on the
    // GPU; the experts get what its plan and its device's arena leave.
    int64_t attention = 0;
    if (gpu && options.gpu_layers != 0) {
        const model::LayerPlan plan = model::plan_layer_offload(
            model::layer_offload_costs(model, model::Model::kDeviceTokenBatch), options.gpu_layers,
            room);
        if (plan.n_gpu_layers > 0) attention = plan.bytes + gpu->memory().used_total();
        room = std::max<int64_t>(0, room - attention);
    }
    ExpertSetupChoice choice =
        choose_expert_setup(model, options, sidecar, gpu ? gpu->name() : std::string(), room);
    status = choice.status;
    if (!choice.run) return;
    const model::ModelConfig& c = model.config();
    const int64_t budget = choice.setup.budget_bytes;
    if (gpu) {
        gpu_ = true;
        own_bytes_ = gpu->memory().used_total();  // its transfer arena
        auto_budget_ = budget;
        reserved_ = attention;
        device_ = std::move(gpu);
        compute_ = device_->compute();
    } else {
        backend::CpuDeviceOptions dev;
        dev.budget_bytes = budget;
        device_ = backend::make_cpu_device(dev);
        own_compute_ = backend::make_budgeted_cpu_compute(model.pool(), *device_);
        compute_ = own_compute_.get();
    }
    backend::Device* device = device_.get();
    const int64_t own = own_bytes_;
    choice.setup.on_budget = [device, own](int64_t bytes) { device->set_budget(bytes + own); };
    std::vector<model::MoeWeights> layers;
    for (int il = 0; il < static_cast<int>(c.n_layer); ++il) layers.push_back(model.layer(il).moe);
    const std::string where = gpu_ ? device_->name() : "the simulated device";
    try {
        offload_ = std::make_unique<model::ExpertOffload>(*compute_, model.pool(), c, layers,
                                                          std::move(choice.setup));
    } catch (const EngineError& e) {
        // DeviceOutOfMemory (not even the scratch fits), a matrix the GPU
        // has no kernel for, a CUDA error: every expert on the CPU.
        const bool oom = dynamic_cast<const backend::DeviceOutOfMemory*>(&e) != nullptr;
        compute_ = nullptr;
        own_compute_.reset();
        device_.reset();
        status += ", on the CPU (" +
                  (oom ? where + "'s budget is too small: " : std::string()) + e.what() + ")";
        return;
    }
    model.moe_ffn()->set_offload(offload_.get());
    const model::ExpertPlacement& p = offload_->placement();
    char share[32];
    std::snprintf(share, sizeof share, "%.0f %%", 100.0 * p.routed_share);
    status += "; " + std::to_string(p.placed_experts) + " of " + std::to_string(p.total_experts) +
              " experts (" + mib(p.placed_bytes) + ") placed on " + where + " of " + mib(budget) +
              " (" + share + " of the calibration's routings), expert cache " +
              mib(offload_->cache().cache_bytes()) + ", scratch " +
              mib(offload_->scratch_bytes()) + ", the rest on the CPU";
    if (attention > 0)
        status += " (" + mib(attention) + " of the GPU kept for attention, gpu_layers " +
                  std::to_string(options.gpu_layers) + ")";
    if (gpu_)
        status += " at the same time; uploads through " + mib(offload_->host_staging_bytes()) +
                  " of pinned host memory";
    snapshot_memory();
}

void MoeRuntime::snapshot_memory() {
    MemoryReport mem;
    const backend::DeviceMemoryInfo d = device_->memory();
    mem.device_name = d.name;
    mem.simulated = d.simulated;
    mem.budget_bytes = d.budget_bytes;
    mem.hot_neurons = d.used_by(backend::MemCategory::HotNeurons);
    mem.neuron_cache = d.used_by(backend::MemCategory::NeuronCache);
    // The offload's rows and workspace, and the device's own transfer arena.
    mem.scratch =
        d.used_by(backend::MemCategory::Scratch) + d.used_by(backend::MemCategory::Staging);
    std::lock_guard lock(mutex_);
    memory_ = mem;
}

MoeRuntime::~MoeRuntime() {
    if (offload_) model_.moe_ffn()->set_offload(nullptr);
}

void MoeRuntime::set_tuning(const Tuning& tuning) {
    if (offload_) {
        // vram_budget_mb 0 or auto, or sparse off: nothing placed (every
        // expert back on the CPU; the results are the same either way).
        // On a GPU the budget is the device's less its own arena, auto
        // (-1) what was free at load less the safety margin.
        int64_t budget = 0;
        if (tuning.sparse && tuning.vram_budget_mb > 0)
            budget = std::max<int64_t>(0, (tuning.vram_budget_mb << 20) - own_bytes_ - reserved_);
        else if (tuning.sparse && gpu_ && tuning.vram_budget_mb < 0)
            budget = auto_budget_;
        offload_->request_retune(budget, tuning.hot_neuron_threshold, knobs_of(tuning));
        return;
    }
    std::lock_guard lock(mutex_);
    note_ = tuning.sparse && tuning.vram_budget_mb > 0
                ? "expert placement starts when the model is loaded again (it loaded with every "
                  "expert on the CPU)"
                : "";
}

void MoeRuntime::fill(TokenMetrics& m) {
    const model::ModelConfig& c = model_.config();
    const auto& counts = model_.moe_ffn()->expert_counts();
    m.n_expert = static_cast<int>(c.n_expert);
    m.expert_heatmap.assign(static_cast<size_t>(c.n_layer * c.n_expert), 0.0f);
    for (size_t l = 0; l < counts.size(); ++l) {
        const int64_t sum = std::accumulate(counts[l].begin(), counts[l].end(), int64_t{0});
        if (sum == 0) continue;
        for (size_t e = 0; e < counts[l].size(); ++e)
            m.expert_heatmap[l * static_cast<size_t>(c.n_expert) + e] =
                static_cast<float>(static_cast<double>(counts[l][e]) / static_cast<double>(sum));
    }
    if (!offload_) {
        int64_t total = 0;
        for (const auto& l : counts) total += std::accumulate(l.begin(), l.end(), int64_t{0});
        m.experts_routed = total - last_.routed;
        last_.routed = total;
        return;
    }
    const model::ExpertCacheStats s = offload_->cache().stats();
    m.experts_routed = s.routed - last_.routed;
    m.expert_hits = s.placed_hits + s.cache_hits - last_.placed_hits - last_.cache_hits;
    m.expert_cache_hits = s.cache_hits - last_.cache_hits;
    m.expert_prefetch_useful = s.prefetch_useful - last_.prefetch_useful;
    last_ = s;
    snapshot_memory();
}

void MoeRuntime::fill(MemoryReport& m) const {
    std::lock_guard lock(mutex_);
    if (!note_.empty()) m.note = note_;
    if (!offload_) return;
    // The device holds experts and their row scratch only (attention, KV
    // cache and the other weights stay on the CPU).
    m.dense_weights = 0;
    m.kv_cache = 0;
    m.predictors = 0;
    m.device_name = memory_.device_name;
    m.simulated = memory_.simulated;
    m.budget_bytes = memory_.budget_bytes;
    m.hot_neurons = memory_.hot_neurons;
    m.neuron_cache = memory_.neuron_cache;
    m.scratch = memory_.scratch;
}

}  // namespace powerinfer::runtime
