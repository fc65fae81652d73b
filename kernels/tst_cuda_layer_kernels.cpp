// The layer kernels of the CUDA backend's ops (RMSNorm rows, RoPE from the
// model's tables, the F16 KV cache and its decode attention) against scalar
// references. Plain C++ (the GPU machine has no Qt); exits 77 without a
// device. The whole graph on the GPU against the CPU: engine/runtime's
// tst_gpu_model.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cuda_ops.h"
#include "gpu_test.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

using namespace powerinfer;
using gputest::DeviceBuffer;
using gputest::random_floats;
using gputest::sync_ok;

namespace {

float round_f16(float x) { return tensor::fp16_to_fp32(tensor::fp32_to_fp16(x)); }

// ---- the new layer kernels against scalar references ----------------------

void test_rms_norm_rows(gputest::Counter& c, std::mt19937& rng) {
    const int64_t rows = 5, n = 96;
    const auto x = random_floats(size_t(rows * n), rng, 2.f);
    const auto w = random_floats(size_t(n), rng);
    DeviceBuffer<float> dx(x), dw(w), dy(x.size());
    cuda::rms_norm_rows(dx.ptr, dw.ptr, dy.ptr, rows, n, 1e-5f, nullptr);
    cuda::rms_norm_rows(dx.ptr, dw.ptr, dx.ptr, rows, n, 1e-5f, nullptr);  // in place
    if (!sync_ok(c, "rms_norm_rows")) return;
    const auto y = dy.download(x.size()), y2 = dx.download(x.size());
    double worst = 0;
    for (int64_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (int64_t i = 0; i < n; ++i) ss += double(x[size_t(r * n + i)]) * x[size_t(r * n + i)];
        const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
        for (int64_t i = 0; i < n; ++i) {
            const double want = x[size_t(r * n + i)] * scale * w[size_t(i)];
            worst = std::max({worst, std::fabs(y[size_t(r * n + i)] - want),
                              std::fabs(y2[size_t(r * n + i)] - want)});
        }
    }
    c.check(worst < 1e-4,
            "rms_norm_rows (and in place) matches the reference, max err " + std::to_string(worst));
}

void test_rope_table(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_head = 3, hd = 64, n_rot = 32, half = n_rot / 2;
    const auto v = random_floats(size_t(n_head * hd), rng);
    const auto cs = random_floats(size_t(half), rng), sn = random_floats(size_t(half), rng);
    for (bool neox : {false, true}) {
        DeviceBuffer<float> dv(v), dc(cs), ds(sn);
        cuda::rope_table(dv.ptr, n_head, hd, n_rot, dc.ptr, ds.ptr, neox, nullptr);
        if (!sync_ok(c, "rope_table")) return;
        const auto got = dv.download(v.size());
        std::vector<float> want = v;
        for (int64_t h = 0; h < n_head; ++h) {
            float* head = want.data() + h * hd;
            for (int64_t i = 0; i < half; ++i) {
                const int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
                const float x0 = head[a], x1 = head[b];
                head[a] = x0 * cs[size_t(i)] - x1 * sn[size_t(i)];
                head[b] = x0 * sn[size_t(i)] + x1 * cs[size_t(i)];
            }
        }
        double worst = 0;
        for (size_t i = 0; i < v.size(); ++i)
            worst = std::max(worst, double(std::fabs(got[i] - want[i])));
        c.check(worst < 1e-5, std::string("rope_table ") + (neox ? "neox" : "normal") +
                                  " (partial rotation) matches, max err " + std::to_string(worst));
    }
}

void test_attention_f16(gputest::Counter& c, std::mt19937& rng) {
    // GQA 8/2, K and V of different widths, more keys than threads per block.
    const int64_t n_head = 8, n_kv = 2, hd = 128, hdv = 64, n_ctx = 400, n_keys = 301, pos = 300;
    const auto q = random_floats(size_t(n_head * hd), rng, 0.3f);
    std::vector<uint16_t> kc(size_t(n_kv * n_ctx * hd)), vc(size_t(n_kv * n_ctx * hdv));
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& k : kc) k = tensor::fp32_to_fp16(nd(rng));
    for (auto& v : vc) v = tensor::fp32_to_fp16(nd(rng));
    // The newest key/value row goes in through store_kv_f16.
    const auto k_new = random_floats(size_t(n_kv * hd), rng),
               v_new = random_floats(size_t(n_kv * hdv), rng);
    for (int64_t g = 0; g < n_kv; ++g) {
        for (int64_t d = 0; d < hd; ++d)
            kc[size_t((g * n_ctx + pos) * hd + d)] =
                tensor::fp32_to_fp16(k_new[size_t(g * hd + d)]);
        for (int64_t d = 0; d < hdv; ++d)
            vc[size_t((g * n_ctx + pos) * hdv + d)] =
                tensor::fp32_to_fp16(v_new[size_t(g * hdv + d)]);
    }
    std::vector<uint16_t> kc_dev = kc, vc_dev = vc;
    for (int64_t g = 0; g < n_kv; ++g) {  // scribble over row pos on the device copy
        for (int64_t d = 0; d < hd; ++d) kc_dev[size_t((g * n_ctx + pos) * hd + d)] = 0x7C00;
        for (int64_t d = 0; d < hdv; ++d) vc_dev[size_t((g * n_ctx + pos) * hdv + d)] = 0x7C00;
    }
    DeviceBuffer<float> dq(q), dkn(k_new), dvn(v_new), out(size_t(n_head * hdv)),
        scores(size_t(n_head * n_ctx));
    DeviceBuffer<uint16_t> dk(kc_dev), dv(vc_dev);
    cuda::store_kv_f16(dkn.ptr, dk.ptr, n_kv, n_ctx, hd, pos, nullptr);
    cuda::store_kv_f16(dvn.ptr, dv.ptr, n_kv, n_ctx, hdv, pos, nullptr);
    cuda::attention_decode_f16(dq.ptr, dk.ptr, dv.ptr, out.ptr, n_head, n_kv, hd, hdv, n_ctx,
                               n_keys, scores.ptr, nullptr);
    if (!sync_ok(c, "attention_decode_f16")) return;
    c.check(dk.download(kc.size()) == kc && dv.download(vc.size()) == vc,
            "store_kv_f16 writes row pos of each head, F16 round-to-nearest-even");
    const auto got = out.download(size_t(n_head * hdv));
    double worst = 0;
    for (int64_t h = 0; h < n_head; ++h) {
        const int64_t g = h / (n_head / n_kv);
        std::vector<double> s(static_cast<size_t>(n_keys));
        double m = -1e300, sum = 0;
        for (int64_t t = 0; t < n_keys; ++t) {
            double d = 0;
            for (int64_t i = 0; i < hd; ++i)
                d += double(round_f16(q[size_t(h * hd + i)])) *
                     tensor::fp16_to_fp32(kc[size_t((g * n_ctx + t) * hd + i)]);
            s[size_t(t)] = d / std::sqrt(double(hd));
            m = std::max(m, s[size_t(t)]);
        }
        for (auto& x : s) sum += (x = std::exp(x - m));
        for (int64_t d = 0; d < hdv; ++d) {
            double acc = 0;
            for (int64_t t = 0; t < n_keys; ++t)
                acc += s[size_t(t)] * tensor::fp16_to_fp32(vc[size_t((g * n_ctx + t) * hdv + d)]);
            worst = std::max(worst, std::fabs(got[size_t(h * hdv + d)] - acc / sum));
        }
    }
    c.check(worst < 2e-3, "attention_decode_f16 (GQA, 301 keys, hd 128, hdv 64) matches, max err " +
                              std::to_string(worst));
}

}  // namespace

int main() {
    const cuda::DeviceProbe probe = cuda::probe_device(0);
    if (!probe.available) {
        std::printf("%s — skipping GPU layer kernel tests\n0 passed, 0 failed\n",
                    probe.reason.c_str());
        return 77;
    }
    gputest::Counter c;
    try {
        std::mt19937 rng(4321);
        test_rms_norm_rows(c, rng);
        test_rope_table(c, rng);
        test_attention_f16(c, rng);
    } catch (const std::exception& e) {
        c.check(false, std::string("exception: ") + e.what());
    }
    return c.finish();
}
