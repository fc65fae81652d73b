// Expert-level placement for mixture-of-experts models: the routing counts
// calibration records (how often each layer's router chose each expert over
// a corpus) in the model's sidecar, and the plan that fills a device budget
// left after the attention blocks with the most routed experts per byte.
//
// Sidecar layout (GGUF v3, MODEL.powerinfer.gguf, written by
// powerinfer-calibrate for MoE models instead of the neuron statistics):
//   general.architecture = "powerinfer-sidecar", powerinfer.kind = "experts",
//   powerinfer.format_version u32 (1), powerinfer.tool_version str,
//   powerinfer.model_hash str, powerinfer.model_bytes u64,
//   powerinfer.n_layer / n_expert / n_expert_used u32, powerinfer.calib_tokens u64,
//   tensors blk.l.expert_count I32[n_expert] (per layer: tokens routed to each
//   expert; each layer's counts sum to calib_tokens * n_expert_used).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace powerinfer::gguf {
class GgufFile;
}

namespace powerinfer::model {

class Model;

struct ExpertRoutingStats {
    std::string model_hash;  // sparse::model_hash of the model file
    uint64_t model_bytes = 0;
    int64_t n_layer = 0, n_expert = 0, n_expert_used = 0;
    uint64_t calib_tokens = 0;
    std::vector<std::vector<int64_t>> counts;  // [layer][expert]
};

// True for a sidecar written for a mixture-of-experts model.
bool is_expert_sidecar(const gguf::GgufFile& file);
void write_expert_sidecar(const std::filesystem::path& path, const ExpertRoutingStats& stats);
// Reads and validates (shapes, counts summing to tokens x k); with a
// non-empty expected_hash the sidecar must belong to that model. Throws
// EngineError telling the user to run powerinfer-calibrate again.
ExpertRoutingStats read_expert_sidecar(const std::filesystem::path& path,
                                       const std::string& expected_hash = {});

struct ExpertPlacement {
    int64_t budget_bytes = 0;
    // Per layer, the experts placed on the device, most routed first.
    std::vector<std::vector<int32_t>> on_device;
    int64_t placed_experts = 0, total_experts = 0;
    int64_t placed_bytes = 0;  // their gate, up and down slices, to the byte
    int64_t expert_bytes = 0;  // every expert of every layer
    // Of the calibration corpus' routings, the share a placed expert served:
    // the expected expert hit rate.
    double routed_share = 0;
};

// Most routed experts per byte first, over all layers, while they fit
// `budget_bytes` (what is left after the attention blocks; every expert of
// a model has the same size, so this is also most routed first). Ties go to
// the lower layer, then the lower expert. Monotone in the budget. With
// coverage < 1 (the hot_neuron_threshold knob) the placement stops at the
// first prefix of that ranking whose routed share reaches `coverage`, and
// the rest of the budget is left to the expert cache (moe_offload.h).
ExpertPlacement plan_expert_placement(const Model& model, const ExpertRoutingStats& stats,
                                      int64_t budget_bytes, double coverage = 1.0);
// The same from the shapes alone: one expert's bytes per layer.
ExpertPlacement plan_expert_placement(const std::vector<int64_t>& layer_expert_bytes,
                                      const ExpertRoutingStats& stats, int64_t budget_bytes,
                                      double coverage = 1.0);

}  // namespace powerinfer::model
