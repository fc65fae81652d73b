// The runtime side of a mixture-of-experts model: expert placement from the
// expert-routing sidecar when the options allow it (model/moe_offload.h),
// its live knobs, and the expert metrics (hit rate, per-layer routing
// heatmap) and memory that LocalEngine reports.
//
// Where the placed experts go: a CUDA GPU when the build has the CUDA
// backend, one is present and the options allow it (choose_device; the
// budget is vram_budget_mb, or what is free less the safety margin, after
// the device's own transfer arena and, with gpu_layers, after the attention
// the layer offload will place): the placed and cached experts live in
// its memory and run there (CudaCompute's gated_ffn) while the CPU runs the
// others. Without a GPU and with vram_budget_mb > 0, a simulated device: the
// budgeted CPU stand-in, whose copies of the placed experts cost RAM and
// which shows the hit rates a GPU of that budget would get. Without a
// sidecar, with sparse off, device "cpu" or vram_budget_mb 0/auto without a
// GPU, every expert runs on the CPU (the heatmap is reported all the same).
// The CUDA path compiles and its test (tst_gpu_moe) skips without a GPU; it
// has not run on a GPU yet.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "backend/device.h"
#include "model/model.h"
#include "model/moe_offload.h"
#include "powerinfer/engine.h"

namespace powerinfer::runtime {

// Whether and how a MoE model's experts are placed (LocalEngine::load and
// preview_placement compute it alike): `run` false with the reason in
// `status` (ModelInfo::sparse_status), else the offload's setup.
// gpu_name: the GPU the options would use ("" when none); gpu_room: the
// bytes it leaves for the experts (gpu_expert_room).
struct ExpertSetupChoice {
    bool run = false;
    std::string status;
    model::ExpertOffload::Setup setup;
};
ExpertSetupChoice choose_expert_setup(const model::Model& model, const LoadOptions& options,
                                      const std::filesystem::path& sidecar,
                                      const std::string& gpu_name, int64_t gpu_room = -1);
// Below the driver's free memory when vram_budget_mb is auto.
inline constexpr int64_t kGpuSafetyMargin = int64_t{512} << 20;
// What a GPU with free_bytes free that holds held_bytes of its own leaves
// for the experts under options' vram_budget_mb (-1 when free is unknown).
int64_t gpu_expert_room(const LoadOptions& options, int64_t free_bytes, int64_t held_bytes);
// One expert's bytes per layer.
std::vector<int64_t> layer_expert_bytes(const model::Model& model);

class MoeRuntime {
public:
    // `model` (a MoE model) and its pool must outlive this. `status` gets
    // the ModelInfo::sparse_status line.
    MoeRuntime(model::Model& model, const LoadOptions& options,
               const std::filesystem::path& sidecar, std::string& status);
    ~MoeRuntime();
    MoeRuntime(const MoeRuntime&) = delete;
    MoeRuntime& operator=(const MoeRuntime&) = delete;

    bool placed() const { return offload_ != nullptr; }
    // Any thread: hot_neuron_threshold, cache_window_size, prefetch_depth
    // and vram_budget_mb reach the placement before the next token (a model
    // loaded without placement needs a reload for it: the memory report's
    // note says so).
    void set_tuning(const Tuning& tuning);
    // Engine thread, once per token: the routings since the previous call and
    // the heatmap.
    void fill(TokenMetrics& m);
    // The device's part of the memory report (placed experts as hot_neurons,
    // cached ones as neuron_cache); any thread.
    void fill(MemoryReport& m) const;

private:
    void snapshot_memory();

    model::Model& model_;
    std::unique_ptr<backend::Device> device_;
    std::unique_ptr<backend::Compute> own_compute_;  // the stand-in's (a GPU owns its own)
    backend::Compute* compute_ = nullptr;
    bool gpu_ = false;
    int64_t own_bytes_ = 0;    // what the device holds of its own (a GPU's transfer arena)
    int64_t auto_budget_ = 0;  // a GPU's budget at load (vram_budget_mb auto)
    int64_t reserved_ = 0;     // kept for attention (gpu_layers) on a GPU
    std::unique_ptr<model::ExpertOffload> offload_;
    model::ExpertCacheStats last_;
    mutable std::mutex mutex_;
    MemoryReport memory_;  // snapshot, updated by fill(TokenMetrics&)
    std::string note_;     // a knob that needs a reload
};

}  // namespace powerinfer::runtime
