// Gemma 3's layer graph, as llama.cpp computes it (llm_build_gemma3_iswa),
// over the op-level backend interface. Differences from the llama family:
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
#include "model/model.h"

namespace powerinfer::model {

void Model::gemma3_layer(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past) {
    const LayerWeights& L = resident_[static_cast<size_t>(il)].w;
    const ModelConfig& c = cfg_;
    const int64_t E = c.n_embd, hd = c.head_dim;
    const bool local = c.sliding(il);

    be.rms_norm(s.x, L.attn_norm, s.xn, n, E, c.rms_eps);
    const tensor::WeightView ws[3] = {L.q, L.k, L.v};
    float* const ys[3] = {s.q, s.k, s.v};
    be.matmul(ws, s.xn, n, ys);
    be.rms_norm(s.q, L.q_norm, s.q, n * c.n_head, hd, c.rms_eps);
    be.rms_norm(s.k, L.k_norm, s.k, n * c.n_head_kv, hd, c.rms_eps);
    // The host's tables; a device backend never runs these layers (Model::unsupported_on).
    const backend::RopeTable rope =
        local ? backend::RopeTable{rope_cos_swa_.data(), rope_sin_swa_.data(), c.n_rot, true}
              : s.rope;
    be.rope(s.q, n, c.n_head, hd, rope, n_past);
    be.rope(s.k, n, c.n_head_kv, hd, rope, n_past);
    be.scale(s.q, n * c.q_dim(), c.q_scale);
    cached_attention(il, be, s, n, n_past, 1.0f, local ? c.swa_window : 0);
    be.matmul(L.o, s.attn, n, s.tmp);
    be.rms_norm(s.tmp, L.attn_post_norm, s.tmp, n, E, c.rms_eps);
    be.add(s.x, s.tmp, n * E);

    be.rms_norm(s.x, L.ffn_norm, s.xn, n, E, c.rms_eps);
    run_ffn(il, be, s, n);
    be.rms_norm(s.tmp, L.ffn_post_norm, s.tmp, n, E, c.rms_eps);
    be.add(s.x, s.tmp, n * E);
}

}  // namespace powerinfer::model
