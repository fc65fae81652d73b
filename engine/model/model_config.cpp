#include "model/model_config.h"

#include <cmath>
#include <string>

#include "common/error.h"
#include "gguf/gguf.h"
#include "powerinfer/utf8_path.h"

namespace powerinfer::model {
namespace {

int64_t required_int(const gguf::GgufFile& f, const std::string& key) {
    const auto v = f.get_int(key);
    if (!v)
        throw EngineError(path_to_utf8(f.path()) + ": missing or non-integer metadata '" + key +
                          "': the file is not a complete llama.cpp model");
    return *v;
}

int64_t positive(const gguf::GgufFile& f, const std::string& key, int64_t v, int64_t max) {
    if (v <= 0 || v > max)
        throw EngineError(path_to_utf8(f.path()) + ": metadata '" + key +
                          "' = " + std::to_string(v) + " is out of range: the file is corrupt");
    return v;
}

// The mixture-of-experts keys, as llama.cpp reads them for qwen3moe and for
// llama/mistral files with expert tensors.
void read_experts(const gguf::GgufFile& f, ModelConfig& c) {
    const std::string p = c.arch + ".";
    const int64_t n_expert = f.get_int(p + "expert_count").value_or(0);
    if (n_expert == 0) {
        if (c.arch == "qwen3moe" || c.arch == "qwen2moe" || c.arch == "qwen35moe")
            throw EngineError(path_to_utf8(f.path()) + ": qwen3moe model without '" + p +
                              "expert_count': the file is corrupt");
        return;
    }
    const bool qwen_moe = c.arch == "qwen3moe" || c.arch == "qwen2moe" || c.arch == "qwen35moe";
    if (c.arch != "llama" && c.arch != "mistral" && !qwen_moe)
        throw EngineError("'" + c.arch +
                          "' mixture-of-experts models are not supported: PowerInfer Desktop runs "
                          "qwen2moe, qwen3moe and Mixtral-style llama experts");
    // llama.cpp's LLAMA_MAX_EXPERTS.
    c.n_expert = positive(f, p + "expert_count", n_expert, 512);
    c.n_expert_used =
        positive(f, p + "expert_used_count", required_int(f, p + "expert_used_count"), c.n_expert);
    // Qwen's experts have their own width (else n_ff / n_expert_used, as
    // llama.cpp assumes); Mixtral's are feed_forward_length wide.
    const int64_t exp_ff = f.get_int(p + "expert_feed_forward_length").value_or(0);
    c.n_ff_exp = qwen_moe
                     ? positive(f, p + "expert_feed_forward_length",
                                exp_ff > 0 ? exp_ff : c.n_ff / c.n_expert_used, int64_t(1) << 20)
                     : c.n_ff;
    const int64_t shexp = f.get_int(p + "expert_shared_feed_forward_length").value_or(0);
    if (c.arch == "qwen2moe" || c.arch == "qwen35moe") {
        // Its shared expert (n_ff wide unless the file says), and llama.cpp
        // does not renormalise qwen2moe's routed weights (qwen35moe's it does).
        c.n_ff_shexp = positive(f, p + "expert_shared_feed_forward_length",
                                shexp > 0 ? shexp : c.n_ff, int64_t(1) << 20);
        c.expert_weights_norm = c.arch == "qwen35moe";
    } else if (f.get_int(p + "expert_shared_count").value_or(0) > 0 || shexp > 0) {
        throw EngineError(
            "shared experts are supported for qwen2moe and qwen35moe only: use a qwen2moe, "
            "qwen3moe, qwen35moe or Mixtral-style model");
    }
    c.expert_weights_scale =
        static_cast<float>(f.get_float(p + "expert_weights_scale").value_or(0.0));
    if (!(c.expert_weights_scale >= 0.0f))
        throw EngineError(path_to_utf8(f.path()) + ": invalid " + p + "expert_weights_scale");
}

}  // namespace

ModelConfig ModelConfig::from_gguf(const gguf::GgufFile& f) {
    ModelConfig c;
    const auto arch = f.get_string("general.architecture");
    if (!arch)
        throw EngineError(path_to_utf8(f.path()) +
                          ": no 'general.architecture' metadata: not a llama.cpp model file");
    c.arch = *arch;
    c.name = f.get_string("general.name").value_or("");
    if (c.arch == "llama" || c.arch == "mistral") {
        c.rope_style = RopeStyle::Normal;
    } else if (c.arch == "qwen2") {
        c.rope_style = RopeStyle::Neox;
        c.qkv_bias = true;
    } else if (c.arch == "qwen3") {
        c.rope_style = RopeStyle::Neox;
        c.qk_norm = true;
    } else if (c.arch == "qwen2moe") {
        c.rope_style = RopeStyle::Neox;
        c.qkv_bias = true;
    } else if (c.arch == "qwen3moe") {
        c.rope_style = RopeStyle::Neox;
        c.qk_norm = true;
    } else if (c.arch == "gemma3") {
        c.family = Family::Gemma3;
        c.rope_style = RopeStyle::Neox;
        c.qk_norm = true;
        c.post_norms = true;
        c.gelu_ffn = true;
    } else if (c.arch == "qwen35" || c.arch == "qwen35moe") {
        c.family = Family::Qwen35;
        c.rope_style = RopeStyle::Neox;
        c.qk_norm = true;
    } else {
        throw EngineError(
            "unsupported architecture '" + c.arch +
            "': PowerInfer Desktop runs llama, mistral, qwen2, qwen2moe, qwen3, qwen3moe, "
            "gemma3, qwen35 and qwen35moe models");
    }
    const std::string p = c.arch + ".";

    constexpr int64_t kMaxDim = int64_t(1) << 20;
    c.n_ctx_train =
        positive(f, p + "context_length", required_int(f, p + "context_length"), int64_t(1) << 24);
    c.n_embd =
        positive(f, p + "embedding_length", required_int(f, p + "embedding_length"), kMaxDim);
    c.n_layer = positive(f, p + "block_count", required_int(f, p + "block_count"), 4096);
    c.n_ff =
        positive(f, p + "feed_forward_length", required_int(f, p + "feed_forward_length"), kMaxDim);
    c.n_head =
        positive(f, p + "attention.head_count", required_int(f, p + "attention.head_count"), 4096);
    c.n_head_kv = positive(f, p + "attention.head_count_kv",
                           f.get_int(p + "attention.head_count_kv").value_or(c.n_head), 4096);
    if (c.n_head % c.n_head_kv != 0)
        throw EngineError(path_to_utf8(f.path()) + ": head_count " + std::to_string(c.n_head) +
                          " is not a multiple of head_count_kv " + std::to_string(c.n_head_kv));
    const int64_t default_head = c.n_embd / c.n_head;
    c.head_dim = positive(f, p + "attention.key_length",
                          f.get_int(p + "attention.key_length").value_or(default_head), 65536);
    c.head_dim_v = positive(f, p + "attention.value_length",
                            f.get_int(p + "attention.value_length").value_or(default_head), 65536);
    c.n_rot = positive(f, p + "rope.dimension_count",
                       f.get_int(p + "rope.dimension_count").value_or(c.head_dim), c.head_dim);
    if (c.n_rot % 2 != 0)
        throw EngineError(path_to_utf8(f.path()) + ": rope.dimension_count must be even");
    c.rms_eps =
        static_cast<float>(f.get_float(p + "attention.layer_norm_rms_epsilon").value_or(1e-5));
    c.rope_freq_base = static_cast<float>(f.get_float(p + "rope.freq_base").value_or(10000.0));
    if (!(c.rms_eps > 0) || !(c.rope_freq_base > 0))
        throw EngineError(path_to_utf8(f.path()) + ": invalid rms epsilon or rope.freq_base");

    const std::string scaling = f.get_string(p + "rope.scaling.type").value_or("none");
    if (scaling == "linear") {
        const double factor = f.get_float(p + "rope.scaling.factor").value_or(1.0);
        if (!(factor > 0))
            throw EngineError(path_to_utf8(f.path()) + ": invalid rope.scaling.factor");
        c.rope_freq_scale = static_cast<float>(1.0 / factor);
    } else if (scaling != "none") {
        throw EngineError("rope scaling '" + scaling +
                          "' is not supported: use a model without long-context rope scaling");
    }

    read_experts(f, c);

    if (c.family == Family::Gemma3) {
        c.embd_scale = std::sqrt(static_cast<float>(c.n_embd));
        // As llama.cpp: the query is scaled by 1/sqrt(head_dim) after RoPE
        // (1/sqrt(n_embd / n_head) for the 62-layer 27B model), the local
        // layers' RoPE base is 10000 unless the file says otherwise, and the
        // pattern of local and global layers is 5:1 unless the file says.
        const int64_t q_dim_for_scale = c.n_layer == 62 ? c.n_embd / c.n_head : c.head_dim;
        c.q_scale = 1.0f / std::sqrt(static_cast<float>(q_dim_for_scale));
        c.swa_window = f.get_int(p + "attention.sliding_window").value_or(0);
        if (c.swa_window < 0)
            throw EngineError(path_to_utf8(f.path()) + ": invalid sliding_window");
        c.swa_pattern = f.get_int(p + "attention.sliding_window_pattern").value_or(6);
        c.rope_freq_base_swa =
            static_cast<float>(f.get_float(p + "rope.freq_base_swa").value_or(10000.0));
        if (c.swa_pattern <= 0 || !(c.rope_freq_base_swa > 0))
            throw EngineError(path_to_utf8(f.path()) + ": invalid sliding-window metadata");
    }

    if (c.family == Family::Qwen35) read_qwen35_config(f, c);

    const auto tokens = f.find("tokenizer.ggml.tokens");
    if (tokens && tokens->as_array()) {
        c.n_vocab = static_cast<int64_t>(tokens->as_array()->items.size());
    } else {
        c.n_vocab = f.get_int(p + "vocab_size").value_or(0);
    }
    if (c.n_vocab <= 0)
        throw EngineError(path_to_utf8(f.path()) +
                          ": no vocabulary (tokenizer.ggml.tokens): the model cannot be used");
    return c;
}

}  // namespace powerinfer::model
