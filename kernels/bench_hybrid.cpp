// Decode-speed benchmark on a GPU machine: a synthetic llama-shaped model
// (random Q4_0 weights, generated in memory — nothing is downloaded) decoded
// token by token in four placements under one VRAM budget:
//   cpu      every layer dense on the CPU
//   offload  whole layers on the GPU up to the budget, the rest dense on the
//            CPU (what llama.cpp's -ngl does)
//   hybrid   PowerInfer placement: attention first, then predictors, then hot
//            FFN neurons by activation frequency per byte; per token and layer
//            the predictor runs on the GPU, hot active neurons on the GPU
//            (CudaDevice::run_hot) while cold active neurons run on the CPU
//            (tensor::matvec_rows / axpy_rows), partial outputs summed
//   gpu      every layer on the GPU (the ceiling when the model fits)
// Neuron activity is synthetic: neuron j of a layer fires with probability
// p_j following a power law scaled to the requested sparsity; the predictor's
// full cost is paid every token, its output then replaced by that sample.
// This harness uses the engine's kernels and devices, not the full engine
// (no tokenizer, embeddings or output head; those are the same in all modes).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "backend/device.h"
#include "common/ggml_types.h"
#include "cuda_device.h"
#include "cuda_ops.h"
#include "tensor/matmul.h"
#include "tensor/ops.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
using backend::MemCategory;

namespace {

struct Shape {
    std::string name;
    int n_layer, n_embd, n_ff, n_head, n_head_kv;
    int head_dim() const { return n_embd / n_head; }
};

struct Options {
    std::vector<Shape> shapes;
    double budget_fraction = 0.25;
    std::vector<double> sparsities = {0.3, 0.5, 0.7, 0.9};
    double zipf = 1.0;
    int tokens = 24;
    int warmup = 4;
    int threads = 8;
    int predictor_rank = 0;  // 0: n_embd / 32, clamped to [32, 256]
    GgmlType down_type = GgmlType::Q8_0;  // the neuron-major down copy
};

constexpr GgmlType kType = GgmlType::Q4_0;

uint64_t splitmix(uint64_t& s) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Random but valid Q4_0 rows: fp16 scale about 0.01, random nibbles.
std::vector<uint8_t> random_q4_0(int64_t rows, int64_t cols, uint64_t seed) {
    const size_t row_bytes = *ggml_row_bytes(kType, uint64_t(cols));
    std::vector<uint8_t> data(row_bytes * static_cast<size_t>(rows));
    uint64_t s = seed;
    const uint16_t d = tensor::fp32_to_fp16(0.01f);
    for (size_t b = 0; b < data.size(); b += 18) {
        std::memcpy(&data[b], &d, 2);
        for (int i = 0; i < 16; i += 8) {
            const uint64_t r = splitmix(s);
            std::memcpy(&data[b + 2 + static_cast<size_t>(i)], &r, 8);
        }
    }
    return data;
}

std::vector<float> random_floats(size_t n, uint64_t seed, float scale) {
    std::vector<float> v(n);
    uint64_t s = seed;
    for (auto& x : v) x = scale * (float(splitmix(s) >> 40) / float(1 << 24) * 2.f - 1.f);
    return v;
}

struct HostLayer {
    std::vector<uint8_t> wq, wk, wv, wo, gate, up, down;  // GGUF layout
    std::vector<uint8_t> down_t;                           // neuron-major copy, in Options::down_type
    std::vector<float> attn_norm, ffn_norm;
    std::vector<uint16_t> w1, w2;  // predictor (F16)
    std::vector<float> b1, b2;
    std::vector<double> p;              // per-neuron firing probability (set per sparsity)
};

struct Model {
    Shape shape;
    std::vector<HostLayer> layers;
    int64_t attn_bytes = 0, ffn_bytes = 0;  // per layer, Q4_0
    int64_t kv_bytes = 0;                   // per layer
    int64_t neuron_bytes = 0;               // on the device (gate + up + F32 down column)
    int64_t total_bytes() const { return int64_t(layers.size()) * (attn_bytes + ffn_bytes); }
};

Model make_model(const Shape& sh, int rank, int ctx, GgmlType down_type) {
    Model m;
    m.shape = sh;
    m.layers.resize(static_cast<size_t>(sh.n_layer));
    const int64_t e = sh.n_embd, f = sh.n_ff, kv = int64_t(sh.n_head_kv) * sh.head_dim();
    std::vector<std::thread> workers;
    for (int l = 0; l < sh.n_layer; ++l) {
        workers.emplace_back([&, l] {
            HostLayer& L = m.layers[static_cast<size_t>(l)];
            const uint64_t seed = 1000 + uint64_t(l) * 16;
            L.wq = random_q4_0(e, e, seed);
            L.wk = random_q4_0(kv, e, seed + 1);
            L.wv = random_q4_0(kv, e, seed + 2);
            L.wo = random_q4_0(e, e, seed + 3);
            L.gate = random_q4_0(f, e, seed + 4);
            L.up = random_q4_0(f, e, seed + 5);
            L.down = random_q4_0(e, f, seed + 6);
            // The engine makes this neuron-major copy from ffn_down at load.
            std::vector<float> full(static_cast<size_t>(f * e)), row(static_cast<size_t>(f));
            const size_t down_row = *ggml_row_bytes(kType, uint64_t(f));
            for (int64_t r = 0; r < e; ++r) {
                tensor::dequantize_row_ref(kType, L.down.data() + static_cast<size_t>(r) * down_row, row.data(), f);
                for (int64_t j = 0; j < f; ++j) full[static_cast<size_t>(j * e + r)] = row[static_cast<size_t>(j)];
            }
            const size_t col_bytes = *ggml_row_bytes(down_type, uint64_t(e));
            L.down_t.resize(col_bytes * static_cast<size_t>(f));
            for (int64_t j = 0; j < f; ++j)
                tensor::quantize_row_ref(down_type, full.data() + j * e, L.down_t.data() + static_cast<size_t>(j) * col_bytes, e);
            L.attn_norm.assign(static_cast<size_t>(e), 1.f);
            L.ffn_norm.assign(static_cast<size_t>(e), 1.f);
            // F16 predictor weights, as the sidecar stores them.
            auto to_f16 = [](const std::vector<float>& v) {
                std::vector<uint16_t> h(v.size());
                for (size_t i = 0; i < v.size(); ++i) h[i] = tensor::fp32_to_fp16(v[i]);
                return h;
            };
            L.w1 = to_f16(random_floats(static_cast<size_t>(rank * e), seed + 7, 0.05f));
            L.b1 = random_floats(static_cast<size_t>(rank), seed + 8, 0.05f);
            L.w2 = to_f16(random_floats(static_cast<size_t>(f * rank), seed + 9, 0.05f));
            L.b2 = random_floats(static_cast<size_t>(f), seed + 10, 0.05f);
        });
        if (workers.size() == std::thread::hardware_concurrency() || l + 1 == sh.n_layer) {
            for (auto& w : workers) w.join();
            workers.clear();
        }
    }
    const int64_t row_e = int64_t(*ggml_row_bytes(kType, uint64_t(e)));
    m.attn_bytes = (2 * e + 2 * kv) * row_e;
    m.ffn_bytes = 2 * f * row_e + e * int64_t(*ggml_row_bytes(kType, uint64_t(f)));
    m.kv_bytes = 2 * int64_t(ctx) * kv * 4;
    m.neuron_bytes = 2 * row_e + int64_t(*ggml_row_bytes(down_type, uint64_t(e)));
    return m;
}

// p_j = min(1, c / rank_j^zipf) over a random permutation, c chosen so that
// the mean firing probability is 1 - sparsity.
void set_activity(Model& m, double sparsity, double zipf) {
    const int f = m.shape.n_ff;
    for (size_t l = 0; l < m.layers.size(); ++l) {
        std::vector<int> perm(static_cast<size_t>(f));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), std::mt19937(unsigned(l + 7)));
        auto mean_for = [&](double c) {
            double s = 0;
            for (int r = 0; r < f; ++r) s += std::min(1.0, c / std::pow(r + 1.0, zipf));
            return s / f;
        };
        double lo = 0, hi = double(f) * 4;
        for (int it = 0; it < 60; ++it) {
            const double mid = 0.5 * (lo + hi);
            (mean_for(mid) < 1.0 - sparsity ? lo : hi) = mid;
        }
        auto& p = m.layers[l].p;
        p.assign(static_cast<size_t>(f), 0);
        for (int r = 0; r < f; ++r) p[static_cast<size_t>(perm[static_cast<size_t>(r)])] = std::min(1.0, hi / std::pow(r + 1.0, zipf));
    }
}

tensor::WeightView view(const std::vector<uint8_t>& w, int64_t rows, int64_t cols) {
    return {kType, w.data(), rows, cols, *ggml_row_bytes(kType, uint64_t(cols))};
}

// ---- CPU pieces -------------------------------------------------------------

struct CpuState {
    std::vector<float> xn, q, k, v, att, tmp, g, u, h, y;
    std::vector<std::vector<float>> kc, vc;  // per layer [ctx][kv]
};

void cpu_attention(tensor::ThreadPool& pool, const Model& m, const HostLayer& L, CpuState& s,
                   std::vector<float>& x, int layer, int pos) {
    const Shape& sh = m.shape;
    const int64_t e = sh.n_embd, hd = sh.head_dim(), kv = int64_t(sh.n_head_kv) * hd;
    tensor::rms_norm(x.data(), L.attn_norm.data(), s.xn.data(), e, 1e-5f);
    tensor::QuantizedVector xq;
    tensor::quantize_activations(kType, s.xn.data(), e, xq);
    tensor::matvec_q(pool, view(L.wq, e, e), xq, s.q.data());
    tensor::matvec_q(pool, view(L.wk, kv, e), xq, s.k.data());
    tensor::matvec_q(pool, view(L.wv, kv, e), xq, s.v.data());
    for (int h = 0; h < sh.n_head; ++h) tensor::rope(s.q.data() + h * hd, hd, hd, pos, 10000.f, 1.f, false);
    for (int h = 0; h < sh.n_head_kv; ++h) tensor::rope(s.k.data() + h * hd, hd, hd, pos, 10000.f, 1.f, false);
    auto& kc = s.kc[static_cast<size_t>(layer)];
    auto& vc = s.vc[static_cast<size_t>(layer)];
    std::copy(s.k.begin(), s.k.end(), kc.begin() + pos * kv);
    std::copy(s.v.begin(), s.v.end(), vc.begin() + pos * kv);
    const int group = sh.n_head / sh.n_head_kv;
    pool.parallel_for(sh.n_head, [&](int64_t b, int64_t en, int) {
        std::vector<float> sc(static_cast<size_t>(pos + 1));
        for (int64_t h = b; h < en; ++h) {
            const int64_t kvh = h / group;
            for (int t = 0; t <= pos; ++t) {
                float d = 0;
                for (int64_t i = 0; i < hd; ++i) d += s.q[static_cast<size_t>(h * hd + i)] * kc[static_cast<size_t>(t * kv + kvh * hd + i)];
                sc[static_cast<size_t>(t)] = d / std::sqrt(float(hd));
            }
            tensor::softmax(sc.data(), pos + 1);
            for (int64_t i = 0; i < hd; ++i) {
                float a = 0;
                for (int t = 0; t <= pos; ++t) a += sc[static_cast<size_t>(t)] * vc[static_cast<size_t>(t * kv + kvh * hd + i)];
                s.att[static_cast<size_t>(h * hd + i)] = a;
            }
        }
    });
    tensor::matvec(pool, view(L.wo, e, e), s.att.data(), s.tmp.data());
    tensor::add(x.data(), s.tmp.data(), e);
}

void cpu_dense_ffn(tensor::ThreadPool& pool, const Model& m, const HostLayer& L, CpuState& s,
                   std::vector<float>& x) {
    const int64_t e = m.shape.n_embd, f = m.shape.n_ff;
    tensor::rms_norm(x.data(), L.ffn_norm.data(), s.xn.data(), e, 1e-5f);
    tensor::QuantizedVector xq;
    tensor::quantize_activations(kType, s.xn.data(), e, xq);
    tensor::matvec_q(pool, view(L.gate, f, e), xq, s.g.data());
    tensor::matvec_q(pool, view(L.up, f, e), xq, s.u.data());
    tensor::swiglu(s.g.data(), s.u.data(), s.h.data(), f);
    tensor::matvec(pool, view(L.down, e, f), s.h.data(), s.tmp.data());
    tensor::add(x.data(), s.tmp.data(), e);
}

// ---- GPU pieces -------------------------------------------------------------

struct GpuLayer {
    backend::BufferHandle weights = 0, kv = 0;
    uint8_t *wq, *wk, *wv, *wo, *gate, *up, *down;
    float *attn_norm, *ffn_norm, *kc, *vc;
};

struct GpuScratch {
    float *x, *xn, *q, *k, *v, *att, *tmp, *g, *u, *h, *scores;
};

void upload_bytes(backend::Device& dev, backend::BufferHandle b, int64_t& off,
                  const void* src, size_t bytes, uint8_t* base, uint8_t*& out) {
    out = base + off;
    dev.write(b, off, src, int64_t(bytes));
    off += int64_t((bytes + 255) / 256 * 256);
}

// Attention (and optionally the dense FFN) of one layer on the device.
GpuLayer upload_layer(backend::Device& dev, const Model& m, const HostLayer& L, bool with_ffn, int ctx) {
    GpuLayer g{};
    const int64_t e = m.shape.n_embd, kvw = int64_t(m.shape.n_head_kv) * m.shape.head_dim();
    const int64_t bytes = m.attn_bytes + (with_ffn ? m.ffn_bytes : 0) + 2 * e * 4 + 16 * 256;
    (void)kvw;
    g.weights = dev.allocate(MemCategory::DenseWeights, bytes);
    auto* base = static_cast<uint8_t*>(cuda::buffer_pointer(dev, g.weights));
    int64_t off = 0;
    uint8_t* p;
    upload_bytes(dev, g.weights, off, L.wq.data(), L.wq.size(), base, g.wq);
    upload_bytes(dev, g.weights, off, L.wk.data(), L.wk.size(), base, g.wk);
    upload_bytes(dev, g.weights, off, L.wv.data(), L.wv.size(), base, g.wv);
    upload_bytes(dev, g.weights, off, L.wo.data(), L.wo.size(), base, g.wo);
    upload_bytes(dev, g.weights, off, L.attn_norm.data(), static_cast<size_t>(e) * 4, base, p);
    g.attn_norm = reinterpret_cast<float*>(p);
    upload_bytes(dev, g.weights, off, L.ffn_norm.data(), static_cast<size_t>(e) * 4, base, p);
    g.ffn_norm = reinterpret_cast<float*>(p);
    if (with_ffn) {
        upload_bytes(dev, g.weights, off, L.gate.data(), L.gate.size(), base, g.gate);
        upload_bytes(dev, g.weights, off, L.up.data(), L.up.size(), base, g.up);
        upload_bytes(dev, g.weights, off, L.down.data(), L.down.size(), base, g.down);
    }
    g.kv = dev.allocate(MemCategory::KvCache, m.kv_bytes);
    auto* kvp = static_cast<float*>(cuda::buffer_pointer(dev, g.kv));
    g.kc = kvp;
    g.vc = kvp + int64_t(ctx) * kvw;
    return g;
}

void gpu_attention(const Model& m, const GpuLayer& g, GpuScratch& s, int pos, cudaStream_t st) {
    const Shape& sh = m.shape;
    const int64_t e = sh.n_embd, hd = sh.head_dim(), kv = int64_t(sh.n_head_kv) * hd;
    const size_t re = *ggml_row_bytes(kType, uint64_t(e));
    cuda::rms_norm(s.x, g.attn_norm, s.xn, e, 1e-5f, st);
    cuda::rows_dot(uint32_t(kType), g.wq, re, e, nullptr, e, s.xn, s.q, st);
    cuda::rows_dot(uint32_t(kType), g.wk, re, e, nullptr, kv, s.xn, g.kc + pos * kv, st);
    cuda::rows_dot(uint32_t(kType), g.wv, re, e, nullptr, kv, s.xn, g.vc + pos * kv, st);
    cuda::rope(s.q, sh.n_head, hd, pos, 10000.f, false, st);
    cuda::rope(g.kc + pos * kv, sh.n_head_kv, hd, pos, 10000.f, false, st);
    cuda::attention_decode(s.q, g.kc, g.vc, s.att, sh.n_head, sh.n_head_kv, hd, pos, s.scores, st);
    cuda::rows_dot(uint32_t(kType), g.wo, re, e, nullptr, e, s.att, s.tmp, st);
    cuda::add_inplace(s.x, s.tmp, e, st);
}

void gpu_dense_ffn(const Model& m, const GpuLayer& g, GpuScratch& s, cudaStream_t st) {
    const int64_t e = m.shape.n_embd, f = m.shape.n_ff;
    const size_t re = *ggml_row_bytes(kType, uint64_t(e)), rf = *ggml_row_bytes(kType, uint64_t(f));
    cuda::rms_norm(s.x, g.ffn_norm, s.xn, e, 1e-5f, st);
    cuda::rows_dot(uint32_t(kType), g.gate, re, e, nullptr, f, s.xn, s.g, st);
    cuda::rows_dot(uint32_t(kType), g.up, re, e, nullptr, f, s.xn, s.u, st);
    cuda::act_mul(s.g, s.u, s.h, f, false, st);
    cuda::rows_dot(uint32_t(kType), g.down, rf, f, nullptr, e, s.h, s.tmp, st);
    cuda::add_inplace(s.x, s.tmp, e, st);
}

// ---- one run ----------------------------------------------------------------

struct Result {
    std::string mode;
    double sparsity = 0;
    int gpu_layers = 0;      // whole layers (offload) or attention layers (hybrid)
    int64_t hot_neurons = 0;
    int64_t used_bytes = 0;
    double tok_s = 0;
    double device_ms = 0, cpu_ms = 0, predictor_ms = 0;  // per token (hybrid)
    double hot_fraction = 0;  // of active neurons served by the GPU
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

Result run(const Model& m, const Options& o, const std::string& mode, double sparsity, int64_t budget) {
    const Shape& sh = m.shape;
    const int64_t e = sh.n_embd, f = sh.n_ff, kvw = int64_t(sh.n_head_kv) * sh.head_dim();
    const int ctx = o.warmup + o.tokens + 1;
    tensor::ThreadPool pool(o.threads);
    auto dev = cuda::make_cuda_device({0, budget});
    auto st = static_cast<cudaStream_t>(cuda::device_stream(*dev));
    Result r;
    r.mode = mode;
    r.sparsity = sparsity;

    // Placement.
    // PowerInfer's order of value: predictors (run every token), attention
    // (read every token), then hot neurons by firing frequency per byte.
    int gpu_full = 0, gpu_attn = 0;
    // What upload_layer allocates: weights, two norms, alignment padding, KV.
    const int64_t extra = 2 * e * 4 + 16 * 256 + m.kv_bytes;
    const int64_t layer_all = m.attn_bytes + m.ffn_bytes + extra;
    std::vector<std::vector<int32_t>> hot_ids(static_cast<size_t>(sh.n_layer));
    if (mode == "hybrid") {
        std::vector<backend::NeuronFormat> formats(static_cast<size_t>(sh.n_layer),
                                                   backend::make_neuron_format(e, f, kType, kType, o.down_type));
        dev->configure_layers(formats);
        for (int l = 0; l < sh.n_layer; ++l) {
            const HostLayer& L = m.layers[static_cast<size_t>(l)];
            backend::PredictorWeights pw;
            pw.n_embd = e;
            pw.rank = o.predictor_rank;
            pw.n_ff = f;
            pw.type = GgmlType::F16;
            pw.w1 = reinterpret_cast<const uint8_t*>(L.w1.data());
            pw.b1 = L.b1.data();
            pw.w2 = reinterpret_cast<const uint8_t*>(L.w2.data());
            pw.b2 = L.b2.data();
            dev->set_predictor(l, pw);
        }
        gpu_attn = int(std::min<int64_t>(sh.n_layer, dev->memory().available() / (m.attn_bytes + extra)));
    }
    if (mode == "gpu") gpu_full = sh.n_layer;
    if (mode == "offload") gpu_full = int(std::min<int64_t>(sh.n_layer, budget / layer_all));
    std::vector<GpuLayer> gl(static_cast<size_t>(sh.n_layer));
    for (int l = 0; l < sh.n_layer; ++l) {
        if (l < gpu_full) gl[static_cast<size_t>(l)] = upload_layer(*dev, m, m.layers[static_cast<size_t>(l)], true, ctx);
        else if (l < gpu_attn) gl[static_cast<size_t>(l)] = upload_layer(*dev, m, m.layers[static_cast<size_t>(l)], false, ctx);
    }
    if (mode == "hybrid") {
        // Hot neurons: the most frequently firing first, across all layers
        // (all neurons cost the same bytes here, so frequency per byte is
        // frequency).
        std::vector<std::pair<double, int64_t>> order;
        for (int l = 0; l < sh.n_layer; ++l)
            for (int j = 0; j < f; ++j) order.push_back({m.layers[static_cast<size_t>(l)].p[static_cast<size_t>(j)], int64_t(l) * f + j});
        std::stable_sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
        const int64_t fit = std::max<int64_t>(0, dev->memory().available() / m.neuron_bytes);
        for (int64_t i = 0; i < std::min<int64_t>(fit, int64_t(order.size())); ++i)
            hot_ids[static_cast<size_t>(order[static_cast<size_t>(i)].second / f)].push_back(int32_t(order[static_cast<size_t>(i)].second % f));
        for (int l = 0; l < sh.n_layer; ++l) {
            auto& ids = hot_ids[static_cast<size_t>(l)];
            std::sort(ids.begin(), ids.end());
            const HostLayer& L = m.layers[static_cast<size_t>(l)];
            const tensor::WeightView dt{o.down_type, L.down_t.data(), f, e, *ggml_row_bytes(o.down_type, uint64_t(e))};
            backend::NeuronSource src{view(L.gate, f, e), view(L.up, f, e), dt};
            const int64_t n = dev->upload_neurons(l, MemCategory::HotNeurons, ids.data(), int64_t(ids.size()), src);
            ids.resize(static_cast<size_t>(n));
            r.hot_neurons += n;
        }
    }
    dev->synchronize();
    r.used_bytes = dev->memory().used_total();
    r.gpu_layers = mode == "hybrid" ? gpu_attn : gpu_full;

    // Active sets per token, sampled before timing.
    std::vector<std::vector<std::vector<int32_t>>> active;  // [token][layer]
    double active_total = 0;
    if (mode == "hybrid") {
        uint64_t seed = 42;
        active.resize(static_cast<size_t>(ctx));
        for (int t = 0; t < ctx; ++t) {
            active[static_cast<size_t>(t)].resize(static_cast<size_t>(sh.n_layer));
            for (int l = 0; l < sh.n_layer; ++l) {
                const auto& p = m.layers[static_cast<size_t>(l)].p;
                auto& a = active[static_cast<size_t>(t)][static_cast<size_t>(l)];
                for (int j = 0; j < f; ++j)
                    if (double(splitmix(seed) >> 11) * 0x1.0p-53 < p[static_cast<size_t>(j)]) a.push_back(j);
                active_total += double(a.size());
            }
        }
        r.sparsity = 1.0 - active_total / (double(ctx) * sh.n_layer * f);
    }

    CpuState s;
    for (auto* v : {&s.xn, &s.q, &s.att, &s.tmp, &s.y}) v->assign(static_cast<size_t>(e), 0.f);
    s.k.assign(static_cast<size_t>(kvw), 0.f);
    s.v.assign(static_cast<size_t>(kvw), 0.f);
    for (auto* v : {&s.g, &s.u, &s.h}) v->assign(static_cast<size_t>(f), 0.f);
    s.kc.assign(static_cast<size_t>(sh.n_layer), std::vector<float>(static_cast<size_t>(ctx * kvw)));
    s.vc.assign(static_cast<size_t>(sh.n_layer), std::vector<float>(static_cast<size_t>(ctx * kvw)));
    GpuScratch gs{};
    float* gbuf = nullptr;
    const size_t gfloats = static_cast<size_t>(6 * e + 3 * f + 2 * kvw) + static_cast<size_t>(sh.n_head) * static_cast<size_t>(ctx);
    cudaMalloc(reinterpret_cast<void**>(&gbuf), gfloats * 4);
    float* gp = gbuf;
    for (float** p : {&gs.x, &gs.xn, &gs.q, &gs.att, &gs.tmp}) { *p = gp; gp += e; }
    for (float** p : {&gs.g, &gs.u, &gs.h}) { *p = gp; gp += f; }
    gs.k = gp; gp += kvw;
    gs.v = gp; gp += kvw;
    gs.scores = gp;

    std::vector<float> x(static_cast<size_t>(e), 0.1f), x_hot(static_cast<size_t>(e));
    std::vector<int32_t> predicted, hot, cold;
    std::vector<double> times, dev_ms, cpu_ms, pred_ms;
    tensor::QuantizedVector xq;
    auto now = [] { return std::chrono::steady_clock::now(); };
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    int64_t hot_hits = 0, actives = 0;
    for (int pos = 0; pos < ctx - 1; ++pos) {
        std::fill(x.begin(), x.end(), 0.1f);
        const auto t0 = now();
        double t_dev = 0, t_cpu = 0, t_pred = 0;
        bool x_on_gpu = false;
        for (int l = 0; l < sh.n_layer; ++l) {
            const HostLayer& L = m.layers[static_cast<size_t>(l)];
            const bool full = l < gpu_full, attn = full || l < gpu_attn;
            if (attn) {
                if (!x_on_gpu) cudaMemcpyAsync(gs.x, x.data(), static_cast<size_t>(e) * 4, cudaMemcpyHostToDevice, st);
                x_on_gpu = true;
                gpu_attention(m, gl[static_cast<size_t>(l)], gs, pos, st);
                if (full) {
                    gpu_dense_ffn(m, gl[static_cast<size_t>(l)], gs, st);
                    continue;
                }
                cudaMemcpyAsync(x.data(), gs.x, static_cast<size_t>(e) * 4, cudaMemcpyDeviceToHost, st);
                cudaStreamSynchronize(st);
                x_on_gpu = false;
            } else {
                if (x_on_gpu) {
                    cudaMemcpyAsync(x.data(), gs.x, static_cast<size_t>(e) * 4, cudaMemcpyDeviceToHost, st);
                    cudaStreamSynchronize(st);
                    x_on_gpu = false;
                }
                cpu_attention(pool, m, L, s, x, l, pos);
            }
            if (mode != "hybrid") {
                cpu_dense_ffn(pool, m, L, s, x);
                continue;
            }
            // Hybrid FFN.
            tensor::rms_norm(x.data(), L.ffn_norm.data(), s.xn.data(), e, 1e-5f);
            const auto tp = now();
            dev->predict(l, s.xn.data(), 0.5f, predicted);
            t_pred += ms(tp, now());
            const auto& act = active[static_cast<size_t>(pos)][static_cast<size_t>(l)];
            hot.clear();
            cold.clear();
            for (int32_t j : act) (dev->is_resident(l, j) ? hot : cold).push_back(j);
            hot_hits += int64_t(hot.size());
            actives += int64_t(act.size());
            dev->run_hot(l, s.xn.data(), hot.data(), int64_t(hot.size()), x_hot.data());
            const auto tc = now();
            std::fill(s.y.begin(), s.y.end(), 0.f);
            if (!cold.empty()) {
                tensor::quantize_activations(kType, s.xn.data(), e, xq);
                tensor::matvec_rows(pool, view(L.gate, f, e), xq, cold.data(), int64_t(cold.size()), s.g.data());
                tensor::matvec_rows(pool, view(L.up, f, e), xq, cold.data(), int64_t(cold.size()), s.u.data());
                tensor::swiglu(s.g.data(), s.u.data(), s.h.data(), int64_t(cold.size()));
                const tensor::WeightView dt{o.down_type, L.down_t.data(), f, e, *ggml_row_bytes(o.down_type, uint64_t(e))};
                tensor::axpy_rows(pool, dt, cold.data(), s.h.data(), int64_t(cold.size()), s.y.data());
            }
            t_cpu += ms(tc, now());
            t_dev += dev->synchronize();
            tensor::add(x.data(), s.y.data(), e);
            tensor::add(x.data(), x_hot.data(), e);
        }
        if (x_on_gpu) {
            cudaMemcpyAsync(x.data(), gs.x, static_cast<size_t>(e) * 4, cudaMemcpyDeviceToHost, st);
            cudaStreamSynchronize(st);
        }
        const double t = ms(t0, now());
        if (pos >= o.warmup) {
            times.push_back(t);
            dev_ms.push_back(t_dev);
            cpu_ms.push_back(t_cpu);
            pred_ms.push_back(t_pred);
        }
    }
    cudaFree(gbuf);
    r.tok_s = 1000.0 / median(times);
    r.device_ms = median(dev_ms);
    r.cpu_ms = median(cpu_ms);
    r.predictor_ms = median(pred_ms);
    r.hot_fraction = actives ? double(hot_hits) / double(actives) : 0;
    const std::string err = cuda::last_error();
    if (!err.empty()) std::printf("CUDA error: %s\n", err.c_str());
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::vector<std::string> presets = {"smollm2-135m", "llama-7b"};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--preset") presets = {next()};
        else if (a == "--budget") o.budget_fraction = std::stod(next());
        else if (a == "--tokens") o.tokens = std::stoi(next());
        else if (a == "--threads") o.threads = std::stoi(next());
        else if (a == "--zipf") o.zipf = std::stod(next());
        else if (a == "--down-type") {
            const std::string t = next();
            o.down_type = t == "f32" ? GgmlType::F32 : t == "f16" ? GgmlType::F16 : t == "q4_0" ? GgmlType::Q4_0 : GgmlType::Q8_0;
        }
        else {
            std::fprintf(stderr, "usage: bench_hybrid [--preset smollm2-135m|llama-7b] [--budget F] "
                                 "[--tokens N] [--threads N] [--zipf S]\n");
            return 2;
        }
    }
    const cuda::DeviceProbe probe = cuda::probe_device(0);
    if (!probe.available) {
        std::printf("%s — bench_hybrid needs a GPU\n", probe.reason.c_str());
        return 0;
    }
    try {
    for (const auto& p : presets) {
        if (p == "smollm2-135m") o.shapes.push_back({p, 30, 576, 1536, 9, 3});
        else if (p == "llama-7b") o.shapes.push_back({p, 32, 4096, 11008, 32, 32});
        else {
            std::fprintf(stderr, "unknown preset '%s'\n", p.c_str());
            return 2;
        }
    }
    std::printf("GPU: %s (sm_%d); CPU threads: %d; predictor rank n_embd/32 in [32,256]; SIMD: %s; weights Q4_0, neuron-major down copy %s; "
                "budget %.0f%% of the model; zipf %.2f; %d timed tokens (median)\n\n",
                probe.name.c_str(), probe.compute_capability, o.threads,
                tensor::simd_level().c_str(), std::string(ggml_type_name(o.down_type)).c_str(),
                100 * o.budget_fraction, o.zipf, o.tokens);
    std::printf("| model | mode | sparsity | GPU layers | hot neurons | VRAM used MiB | tok/s | vs offload | hot share of active | predictor ms | GPU ms | CPU cold ms |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Shape& sh : o.shapes) {
        const auto t0 = std::chrono::steady_clock::now();
        const int rank = o.predictor_rank > 0 ? o.predictor_rank : std::clamp(sh.n_embd / 32, 32, 256);
        Options oo = o;
        oo.predictor_rank = rank;
        Model m = make_model(sh, rank, o.warmup + o.tokens + 1, o.down_type);
        const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const int64_t budget = int64_t(o.budget_fraction * double(m.total_bytes()));
        std::fprintf(stderr, "%s: %.2f GB of weights generated in %.1f s; budget %.0f MiB\n",
                     sh.name.c_str(), double(m.total_bytes()) / 1e9, gen_s, double(budget) / (1 << 20));
        std::vector<Result> rs;
        set_activity(m, 0.5, o.zipf);
        auto attempt = [&](const std::string& mode, double sp, int64_t b) {
            try {
                rs.push_back(run(m, oo, mode, sp, b));
            } catch (const std::exception& e) {
                std::fprintf(stderr, "%s %s (sparsity %.2f): %s\n", sh.name.c_str(), mode.c_str(), sp, e.what());
                Result r;
                r.mode = mode + " (failed)";
                r.sparsity = sp;
                rs.push_back(r);
            }
        };
        attempt("cpu", 0, budget);
        attempt("offload", 0, budget);
        for (double sp : o.sparsities) {
            set_activity(m, sp, o.zipf);
            attempt("hybrid", sp, budget);
        }
        attempt("gpu", 0, int64_t(double(probe.free_bytes) * 0.9));
        const double offload = rs[1].tok_s > 0 ? rs[1].tok_s : 1;
        for (const Result& r : rs) {
            std::printf("| %s | %s | %.2f | %d | %lld | %.0f | %.1f | %.2fx | %s | %s | %s | %s |\n",
                        sh.name.c_str(), r.mode.c_str(), r.sparsity, r.gpu_layers,
                        (long long)r.hot_neurons, double(r.used_bytes) / (1 << 20), r.tok_s,
                        r.tok_s / offload,
                        r.mode == "hybrid" ? (std::to_string(int(100 * r.hot_fraction)) + "%").c_str() : "-",
                        r.mode == "hybrid" ? std::to_string(r.predictor_ms).substr(0, 5).c_str() : "-",
                        r.mode == "hybrid" ? std::to_string(r.device_ms).substr(0, 5).c_str() : "-",
                        r.mode == "hybrid" ? std::to_string(r.cpu_ms).substr(0, 5).c_str() : "-");
        }
        std::fflush(stdout);
    }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_hybrid: %s\n", e.what());
        return 1;
    }
    return 0;
}
