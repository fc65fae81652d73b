// Qwen3.5's own hyper-parameters and tensors (qwen35_graph.cpp), held by the
// model through ModelConfig::unit_config and LayerWeights::unit; nothing
// outside the unit (and its tests) includes this.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"
#include "model/model_config.h"

namespace powerinfer::model {

// The Gated DeltaNet layers (read with llama.cpp's keys): a causal short
// convolution of conv_kernel taps over q|k|v, then the delta rule over
// n_v_heads states of head_dim x head_dim, the n_k_heads key heads shared by
// value heads h % n_k_heads (ggml's broadcast). The other layers are gated
// full attention: their output gated by sigmoid(q_gate), attn_q holding each
// head's query and then its gate.
struct DeltaNetConfig final : UnitConfig {
    int64_t conv_kernel = 0;         // ssm.conv_kernel
    int64_t head_dim = 0;            // ssm.state_size (key and value heads alike)
    int64_t n_k_heads = 0;           // ssm.group_count
    int64_t n_v_heads = 0;           // ssm.time_step_rank
    std::vector<uint8_t> recurrent;  // per layer: 1 = Gated DeltaNet, 0 = gated attention
    bool is_recurrent(int64_t il) const { return recurrent[static_cast<size_t>(il)] != 0; }
    int64_t key_dim() const { return head_dim * n_k_heads; }
    int64_t value_dim() const { return head_dim * n_v_heads; }
    int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
    // Floats of one layer's state per sequence: the last conv_kernel - 1
    // inputs of every channel, then the n_v_heads delta-rule matrices.
    int64_t conv_floats() const { return (conv_kernel - 1) * conv_dim(); }
    int64_t state_floats() const { return conv_floats() + n_v_heads * head_dim * head_dim; }
};

// A Gated DeltaNet layer's tensors: q|k|v for the convolution, the output
// gate z, the write strength and decay inputs, the output; the F32 conv taps
// [conv_dim][kernel], dt bias, A, the output norm.
struct DeltaNetWeights final : UnitWeights {
    tensor::WeightView qkv, z, beta, alpha, out;
    const float* conv = nullptr;
    const float* dt = nullptr;
    const float* a = nullptr;
    const float* norm = nullptr;
};

// The Gated DeltaNet part of a Qwen3.5 config (c.unit == &Architecture::qwen35).
inline const DeltaNetConfig& delta_net(const ModelConfig& c) {
    return static_cast<const DeltaNetConfig&>(*c.unit_config);
}

}  // namespace powerinfer::model
