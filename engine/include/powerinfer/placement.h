// Where a model's parts would go, before it is loaded: the GPU (if any), and
// a preview of the sparse placement for a tuning, in bytes, computed by the
// engine's own planners (model/layer_plan for attention, sparse/placement
// for hot neurons), so that what the preview says is what a load does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "powerinfer/engine.h"
#include "powerinfer/fit_estimate.h"

namespace powerinfer {

struct GpuStatus {
    bool present = false;     // a CUDA GPU the engine can use
    std::string description;  // its name and backend, or why none ("no CUDA device: ...")
    int64_t free_bytes = -1;  // what the driver reports free (-1: no GPU)
    int64_t total_bytes = -1;
    // What the engine's device holds of its own once created (staging and
    // work buffers), counted against the budget.
    int64_t held_bytes = 0;
};

// device: "auto" (the first GPU), "cpu" or "cuda:N" (as LoadOptions::device).
// Creates and drops a device: call once, not per frame. Never throws for a
// missing GPU; throws EngineError for a malformed device string.
GpuStatus gpu_status(const std::string& device = "auto");

struct PlacementPreview {
    bool sparse = false;  // the sidecar is accepted: sparse inference would run
    bool on_gpu = false;  // parts on a real GPU (else a CPU plan)
    // Like ModelInfo::sparse_status: "sparse: ..." or why it would run dense.
    std::string status;
    int n_layers = 0;
    // The device budget the placement works in (0: no device).
    int64_t budget_bytes = 0;

    // On the device.
    int gpu_attention_layers = 0;  // layers whose attention (and KV cache) is on the GPU
    bool output_on_gpu = false;
    int64_t attention_bytes = 0;  // those blocks, their KV cache, scratch and the head
    int64_t dense_bytes = 0;      // simulated device: the non-FFN weights it counts
    int64_t kv_cache_bytes = 0;   // simulated device: the KV cache it counts
    int64_t predictor_bytes = 0;  // 0 when they do not fit
    int64_t staging_bytes = 0;    // the device's own buffers
    int64_t hot_neurons = 0;      // placed, over all layers
    int64_t total_neurons = 0;
    std::vector<int64_t> hot_per_layer;
    int64_t hot_neuron_bytes = 0;
    int64_t wanted_hot_bytes = 0;    // what hot_neuron_threshold alone asks for
    bool budget_limited = false;     // the budget cut the hot sets
    int64_t neuron_cache_bytes = 0;  // what is left for the neuron cache
    int64_t device_bytes = 0;        // every part above

    // In RAM (the weights stay mapped; the CPU's layers keep their KV cache).
    int64_t host_weight_bytes = 0;
    int64_t host_kv_cache_bytes = 0;
    std::string note;  // how it was computed, or what it leaves out

    // Mixture-of-experts models (0 for dense ones): experts per layer and
    // the bytes of every layer's stacked gate/up/down experts, to the byte
    // (part of host_weight_bytes: they run on the CPU).
    int64_t n_experts = 0;
    int64_t expert_bytes = 0;
    // With expert placement (an expert sidecar and a device budget, see
    // ModelInfo::sparse_status): the experts placed on the device and their
    // gate/up/down bytes, the expert cache's room and the offload's row
    // scratch (all within budget_bytes and counted in device_bytes), what
    // the CPU runs (expert_bytes - placed_expert_bytes), and the share of
    // the calibration's routings the placed experts serve.
    int64_t placed_experts = 0, total_experts = 0;
    int64_t placed_expert_bytes = 0, expert_cache_bytes = 0, expert_scratch_bytes = 0;
    int64_t host_expert_bytes = 0;
    double expert_routed_share = 0;
};

// options: the model, the sidecar (empty: next to the model), n_ctx,
// gpu_attention_layers and the tuning (threshold, vram_budget_mb,
// force_full_precision_layers, sparse). gpu: gpu_status() for a GPU plan;
// not present: the CPU plan (exact activity on the CPU, or for a synthetic
// sidecar the simulated device's placement). Reads the model's headers and
// the sidecar (a few MB), not the weights. Throws EngineError for a missing
// or corrupt model; a refused sidecar gives a dense preview with the reason.
PlacementPreview preview_placement(const LoadOptions& options, const GpuStatus& gpu = {});

// What the fit estimate takes from a preview (valid for a sparse GPU plan).
inline FitPlacement fit_placement(const PlacementPreview& p) {
    FitPlacement f;
    f.valid = p.sparse && p.on_gpu;
    f.n_layers = p.n_layers;
    f.gpu_attention_layers = p.gpu_attention_layers;
    f.hot_neurons = p.hot_neurons;
    f.total_neurons = p.total_neurons;
    f.hot_neuron_bytes = p.hot_neuron_bytes;
    f.wanted_hot_bytes = p.wanted_hot_bytes;
    f.device_bytes = p.device_bytes;
    return f;
}

}  // namespace powerinfer
