// Test support: the logits of a fixed greedy run through a Model, for
// comparing placement plans bit for bit (tst_layer_offload, tst_moe_offload).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "model/model.h"

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

}  // namespace powerinfer::model::testing
