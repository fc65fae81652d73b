#include "model/model_config.h"

#include <string>

#include "common/error.h"
#include "gguf/gguf.h"
#include "model/architecture.h"
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

}  // namespace

// As llama.cpp reads them for qwen2moe, qwen3moe, qwen35moe and for
// llama/mistral files with expert tensors.
void read_experts(const gguf::GgufFile& f, ModelConfig& c, const ExpertKeys* keys) {
    const std::string p = c.arch + ".";
    const int64_t n_expert = f.get_int(p + "expert_count").value_or(0);
    if (n_expert == 0) {
        if (keys && keys->qwen)
            throw EngineError(path_to_utf8(f.path()) + ": " + c.arch + " model without '" + p +
                              "expert_count': the file is corrupt");
        return;
    }
    if (!keys)
        throw EngineError("'" + c.arch +
                          "' mixture-of-experts models are not supported: PowerInfer Desktop runs "
                          "qwen2moe, qwen3moe, qwen35moe and Mixtral-style llama experts");
    // llama.cpp's LLAMA_MAX_EXPERTS.
    c.n_expert = positive(f, p + "expert_count", n_expert, 512);
    c.n_expert_used =
        positive(f, p + "expert_used_count", required_int(f, p + "expert_used_count"), c.n_expert);
    // Qwen's experts have their own width (else n_ff / n_expert_used, as
    // llama.cpp assumes); Mixtral's are feed_forward_length wide.
    const int64_t exp_ff = f.get_int(p + "expert_feed_forward_length").value_or(0);
    c.n_ff_exp = keys->qwen
                     ? positive(f, p + "expert_feed_forward_length",
                                exp_ff > 0 ? exp_ff : c.n_ff / c.n_expert_used, int64_t(1) << 20)
                     : c.n_ff;
    const int64_t shexp = f.get_int(p + "expert_shared_feed_forward_length").value_or(0);
    if (keys->shared_expert) {
        // Its shared expert, n_ff wide unless the file says.
        c.n_ff_shexp = positive(f, p + "expert_shared_feed_forward_length",
                                shexp > 0 ? shexp : c.n_ff, int64_t(1) << 20);
    } else if (f.get_int(p + "expert_shared_count").value_or(0) > 0 || shexp > 0) {
        throw EngineError(
            "shared experts are supported for qwen2moe and qwen35moe only: use a qwen2moe, "
            "qwen3moe, qwen35moe or Mixtral-style model");
    }
    c.expert_weights_norm = keys->renormalise;
    c.shared_gate = keys->shared_gate;
    c.expert_weights_scale =
        static_cast<float>(f.get_float(p + "expert_weights_scale").value_or(0.0));
    if (!(c.expert_weights_scale >= 0.0f))
        throw EngineError(path_to_utf8(f.path()) + ": invalid " + p + "expert_weights_scale");
}

ModelConfig ModelConfig::from_gguf(const gguf::GgufFile& f) {
    ModelConfig c;
    const auto arch = f.get_string("general.architecture");
    if (!arch)
        throw EngineError(path_to_utf8(f.path()) +
                          ": no 'general.architecture' metadata: not a llama.cpp model file");
    c.arch = *arch;
    c.name = f.get_string("general.name").value_or("");
    c.unit = &architecture_for(c.arch);
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

    c.unit->read_config(f, c);

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
