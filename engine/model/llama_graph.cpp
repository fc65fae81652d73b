// The llama family as one unit (llama/mistral, qwen2, qwen3 and their
// mixture-of-experts files: qwen2moe, qwen3moe, Mixtral-style llama): what
// sets its variants apart (a table: RoPE pairs, q/k/v biases, per-head q/k
// norms, the experts' keys), its tensor names and its layer, as llama.cpp
// builds it (llm_build_llama, llm_build_qwen2, llm_build_qwen3, their moe
// twins). One token's layer:
//
//   x -> rms_norm -> q,k,v matmul (+bias, per-head norm) -> rope -> store_kv
//     -> attention -> o matmul -> x += ; x -> rms_norm -> FFN (SwiGLU, or
//     the experts) -> x +=
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "common/error.h"
#include "gguf/gguf.h"
#include "model/architecture.h"

namespace powerinfer::model {
namespace {

constexpr ExpertKeys kMixtral{};  // optional, n_ff wide, renormalised
constexpr ExpertKeys kQwen2Moe{.qwen = true, .shared_expert = true, .renormalise = false};
constexpr ExpertKeys kQwen3Moe{.qwen = true};

struct Variant {
    std::string_view arch;
    RopeStyle rope;
    bool qkv_bias, qk_norm;
    const ExpertKeys* experts;  // null: a dense architecture
};
// llama.cpp's converter permutes llama's Q/K (adjacent RoPE pairs); qwen
// keeps the HF layout (NeoX pairs).
constexpr Variant kVariants[] = {
    {"llama", RopeStyle::Normal, false, false, &kMixtral},
    {"mistral", RopeStyle::Normal, false, false, &kMixtral},
    {"qwen2", RopeStyle::Neox, true, false, nullptr},
    {"qwen2moe", RopeStyle::Neox, true, false, &kQwen2Moe},
    {"qwen3", RopeStyle::Neox, false, true, nullptr},
    {"qwen3moe", RopeStyle::Neox, false, true, &kQwen3Moe},
};
constexpr auto kNames = [] {
    std::array<std::string_view, std::size(kVariants)> names{};
    for (size_t i = 0; i < names.size(); ++i) names[i] = kVariants[i].arch;
    return names;
}();

void read_llama_config(const gguf::GgufFile& f, ModelConfig& c) {
    const Variant& v =
        *std::find_if(std::begin(kVariants), std::end(kVariants),
                      [&](const Variant& variant) { return variant.arch == c.arch; });
    c.rope_style = v.rope;
    c.qkv_bias = v.qkv_bias;
    c.qk_norm = v.qk_norm;
    read_experts(f, c, v.experts);
}

void bind_llama_layer(TensorBinder& bind, const ModelConfig& c, int64_t il, LayerWeights& L) {
    const int64_t E = c.n_embd;
    const std::string b = "blk." + std::to_string(il) + ".";
    L.attn_norm = bind.vector(b + "attn_norm.weight", E);
    bind_attention(bind, c, b, c.q_dim(), L);
    // Biases are optional in llama files and required by qwen2.
    L.q_bias = bind.vector(b + "attn_q.bias", c.q_dim(), c.qkv_bias);
    L.k_bias = bind.vector(b + "attn_k.bias", c.kv_dim(), c.qkv_bias);
    L.v_bias = bind.vector(b + "attn_v.bias", c.v_dim(), c.qkv_bias);
    if (c.qk_norm) {
        L.q_norm = bind.vector(b + "attn_q_norm.weight", c.head_dim);
        L.k_norm = bind.vector(b + "attn_k_norm.weight", c.head_dim);
    }
    if (bind.has(b + "attn_output.bias"))
        throw EngineError(bind.where() + "tensor '" + b +
                          "attn_output.bias' is not part of the supported architectures");
    L.ffn_norm = bind.vector(b + "ffn_norm.weight", E);
}

void llama_layer(Model& m, int il, backend::Compute& be, Model::Scratch& s, int64_t n,
                 int64_t n_past) {
    const LayerWeights& L = m.placed(il);
    const ModelConfig& c = m.config();
    const int64_t E = c.n_embd, hd = c.head_dim;
    be.rms_norm(s.x, L.attn_norm, s.xn, n, E, c.rms_eps);
    const tensor::WeightView ws[3] = {L.q, L.k, L.v};
    float* const ys[3] = {s.q, s.k, s.v};
    be.matmul(ws, s.xn, n, ys);
    if (L.q_bias) be.add_bias(s.q, L.q_bias, n, c.q_dim());
    if (L.k_bias) be.add_bias(s.k, L.k_bias, n, c.kv_dim());
    if (L.v_bias) be.add_bias(s.v, L.v_bias, n, c.v_dim());
    if (L.q_norm) be.rms_norm(s.q, L.q_norm, s.q, n * c.n_head, hd, c.rms_eps);
    if (L.k_norm) be.rms_norm(s.k, L.k_norm, s.k, n * c.n_head_kv, hd, c.rms_eps);
    m.positioned_attention(il, be, s, n, n_past, 1.0f / std::sqrt(static_cast<float>(hd)));
    be.matmul(L.o, s.attn, n, s.tmp);
    be.add(s.x, s.tmp, n * E);
    m.ffn_block(il, be, s, n);
}

// Every op of the layer is one each backend runs.
std::vector<backend::Capability> llama_needs(const ModelConfig&, OffloadParts) { return {}; }

}  // namespace

const Architecture Architecture::llama{
    .names = kNames,
    .read_config = read_llama_config,
    .bind_layer = bind_llama_layer,
    .layer = llama_layer,
    .needs = llama_needs,
};

}  // namespace powerinfer::model
