// How many whole layers fit on a device (layer offload, llama.cpp's -ngl),
// or, in sparse mode, how many layers' attention blocks fit after the
// predictors (PowerInfer's placement), and the exact byte layout the device
// copy uses. Pure functions of the model's shapes and a byte budget, so that
// the plan is tested on the CPU and the CUDA executor allocates exactly what
// was planned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/compute.h"

namespace powerinfer::model {

class Model;

// Every device tensor starts on this boundary (cudaMalloc's alignment).
inline constexpr int64_t kDeviceAlign = 256;
inline int64_t device_align(int64_t bytes) {
    return (bytes + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
}

// What of each layer goes on the device: the whole layer (layer offload), or
// its attention half (input norm, Q/K/V with biases and per-head norms,
// output projection, and the FFN input norm) while the FFN stays with the
// model's FfnExecutor (sparse mode: hot neurons on the device, cold on the
// CPU).
enum class OffloadParts { WholeLayers, Attention };

// Byte offsets of one layer's tensors inside its device buffer; -1 where the
// model has no such tensor (biases, per-head norms) or the parts leave it out
// (gate/up/down with OffloadParts::Attention).
struct LayerLayout {
    int64_t attn_norm = -1, q = -1, k = -1, v = -1, o = -1;
    int64_t q_bias = -1, k_bias = -1, v_bias = -1, q_norm = -1, k_norm = -1;
    int64_t ffn_norm = -1, gate = -1, up = -1, down = -1;
    int64_t bytes = 0;  // the whole buffer
};

using backend::gemm_tile_rows;
using backend::kGemmTileElements;
using backend::kGemmWorkspaceBytes;

// Offsets inside the shared scratch buffer (floats unless said otherwise).
struct ScratchLayout {
    int64_t token_batch = 0;  // tokens staged at once (one GEMM per matrix in prefill)
    int64_t x = 0;            // [token_batch][n_embd]
    // Each [token_batch][its width]; one token uses the first row. gate and
    // up are -1 with OffloadParts::Attention (the FFN is not on the device).
    int64_t xn = 0, q = 0, k = 0, v = 0, attn = 0, tmp = 0, gate = 0, up = 0;
    int64_t x16 = 0;  // F16 activations, [token_batch][widest input row]
    int64_t w16 = 0;  // F16 weight tile, w16_elems halves
    int64_t w16_elems = 0;
    int64_t gemm_workspace = 0;          // kGemmWorkspaceBytes bytes for cuBLAS
    int64_t scores = 0;                  // [n_head][n_ctx]
    int64_t rope_cos = 0, rope_sin = 0;  // [n_ctx][n_rot / 2]
    int64_t bytes = 0;
};

// Output norm, head weights (the token embedding when tied) and one row of
// logits.
struct OutputLayout {
    int64_t norm = 0, head = 0, logits = 0;
    int64_t bytes = 0;
};

struct LayerOffloadCosts {
    OffloadParts parts = OffloadParts::WholeLayers;
    std::vector<LayerLayout> layers;
    int64_t kv_bytes_per_layer = 0;  // F16 keys then values, [head][n_ctx][dim]
    int64_t kv_values_offset = 0;    // where the values start in that buffer
    ScratchLayout scratch;           // allocated once when any layer is offloaded
    OutputLayout output;
};

// The device layout of `model`'s layers for a context of model.n_ctx().
LayerOffloadCosts layer_offload_costs(const Model& model, int64_t token_batch = 128,
                                      OffloadParts parts = OffloadParts::WholeLayers);

// Where a layer part runs: on the host (the CPU backend; a host FFN goes
// through the model's FfnExecutor, dense or sparse) or on the plan's device
// backend (a device FFN is the dense FFN there).
enum class Site : uint8_t { Host, Device };
struct LayerSite {
    Site attention = Site::Host;  // with the layer's KV cache
    Site ffn = Site::Host;        // Device only where the attention is too
};

// The placement of every layer part, as data: the one graph runs any plan.
// CPU only, layer offload (--gpu-layers: whole first layers and perhaps the
// head on the device) and sparse placement (the first layers' attention and
// perhaps the head on the device, every FFN hybrid on the host) are three
// plans.
struct GraphPlan {
    std::vector<LayerSite> layers;  // per layer; missing entries are Host
    Site output = Site::Host;       // final norm and head

    LayerSite at(int il) const {
        return il >= 0 && static_cast<size_t>(il) < layers.size() ? layers[static_cast<size_t>(il)]
                                                                  : LayerSite{};
    }
    // Layers with their attention on the device.
    int device_layers() const;
    bool any_device() const { return device_layers() > 0 || output == Site::Device; }
};
struct LayerPlan;
// The plans of a LayerPlan: its first n_gpu_layers whole (WholeLayers) or
// their attention half (Attention), the head when output_on_gpu.
GraphPlan graph_plan(const LayerPlan& plan, OffloadParts parts);

struct LayerPlan {
    int n_gpu_layers = 0;
    bool output_on_gpu = false;
    int64_t bytes = 0;  // exactly what the executor allocates
    std::string note;   // why fewer layers than asked, empty otherwise
};

// requested: -1 = as many as fit, 0 = none, N = the first N (capped by the
// model's layers). Layers are taken in order while scratch + weights + KV of
// all taken layers fit the budget; the output head is added only when every
// layer is on the device and it fits too. Monotone in the budget.
LayerPlan plan_layer_offload(const LayerOffloadCosts& costs, int requested, int64_t budget_bytes);

// Sparse mode on a device, in PowerInfer's order of value: the predictors
// first (every sparse token needs them), then the attention blocks of the
// first layers (dense work every token does), then the output head when the
// attention of every layer fits, and what is left for hot neurons (placed by
// activation mass per byte, sparse/placement) and the neuron cache.
struct SparseOffloadPlan {
    int64_t budget_bytes = 0;
    int64_t predictor_bytes = 0;  // reserved first (0 when they do not fit)
    bool predictors_fit = false;
    // Attention blocks and head (costs from OffloadParts::Attention);
    // attention.bytes is exactly what the executor allocates.
    LayerPlan attention;
    int64_t hot_neuron_bytes = 0;  // budget - predictors - attention, >= 0
};

// max_attention_layers: -1 = as many as fit, 0 = none (only predictors and
// hot neurons on the device), N = at most the first N. costs must come from
// layer_offload_costs(model, ..., OffloadParts::Attention). Monotone in the
// budget: more budget never means fewer attention layers or losing the head;
// the hot-neuron room is what is left, so it only grows once the attention
// of every layer (and the head) is placed.
SparseOffloadPlan plan_sparse_offload(const LayerOffloadCosts& costs, int64_t predictor_bytes,
                                      int max_attention_layers, int64_t budget_bytes);

// The bytes a plan (layer offload, sparse mode) may hand out on a device.
// vram_budget_mb: -1 (any negative) = auto: what the driver reports free
// minus the safety margin; 0 = nothing on the GPU; N = N MiB, less what the
// device already holds of its own (device_held_bytes: its staging, which
// counts against the same budget), and never more than the driver reports
// free (device_free_bytes, when known: >= 0). Never negative.
int64_t offload_budget_bytes(int64_t device_free_bytes, int64_t vram_budget_mb,
                             int64_t safety_margin_bytes, int64_t device_held_bytes = 0);

}  // namespace powerinfer::model
