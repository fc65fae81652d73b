// Synthetic llama-architecture models: random weights of any shape and quant
// type, a minimal SentencePiece vocabulary (so the engine loads them) and a
// matching sidecar whose neuron activity follows a power law. Used for
// benchmarks on machines that cannot download models, and by tests.
//
// Random data is made fast by quantizing a pool of random blocks once and
// copying block-aligned runs from it at random offsets (a 7B Q4_0 model is
// mostly memcpy + disk write).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/ggml_types.h"

namespace powerinfer::calibrate {

struct SynthSpec {
    int64_t n_layer = 2;
    int64_t n_embd = 64;
    int64_t n_ff = 128;
    int64_t n_head = 4;
    int64_t n_head_kv = 4;
    int64_t n_vocab = 512;  // >= 259 (3 specials + 256 byte tokens)
    int64_t n_ctx = 2048;
    GgmlType type = GgmlType::Q4_0;  // FFN, attention, embeddings and output
    uint64_t seed = 1;
    // Variants that exercise every part of the graph in tests: "llama",
    // "qwen2" (Q/K/V biases, NeoX RoPE) or "qwen3" (per-head Q/K norms, NeoX
    // RoPE); random norm weights instead of ones; no output.weight (the head
    // shares the token embedding).
    std::string arch = "llama";
    bool random_norms = false;
    bool tied_output = false;
    // Sidecar: neuron k (in a random hot-first order) is active with
    // probability min(1, c (k+1)^-zipf_s), c set so that 1 - sparsity of the
    // neurons are active on average.
    bool write_sidecar = true;
    double zipf_s = 1.0;
    double sparsity = 0.8;
    int64_t predictor_rank = 0;  // 0: 64 for n_embd < 2048, else 256
    bool predictor_f16 = true;
};

// The presets: "smollm2-135m", "llama-7b". Throws EngineError if unknown.
SynthSpec synth_preset(const std::string& name);

// Writes the model (and, if asked, default_sidecar_path(path)). Throws
// EngineError for an impossible shape (e.g. n_embd not a multiple of the
// type's block size).
void write_synthetic_model(const std::filesystem::path& path, const SynthSpec& spec);

// Synthetic mixture-of-experts models: qwen3moe (per-head Q/K norms, NeoX
// RoPE, experts of their own width) or Mixtral-style llama (expert tensors in
// a llama file), a random F32 router and stacked experts, written with the
// same vocabulary. The random numbers come from integer arithmetic only, so
// a spec gives the same bytes on every platform (the llama.cpp fixtures of
// the tiny presets name the file's hash). With zipf_s > 0 the routing is
// skewed: every token embedding carries a constant in dimension 0 and each
// expert's router row a weight there of -zipf_s ln(rank + 1) / that constant
// (ranks in a random order), so expert of rank r is chosen about
// (r + 1)^-zipf_s as often as the first, give or take the random part.
struct SynthMoeSpec {
    // "qwen3moe", "qwen2moe" (shared expert, Q/K/V biases), "llama" (Mixtral-style),
    // or "qwen35" / "qwen35moe" (Qwen3.5: Gated DeltaNet layers, every
    // full_attention_interval-th layer gated full attention; dense SwiGLU FFN
    // resp. experts with a shared expert of n_ff_shexp).
    std::string arch = "qwen3moe";
    int64_t n_layer = 4;
    int64_t n_embd = 256;
    int64_t n_head = 4;
    int64_t n_head_kv = 2;
    int64_t head_dim = 64;
    int64_t n_ff = 512;      // feed_forward_length (llama: the experts' width)
    int64_t n_ff_exp = 256;  // qwen3moe, qwen2moe: expert_feed_forward_length
    int64_t n_ff_shexp = 0;  // qwen2moe: its shared expert's width
    int64_t n_expert = 8;
    int64_t n_expert_used = 2;
    int64_t n_vocab = 512;
    int64_t n_ctx = 2048;
    GgmlType attn_type = GgmlType::Q4_K;
    GgmlType expert_type = GgmlType::Q4_K;  // gate and up experts
    GgmlType down_type = GgmlType::Q6_K;    // down experts
    GgmlType embd_type = GgmlType::Q4_K;
    GgmlType output_type = GgmlType::Q6_K;
    bool random_norms = true;
    double zipf_s = 0.0;
    uint64_t seed = 1;
    // qwen35/qwen35moe: the short convolution's kernel, the delta rule's
    // key/value head size (ssm.state_size), key heads (ssm.group_count),
    // value heads (ssm.time_step_rank), the rotated dimensions (0: head_dim).
    int64_t ssm_conv = 4, ssm_state = 64, ssm_groups = 2, ssm_v_heads = 4;
    int64_t full_attention_interval = 2;
    int64_t n_rot = 0;
    bool qwen35() const { return arch == "qwen35" || arch == "qwen35moe"; }
    int64_t expert_width() const { return arch == "llama" ? n_ff : n_ff_exp; }
};

// "tiny-qwen3moe", "tiny-qwen2moe" (with a shared expert of 512),
// "tiny-qwen35" (4 layers alternating Gated DeltaNet and gated attention,
// n_embd 256, 4 value / 2 key heads of 64, dense FFN of 512),
// "tiny-qwen35moe" (the same layers, 8 experts of 256, top-2, a shared
// expert of 256),
// "tiny-mixtral" (4 layers, 8 experts, top-2, n_embd 256: the test
// fixtures), "qwen3-30b-a3b" (Qwen3-30B-A3B's layer shapes: n_embd 2048, 32/4
// heads of 128, 128 experts of 768, top-8; 4 layers and a 32k vocabulary so
// that it fits a small machine; Q4_K with Q6_K down experts, zipf_s 1;
// "qwen3-30b-a3b-q4k": the same with Q4_K down experts). Throws EngineError if
// unknown.
SynthMoeSpec synth_moe_preset(const std::string& name);
void write_synthetic_moe_model(const std::filesystem::path& path, const SynthMoeSpec& spec);

}  // namespace powerinfer::calibrate
