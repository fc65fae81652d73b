// Qwen3.5 (qwen35, qwen35moe) as one unit: its GGUF keys, its tensor names,
// its layer graph and its recurrent state, as llama.cpp computes them
// (src/models/qwen35.cpp, delta-net-base.cpp and ggml's CPU ops at 0c1e570).
//
// Layers alternate between two kinds (every full_attention_interval-th layer,
// or the attention.recurrent_layers array, says which), both followed by the
// FFN (SwiGLU, or the experts of qwen35moe) on post_attention_norm:
//
//   gated attention: x -> rms_norm -> attn_q (each head's query, then its
//     gate) | k | v -> per-head q/k norms -> rope (NeoX pairs; the text
//     positions of M-RoPE) -> attention -> * sigmoid(gate) -> attn_output
//   Gated DeltaNet: x -> rms_norm -> attn_qkv | attn_gate (z) | ssm_beta |
//     ssm_alpha -> causal conv of ssm.conv_kernel taps over q|k|v (state: the
//     last taps - 1 inputs) -> silu -> l2-normed q, k -> per value head h the
//     delta rule over its [d][d] state with key head h % n_k_heads:
//       S *= exp(g), g = softplus(alpha + dt) * a;  S += k (beta (v - S^T k))^T;
//       o = S^T q / sqrt(d)
//     -> rms_norm(o) * ssm_norm * silu(z) -> ssm_out
//
// The recurrent state (DeltaNetConfig::state_floats() per Gated DeltaNet
// layer, Architecture::memory) is the model's per-sequence state, held per
// sequence slot beside the KV cache. It cannot be rewound: a forward() that
// starts before the slot's last position (a reused prompt prefix, a context
// shift) restarts the state and re-evaluates the kept tokens, which gives the
// same bits as the first time. The float math rounds as llama.cpp's CPU
// backend (x86, AVX-512 build) does: ggml_vec_dot_f32's lane order, its exp
// polynomial in silu, libm's expf/logf elsewhere, fused multiply-adds where
// GCC contracts ggml's scalar loops. CPU only: the layer computes on host
// memory, and no backend has a delta-rule op yet
// (backend::Capability::GatedDeltaNet).
#include "model/qwen35_graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "gguf/gguf.h"
#include "model/architecture.h"
#include "powerinfer/utf8_path.h"
#include "tensor/ops.h"
#include "tensor/quant.h"

namespace powerinfer::model {
namespace {

void gm_h2f_row(const uint16_t* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = tensor::fp16_to_fp32(src[i]);
}
// ggml's exp polynomial and 16-lane reduction (the rest of the file is
// the attention's, unused here).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include "tensor/ggml_math.inc"
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

// ggml_vec_dot_f32 (AVX-512): four 16-lane FMA accumulators over 64-element
// steps, folded (0+2, 1+3, 0+1) and reduced; the tail FMA'd into the sum.
float dot_f32(const float* a, const float* b, int64_t n) {
    float sum[4][16] = {};
    const int64_t np = n & ~int64_t{63};
    for (int64_t i = 0; i < np; i += 64)
        for (int j = 0; j < 4; ++j)
            for (int l = 0; l < 16; ++l)
                sum[j][l] = std::fma(a[i + 16 * j + l], b[i + 16 * j + l], sum[j][l]);
    for (int l = 0; l < 16; ++l) {
        sum[0][l] += sum[2][l];
        sum[1][l] += sum[3][l];
    }
    for (int l = 0; l < 16; ++l) sum[0][l] += sum[1][l];
    float s = gm_reduce16(sum[0]);
    for (int64_t i = np; i < n; ++i) s = std::fma(a[i], b[i], s);
    return s;
}

// ggml_vec_silu_f32 over one row: 16-lane blocks through ggml_v_expf, the
// tail through expf.
void silu_row(float* x, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) x[i + l] = x[i + l] / (1.0f + gm_expf(0.0f - x[i + l]));
    for (; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float softplus(float x) { return x > 20.0f ? x : std::log(1.0f + std::exp(x)); }

// llama.cpp's build_gdn_l2_norm: rms_norm with eps / n, then * 1/sqrt(n).
void l2_norm(float* x, int64_t n, float eps) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
    const float fn = static_cast<float>(n);
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps / fn);
    const float post = 1.0f / std::sqrt(fn);
    for (int64_t i = 0; i < n; ++i) x[i] = (x[i] * scale) * post;
}

std::string where(const gguf::GgufFile& f) { return path_to_utf8(f.path()) + ": "; }

int64_t required_size(const gguf::GgufFile& f, const std::string& key, int64_t max) {
    const auto v = f.get_int(key);
    if (!v)
        throw EngineError(where(f) + "missing or non-integer metadata '" + key +
                          "': the file is not a complete Qwen3.5 model");
    if (*v <= 0 || *v > max)
        throw EngineError(where(f) + "metadata '" + key + "' = " + std::to_string(*v) +
                          " is out of range: the file is corrupt");
    return *v;
}

constexpr std::string_view kNames[] = {"qwen35", "qwen35moe"};

// qwen35moe's experts renormalised, with a shared expert gated by sigmoid
// (ggml_sigmoid).
constexpr ExpertKeys kQwen35Moe{.qwen = true, .shared_expert = true, .shared_gate = sigmoid};

void read_qwen35_config(const gguf::GgufFile& f, ModelConfig& c) {
    c.rope_style = RopeStyle::Neox;
    c.qk_norm = true;
    read_experts(f, c, c.arch == "qwen35moe" ? &kQwen35Moe : nullptr);
    const std::string p = c.arch + ".";
    auto delta = std::make_shared<DeltaNetConfig>();
    c.unit_config = delta;
    DeltaNetConfig& d = *delta;
    d.conv_kernel = required_size(f, p + "ssm.conv_kernel", 64);
    d.head_dim = required_size(f, p + "ssm.state_size", 4096);
    d.n_k_heads = required_size(f, p + "ssm.group_count", 4096);
    d.n_v_heads = required_size(f, p + "ssm.time_step_rank", 4096);
    const int64_t inner = required_size(f, p + "ssm.inner_size", int64_t(1) << 20);
    if (d.conv_kernel < 2 || d.n_v_heads % d.n_k_heads != 0 || inner != d.value_dim())
        throw EngineError(where(f) + "inconsistent Gated DeltaNet sizes (conv_kernel " +
                          std::to_string(d.conv_kernel) + ", " + std::to_string(d.n_v_heads) +
                          " value heads over " + std::to_string(d.n_k_heads) +
                          " key heads, inner_size " + std::to_string(inner) + " for heads of " +
                          std::to_string(d.head_dim) + "): the file is corrupt");
    if (c.head_dim != c.head_dim_v)
        throw EngineError(where(f) + "qwen35 attention needs key_length = value_length");

    // The multi-token-prediction blocks (nextn_predict_layers) follow the
    // trunk's in block_count; like llama.cpp's main pass we do not run them.
    const int64_t nextn = f.get_int(p + "nextn_predict_layers").value_or(0);
    if (nextn < 0 || nextn >= c.n_layer)
        throw EngineError(where(f) + "invalid '" + p + "nextn_predict_layers'");
    c.n_layer -= nextn;

    // Which layers are recurrent: the array when the file has one, else
    // every full_attention_interval-th layer (4 by default) attends.
    d.recurrent.assign(static_cast<size_t>(c.n_layer), 0);
    if (f.find(p + "attention.recurrent_layers")) {
        const auto flags = f.get_int_array(p + "attention.recurrent_layers");
        if (static_cast<int64_t>(flags.size()) < c.n_layer)
            throw EngineError(where(f) + "'" + p + "attention.recurrent_layers' must hold " +
                              std::to_string(c.n_layer) + " integers");
        for (int64_t il = 0; il < c.n_layer; ++il)
            d.recurrent[static_cast<size_t>(il)] = flags[static_cast<size_t>(il)] != 0;
    } else {
        const int64_t interval = f.find(p + "full_attention_interval")
                                     ? required_size(f, p + "full_attention_interval", 4096)
                                     : 4;
        for (int64_t il = 0; il < c.n_layer; ++il)
            d.recurrent[static_cast<size_t>(il)] = (il + 1) % interval != 0;
    }

    // Interleaved M-RoPE (IMROPE): text tokens have the same position in
    // their first three sections and 0 in the fourth, so it is NeoX RoPE
    // when the first three cover every rotated pair.
    const auto sections = f.get_int_array(p + "rope.dimension_sections");
    if (sections.size() < 4)
        throw EngineError(where(f) + "missing '" + p +
                          "rope.dimension_sections' (4 integers): the file is corrupt");
    const int64_t total = sections[0] + sections[1] + sections[2] + sections[3];
    if (total <= 0 || total > c.n_rot)
        throw EngineError(where(f) + "invalid '" + p + "rope.dimension_sections'");
    for (int64_t i = 0; i < c.n_rot / 2; ++i) {
        const int64_t sector = i % total;
        const bool text = (sector % 3 == 0 && sector < 3 * sections[0]) ||
                          (sector % 3 == 1 && sector < 3 * sections[1]) ||
                          (sector % 3 == 2 && sector < 3 * sections[2]);
        if (!text)
            throw EngineError(
                "this Qwen3.5 file rotates some dimensions by its fourth (vision) M-RoPE "
                "section, which PowerInfer Desktop does not support");
    }
}

void bind_qwen35_layer(TensorBinder& bind, const ModelConfig& c, int64_t il, LayerWeights& L) {
    const DeltaNetConfig& d = delta_net(c);
    const int64_t E = c.n_embd;
    const std::string b = "blk." + std::to_string(il) + ".";
    L.attn_norm = bind.vector(b + "attn_norm.weight", E);
    L.ffn_norm = bind.vector(b + "post_attention_norm.weight", E);
    if (!d.is_recurrent(il)) {
        bind_attention(bind, c, b, 2 * c.q_dim(), L);  // query and gate per head
        L.q_norm = bind.vector(b + "attn_q_norm.weight", c.head_dim);
        L.k_norm = bind.vector(b + "attn_k_norm.weight", c.head_dim);
        return;
    }
    auto w = std::make_shared<DeltaNetWeights>();
    w->qkv = bind.matrix(b + "attn_qkv.weight", E, d.conv_dim());
    w->z = bind.matrix(b + "attn_gate.weight", E, d.value_dim());
    w->beta = bind.matrix(b + "ssm_beta.weight", E, d.n_v_heads);
    w->alpha = bind.matrix(b + "ssm_alpha.weight", E, d.n_v_heads);
    w->out = bind.matrix(b + "ssm_out.weight", d.value_dim(), E);
    const tensor::WeightView conv =
        bind.matrix(b + "ssm_conv1d.weight", d.conv_kernel, d.conv_dim());
    if (conv.type != GgmlType::F32)
        throw EngineError(bind.where() + "tensor '" + b +
                          "ssm_conv1d.weight' must be F32 (as llama.cpp's converter writes it)");
    w->conv = reinterpret_cast<const float*>(conv.data);
    w->dt = bind.vector(b + "ssm_dt.bias", d.n_v_heads);
    w->a = bind.vector(b + "ssm_a", d.n_v_heads);
    w->norm = bind.vector(b + "ssm_norm.weight", d.head_dim);
    L.unit = std::move(w);
}

// A Gated DeltaNet layer keeps its state per sequence and no KV cache.
LayerMemory qwen35_memory(const ModelConfig& c, int64_t il) {
    const DeltaNetConfig& d = delta_net(c);
    if (!d.is_recurrent(il)) return {};
    return {.kv_cache = false, .state_floats = d.state_floats()};
}

// The Gated DeltaNet layers; the rest of the graph computes on host memory
// too (Architecture::host_only).
std::vector<backend::Capability> qwen35_needs(const ModelConfig& c, OffloadParts) {
    const auto& recurrent = delta_net(c).recurrent;
    if (std::find(recurrent.begin(), recurrent.end(), 1) == recurrent.end()) return {};
    return {backend::Capability::GatedDeltaNet};
}

// ---- the layer --------------------------------------------------------------

void gated_attention_block(Model& m, int il, backend::Compute& be, Model::Scratch& s, int64_t n,
                           int64_t n_past) {
    const LayerWeights& L = m.placed(il);
    const ModelConfig& c = m.config();
    const int64_t E = c.n_embd, hd = c.head_dim, qd = c.q_dim();
    float* q_full = m.layer_temporaries(n * 3 * qd);
    float* gate = q_full + n * 2 * qd;
    be.rms_norm(s.x, L.attn_norm, s.xn, n, E, c.rms_eps);
    const tensor::WeightView ws[3] = {L.q, L.k, L.v};
    float* const ys[3] = {q_full, s.k, s.v};
    be.matmul(ws, s.xn, n, ys);
    for (int64_t r = 0; r < n; ++r)
        for (int64_t h = 0; h < c.n_head; ++h) {
            const float* src = q_full + r * 2 * qd + h * 2 * hd;
            std::memcpy(s.q + r * qd + h * hd, src, static_cast<size_t>(hd) * sizeof(float));
            std::memcpy(gate + r * qd + h * hd, src + hd, static_cast<size_t>(hd) * sizeof(float));
        }
    be.rms_norm(s.q, L.q_norm, s.q, n * c.n_head, hd, c.rms_eps);
    be.rms_norm(s.k, L.k_norm, s.k, n * c.n_head_kv, hd, c.rms_eps);
    m.positioned_attention(il, be, s, n, n_past, 1.0f / std::sqrt(static_cast<float>(hd)));
    const int64_t n_out = n * c.n_head * c.head_dim_v;
    for (int64_t i = 0; i < n_out; ++i) s.attn[i] *= sigmoid(gate[i]);
    be.matmul(L.o, s.attn, n, s.tmp);
    be.add(s.x, s.tmp, n * E);
}

void delta_net_block(Model& m, int il, backend::Compute& be, Model::Scratch& s, int64_t n) {
    const auto& L = static_cast<const DeltaNetWeights&>(*m.placed(il).unit);
    const ModelConfig& c = m.config();
    const DeltaNetConfig& d = delta_net(c);
    const int64_t E = c.n_embd, D = d.head_dim, HV = d.n_v_heads, HK = d.n_k_heads;
    const int64_t C = d.conv_dim(), VD = d.value_dim(), K = d.conv_kernel;
    const auto workers = static_cast<int64_t>(m.pool().size());
    // q|k|v, then, in place, the convolved q|k|v.
    float* qkv = m.layer_temporaries(n * (C + 2 * VD + 2 * HV) + workers * D);
    float* z = qkv + n * C;
    float* beta = z + n * VD;
    float* alpha = beta + n * HV;
    float* out = alpha + n * HV;
    float* deltas = out + n * VD;  // [worker][D]

    be.rms_norm(s.x, m.placed(il).attn_norm, s.xn, n, E, c.rms_eps);
    const tensor::WeightView ws[4] = {L.qkv, L.z, L.beta, L.alpha};
    float* const ys[4] = {qkv, z, beta, alpha};
    be.matmul(ws, s.xn, n, ys);

    auto state_of = [&](int64_t r) { return m.sequence_state(il, r); };
    // Each row in order: the causal convolution (ggml_ssm_conv: taps in
    // order, FMA'd; the state keeps the newest K - 1 inputs of each
    // channel), silu, and the l2-normed q and k heads.
    for (int64_t r = 0; r < n; ++r) {
        float* x = qkv + r * C;
        float* conv_state = state_of(r);  // [C][K - 1], oldest input first
        for (int64_t ch = 0; ch < C; ++ch) {
            float* hist = conv_state + ch * (K - 1);
            const float* w = L.conv + ch * K;
            float sum = 0.0f;
            for (int64_t t = 0; t < K - 1; ++t) sum = std::fma(hist[t], w[t], sum);
            sum = std::fma(x[ch], w[K - 1], sum);
            for (int64_t t = 0; t + 1 < K - 1; ++t) hist[t] = hist[t + 1];
            hist[K - 2] = x[ch];
            x[ch] = sum;
        }
        silu_row(x, C);
        for (int64_t h = 0; h < 2 * HK; ++h) l2_norm(x + h * D, D, c.rms_eps);
    }
    // The delta rule, each value head over the rows in order (the heads are
    // independent: the same bits on any number of threads), then its gated
    // norm.
    const float q_scale = 1.0f / std::sqrt(static_cast<float>(D));
    m.pool().parallel_for(HV, [&](int64_t h0, int64_t h1, int worker) {
        float* delta = deltas + worker * D;
        for (int64_t h = h0; h < h1; ++h)
            for (int64_t r = 0; r < n; ++r) {
                const float* q = qkv + r * C + (h % HK) * D;
                const float* k = q + d.key_dim();
                const float* v = qkv + r * C + 2 * d.key_dim() + h * D;
                const float b = sigmoid(beta[r * HV + h]);
                const float g = softplus(alpha[r * HV + h] + L.dt[h]) * L.a[h];
                // M[j][i] = S[i][j] (ggml's transposed layout: rows contiguous).
                float* M = state_of(r) + d.conv_floats() + h * D * D;
                const float decay = std::exp(g);
                for (int64_t i = 0; i < D * D; ++i) M[i] *= decay;
                for (int64_t j = 0; j < D; ++j) delta[j] = (v[j] - dot_f32(M + j * D, k, D)) * b;
                for (int64_t j = 0; j < D; ++j)
                    for (int64_t i = 0; i < D; ++i)
                        M[j * D + i] = std::fma(k[i], delta[j], M[j * D + i]);
                float* o = out + r * VD + h * D;
                for (int64_t j = 0; j < D; ++j) o[j] = dot_f32(M + j * D, q, D) * q_scale;
                // The gated norm: rms_norm(o) * ssm_norm * silu(z).
                float* zh = z + r * VD + h * D;
                silu_row(zh, D);
                tensor::rms_norm(o, L.norm, o, D, c.rms_eps);
                for (int64_t j = 0; j < D; ++j) o[j] *= zh[j];
            }
    });
    be.matmul(L.out, out, n, s.tmp);
    be.add(s.x, s.tmp, n * E);
}

void qwen35_layer(Model& m, int il, backend::Compute& be, Model::Scratch& s, int64_t n,
                  int64_t n_past) {
    if (delta_net(m.config()).is_recurrent(il)) {
        delta_net_block(m, il, be, s, n);
    } else {
        gated_attention_block(m, il, be, s, n, n_past);
    }
    m.ffn_block(il, be, s, n);  // on post_attention_norm (bound as ffn_norm)
}

}  // namespace

const Architecture Architecture::qwen35{
    .names = kNames,
    .read_config = read_qwen35_config,
    .bind_layer = bind_qwen35_layer,
    .layer = qwen35_layer,
    .memory = qwen35_memory,
    .needs = qwen35_needs,
    .host_only =
        "the Gated DeltaNet layers of Qwen3.5 (short convolution, delta rule) and its "
        "gated attention are computed on the host in this version",
    .input_sites = false,
};

}  // namespace powerinfer::model
