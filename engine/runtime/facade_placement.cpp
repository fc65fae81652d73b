// powerinfer/placement.h: the GPU probe and the placement preview, by the
// planners LocalEngine::load and HybridFfn use (plan_sparse_attention,
// sparse::hot_neuron_budget/hot_neuron_input/place_hot_neurons).
#include <algorithm>

#include "backend/device.h"
#include "gguf/gguf.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "powerinfer/placement.h"
#include "runtime/device_select.h"
#include "runtime/local_engine.h"
#include "runtime/moe_runtime.h"
#include "sparse/hybrid_ffn.h"
#include "sparse/placement.h"
#include "sparse/sidecar.h"
#include "tensor/thread_pool.h"

namespace powerinfer {
namespace {

std::vector<int64_t> neuron_bytes(const model::Model& m, backend::GateActivation activation) {
    std::vector<int64_t> out;
    for (int64_t l = 0; l < m.config().n_layer; ++l) {
        const model::FfnWeights& w = m.ffn_weights(static_cast<int>(l));
        // The neuron-major down copy is HybridOptions' default type.
        out.push_back(backend::make_neuron_format(m.config().n_embd, m.config().n_ff, w.gate.type,
                                                  w.up.type, sparse::HybridOptions{}.down_type,
                                                  activation)
                          .bytes_per_neuron());
    }
    return out;
}

void fill_hot(PlacementPreview& p, const sparse::Placement& pl, const sparse::Sidecar& sc) {
    p.hot_per_layer = pl.hot_count;
    for (size_t l = 0; l < pl.hot_count.size(); ++l) {
        p.hot_neurons += pl.hot_count[l];
        p.total_neurons += static_cast<int64_t>(sc.layers[l].perm.size());
    }
    p.hot_neuron_bytes = pl.hot_bytes;
    p.wanted_hot_bytes = pl.wanted_bytes;
    p.budget_limited = pl.budget_limited;
    p.neuron_cache_bytes = pl.free_bytes;
}

}  // namespace

GpuStatus gpu_status(const std::string& device) {
    LoadOptions probe;
    probe.device = device;
    runtime::DeviceChoice choice = runtime::choose_device(probe);
    GpuStatus s;
    s.description = choice.description;
    if (choice.device) {
        const backend::DeviceMemoryInfo m = choice.device->memory();
        s.present = !m.simulated;
        s.free_bytes = m.device_free_bytes;
        s.held_bytes = m.used_total();
        s.total_bytes = m.device_free_bytes >= 0 ? m.device_free_bytes + m.used_total() : -1;
    }
    return s;
}

PlacementPreview preview_placement(const LoadOptions& options, const GpuStatus& gpu) {
    PlacementPreview p;
    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(options.model_path);
    tensor::ThreadPool pool(1);
    const model::Model m(file, pool, std::max(16, options.n_ctx), 1);
    const auto& cfg = m.config();
    p.n_layers = static_cast<int>(cfg.n_layer);
    p.host_weight_bytes = m.weight_bytes();
    p.host_kv_cache_bytes = m.kv_cache_bytes();
    const auto sidecar_path = options.sidecar_path.empty()
                                  ? sparse::default_sidecar_path(options.model_path)
                                  : options.sidecar_path;
    if (cfg.moe()) {
        // Every expert stays mapped in RAM; the placed ones are copied onto
        // the device (moe_runtime.h: LocalEngine::load's own choice).
        p.n_experts = cfg.n_expert;
        const std::vector<int64_t> per_expert = runtime::layer_expert_bytes(m);
        for (int64_t b : per_expert) p.expert_bytes += b * cfg.n_expert;
        p.total_experts = cfg.n_layer * cfg.n_expert;
        p.host_expert_bytes = p.expert_bytes;
        const runtime::ExpertSetupChoice choice = runtime::choose_expert_setup(
            m, options, sidecar_path, gpu.present ? gpu.description : std::string(),
            gpu.present ? runtime::gpu_expert_room(options, gpu.free_bytes, gpu.held_bytes) : -1);
        p.status = choice.status;
        if (!choice.run) return p;
        const model::ExpertOffload::Plan plan =
            model::ExpertOffload::plan_for(cfg, per_expert, choice.setup);
        p.sparse = true;
        p.budget_bytes = choice.setup.budget_bytes;
        p.placed_experts = plan.placement.placed_experts;
        p.placed_expert_bytes = plan.placement.placed_bytes;
        p.expert_cache_bytes = plan.cache_bytes;
        p.expert_scratch_bytes = plan.scratch_bytes;
        p.host_expert_bytes = p.expert_bytes - p.placed_expert_bytes;
        p.expert_routed_share = plan.placement.routed_share;
        p.device_bytes = p.placed_expert_bytes + p.expert_cache_bytes + p.expert_scratch_bytes;
        p.note = gpu.present ? "the placed experts are copied into " + gpu.description +
                                   "'s memory; the others run on the CPU"
                             : "simulated device: the placed experts are copied into RAM";
        return p;
    }
    if (!options.tuning.sparse) {
        p.status = "dense: sparse inference is off in the settings";
        return p;
    }
    sparse::Sidecar sc;
    try {
        sc = sparse::read_sidecar(sidecar_path, sparse::model_hash(*file), false);
    } catch (const EngineError& e) {
        p.status = std::string("dense: ") + e.what();
        return p;
    }
    if (sc.n_layer != cfg.n_layer || sc.n_embd != cfg.n_embd || sc.n_ff != cfg.n_ff) {
        p.status = "dense: the sidecar's shape does not match the model; recalibrate";
        return p;
    }
    const std::vector<int64_t> per_neuron = neuron_bytes(m, sc.activation);
    const int64_t all_neurons = cfg.n_layer * cfg.n_ff * per_neuron.front();
    const int64_t predictors = std::max<int64_t>(0, sparse::sidecar_predictor_bytes(sidecar_path));
    p.sparse = true;

    if (gpu.present) {
        for (const auto& ls : sc.layers)
            if (ls.predictor.rank == 0) {
                p.sparse = false;
                p.status = "dense: the sidecar has no predictors, and a GPU split needs them";
                return p;
            }
        // LocalEngine::load: attention blocks first (after the predictors),
        // then HybridFfn places hot neurons in what is left.
        const model::SparseOffloadPlan plan =
            runtime::plan_sparse_attention(m, options, gpu.free_bytes, predictors, gpu.held_bytes);
        p.on_gpu = true;
        p.status = "sparse: hot neurons and attention on " + gpu.description;
        p.gpu_attention_layers = plan.attention.n_gpu_layers;
        p.output_on_gpu = plan.attention.output_on_gpu;
        p.attention_bytes = plan.attention.bytes;
        p.predictor_bytes = plan.predictors_fit ? predictors : 0;
        p.staging_bytes = gpu.held_bytes;
        p.budget_bytes = sparse::hot_neuron_budget(options.tuning.vram_budget_mb, false,
                                                   gpu.free_bytes, gpu.held_bytes, all_neurons);
        const sparse::Placement pl = sparse::place_hot_neurons(
            sparse::hot_neuron_input(sc, per_neuron, options.tuning, p.budget_bytes,
                                     p.attention_bytes + p.predictor_bytes + p.staging_bytes));
        fill_hot(p, pl, sc);
        if (cfg.n_layer > 0)
            p.host_kv_cache_bytes =
                p.host_kv_cache_bytes * (cfg.n_layer - p.gpu_attention_layers) / cfg.n_layer;
        p.note = plan.attention.note;
    } else if (!sc.synthetic) {
        // No GPU: exact activity on the CPU, nothing on a device.
        p.status = "sparse: CPU, exact activity (no GPU: " + gpu.description + ")";
        p.total_neurons = cfg.n_layer * cfg.n_ff;
        p.hot_per_layer.assign(static_cast<size_t>(cfg.n_layer), 0);
        p.note = "the CPU's exact path adds its neuron-major down copies in RAM";
    } else {
        // A synthetic sidecar on the CPU device: the simulated budget counts
        // the non-FFN weights and the KV cache first (HybridFfn's fixed parts).
        int64_t ffn = 0;
        for (int64_t l = 0; l < cfg.n_layer; ++l) {
            const model::FfnWeights& w = m.ffn_weights(static_cast<int>(l));
            for (const auto* t : {&w.gate, &w.up, &w.down})
                ffn += static_cast<int64_t>(t->row_bytes) * t->rows;
        }
        p.status = "sparse: CPU device (simulated budget), synthetic activity";
        p.dense_bytes = m.weight_bytes() - ffn;
        p.kv_cache_bytes = m.kv_cache_bytes();
        p.predictor_bytes = predictors;
        const int64_t fixed = p.dense_bytes + p.kv_cache_bytes + p.predictor_bytes;
        p.budget_bytes = sparse::hot_neuron_budget(options.tuning.vram_budget_mb, true, -1, 0,
                                                   fixed + all_neurons);
        fill_hot(p,
                 sparse::place_hot_neurons(sparse::hot_neuron_input(sc, per_neuron, options.tuning,
                                                                    p.budget_bytes, fixed)),
                 sc);
        p.note = "simulated device: its budget is accounting only";
    }
    p.device_bytes = p.attention_bytes + p.dense_bytes + p.kv_cache_bytes + p.predictor_bytes +
                     p.staging_bytes + p.hot_neuron_bytes;
    return p;
}

}  // namespace powerinfer
