// Hyper-parameters of a llama-family model, read from GGUF metadata the way
// llama.cpp reads them (keys prefixed by general.architecture).
#pragma once

#include <cstdint>
#include <string>

namespace powerinfer::gguf {
class GgufFile;
}

namespace powerinfer::model {

// How RoPE pairs dimensions. llama.cpp's converter permutes Q/K of llama
// checkpoints so that llama GGUFs use adjacent pairs (2i, 2i+1); qwen2/qwen3
// keep the HF layout and use NeoX pairs (i, i + n_rot/2).
enum class RopeStyle { Normal, Neox };

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
    bool qk_norm = false;   // qwen3

    int64_t q_dim() const { return n_head * head_dim; }
    int64_t kv_dim() const { return n_head_kv * head_dim; }
    int64_t v_dim() const { return n_head_kv * head_dim_v; }

    // Throws EngineError naming the missing/invalid key, or for an
    // architecture we do not run.
    static ModelConfig from_gguf(const gguf::GgufFile& file);
};

}  // namespace powerinfer::model
