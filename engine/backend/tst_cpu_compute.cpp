// The CPU backend's attention against a float64 reference: causal GQA over
// an F16 cache for single tokens and batches, and the sliding window
// (Gemma 3's local layers: a query at position p sees keys p - window + 1
// .. p). A window at least as long as the context gives the same bits as no
// window; a short window equals the reference over the last `window` keys
// only. Plain C++.
//
// The gated FFN op (written once in backend/compute.cpp over the backend's
// ops): several FFNs in one call give each one's bits alone (the experts of
// a token take the together path of matmul_each), the tap sees the up
// products and the hidden layer the down product reads, and the result is
// within the 8-bit activations' error of a float64 FFN; the neuron-subset
// form (backend/neuron_ffn.h) over a subset is within the same error of the
// float64 FFN over that subset.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "backend/neuron_ffn.h"
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

// A Q8_0 matrix of rows x cols with N(0, scale) weights, and its dequantized floats.
struct Matrix {
    std::vector<uint8_t> q;
    std::vector<float> f;
    tensor::WeightView view;
};
Matrix q8_matrix(std::mt19937& rng, int64_t rows, int64_t cols, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    Matrix m;
    std::vector<float> src(static_cast<size_t>(rows * cols));
    for (auto& v : src) v = dist(rng);
    const size_t row_bytes = static_cast<size_t>(cols / 32 * 34);
    m.q.resize(row_bytes * static_cast<size_t>(rows));
    m.f.resize(src.size());
    for (int64_t r = 0; r < rows; ++r) {
        tensor::quantize_row_ref(GgmlType::Q8_0, src.data() + r * cols, m.q.data() + r * row_bytes,
                                 cols);
        tensor::dequantize_row(GgmlType::Q8_0, m.q.data() + r * row_bytes, m.f.data() + r * cols,
                               cols);
    }
    m.view = {GgmlType::Q8_0, m.q.data(), rows, cols, row_bytes};
    return m;
}

struct Ffn {
    Matrix gate, up, down;
    backend::GatedFfnWeights w() const { return {gate.view, up.view, down.view}; }
};

// The SwiGLU FFN of x in float64 over the neurons `ids` (all when empty).
std::vector<double> ffn64(const Ffn& f, const float* x, int64_t E, int64_t F,
                          const std::vector<int32_t>& ids) {
    std::vector<double> y(static_cast<size_t>(E), 0.0);
    for (int64_t k = 0; k < (ids.empty() ? F : static_cast<int64_t>(ids.size())); ++k) {
        const int64_t j = ids.empty() ? k : ids[static_cast<size_t>(k)];
        double g = 0, u = 0;
        for (int64_t i = 0; i < E; ++i) {
            g += double(f.gate.f[static_cast<size_t>(j * E + i)]) * x[i];
            u += double(f.up.f[static_cast<size_t>(j * E + i)]) * x[i];
        }
        const double h = g / (1.0 + std::exp(-g)) * u;
        for (int64_t r = 0; r < E; ++r) y[static_cast<size_t>(r)] += f.down.f[static_cast<size_t>(r * F + j)] * h;
    }
    return y;
}

double rel_err(const float* got, const std::vector<double>& want) {
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        num += (got[i] - want[i]) * (got[i] - want[i]);
        den += want[i] * want[i];
    }
    return std::sqrt(num / den);
}

// Records what the tap is shown.
struct Seen final : backend::FfnTap {
    std::vector<int64_t> ks;
    std::vector<std::vector<float>> up, h;
    int64_t n_ff = 0;
    void hidden(int64_t k, const float*, int64_t rows, const float* u, const float* hv) override {
        ks.push_back(k);
        up.emplace_back(u, u + rows * n_ff);
        h.emplace_back(hv, hv + rows * n_ff);
    }
};

void check_gated_ffn(plaintest::Counter& c, tensor::ThreadPool& pool, backend::Compute& cpu) {
    // Down matrices of 256 x 512 Q8_0 (139 KB each): three take matmul_each's
    // one-dispatch path on two threads.
    const int64_t E = 256, F = 512;
    std::mt19937 rng(11);
    std::vector<Ffn> ffns(3);
    for (Ffn& f : ffns) {
        f.gate = q8_matrix(rng, F, E, 0.08f);
        f.up = q8_matrix(rng, F, E, 0.08f);
        f.down = q8_matrix(rng, E, F, 0.05f);
    }
    std::vector<backend::GatedFfnWeights> ws;
    for (const Ffn& f : ffns) ws.push_back(f.w());
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (const int64_t rows : {int64_t{1}, int64_t{3}}) {
        const std::string what = "gated FFN, " + std::to_string(rows) + " row(s)";
        std::vector<float> x(static_cast<size_t>(rows * E));
        for (auto& v : x) v = dist(rng);
        std::vector<std::vector<float>> together(3, std::vector<float>(static_cast<size_t>(rows * E)));
        std::vector<float*> outs;
        for (auto& o : together) outs.push_back(o.data());
        Seen seen;
        seen.n_ff = F;
        cpu.gated_ffn(ws, x.data(), rows, outs, &seen);
        c.check(seen.ks == std::vector<int64_t>{0, 1, 2}, what + ": the tap sees each FFN once");
        bool alone_same = true, tap_same = true;
        double worst = 0;
        for (size_t k = 0; k < 3; ++k) {
            std::vector<float> alone(static_cast<size_t>(rows * E));
            cpu.gated_ffn(ws[k], x.data(), rows, alone.data());
            alone_same = alone_same && alone == together[k];
            std::vector<float> g(static_cast<size_t>(rows * F)), u(g.size());
            cpu.matmul(ws[k].gate, x.data(), rows, g.data());
            cpu.matmul(ws[k].up, x.data(), rows, u.data());
            for (int64_t r = 0; r < rows; ++r)
                backend::gate_activation(backend::GateActivation::SiLU, g.data() + r * F,
                                         u.data() + r * F, g.data() + r * F, F);
            tap_same = tap_same && seen.up[k] == u && seen.h[k] == g;
            for (int64_t r = 0; r < rows; ++r)
                worst = std::max(worst, rel_err(together[k].data() + r * E,
                                                ffn64(ffns[k], x.data() + r * E, E, F, {})));
        }
        c.check(alone_same, what + ": three FFNs in one call give each one's bits alone");
        c.check(tap_same, what + ": the tap sees up x and act(gate x) * up x bit for bit");
        c.check(worst < 0.02, what + ": within 2 % of float64 (" + std::to_string(worst) + ")");
    }

    // The neuron-subset form, the down copy neuron-major in F32.
    const Ffn& f = ffns[0];
    std::vector<float> down_t(static_cast<size_t>(F * E));
    for (int64_t j = 0; j < F; ++j)
        for (int64_t r = 0; r < E; ++r)
            down_t[static_cast<size_t>(j * E + r)] = f.down.f[static_cast<size_t>(r * F + j)];
    const backend::NeuronFfnWeights nw{
        f.gate.view, f.up.view,
        {GgmlType::F32, reinterpret_cast<const uint8_t*>(down_t.data()), F, E,
         static_cast<size_t>(E) * 4},
        backend::GateActivation::SiLU};
    std::vector<int32_t> ids;
    for (int32_t j = 3; j < F; j += 3) ids.push_back(j);
    std::vector<float> x(static_cast<size_t>(E)), y(static_cast<size_t>(E), 7.0f);
    for (auto& v : x) v = dist(rng);
    backend::NeuronFfn subset;
    subset.run(pool, nw, x.data(), ids.data(), static_cast<int64_t>(ids.size()), y.data());
    const double e = rel_err(y.data(), ffn64(f, x.data(), E, F, ids));
    c.check(e < 0.02, "neuron-subset FFN over every third neuron within 2 % of float64 (" +
                          std::to_string(e) + ")");
    // The hidden half over a range on a 16-neuron boundary: dense's bits.
    tensor::QuantizedVector xq;
    tensor::quantize_activations(GgmlType::Q8_0, x.data(), E, xq);
    subset.hidden(pool, nw, xq, xq, nullptr, 32, 256, nullptr);
    Seen dense;
    dense.n_ff = F;
    std::vector<float> y1(static_cast<size_t>(E));
    cpu.gated_ffn(f.w(), x.data(), 1, y1.data(), &dense);
    bool range_same = subset.active_ids().size() == 256 && subset.up_rows() == 256;
    for (size_t k = 0; range_same && k < 256; ++k)
        range_same = subset.active_ids()[k] == static_cast<int32_t>(32 + k) &&
                     subset.active_h()[k] == dense.h[0][32 + k];
    c.check(range_same, "neuron-subset hidden half over neurons 32..287: dense's h bit for bit");
    // A selection: up rows for even positions only, active where h > 0.
    struct EvenPositive final : backend::NeuronSelect {
        mutable int64_t up_seen = 0;
        int64_t need_up(const int32_t*, const float*, int64_t n, int32_t* keep) const override {
            int64_t m = 0;
            for (int64_t k = 0; k < n; k += 2) keep[m++] = static_cast<int32_t>(k);
            up_seen = n;
            return m;
        }
        int64_t active(const int32_t*, const float* h, int64_t n, int32_t* keep) const override {
            int64_t m = 0;
            for (int64_t k = 0; k < n; ++k)
                if (h[k] > 0) keep[m++] = static_cast<int32_t>(k);
            return m;
        }
    } sel;
    subset.hidden(pool, nw, xq, xq, ids.data(), 0, static_cast<int64_t>(ids.size()), &sel);
    std::vector<int32_t> want_ids;
    for (size_t k = 0; k < ids.size(); k += 2)
        if (dense.h[0][static_cast<size_t>(ids[k])] > 0) want_ids.push_back(ids[k]);
    const auto got = subset.active_ids();
    c.check(sel.up_seen == static_cast<int64_t>(ids.size()) &&
                subset.up_rows() == static_cast<int64_t>((ids.size() + 1) / 2) &&
                std::vector<int32_t>(got.begin(), got.end()) == want_ids,
            "neuron-subset selection: up rows and the active set are the strategy's (" +
                std::to_string(got.size()) + " of " + std::to_string(ids.size()) + " active)");
    subset.run(pool, nw, x.data(), ids.data(), 0, y.data());
    c.check(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f; }),
            "neuron-subset FFN over no neuron writes zeros");
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
    check_gated_ffn(c, pool, *cpu);
    return c.finish();
}
