// The CPU backend's attention against a float64 reference: causal GQA over
// an F16 cache for single tokens and batches, and the sliding window
// (Gemma 3's local layers: a query at position p sees keys p - window + 1
// .. p). A window at least as long as the context gives the same bits as no
// window; a short window equals the reference over the last `window` keys
// only. Plain C++.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "common/plain_test.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;

namespace {

struct Case {
    int64_t n_head = 4, n_head_kv = 2, head_dim = 64, n_ctx = 96;
};

// out[r][h][d] in double for rows at positions pos0 + r, keys
// max(0, p - window + 1) .. p (window 0: all).
std::vector<double> reference(const Case& c, const std::vector<float>& q,
                              const std::vector<uint16_t>& K, const std::vector<uint16_t>& V,
                              int64_t rows, int64_t pos0, int64_t window, float scale) {
    const int64_t hd = c.head_dim, group = c.n_head / c.n_head_kv;
    std::vector<double> out(static_cast<size_t>(rows * c.n_head * hd));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t h = 0; h < c.n_head; ++h) {
            const int64_t g = h / group, p = pos0 + r;
            const int64_t first = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
            std::vector<double> s;
            double mx = -1e300;
            for (int64_t t = first; t <= p; ++t) {
                double dot = 0;
                for (int64_t d = 0; d < hd; ++d)
                    dot += double(tensor::fp16_to_fp32(tensor::fp32_to_fp16(
                               q[static_cast<size_t>((r * c.n_head + h) * hd + d)]))) *
                           tensor::fp16_to_fp32(K[static_cast<size_t>((g * c.n_ctx + t) * hd + d)]);
                s.push_back(dot * scale);
                mx = std::max(mx, s.back());
            }
            double sum = 0;
            for (auto& v : s) sum += (v = std::exp(v - mx));
            for (int64_t d = 0; d < hd; ++d) {
                double acc = 0;
                for (int64_t t = first; t <= p; ++t)
                    acc += s[static_cast<size_t>(t - first)] / sum *
                           tensor::fp16_to_fp32(V[static_cast<size_t>((g * c.n_ctx + t) * hd + d)]);
                out[static_cast<size_t>((r * c.n_head + h) * hd + d)] = acc;
            }
        }
    return out;
}

}  // namespace

int main() {
    plaintest::Counter c;
    tensor::ThreadPool pool(2);
    auto cpu = backend::make_cpu_compute(pool);
    const Case k;
    std::mt19937 rng(5);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<uint16_t> K(static_cast<size_t>(k.n_head_kv * k.n_ctx * k.head_dim)), V(K.size());
    for (auto& v : K) v = tensor::fp32_to_fp16(dist(rng));
    for (auto& v : V) v = tensor::fp32_to_fp16(dist(rng));
    backend::AttentionShape a;
    a.n_head = k.n_head;
    a.n_head_kv = k.n_head_kv;
    a.head_dim = a.head_dim_v = k.head_dim;
    a.n_ctx = k.n_ctx;
    a.scale = 1.0f / std::sqrt(float(k.head_dim));
    for (const int64_t rows : {int64_t{1}, int64_t{7}}) {
        const int64_t pos0 = 80;
        std::vector<float> q(static_cast<size_t>(rows * k.n_head * k.head_dim));
        for (auto& v : q) v = dist(rng);
        std::vector<float> full(q.size()), wide(q.size()), local(q.size());
        a.window = 0;
        cpu->attention(a, q.data(), K.data(), V.data(), rows, pos0, full.data());
        a.window = k.n_ctx;
        cpu->attention(a, q.data(), K.data(), V.data(), rows, pos0, wide.data());
        a.window = 16;
        cpu->attention(a, q.data(), K.data(), V.data(), rows, pos0, local.data());
        const std::string what = std::to_string(rows) + " row(s) at position 80";
        c.check(full == wide, what + ": a window as long as the context changes no bit");
        const auto want_full = reference(k, q, K, V, rows, pos0, 0, a.scale);
        const auto want_local = reference(k, q, K, V, rows, pos0, 16, a.scale);
        double err_full = 0, err_local = 0, moved = 0;
        for (size_t i = 0; i < q.size(); ++i) {
            err_full = std::max(err_full, std::fabs(full[i] - want_full[i]));
            err_local = std::max(err_local, std::fabs(local[i] - want_local[i]));
            moved = std::max(moved, std::fabs(double(local[i]) - full[i]));
        }
        c.check(err_full < 2e-3, what + ": causal attention within 2e-3 of float64 (" +
                                     std::to_string(err_full) + ")");
        c.check(err_local < 2e-3, what + ": a 16-key window within 2e-3 of float64 over the last 16 "
                                         "keys (" + std::to_string(err_local) + ")");
        c.check(moved > 1e-2, what + ": the window changes the result (max " +
                                  std::to_string(moved) + ")");
    }
    return c.finish();
}
