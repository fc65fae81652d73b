// Gemma 3 as one unit: its keys, tensor names and layer graph, as llama.cpp
// computes it (llm_build_gemma3_iswa), over the op-level backend interface.
// Differences from the llama family:
// embeddings scaled by sqrt(n_embd) (in the shared forward pass); RMSNorm
// before and after both the attention and the FFN (the GGUF's norm weights
// as stored); per-head RMSNorm of q and k; q scaled after RoPE and the
// attention itself unscaled; sliding-window (local) layers with their own
// RoPE base, every swa_pattern-th layer global; GeGLU (tanh GELU) FFN. The
// output head is tied to the embedding.
//
//   x -> rms_norm -> q,k,v -> q/k head norms -> rope (local or global base)
//     -> q *= q_scale -> store_kv -> attention (window on local layers)
//     -> o -> rms_norm (post) -> x += ; x -> rms_norm -> FFN (GeGLU)
//     -> rms_norm (post) -> x +=
#include <cmath>
#include <string>
#include <string_view>

#include "common/error.h"
#include "gguf/gguf.h"
#include "model/architecture.h"
#include "powerinfer/utf8_path.h"

namespace powerinfer::model {
namespace {

constexpr std::string_view kNames[] = {"gemma3"};

void read_gemma3_config(const gguf::GgufFile& f, ModelConfig& c) {
    c.rope_style = RopeStyle::Neox;
    c.qk_norm = true;
    c.gelu_ffn = true;
    read_experts(f, c, nullptr);
    const std::string p = c.arch + ".";
    c.embd_scale = std::sqrt(static_cast<float>(c.n_embd));
    // As llama.cpp: the query is scaled by 1/sqrt(head_dim) after RoPE
    // (1/sqrt(n_embd / n_head) for the 62-layer 27B model), the local
    // layers' RoPE base is 10000 unless the file says otherwise, and the
    // pattern of local and global layers is 5:1 unless the file says.
    const int64_t q_dim_for_scale = c.n_layer == 62 ? c.n_embd / c.n_head : c.head_dim;
    c.q_scale = 1.0f / std::sqrt(static_cast<float>(q_dim_for_scale));
    c.swa_window = f.get_int(p + "attention.sliding_window").value_or(0);
    if (c.swa_window < 0) throw EngineError(path_to_utf8(f.path()) + ": invalid sliding_window");
    c.swa_pattern = f.get_int(p + "attention.sliding_window_pattern").value_or(6);
    c.rope_freq_base_swa =
        static_cast<float>(f.get_float(p + "rope.freq_base_swa").value_or(10000.0));
    if (c.swa_pattern <= 0 || !(c.rope_freq_base_swa > 0))
        throw EngineError(path_to_utf8(f.path()) + ": invalid sliding-window metadata");
}

void bind_gemma3_layer(TensorBinder& bind, const ModelConfig& c, int64_t il, LayerWeights& L) {
    const int64_t E = c.n_embd;
    const std::string b = "blk." + std::to_string(il) + ".";
    L.attn_norm = bind.vector(b + "attn_norm.weight", E);
    bind_attention(bind, c, b, c.q_dim(), L);
    L.q_norm = bind.vector(b + "attn_q_norm.weight", c.head_dim);
    L.k_norm = bind.vector(b + "attn_k_norm.weight", c.head_dim);
    L.attn_post_norm = bind.vector(b + "post_attention_norm.weight", E);
    L.ffn_norm = bind.vector(b + "ffn_norm.weight", E);
    L.ffn_post_norm = bind.vector(b + "post_ffw_norm.weight", E);
}

void gemma3_layer(Model& m, int il, backend::Compute& be, Model::Scratch& s, int64_t n,
                  int64_t n_past) {
    const LayerWeights& L = m.placed(il);
    const ModelConfig& c = m.config();
    const int64_t E = c.n_embd, hd = c.head_dim;
    const bool local = c.sliding(il);

    be.rms_norm(s.x, L.attn_norm, s.xn, n, E, c.rms_eps);
    const tensor::WeightView ws[3] = {L.q, L.k, L.v};
    float* const ys[3] = {s.q, s.k, s.v};
    be.matmul(ws, s.xn, n, ys);
    be.rms_norm(s.q, L.q_norm, s.q, n * c.n_head, hd, c.rms_eps);
    be.rms_norm(s.k, L.k_norm, s.k, n * c.n_head_kv, hd, c.rms_eps);
    // The host's tables; a device backend never runs these layers (host_only).
    const backend::RopeTable rope = local ? m.sliding_rope() : s.rope;
    be.rope(s.q, n, c.n_head, hd, rope, n_past);
    be.rope(s.k, n, c.n_head_kv, hd, rope, n_past);
    be.scale(s.q, n * c.q_dim(), c.q_scale);
    m.cached_attention(il, be, s, n, n_past, 1.0f, local ? c.swa_window : 0);
    be.matmul(L.o, s.attn, n, s.tmp);
    be.rms_norm(s.tmp, L.attn_post_norm, s.tmp, n, E, c.rms_eps);
    be.add(s.x, s.tmp, n * E);

    be.rms_norm(s.x, L.ffn_norm, s.xn, n, E, c.rms_eps);
    m.run_ffn(il, be, s, n);
    be.rms_norm(s.tmp, L.ffn_post_norm, s.tmp, n, E, c.rms_eps);
    be.add(s.x, s.tmp, n * E);
}

// q is scaled by its own op and the attention left unscaled; local layers
// slide; the FFN is GeGLU.
std::vector<backend::Capability> gemma3_needs(const ModelConfig& c, OffloadParts parts) {
    using backend::Capability;
    std::vector<Capability> need{Capability::ActivationScale, Capability::AttentionScale};
    if (c.swa_window > 0) need.push_back(Capability::SlidingWindow);
    if (parts == OffloadParts::WholeLayers) need.push_back(Capability::GeGLU);
    return need;
}

}  // namespace

const Architecture Architecture::gemma3{
    .names = kNames,
    .read_config = read_gemma3_config,
    .bind_layer = bind_gemma3_layer,
    .layer = gemma3_layer,
    .needs = gemma3_needs,
    .host_only =
        "Gemma 3 layers run on the CPU only in this version (the device copy of a "
        "layer has no post-norms or local RoPE tables yet)",
    .several_sequences = false,
};

}  // namespace powerinfer::model
