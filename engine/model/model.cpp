#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"
#include "common/ggml_types.h"
#include "gguf/gguf.h"
#include "model/fused_matvec.h"
#include "tensor/ops.h"
#include "tensor/quant.h"

namespace powerinfer::model {
namespace {

std::string shape_string(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// Shape without trailing 1s (ggml pads shapes to 4 dims in places).
std::vector<uint64_t> squeeze(std::vector<uint64_t> shape) {
    while (shape.size() > 1 && shape.back() == 1) shape.pop_back();
    return shape;
}

// Appends one position's heads to a per-head F16 cache laid out
// [head][n_ctx][dim], so that each head's keys/values are one contiguous
// matrix the tensor kernels can stream.
void store_heads_f16(const float* src, uint16_t* cache, int64_t n_heads, int64_t n_ctx, int64_t dim,
                     int64_t pos) {
    for (int64_t h = 0; h < n_heads; ++h) {
        uint16_t* dst = cache + (h * n_ctx + pos) * dim;
        for (int64_t d = 0; d < dim; ++d) dst[d] = tensor::fp32_to_fp16(src[h * dim + d]);
    }
}

}  // namespace

Model::Model(std::shared_ptr<const gguf::GgufFile> file, tensor::ThreadPool& pool, int64_t n_ctx,
             int64_t chunk_size)
    : file_(std::move(file)), pool_(pool), cfg_(ModelConfig::from_gguf(*file_)) {
    if (n_ctx <= 0) n_ctx = cfg_.n_ctx_train;
    n_ctx_ = std::min<int64_t>(n_ctx, cfg_.n_ctx_train);
    chunk_size_ = std::max<int64_t>(1, chunk_size);
    bind_weights();

    std::vector<FfnWeights> ffn;
    ffn.reserve(layers_.size());
    for (const auto& l : layers_) ffn.push_back(l.ffn);
    dense_ffn_ = std::make_unique<DenseFfn>(pool_, std::move(ffn));
    ffn_ = dense_ffn_.get();

    k_cache_.resize(static_cast<size_t>(cfg_.n_layer));
    v_cache_.resize(static_cast<size_t>(cfg_.n_layer));
    hold_host_kv(0);

    // RoPE angles exactly as ggml computes them (float, theta *= theta_scale),
    // with llama3-style per-dimension frequency factors when present.
    const int64_t half = cfg_.n_rot / 2;
    const float* freq_factors = nullptr;
    if (const auto* t = file_->tensor("rope_freqs.weight")) {
        if (t->type != GgmlType::F32 || t->n_elements != static_cast<uint64_t>(half))
            throw EngineError("tensor 'rope_freqs.weight' must be F32 with " +
                              std::to_string(half) + " values");
        freq_factors = reinterpret_cast<const float*>(t->data);
    }
    rope_cos_.resize(static_cast<size_t>(n_ctx_ * half));
    rope_sin_.resize(rope_cos_.size());
    const float theta_scale = std::pow(cfg_.rope_freq_base, -2.0f / static_cast<float>(cfg_.n_rot));
    for (int64_t pos = 0; pos < n_ctx_; ++pos) {
        float theta = static_cast<float>(pos);
        for (int64_t i = 0; i < half; ++i) {
            const float ff = freq_factors ? freq_factors[i] : 1.0f;
            const float angle = cfg_.rope_freq_scale * (theta / ff);
            rope_cos_[static_cast<size_t>(pos * half + i)] = std::cos(angle);
            rope_sin_[static_cast<size_t>(pos * half + i)] = std::sin(angle);
            theta *= theta_scale;
        }
    }
    alloc_scratch();
}

Model::~Model() = default;

void Model::bind_weights() {
    const auto& f = *file_;
    const std::string where = f.path().string() + ": ";
    auto find = [&](const std::string& name, bool required) -> const gguf::TensorInfo* {
        const auto* t = f.tensor(name);
        if (!t && required)
            throw EngineError(where + "tensor '" + name +
                              "' is missing: the file is incomplete or " + "not a " + cfg_.arch +
                              " model");
        return t;
    };
    auto count = [&](const gguf::TensorInfo& t) {
        weight_bytes_ += static_cast<int64_t>(t.n_bytes);
    };
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows,
                      bool required = true) -> tensor::WeightView {
        const auto* t = find(name, required);
        if (!t) return {};
        const auto shape = squeeze(t->shape);
        if (shape.size() != 2 || shape[0] != static_cast<uint64_t>(cols) ||
            shape[1] != static_cast<uint64_t>(rows))
            throw EngineError(where + "tensor '" + name + "' has shape " + shape_string(t->shape) +
                              ", expected [" + std::to_string(cols) + ", " + std::to_string(rows) +
                              "] for this model's configuration: the file is corrupt");
        const auto traits = ggml_traits(t->type);
        const auto row_bytes = ggml_row_bytes(t->type, static_cast<uint64_t>(cols));
        if (!traits.supported || !row_bytes)
            throw EngineError(
                where + "tensor '" + name + "' uses type " + std::string(traits.name) +
                ", which PowerInfer Desktop cannot compute: use a model quantized "
                "as F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K or Q6_K");
        count(*t);
        tensor::WeightView w;
        w.type = t->type;
        w.data = t->data;
        w.rows = rows;
        w.cols = cols;
        w.row_bytes = static_cast<size_t>(*row_bytes);
        return w;
    };
    auto vector = [&](const std::string& name, int64_t n, bool required = true) -> const float* {
        const auto* t = find(name, required);
        if (!t) return nullptr;
        const auto shape = squeeze(t->shape);
        if (t->type != GgmlType::F32 || shape.size() != 1 || shape[0] != static_cast<uint64_t>(n))
            throw EngineError(where + "tensor '" + name + "' must be F32 of shape [" +
                              std::to_string(n) + "], found " +
                              std::string(ggml_type_name(t->type)) + " " + shape_string(t->shape) +
                              ": the file is corrupt");
        count(*t);
        return reinterpret_cast<const float*>(t->data);
    };

    const int64_t E = cfg_.n_embd;
    tok_embd_ = matrix("token_embd.weight", E, cfg_.n_vocab);
    output_norm_ = vector("output_norm.weight", E);
    output_ = matrix("output.weight", E, cfg_.n_vocab, false);
    tied_output_ = output_.data == nullptr;
    if (tied_output_) output_ = tok_embd_;

    layers_.resize(static_cast<size_t>(cfg_.n_layer));
    for (int64_t il = 0; il < cfg_.n_layer; ++il) {
        auto& L = layers_[static_cast<size_t>(il)];
        const std::string b = "blk." + std::to_string(il) + ".";
        L.attn_norm = vector(b + "attn_norm.weight", E);
        L.q = matrix(b + "attn_q.weight", E, cfg_.q_dim());
        L.k = matrix(b + "attn_k.weight", E, cfg_.kv_dim());
        L.v = matrix(b + "attn_v.weight", E, cfg_.v_dim());
        L.o = matrix(b + "attn_output.weight", cfg_.n_head * cfg_.head_dim_v, E);
        // Biases are optional in llama files and required by qwen2.
        L.q_bias = vector(b + "attn_q.bias", cfg_.q_dim(), cfg_.qkv_bias);
        L.k_bias = vector(b + "attn_k.bias", cfg_.kv_dim(), cfg_.qkv_bias);
        L.v_bias = vector(b + "attn_v.bias", cfg_.v_dim(), cfg_.qkv_bias);
        if (cfg_.qk_norm) {
            L.q_norm = vector(b + "attn_q_norm.weight", cfg_.head_dim);
            L.k_norm = vector(b + "attn_k_norm.weight", cfg_.head_dim);
        }
        if (f.tensor(b + "attn_output.bias"))
            throw EngineError(where + "tensor '" + b +
                              "attn_output.bias' is not part of the supported architectures");
        L.ffn_norm = vector(b + "ffn_norm.weight", E);
        L.ffn.gate = matrix(b + "ffn_gate.weight", E, cfg_.n_ff);
        L.ffn.up = matrix(b + "ffn_up.weight", E, cfg_.n_ff);
        L.ffn.down = matrix(b + "ffn_down.weight", cfg_.n_ff, E);
    }
    for (const auto& t : f.tensors()) n_params_ += static_cast<int64_t>(t.n_elements);
    qkv_fused_ = true;
    for (const auto& L : layers_) {
        const tensor::WeightView ws[3] = {L.q, L.k, L.v};
        qkv_fused_ = qkv_fused_ && can_fuse(ws);
    }
}

void Model::alloc_scratch() {
    const auto B = static_cast<size_t>(chunk_size_);
    x_.assign(B * static_cast<size_t>(cfg_.n_embd), 0.0f);
    xn_.assign(x_.size(), 0.0f);
    tmp_.assign(x_.size(), 0.0f);
    q_.assign(B * static_cast<size_t>(cfg_.q_dim()), 0.0f);
    k_.assign(B * static_cast<size_t>(cfg_.kv_dim()), 0.0f);
    v_.assign(B * static_cast<size_t>(cfg_.v_dim()), 0.0f);
    attn_.assign(B * static_cast<size_t>(cfg_.n_head * cfg_.head_dim_v), 0.0f);
    scores_.assign(static_cast<size_t>(pool_.size()) * static_cast<size_t>(n_ctx_), 0.0f);
    head_q16_.assign(static_cast<size_t>(pool_.size() * cfg_.head_dim), 0);
    mix_scratch_.assign(
        static_cast<size_t>(pool_.size() * tensor::mix_f16_scratch_floats(cfg_.head_dim_v)), 0.0f);
}

void Model::set_ffn_executor(FfnExecutor* executor) {
    ffn_ = executor ? executor : dense_ffn_.get();
}

void Model::set_layer_executor(LayerExecutor* executor) {
    layer_exec_ = executor;
    hold_host_kv(executor ? std::clamp(executor->n_layers(), 0, static_cast<int>(cfg_.n_layer))
                          : 0);
}

// Keeps the host KV cache of layers [first_layer, n_layer) only: the layers
// before it run on the layer executor, with their cache on its device.
void Model::hold_host_kv(int first_layer) {
    // F16 like llama.cpp's default cache: half the memory of F32, and the
    // same rounding the reference applies.
    const size_t kv = static_cast<size_t>(n_ctx_ * cfg_.kv_dim());
    const size_t vv = static_cast<size_t>(n_ctx_ * cfg_.v_dim());
    for (size_t il = 0; il < k_cache_.size(); ++il) {
        if (static_cast<int>(il) < first_layer) {
            std::vector<uint16_t>().swap(k_cache_[il]);  // clear() would keep the memory
            std::vector<uint16_t>().swap(v_cache_[il]);
        } else if (k_cache_[il].size() != kv || v_cache_[il].size() != vv) {
            k_cache_[il].assign(kv, 0);
            v_cache_[il].assign(vv, 0);
        }
    }
    kv_first_layer_ = first_layer;
}

void Model::set_chunk_size(int64_t chunk_size) {
    chunk_size = std::max<int64_t>(1, chunk_size);
    if (chunk_size == chunk_size_) return;
    chunk_size_ = chunk_size;
    alloc_scratch();
}

int64_t Model::kv_cache_bytes() const {
    int64_t halves = 0;
    for (size_t il = 0; il < k_cache_.size(); ++il)
        halves += static_cast<int64_t>(k_cache_[il].size() + v_cache_[il].size());
    return halves * static_cast<int64_t>(sizeof(uint16_t));
}

const float* Model::last_hidden() const { return x_.data(); }

void Model::forward(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits,
                    float* logits) {
    if (n <= 0) return;
    if (n_past < 0 || n_past + n > n_ctx_)
        throw EngineError("positions " + std::to_string(n_past) + ".." +
                          std::to_string(n_past + n - 1) + " exceed the context of " +
                          std::to_string(n_ctx_) + " tokens");
    for (int64_t i = 0; i < n; ++i)
        if (tokens[i] < 0 || tokens[i] >= cfg_.n_vocab)
            throw EngineError("token id " + std::to_string(tokens[i]) +
                              " is outside the vocabulary of " + std::to_string(cfg_.n_vocab));
    n_logits = std::clamp<int64_t>(n_logits, 0, n);
    const int64_t first_logit = n - n_logits;  // global index of the first token with logits
    for (int64_t start = 0; start < n; start += chunk_size_) {
        const int64_t m = std::min(chunk_size_, n - start);
        const int64_t from = std::clamp<int64_t>(first_logit - start, 0, m);
        float* out =
            logits ? logits + std::max<int64_t>(0, start - first_logit) * cfg_.n_vocab : nullptr;
        forward_chunk(tokens + start, m, n_past + start, from, out);
    }
}

// Evaluates one chunk; logits for its rows [logits_from, n) go to `logits`.
void Model::forward_chunk(const int32_t* tokens, int64_t n, int64_t n_past, int64_t logits_from,
                          float* logits) {
    const int64_t E = cfg_.n_embd;
    const float eps = cfg_.rms_eps;
    float* x = x_.data();
    float* xn = xn_.data();
    for (int64_t i = 0; i < n; ++i)
        tensor::dequantize_row(tok_embd_.type, tok_embd_.row(tokens[i]), x + i * E, E);

    // One quantized copy of the normalised input serves q, k and v when their
    // activation formats agree (the common case).
    auto project = [&](const tensor::WeightView& w, const float* in, float* out) {
        if (n > 1) {
            tensor::matmul(pool_, w, in, n, out);
            return;
        }
        if (xq_.n != w.cols || xq_.type != tensor::vec_dot_type(w.type))
            tensor::quantize_activations(w.type, in, w.cols, xq_);
        tensor::matvec_q(pool_, w, xq_, out);
    };
    auto add_bias = [&](float* y, const float* bias, int64_t dim) {
        if (!bias) return;
        for (int64_t i = 0; i < n; ++i) tensor::add(y + i * dim, bias, dim);
    };

    const int64_t half = cfg_.n_rot / 2;
    auto rope = [&](float* head, int64_t pos) {
        const float* c = rope_cos_.data() + pos * half;
        const float* s = rope_sin_.data() + pos * half;
        // As ggml's rotate_pairs compiled with FMA contraction (how
        // llama.cpp ships on x86): the first product fused, the second not.
        const int64_t stride = cfg_.rope_style == RopeStyle::Normal ? 2 : 1;
        const int64_t other = cfg_.rope_style == RopeStyle::Normal ? 1 : half;
        for (int64_t i = 0; i < half; ++i) {
            float* p = head + i * stride;
            const float x0 = p[0], x1 = p[other];
            p[0] = std::fma(x0, c[i], -(x1 * s[i]));
            p[other] = std::fma(x0, s[i], x1 * c[i]);
        }
    };

    const int64_t qd = cfg_.q_dim(), kd = cfg_.kv_dim(), vd = cfg_.v_dim(), hd = cfg_.head_dim;
    // Layer offload: the executor runs the first layers (calling back into
    // ffn_ when it runs attention only), the rest run here.
    int first_layer = 0;
    if (layer_exec_ && layer_exec_->n_layers() > 0) {
        layer_exec_->run_layers(x, n, n_past, *ffn_);
        first_layer = layer_exec_->n_layers();
    }
    if (first_layer != kv_first_layer_) hold_host_kv(first_layer);  // it took more or fewer
    for (int il = first_layer; il < static_cast<int>(cfg_.n_layer); ++il) {
        const LayerWeights& L = layers_[static_cast<size_t>(il)];
        for (int64_t i = 0; i < n; ++i)
            tensor::rms_norm(x + i * E, L.attn_norm, xn + i * E, E, eps);
        xq_.n = 0;  // xn changed: the quantized copy is stale
        if (n == 1 && qkv_fused_) {
            const tensor::WeightView ws[3] = {L.q, L.k, L.v};
            float* const ys[3] = {q_.data(), k_.data(), v_.data()};
            tensor::quantize_activations(L.q.type, xn, E, xq_);
            matvec_fused(pool_, ws, ys, xq_);
        } else {
            project(L.q, xn, q_.data());
            project(L.k, xn, k_.data());
            project(L.v, xn, v_.data());
        }
        add_bias(q_.data(), L.q_bias, qd);
        add_bias(k_.data(), L.k_bias, kd);
        add_bias(v_.data(), L.v_bias, vd);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t pos = n_past + i;
            for (int64_t h = 0; h < cfg_.n_head; ++h) {
                float* qh = q_.data() + i * qd + h * hd;
                if (L.q_norm) tensor::rms_norm(qh, L.q_norm, qh, hd, eps);
                rope(qh, pos);
            }
            for (int64_t h = 0; h < cfg_.n_head_kv; ++h) {
                float* kh = k_.data() + i * kd + h * hd;
                if (L.k_norm) tensor::rms_norm(kh, L.k_norm, kh, hd, eps);
                rope(kh, pos);
            }
            store_heads_f16(k_.data() + i * kd, k_cache_[static_cast<size_t>(il)].data(),
                            cfg_.n_head_kv, n_ctx_, hd, pos);
            store_heads_f16(v_.data() + i * vd, v_cache_[static_cast<size_t>(il)].data(),
                            cfg_.n_head_kv, n_ctx_, cfg_.head_dim_v, pos);
        }
        attention(il, n, n_past);
        xq_.n = 0;
        project(L.o, attn_.data(), tmp_.data());
        tensor::add(x, tmp_.data(), n * E);

        for (int64_t i = 0; i < n; ++i) tensor::rms_norm(x + i * E, L.ffn_norm, xn + i * E, E, eps);
        ffn_->run(il, xn, n, tmp_.data());
        tensor::add(x, tmp_.data(), n * E);
    }
    for (int64_t i = 0; i < n; ++i) ffn_->end_token();

    const int64_t n_out = n - logits_from;
    if (n_out <= 0 || !logits) return;
    if (layer_exec_ && layer_exec_->runs_output()) {
        layer_exec_->run_output(x + logits_from * E, n_out, logits);
        return;
    }
    for (int64_t i = logits_from; i < n; ++i)
        tensor::rms_norm(x + i * E, output_norm_, xn + (i - logits_from) * E, E, eps);
    if (n_out == 1) {
        tensor::matvec(pool_, output_, xn, logits);
    } else {
        tensor::matmul(pool_, output_, xn, n_out, logits);
    }
}

// Causal attention of the chunk's queries over the cache (which already holds
// the chunk's own keys/values), parallel over (token, head) pairs.
void Model::attention(int il, int64_t n, int64_t n_past) {
    struct Job {
        Model* m;
        int il;
        int64_t n_past;
        bool batched;  // ggml multiplies 2+ tokens in another order than one
    } job{this, il, n_past, n > 1};
    const int64_t n_head = cfg_.n_head;
    pool_.parallel_for(n * n_head, [&job](int64_t begin, int64_t end, int worker) {
        Model& m = *job.m;
        const ModelConfig& c = m.cfg_;
        const int64_t hd = c.head_dim, hdv = c.head_dim_v;
        const int64_t group = c.n_head / c.n_head_kv;
        const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
        const uint16_t* K = m.k_cache_[static_cast<size_t>(job.il)].data();
        const uint16_t* V = m.v_cache_[static_cast<size_t>(job.il)].data();
        float* scores = m.scores_.data() + static_cast<size_t>(worker) * m.n_ctx_;
        for (int64_t item = begin; item < end; ++item) {
            const int64_t i = item / c.n_head, h = item % c.n_head;
            const int64_t g = h / group;
            const int64_t n_keys = job.n_past + i + 1;
            // q in F16 like the cache (ggml converts it for the product).
            uint16_t* qh = m.head_q16_.data() + static_cast<size_t>(worker) * hd;
            const float* q = m.q_.data() + i * c.q_dim() + h * hd;
            for (int64_t d = 0; d < hd; ++d) qh[d] = tensor::fp32_to_fp16(q[d]);
            tensor::scores_f16(K + g * m.n_ctx_ * hd, n_keys, hd, qh, scale, job.batched, scores);
            tensor::softmax(scores, n_keys);
            // The probabilities enter the product with V as F16, as in ggml.
            for (int64_t t = 0; t < n_keys; ++t)
                scores[t] = tensor::fp16_to_fp32(tensor::fp32_to_fp16(scores[t]));
            float* out = m.attn_.data() + i * (c.n_head * hdv) + h * hdv;
            tensor::mix_f16(scores, V + g * m.n_ctx_ * hdv, n_keys, hdv, hdv, job.batched, out,
                            m.mix_scratch_.data() +
                                static_cast<size_t>(worker) *
                                    static_cast<size_t>(tensor::mix_f16_scratch_floats(hdv)));
        }
    });
}

}  // namespace powerinfer::model
