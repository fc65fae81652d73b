// Hyper-parameters of a model, read from GGUF metadata the way llama.cpp
// reads them (keys prefixed by general.architecture): the common ones here,
// each architecture's own in its unit (architecture.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace powerinfer::gguf {
class GgufFile;
}

namespace powerinfer::model {

// How RoPE pairs dimensions. llama.cpp's converter permutes Q/K of llama
// checkpoints so that llama GGUFs use adjacent pairs (2i, 2i+1); qwen2/qwen3
// keep the HF layout and use NeoX pairs (i, i + n_rot/2).
enum class RopeStyle { Normal, Neox };

struct Architecture;

// What an architecture unit reads beyond the common hyper-parameters, in a
// type of its own (architecture.h: its read_config sets it, and only the
// unit looks inside).
struct UnitConfig {
    virtual ~UnitConfig() = default;
};

struct ModelConfig {
    std::string arch;  // general.architecture as found in the file
    std::string name;  // general.name (may be empty)
    int64_t n_vocab = 0;
    int64_t n_ctx_train = 0;
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_ff = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim = 0;    // per head, for Q and K (attention.key_length)
    int64_t head_dim_v = 0;  // per head, for V (attention.value_length)
    int64_t n_rot = 0;       // rotated dimensions per head
    float rms_eps = 1e-5f;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
    RopeStyle rope_style = RopeStyle::Normal;
    bool qkv_bias = false;  // qwen2
    bool qk_norm = false;   // qwen3, gemma3

    // Mixture of experts (qwen3moe, qwen2moe; llama/mistral files with expert
    // tensors, Mixtral-style): every layer's FFN is n_expert SwiGLU experts of
    // n_ff_exp neurons behind a softmax router, of which the n_expert_used most
    // probable run, weighted by their probabilities, renormalised to sum 1
    // (llama.cpp does so except for qwen2moe) and scaled by expert_weights_scale
    // when the file gives one (0: none). n_expert = 0: a dense model.
    int64_t n_expert = 0;
    int64_t n_expert_used = 0;
    int64_t n_ff_exp = 0;
    // qwen2moe: a shared expert of n_ff_shexp neurons runs for every token,
    // its output scaled by sigmoid(ffn_gate_inp_shexp . x); no renormalisation.
    int64_t n_ff_shexp = 0;
    bool expert_weights_norm = true;
    // The shared expert's gate of its logit l, as the architecture's graph
    // rounds it (ExpertKeys::shared_gate); null: qwen2moe's silu(l) / l.
    float (*shared_gate)(float l) = nullptr;
    float expert_weights_scale = 0.0f;
    bool moe() const { return n_expert > 0; }

    // The unit that runs general.architecture (architecture.h).
    const Architecture* unit = nullptr;
    // Gemma 3: embeddings scaled by sqrt(n_embd); GeGLU (tanh GELU); q
    // scaled after RoPE (and the attention itself unscaled); sliding-window
    // (local) layers with their own RoPE base, every swa_pattern-th layer
    // global.
    float embd_scale = 0.0f;  // 0: none
    bool gelu_ffn = false;
    float q_scale = 0.0f;     // 0: the attention scales by 1/sqrt(head_dim)
    int64_t swa_window = 0;   // 0: every layer attends to the whole context
    int64_t swa_pattern = 0;  // layers with il % pattern < pattern - 1 slide
    float rope_freq_base_swa = 10000.0f;
    float rope_freq_scale_swa = 1.0f;
    bool sliding(int64_t il) const {
        return swa_window > 0 && swa_pattern > 0 && il % swa_pattern < swa_pattern - 1;
    }

    // The unit's own hyper-parameters (null when it has none).
    std::shared_ptr<const UnitConfig> unit_config;

    int64_t q_dim() const { return n_head * head_dim; }
    int64_t kv_dim() const { return n_head_kv * head_dim; }
    int64_t v_dim() const { return n_head_kv * head_dim_v; }

    // Throws EngineError naming the missing/invalid key, or for an
    // architecture we do not run.
    static ModelConfig from_gguf(const gguf::GgufFile& file);
};

// How an architecture reads its mixture-of-experts keys (read_experts).
struct ExpertKeys {
    // expert_count is required (a qwen*moe file), and the experts have their
    // own width (expert_feed_forward_length, else n_ff / expert_used_count),
    // as against Mixtral-style experts that may be absent and are n_ff wide.
    bool qwen = false;
    // A shared expert of expert_shared_feed_forward_length (else n_ff).
    bool shared_expert = false;
    bool renormalise = true;  // the routed weights sum to 1
    // The shared expert's gate (ModelConfig::shared_gate).
    float (*shared_gate)(float l) = nullptr;
};
// The expert keys of c.arch in `keys`' way; with keys null a file with
// experts is refused.
void read_experts(const gguf::GgufFile& f, ModelConfig& c, const ExpertKeys* keys);

}  // namespace powerinfer::model
