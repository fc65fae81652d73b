#include "calibrate/predictor_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "tensor/matmul.h"
#include "tensor/quant.h"

namespace powerinfer::calibrate {
namespace {

// Row-major transpose: src [rows][cols] -> dst [cols][rows].
void transpose(const float* src, int64_t rows, int64_t cols, float* dst) {
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
    }
}

tensor::WeightView f32_view(const float* data, int64_t rows, int64_t cols) {
    return {GgmlType::F32, reinterpret_cast<const uint8_t*>(data), rows, cols,
            static_cast<size_t>(cols) * 4};
}

struct Adam {
    std::vector<float> m, v;
    explicit Adam(size_t n) : m(n, 0.0f), v(n, 0.0f) {}
    void step(float* w, const float* g, size_t n, float lr, int t) {
        const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
        const float c1 = 1.0f - std::pow(b1, float(t)), c2 = 1.0f - std::pow(b2, float(t));
        for (size_t i = 0; i < n; ++i) {
            m[i] = b1 * m[i] + (1 - b1) * g[i];
            v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
            w[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
        }
    }
};

}  // namespace

Trained PredictorTrainer::train(int64_t r, uint64_t seed) {
    Trained t;
    t.rank = r;
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    t.w1.resize(static_cast<size_t>(r * d_));
    t.w2.resize(static_cast<size_t>(n_ * r));
    for (auto& v : t.w1) v = nd(rng) * std::sqrt(2.0f / float(d_));
    for (auto& v : t.w2) v = nd(rng) * std::sqrt(1.0f / float(r));
    t.b1.assign(static_cast<size_t>(r), 0.0f);
    // Start each output at its base rate's logit.
    t.b2.resize(static_cast<size_t>(n_));
    for (int64_t j = 0; j < n_; ++j) {
        double p = 0;
        for (int64_t s : train_) p += Y_[static_cast<size_t>(s * n_ + j)];
        p = std::clamp(p / double(train_.size()), 1e-3, 1 - 1e-3);
        t.b2[static_cast<size_t>(j)] = static_cast<float>(std::log(p / (1 - p)));
    }
    const int64_t B = 128;
    Adam a1(t.w1.size()), ab1(t.b1.size()), a2(t.w2.size()), ab2(t.b2.size());
    std::vector<float> Xb(static_cast<size_t>(B * d_)), XbT(Xb.size()),
        H(static_cast<size_t>(B * r)), HT(H.size()), Z(static_cast<size_t>(B * n_)), dZT(Z.size()),
        dH(H.size()), dHT(H.size()), W2T(t.w2.size()), gW1(t.w1.size()), gW2(t.w2.size()),
        gb1(t.b1.size()), gb2(t.b2.size());
    const float pos_w = kPositiveWeight;
    std::vector<int64_t> order = train_;
    int step = 0;
    for (int epoch = 0; epoch < opt_.epochs; ++epoch) {
        std::shuffle(order.begin(), order.end(), rng);
        const float lr = 2e-3f * (epoch + 1 == opt_.epochs ? 0.3f : 1.0f);
        for (size_t s0 = 0; s0 + static_cast<size_t>(B) <= order.size();
             s0 += static_cast<size_t>(B)) {
            for (int64_t b = 0; b < B; ++b) {
                std::memcpy(Xb.data() + b * d_, X_.data() + order[s0 + static_cast<size_t>(b)] * d_,
                            static_cast<size_t>(d_) * 4);
            }
            forward(t, Xb.data(), B, H.data(), Z.data());
            // dZ = weighted BCE gradient / B, stored transposed [n][B].
            std::fill(gb2.begin(), gb2.end(), 0.0f);
            for (int64_t b = 0; b < B; ++b) {
                const uint8_t* y = Y_.data() + order[s0 + static_cast<size_t>(b)] * n_;
                for (int64_t j = 0; j < n_; ++j) {
                    const float p = 1.0f / (1.0f + std::exp(-Z[static_cast<size_t>(b * n_ + j)]));
                    const float g = (y[j] ? pos_w * (p - 1.0f) : p) / float(B);
                    dZT[static_cast<size_t>(j * B + b)] = g;
                    gb2[static_cast<size_t>(j)] += g;
                }
            }
            transpose(H.data(), B, r, HT.data());
            // gW2[n][r] = dZ^T H
            tensor::matmul(pool_, f32_view(HT.data(), r, B), dZT.data(), n_, gW2.data());
            // dH[B][r] = dZ W2
            transpose(t.w2.data(), n_, r, W2T.data());
            std::vector<float>& dZ = Z;  // reuse: dZ in [B][n]
            transpose(dZT.data(), n_, B, dZ.data());
            tensor::matmul(pool_, f32_view(W2T.data(), r, n_), dZ.data(), B, dH.data());
            std::fill(gb1.begin(), gb1.end(), 0.0f);
            for (int64_t i = 0; i < B * r; ++i) {
                if (H[static_cast<size_t>(i)] <= 0) dH[static_cast<size_t>(i)] = 0;
                gb1[static_cast<size_t>(i % r)] += dH[static_cast<size_t>(i)];
            }
            transpose(dH.data(), B, r, dHT.data());
            transpose(Xb.data(), B, d_, XbT.data());
            // gW1[r][d] = dH^T X
            tensor::matmul(pool_, f32_view(XbT.data(), d_, B), dHT.data(), r, gW1.data());
            ++step;
            a1.step(t.w1.data(), gW1.data(), t.w1.size(), lr, step);
            ab1.step(t.b1.data(), gb1.data(), t.b1.size(), lr, step);
            a2.step(t.w2.data(), gW2.data(), t.w2.size(), lr, step);
            ab2.step(t.b2.data(), gb2.data(), t.b2.size(), lr, step);
        }
    }
    evaluate(t, 0.0f);
    return t;
}

// Held-out recall/precision with logits shifted by `shift`.
void PredictorTrainer::evaluate(Trained& t, float shift) {
    const float thr = opt_.predictor_threshold;
    const float cut = std::log(thr / (1 - thr)) - shift;
    const int64_t B = static_cast<int64_t>(hold_.size());
    std::vector<float> Xb(static_cast<size_t>(B * d_)), H(static_cast<size_t>(B * t.rank)),
        Z(static_cast<size_t>(B * n_));
    for (int64_t b = 0; b < B; ++b) {
        std::memcpy(Xb.data() + b * d_, X_.data() + hold_[static_cast<size_t>(b)] * d_,
                    static_cast<size_t>(d_) * 4);
    }
    forward(t, Xb.data(), B, H.data(), Z.data());
    double tp = 0, fp = 0, fn = 0;
    for (int64_t b = 0; b < B; ++b) {
        const uint8_t* y = Y_.data() + hold_[static_cast<size_t>(b)] * n_;
        for (int64_t j = 0; j < n_; ++j) {
            const bool p = Z[static_cast<size_t>(b * n_ + j)] > cut;
            tp += p && y[j];
            fp += p && !y[j];
            fn += !p && y[j];
        }
    }
    t.recall = tp + fn > 0 ? tp / (tp + fn) : 1.0;
    t.precision = tp + fp > 0 ? tp / (tp + fp) : 1.0;
    t.active = (tp + fp) / double(B * n_);
}

// The smallest uniform logit shift that brings held-out recall to target.
float PredictorTrainer::recall_shift(Trained& t, double target) {
    evaluate(t, 0.0f);
    if (t.recall >= target) return 0.0f;
    float lo = 0.0f, hi = 1.0f;
    for (; hi < 64.0f; hi *= 2) {
        evaluate(t, hi);
        if (t.recall >= target) break;
    }
    for (int it = 0; it < 12; ++it) {
        const float mid = 0.5f * (lo + hi);
        evaluate(t, mid);
        (t.recall >= target ? hi : lo) = mid;
    }
    evaluate(t, hi);
    return hi;
}

void PredictorTrainer::forward(const Trained& t, const float* X, int64_t B, float* H, float* Z) {
    tensor::matmul(pool_, f32_view(t.w1.data(), t.rank, d_), X, B, H);
    for (int64_t i = 0; i < B * t.rank; ++i)
        H[i] = std::max(0.0f, H[i] + t.b1[static_cast<size_t>(i % t.rank)]);
    tensor::matmul(pool_, f32_view(t.w2.data(), n_, t.rank), H, B, Z);
    for (int64_t i = 0; i < B * n_; ++i) Z[i] += t.b2[static_cast<size_t>(i % n_)];
}

std::vector<uint8_t> pack(const std::vector<float>& v, bool f16) {
    std::vector<uint8_t> out(v.size() * (f16 ? 2 : 4));
    if (f16) {
        for (size_t i = 0; i < v.size(); ++i) {
            const uint16_t h = tensor::fp32_to_fp16(v[i]);
            std::memcpy(out.data() + 2 * i, &h, 2);
        }
    } else {
        std::memcpy(out.data(), v.data(), out.size());
    }
    return out;
}

}  // namespace powerinfer::calibrate
