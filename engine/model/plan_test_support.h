// Test support: the logits of a fixed greedy run through a Model, for
// comparing placement plans bit for bit (tst_layer_offload, tst_moe_offload);
// a MoE run's routing counts as a calibration's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "model/expert_placement.h"
#include "model/model.h"
#include "model/moe_ffn.h"

namespace powerinfer::model::testing {

// A 6-token prompt in one batch (the batched ops), then `steps` greedy
// decode steps one token at a time; `between(step)` runs before each decode
// step. The logits of every step.
inline std::vector<std::vector<float>> run_plan(Model& m, int steps,
                                                const std::function<void(int)>& between = {}) {
    const int64_t V = m.config().n_vocab;
    std::vector<std::vector<float>> out;
    std::vector<int32_t> tokens = {1, 300, 301, 302, 303, 304};
    std::vector<float> logits(static_cast<size_t>(6 * V));
    m.forward(tokens.data(), 6, 0, 6, logits.data());
    out.push_back(logits);
    for (int pos = 6; pos < 6 + steps; ++pos) {
        if (between) between(pos - 6);
        const float* last = out.back().data() + (out.back().size() - static_cast<size_t>(V));
        tokens.push_back(static_cast<int32_t>(std::max_element(last, last + V) - last));
        std::vector<float> step(static_cast<size_t>(V));
        m.forward(&tokens.back(), 1, pos, 1, step.data());
        out.push_back(std::move(step));
    }
    return out;
}

// A MoE model's routing counts since it was loaded, as a calibration's
// (tst_moe_offload, tst_gpu_moe): `tokens` tokens went through it.
inline ExpertRoutingStats routing_stats(Model& m, uint64_t tokens) {
    ExpertRoutingStats stats;
    stats.n_layer = m.config().n_layer;
    stats.n_expert = m.config().n_expert;
    stats.n_expert_used = m.config().n_expert_used;
    stats.calib_tokens = tokens;
    stats.counts = m.moe_ffn()->expert_counts();
    return stats;
}

}  // namespace powerinfer::model::testing
