#include "model/moe_ffn.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <span>

#include "common/error.h"
#include "model/moe_offload.h"
#include "model/moe_router.h"

namespace powerinfer::model {
namespace {

// ggml's exp polynomial (ggml_v_expf) and 16-lane reduction, shared with the
// CPU kernels' softmax.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
inline void gm_h2f_row(const uint16_t* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = tensor::fp16_to_fp32(src[i]);
}
#include "tensor/ggml_math.inc"
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

// ggml_compute_forward_soft_max_f32 on one row of n (no mask, scale 1):
// 16-lane blocks with ggml's exp, each block's sum added to a double, the
// tail with expf, then one multiplication by 1/sum.
void router_softmax(float* x, int64_t n) {
    float max = -INFINITY;
    for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
    double sum = 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        float v[16];
        for (int l = 0; l < 16; ++l) v[l] = gm_expf(x[i + l] - max);
        for (int l = 0; l < 16; ++l) x[i + l] = v[l];
        sum += static_cast<double>(gm_reduce16(v));
    }
    for (; i < n; ++i) {
        const float v = std::exp(x[i] - max);
        sum += static_cast<double>(v);
        x[i] = v;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

// Below this many router weight bytes the router runs on the calling thread.
constexpr int64_t kMinParallelRouterBytes = 64 * 1024;

}  // namespace

void route_tokens(tensor::ThreadPool& pool, const ModelConfig& cfg, const MoeWeights& w,
                  const float* x, int64_t n, std::vector<float>& logits, Routing& out) {
    const int64_t NE = cfg.n_expert, K = cfg.n_expert_used, E = cfg.n_embd;
    logits.resize(static_cast<size_t>(n * NE));
    if (w.router.type == GgmlType::F32) {
        const auto* rw = reinterpret_cast<const float*>(w.router.data);
        const bool batched = n > 1;
        auto rows = [&](int64_t begin, int64_t end, int) {
            for (int64_t item = begin; item < end; ++item) {
                const int64_t t = item / NE, r = item % NE;
                router_rows_f32(rw, E, r, r + 1, x + t * E, batched, logits.data() + t * NE);
            }
        };
        if (pool.size() > 1 && n * NE * E * 4 >= kMinParallelRouterBytes) {
            pool.parallel_for(n * NE, rows, 4);
        } else {
            rows(0, n * NE, 0);
        }
    } else {
        tensor::matmul(pool, w.router, x, n, logits.data());
    }

    out.experts.resize(static_cast<size_t>(n * K));
    out.weights.resize(static_cast<size_t>(n * K));
    std::vector<int32_t> order(static_cast<size_t>(NE));
    for (int64_t t = 0; t < n; ++t) {
        float* probs = logits.data() + t * NE;
        router_softmax(probs, NE);
        // ggml_argsort_top_k: descending by probability.
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [probs](int32_t a, int32_t b) { return probs[a] > probs[b]; });
        int32_t* sel = out.experts.data() + t * K;
        float* wt = out.weights.data() + t * K;
        for (int64_t j = 0; j < K; ++j) {
            sel[j] = order[static_cast<size_t>(j)];
            wt[j] = probs[sel[j]];
        }
        if (cfg.expert_weights_norm) {
            // ggml_sum_rows sums in double; the sum is clamped to F16's
            // smallest normal, as llama.cpp does against a division by zero.
            double s = 0;
            for (int64_t j = 0; j < K; ++j) s += static_cast<double>(wt[j]);
            const float sum = std::max(static_cast<float>(s), 6.103515625e-5f);
            for (int64_t j = 0; j < K; ++j) wt[j] = wt[j] / sum;
        }
        const float scale = cfg.expert_weights_scale;
        if (scale != 0.0f && scale != 1.0f)
            for (int64_t j = 0; j < K; ++j) wt[j] *= scale;
    }
}

MoeFfn::MoeFfn(tensor::ThreadPool& pool, const ModelConfig& cfg, std::vector<MoeWeights> layers)
    : pool_(pool), cfg_(cfg), layers_(std::move(layers)) {
    if (!cfg_.moe()) throw EngineError("MoeFfn needs a mixture-of-experts model");
    counts_.assign(layers_.size(), std::vector<int64_t>(static_cast<size_t>(cfg_.n_expert), 0));
    const size_t K = static_cast<size_t>(cfg_.n_expert_used);
    compute_ = backend::make_cpu_compute(pool_);
    down_.resize(K * static_cast<size_t>(cfg_.n_embd));
    decode_ffns_.reserve(K);
    decode_outs_.reserve(K);
    host_slots_.reserve(K);
    slots_.resize(static_cast<size_t>(cfg_.n_expert));
    for (int i = 0; i < pool_.size(); ++i) {
        solo_.push_back(std::make_unique<tensor::ThreadPool>(1));
        solo_compute_.push_back(backend::make_cpu_compute(*solo_.back()));
    }
    rows_.resize(static_cast<size_t>(pool_.size()));
    worker_experts_.resize(static_cast<size_t>(pool_.size()));
}

void MoeFfn::reset_counts() {
    for (auto& c : counts_) std::fill(c.begin(), c.end(), 0);
}

void MoeFfn::run(int layer, const float* x, int64_t n_tokens, float* out) {
    if (n_tokens <= 0) return;
    const MoeWeights& w = layers_.at(static_cast<size_t>(layer));
    if (offload_ && layer == 0) offload_->begin_token(n_tokens);
    route_tokens(pool_, cfg_, w, x, n_tokens, logits_, routing_);
    auto& counts = counts_[static_cast<size_t>(layer)];
    for (int32_t e : routing_.experts) ++counts[static_cast<size_t>(e)];
    if (offload_) offload_->route(layer, routing_, n_tokens);
    if (n_tokens == 1) {
        decode(layer, w, x, out);
    } else {
        prefill(layer, w, x, n_tokens, out);
    }
    if (w.shared_gate_inp.data) add_shared_expert(w, x, n_tokens, out);
    if (offload_) offload_->after_layer(layer, x, n_tokens);
}

// As llama.cpp's qwen2moe graph: the gate logit through the router's
// product, its sigmoid as silu(l) / l (or the architecture's own gate,
// ModelConfig::shared_gate), the shared FFN as build_ffn computes it (gate
// and up, SwiGLU per row, down), scaled, then added to the routed experts'
// sum.
void MoeFfn::add_shared_expert(const MoeWeights& w, const float* x, int64_t n, float* out) {
    const int64_t E = cfg_.n_embd;
    shared_.resize(static_cast<size_t>(n * (E + 1)));
    float* logit = shared_.data();
    float* Y = logit + n;
    if (w.shared_gate_inp.type == GgmlType::F32) {
        // A one-row product: ggml's vector dot even inside a batch (tinyBLAS
        // order here moves llama.cpp's logits in the last bits; the
        // fixtures hold with this one).
        const auto* gw = reinterpret_cast<const float*>(w.shared_gate_inp.data);
        for (int64_t t = 0; t < n; ++t) router_rows_f32(gw, E, 0, 1, x + t * E, false, logit + t);
    } else {
        tensor::matmul(pool_, w.shared_gate_inp, x, n, logit);
    }
    compute_->gated_ffn(backend::GatedFfnWeights{w.shared_gate, w.shared_up, w.shared_down}, x, n, Y);
    for (int64_t t = 0; t < n; ++t) {
        const float l = logit[t];
        const float silu = l / (1.0f + std::exp(-l));  // ggml_silu_f32
        const float gate = cfg_.shared_gate ? cfg_.shared_gate(l) : silu / l;
        for (int64_t r = 0; r < E; ++r) {
            const float term = Y[t * E + r] * gate;
            out[t * E + r] = out[t * E + r] + term;
        }
    }
}

// One token: the host experts as one call of the gated FFN op (their gate
// and up rows in one dispatch over one quantized copy of x, then their down
// rows in another), then the weighted sum. Experts on the device (offload_)
// are enqueued there first and run while the CPU computes the others; their
// outputs land in the same rows of down_.
void MoeFfn::decode(int layer, const MoeWeights& w, const float* x, float* out) {
    const int64_t K = cfg_.n_expert_used, E = cfg_.n_embd;
    host_slots_.clear();
    bool any_device = false;
    for (int64_t j = 0; j < K; ++j) {
        const int32_t e = routing_.experts[static_cast<size_t>(j)];
        if (offload_ && offload_->on_device(layer, e)) {
            offload_->run(layer, e, x, 1, down_.data() + j * E);
            any_device = true;
        } else {
            host_slots_.push_back(static_cast<int32_t>(j));
        }
    }
    decode_ffns_.clear();
    decode_outs_.clear();
    for (int32_t j : host_slots_) {
        const int32_t e = routing_.experts[static_cast<size_t>(j)];
        decode_ffns_.push_back({w.gate.expert(e), w.up.expert(e), w.down.expert(e)});
        decode_outs_.push_back(down_.data() + j * E);
    }
    compute_->gated_ffn(decode_ffns_, x, 1, decode_outs_);
    if (any_device) offload_->synchronize();
    // Weighted (each product rounded), then summed in slot order, as ggml's
    // mul and chain of adds.
    const float* wt = routing_.weights.data();
    for (int64_t r = 0; r < E; ++r) {
        float acc = down_[static_cast<size_t>(r)] * wt[0];
        for (int64_t j = 1; j < K; ++j) {
            const float term = down_[static_cast<size_t>(j * E + r)] * wt[j];
            acc = acc + term;
        }
        out[r] = acc;
    }
}

// 2+ tokens: each routed expert once over the tokens routed to it (their
// rows gathered), its outputs scattered back per (token, slot), then the
// weighted sum per token in slot order. Experts with a large share of the
// batch use the whole pool one after the other; the others run side by
// side, one worker each, balanced by their token counts (a product of a
// few rows is too small to split).
void MoeFfn::prefill(int layer, const MoeWeights& w, const float* x, int64_t n, float* out) {
    const int64_t K = cfg_.n_expert_used, E = cfg_.n_embd;
    for (auto& s : slots_) s.clear();
    for (int64_t t = 0; t < n; ++t)
        for (int64_t j = 0; j < K; ++j)
            slots_[static_cast<size_t>(routing_.experts[static_cast<size_t>(t * K + j)])].push_back(
                static_cast<int32_t>(t * K + j));
    slot_out_.resize(static_cast<size_t>(n * K * E));
    const int workers = pool_.size();
    std::vector<int32_t> small, large;
    device_experts_.clear();
    for (int64_t e = 0; e < cfg_.n_expert; ++e) {
        const int64_t m = static_cast<int64_t>(slots_[static_cast<size_t>(e)].size());
        if (m == 0) continue;
        if (offload_ && offload_->on_device(layer, static_cast<int32_t>(e))) {
            device_experts_.push_back(static_cast<int32_t>(e));
        } else if (workers == 1 || m * workers > n * K) {
            large.push_back(static_cast<int32_t>(e));
        } else {
            small.push_back(static_cast<int32_t>(e));
        }
    }
    // The device's experts first (a GPU runs them while the CPU does the rest).
    if (!device_experts_.empty()) run_device_experts(layer, x, device_experts_);
    for (int32_t e : large) run_expert(*compute_, w, e, x, rows_[0]);
    if (!small.empty()) {
        // Longest first onto the least loaded worker.
        std::stable_sort(small.begin(), small.end(), [&](int32_t a, int32_t b) {
            return slots_[static_cast<size_t>(a)].size() > slots_[static_cast<size_t>(b)].size();
        });
        std::vector<int64_t> load(static_cast<size_t>(workers), 0);
        for (auto& l : worker_experts_) l.clear();
        for (int32_t e : small) {
            const size_t i =
                static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
            worker_experts_[i].push_back(e);
            load[i] += static_cast<int64_t>(slots_[static_cast<size_t>(e)].size());
        }
        pool_.parallel_for(
            workers,
            [&](int64_t begin, int64_t end, int) {
                for (int64_t i = begin; i < end; ++i)
                    for (int32_t e : worker_experts_[static_cast<size_t>(i)])
                        run_expert(*solo_compute_[static_cast<size_t>(i)], w, e, x,
                                   rows_[static_cast<size_t>(i)]);
            },
            1);
    }
    if (!device_experts_.empty()) finish_device_experts();
    for (int64_t t = 0; t < n; ++t) {
        const float* wt = routing_.weights.data() + t * K;
        const float* y = slot_out_.data() + t * K * E;
        float* o = out + t * E;
        for (int64_t r = 0; r < E; ++r) {
            float acc = y[r] * wt[0];
            for (int64_t j = 1; j < K; ++j) {
                const float term = y[j * E + r] * wt[j];
                acc = acc + term;
            }
            o[r] = acc;
        }
    }
}

// Gathers each device expert's rows and enqueues them there in groups that
// fit the offload's scratch; finish_device_experts() waits for the last
// group and scatters the outputs per (token, slot).
void MoeFfn::run_device_experts(int layer, const float* x, const std::vector<int32_t>& experts) {
    const int64_t K = cfg_.n_expert_used, E = cfg_.n_embd;
    const int64_t cap = offload_->rows_left();
    dev_x_.resize(static_cast<size_t>(cap * E));
    dev_y_.resize(static_cast<size_t>(cap * E));
    dev_slots_.clear();
    for (int32_t e : experts) {
        const std::vector<int32_t>& s = slots_[static_cast<size_t>(e)];
        for (size_t begin = 0; begin < s.size();) {
            if (offload_->rows_left() == 0) finish_device_experts();
            const size_t m = std::min(s.size() - begin, static_cast<size_t>(offload_->rows_left()));
            const size_t row0 = dev_slots_.size();
            for (size_t i = 0; i < m; ++i) {
                dev_slots_.push_back(s[begin + i]);
                std::memcpy(dev_x_.data() + (row0 + i) * static_cast<size_t>(E),
                            x + (s[begin + i] / K) * E, static_cast<size_t>(E) * sizeof(float));
            }
            offload_->run(layer, e, dev_x_.data() + row0 * static_cast<size_t>(E),
                          static_cast<int64_t>(m), dev_y_.data() + row0 * static_cast<size_t>(E));
            begin += m;
        }
    }
}

void MoeFfn::finish_device_experts() {
    const int64_t E = cfg_.n_embd;
    offload_->synchronize();
    for (size_t i = 0; i < dev_slots_.size(); ++i)
        std::memcpy(slot_out_.data() + static_cast<size_t>(dev_slots_[i]) * E,
                    dev_y_.data() + i * static_cast<size_t>(E),
                    static_cast<size_t>(E) * sizeof(float));
    dev_slots_.clear();
}

void MoeFfn::run_expert(backend::Compute& compute, const MoeWeights& w, int64_t e, const float* x,
                        std::vector<float>& rows) {
    const int64_t K = cfg_.n_expert_used, E = cfg_.n_embd;
    const std::vector<int32_t>& s = slots_[static_cast<size_t>(e)];
    const int64_t m = static_cast<int64_t>(s.size());
    // [m][E] inputs, then [m][E] outputs.
    rows.resize(static_cast<size_t>(m * 2 * E));
    float* X = rows.data();
    float* Y = X + m * E;
    for (int64_t i = 0; i < m; ++i)
        std::memcpy(X + i * E, x + (s[static_cast<size_t>(i)] / K) * E,
                    static_cast<size_t>(E) * sizeof(float));
    compute.gated_ffn(backend::GatedFfnWeights{w.gate.expert(e), w.up.expert(e), w.down.expert(e)},
                      X, m, Y);
    for (int64_t i = 0; i < m; ++i)
        std::memcpy(slot_out_.data() + static_cast<size_t>(s[static_cast<size_t>(i)]) * E,
                    Y + i * E, static_cast<size_t>(E) * sizeof(float));
}

}  // namespace powerinfer::model
