// Elementwise and normalisation ops against float64 references.
#include <QTest>
#include <algorithm>
#include <cstring>
#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "tensor/ops.h"
#include "tensor/quant.h"
#include "tensor/test_support.h"

using namespace powerinfer;
using namespace powerinfer::tensor;

namespace {

std::vector<float> random_vec(int n, float scale, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = d(rng);
    return v;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rel,
                  double abs_tol) {
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        const double tol = abs_tol + rel * std::fabs(want[i]);
        if (!(std::fabs(got[i] - want[i]) <= tol))
            QFAIL(
                qPrintable(QString("element %1: got %2 want %3").arg(i).arg(got[i]).arg(want[i])));
    }
}

// The rotation the ggml rope applies, in double.
std::vector<double> rope_ref(const std::vector<float>& x, int n_rot, int pos, double base,
                             double scale, bool neox) {
    std::vector<double> y(x.begin(), x.end());
    for (int i = 0; i < n_rot / 2; ++i) {
        const double theta = pos * scale * std::pow(base, -2.0 * i / n_rot);
        const int a = neox ? i : 2 * i;
        const int b = neox ? i + n_rot / 2 : 2 * i + 1;
        y[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
        y[b] = x[a] * std::sin(theta) + x[b] * std::cos(theta);
    }
    return y;
}

}  // namespace

class TestOps : public QObject {
    Q_OBJECT

private slots:
    void rmsNorm() {
        const int n = 576;
        const auto x = random_vec(n, 3.0f, 1);
        const auto w = random_vec(n, 1.0f, 2);
        std::vector<float> y(n);
        const float eps = 1e-5f;
        rms_norm(x.data(), w.data(), y.data(), n, eps);
        double ss = 0;
        for (float v : x) ss += double(v) * v;
        const double scale = 1.0 / std::sqrt(ss / n + eps);
        std::vector<double> want(n);
        for (int i = 0; i < n; ++i) want[i] = x[i] * scale * w[i];
        expect_close(y, want, 1e-6, 1e-7);
        // In place works too (the model normalises its residual copy).
        std::vector<float> inplace = x;
        rms_norm(inplace.data(), w.data(), inplace.data(), n, eps);
        QVERIFY(inplace == y);
    }

    void ropeNormalAndNeox_data() {
        QTest::addColumn<bool>("neox");
        QTest::addColumn<int>("n_rot");
        QTest::addColumn<int>("pos");
        QTest::addColumn<float>("freq_scale");
        QTest::newRow("normal/full/pos0") << false << 64 << 0 << 1.0f;
        QTest::newRow("normal/full/pos17") << false << 64 << 17 << 1.0f;
        QTest::newRow("normal/partial/pos4000") << false << 32 << 4000 << 1.0f;
        QTest::newRow("neox/full/pos123") << true << 64 << 123 << 1.0f;
        QTest::newRow("neox/partial/pos8191/scaled") << true << 48 << 8191 << 0.25f;
    }
    void ropeNormalAndNeox() {
        QFETCH(bool, neox);
        QFETCH(int, n_rot);
        QFETCH(int, pos);
        QFETCH(float, freq_scale);
        const int head_dim = 64;
        const auto x = random_vec(head_dim, 1.0f, 3);
        std::vector<float> y = x;
        rope(y.data(), head_dim, n_rot, pos, 10000.0f, freq_scale, neox);
        expect_close(y, rope_ref(x, n_rot, pos, 10000.0, freq_scale, neox), 1e-6, 1e-6);
        // Dimensions past n_rot are untouched.
        for (int i = n_rot; i < head_dim; ++i) QCOMPARE(y[i], x[i]);
        if (pos == 0) QVERIFY(y == x);
    }

    void ropeRejectsBadDimensions() {
        std::vector<float> h(64);
        QVERIFY_THROWS_EXCEPTION(EngineError, rope(h.data(), 64, 65, 1, 1e4f, 1.0f, false));
        QVERIFY_THROWS_EXCEPTION(EngineError, rope(h.data(), 64, 7, 1, 1e4f, 1.0f, true));
    }

    void siluGeluSwiglu() {
        const int n = 1000;
        auto x = random_vec(n, 4.0f, 4);
        x[0] = -80.0f;  // exp overflow territory
        x[1] = 80.0f;
        x[2] = 0.0f;
        std::vector<double> want_silu(n), want_gelu(n), want_swiglu(n);
        const auto up = random_vec(n, 1.0f, 5);
        for (int i = 0; i < n; ++i) {
            const double v = x[i];
            want_silu[i] = v / (1.0 + std::exp(-v));
            want_gelu[i] = 0.5 * v *
                           (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * v *
                                            (1.0 + 0.044715 * v * v)));
            want_swiglu[i] = want_silu[i] * up[i];
        }
        std::vector<float> s = x;
        silu(s.data(), n);
        expect_close(s, want_silu, 1e-6, 1e-7);
        std::vector<float> g = x;
        gelu(g.data(), n);
        expect_close(g, want_gelu, 1e-6, 1e-6);
        std::vector<float> sw(n);
        swiglu(x.data(), up.data(), sw.data(), n);
        expect_close(sw, want_swiglu, 1e-6, 1e-7);
    }

    void softmaxIsStable() {
        for (float scale : {1.0f, 50.0f}) {
            const int n = 300;
            auto x = random_vec(n, scale, 6);
            x[10] = 1000.0f;  // would overflow exp without the max shift
            std::vector<double> want(n);
            double m = x[0];
            for (float v : x) m = std::max(m, double(v));
            double sum = 0;
            for (int i = 0; i < n; ++i) sum += want[i] = std::exp(x[i] - m);
            for (auto& w : want) w /= sum;
            softmax(x.data(), n);
            expect_close(x, want, 1e-6, 1e-9);
        }
    }

    // The attention mix at widths whose column count per pass (dim / 8, at
    // most 16 per pass) takes each of the kernel's register counts,
    // batched or not: the scalar table's bits.
    void mixIdenticalOnEveryLevelAtEveryWidth() {
        testing::LevelGuard guard;
        std::mt19937 rng(5);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        const int64_t n = 37;
        for (int64_t dim : {8, 40, 64, 136, 256, 264}) {
            std::vector<uint16_t> v(static_cast<size_t>(n * dim));
            for (auto& h : v) h = fp32_to_fp16(nd(rng));
            std::vector<float> w(static_cast<size_t>(n));
            for (auto& x : w) x = fp16_to_fp32(fp32_to_fp16(std::fabs(nd(rng)) / float(n)));
            std::vector<float> scratch(static_cast<size_t>(mix_f16_scratch_floats(dim)));
            auto run = [&](bool batched) {
                std::vector<float> out(static_cast<size_t>(dim));
                mix_f16(w.data(), v.data(), n, dim, dim, batched, out.data(), scratch.data());
                return out;
            };
            QVERIFY(force_simd_level("scalar"));
            const std::vector<float> ref[2] = {run(false), run(true)};
            for (const auto& level : testing::simd_levels()) {
                QVERIFY(force_simd_level(level));
                for (int b = 0; b < 2; ++b)
                    QVERIFY2(
                        run(b == 1) == ref[b],
                        qPrintable(
                            QString("%1, dim %2, batched %3").arg(level.c_str()).arg(dim).arg(b)));
            }
        }
    }

    // The ggml-exact math (attention scores and mix, softmax, SwiGLU) must
    // give the same bits on every SIMD level: the scalar table is the
    // reference, the others only run it faster. And it must be right: each
    // piece against float64.
    void ggmlMathIdenticalOnEveryLevelAndCloseToFloat64() {
        testing::LevelGuard guard;
        const int64_t dim = 64, n_keys = 77;
        std::mt19937 rng(11);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<uint16_t> keys(static_cast<size_t>(n_keys * dim)), vals(keys.size());
        std::vector<uint16_t> q(static_cast<size_t>(dim));
        for (auto& h : keys) h = fp32_to_fp16(nd(rng));
        for (auto& h : vals) h = fp32_to_fp16(nd(rng));
        for (auto& h : q) h = fp32_to_fp16(nd(rng));
        auto x = random_vec(1000, 4.0f, 12);
        x[0] = -200.0f;  // exp underflow and overflow in SwiGLU
        x[1] = 200.0f;
        // ... either side of the polynomial's clamp (|n| = 192: |x| near
        // 133), the edges of float exp, and both zeros.
        const float edges[] = {-133.5f, 133.5f, -132.9f, 132.9f, -88.8f,
                               88.8f,   -87.3f, 0.0f,    -0.0f};
        for (size_t k = 0; k < std::size(edges); ++k) x[2 + k] = edges[k];
        const auto up = random_vec(1000, 1.0f, 13);

        struct Out {
            std::vector<float> scores[2], mix[2], sw, sm;
            std::vector<std::vector<float>> sm_short;  // rows of a causal mask's lengths
        };
        auto run = [&](Out& o) {
            std::vector<float> scratch(static_cast<size_t>(mix_f16_scratch_floats(dim)));
            for (int b = 0; b < 2; ++b) {
                o.scores[b].assign(size_t(n_keys), 0.0f);
                scores_f16(keys.data(), n_keys, dim, q.data(), 0.125f, b == 1, o.scores[b].data());
                std::vector<float> p = o.scores[b];
                softmax(p.data(), n_keys);
                for (auto& v : p) v = fp16_to_fp32(fp32_to_fp16(v));
                o.mix[b].assign(size_t(dim), 0.0f);
                mix_f16(p.data(), vals.data(), n_keys, dim, dim, b == 1, o.mix[b].data(),
                        scratch.data());
            }
            o.sw.assign(x.size(), 0.0f);
            swiglu(x.data(), up.data(), o.sw.data(), int64_t(x.size()));
            o.sm = x;
            softmax(o.sm.data(), int64_t(o.sm.size()));
            for (int64_t len : {1, 2, 7, 8, 9, 15, 16, 17, 24, 33}) {
                std::vector<float> row(x.begin() + 20, x.begin() + 20 + len);
                softmax(row.data(), len);
                o.sm_short.push_back(row);
            }
        };
        const auto levels = testing::simd_levels();
        QVERIFY(force_simd_level("scalar"));
        Out ref;
        run(ref);
        for (const auto& level : levels) {
            QVERIFY(force_simd_level(level));
            Out o;
            run(o);
            for (int b = 0; b < 2; ++b) {
                QVERIFY2(o.scores[b] == ref.scores[b], level.c_str());
                QVERIFY2(o.mix[b] == ref.mix[b], level.c_str());
            }
            QVERIFY2(o.sw == ref.sw, level.c_str());
            QVERIFY2(o.sm == ref.sm, level.c_str());
            QVERIFY2(o.sm_short == ref.sm_short, level.c_str());
        }
        // float64 references.
        std::vector<double> want_scores(static_cast<size_t>(n_keys)), want_sw(x.size());
        for (int64_t t = 0; t < n_keys; ++t) {
            double s = 0;
            for (int64_t d = 0; d < dim; ++d)
                s += double(fp16_to_fp32(keys[size_t(t * dim + d)])) * fp16_to_fp32(q[size_t(d)]);
            want_scores[size_t(t)] = s * 0.125;
        }
        for (size_t i = 0; i < x.size(); ++i)
            want_sw[i] = double(x[i]) / (1.0 + std::exp(-double(x[i]))) * up[i];
        for (int b = 0; b < 2; ++b) expect_close(ref.scores[b], want_scores, 1e-6, 1e-6);
        expect_close(ref.sw, want_sw, 2e-6, 1e-7);
        std::vector<double> p(want_scores), want_mix(static_cast<size_t>(dim), 0.0);
        double m = *std::max_element(p.begin(), p.end()), sum = 0;
        for (auto& v : p) sum += v = std::exp(v - m);
        for (int64_t t = 0; t < n_keys; ++t)
            for (int64_t d = 0; d < dim; ++d)
                want_mix[size_t(d)] += p[size_t(t)] / sum * fp16_to_fp32(vals[size_t(t * dim + d)]);
        // F16 probabilities: about 2^-11 relative per term.
        for (int b = 0; b < 2; ++b) expect_close(ref.mix[b], want_mix, 2e-3, 2e-3);
    }

    // GeGLU (Gemma 3's gate) looks gelu up in an F16 table as ggml does; every
    // level gives the scalar form's bits: every F16 value as the gate, the
    // clamps at -10 and 10 and the values next to them, infinities, and
    // tails of every length. And it is gelu(g) * u within the table's F16
    // rounding.
    void gegluIdenticalOnEveryLevelAndCloseToFloat64() {
        testing::LevelGuard guard;
        std::vector<float> g;
        for (uint32_t h = 0; h < 0x10000; ++h) {
            const float v = fp16_to_fp32(static_cast<uint16_t>(h));
            if (v == v) g.push_back(v);  // NaN gates give NaN on every level, in any payload
        }
        for (const float v : {-10.0f, 10.0f, std::nextafter(-10.0f, 0.0f),
                              std::nextafter(10.0f, 0.0f), std::nextafter(10.0f, 20.0f),
                              std::nextafter(-10.0f, -20.0f), 65520.0f, -65520.0f, 1e30f, -1e30f})
            g.push_back(v);
        const auto r = random_vec(1003, 6.0f, 31);
        g.insert(g.end(), r.begin(), r.end());
        std::vector<float> up = random_vec(int(g.size()), 2.0f, 32);
        const auto run = [&](int64_t n) {
            std::vector<float> o(size_t(n), 7.0f);
            geglu(g.data(), up.data(), o.data(), n);
            return o;
        };
        QVERIFY(force_simd_level("scalar"));
        const int64_t all = int64_t(g.size());
        const std::vector<float> ref = run(all);
        for (const auto& level : testing::simd_levels()) {
            QVERIFY(force_simd_level(level));
            for (const int64_t n : {all, int64_t(1), int64_t(7), int64_t(8), int64_t(13)}) {
                const std::vector<float> o = run(n);
                QVERIFY2(std::memcmp(o.data(), ref.data(), size_t(n) * 4) == 0, level.c_str());
            }
        }
        for (size_t i = 0; i < g.size(); ++i) {
            const double v = g[i];
            if (std::fabs(v) > 60000.0) continue;
            // gelu at the gate rounded to F16, as the table is indexed.
            const double h = fp16_to_fp32(fp32_to_fp16(g[i]));
            const double gelu = 0.5 * h *
                                (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * h *
                                                 (1.0 + 0.044715 * h * h)));
            const double want = (v <= -10.0 ? 0.0 : v >= 10.0 ? v : gelu) * up[i];
            // The F16 result: 2^-11 relative, or 2^-24 among F16's denormals;
            // and ggml's 1 + tanh in float cancels where tanh nears -1 (about
            // 2^-24 x |h| absolute).
            QVERIFY2(std::fabs(ref[i] - want) <=
                         1e-3 * std::fabs(want) + (1e-7 + 6e-8 * std::fabs(h)) * std::fabs(up[i]),
                     qPrintable(QString("g %1: %2 vs %3").arg(v).arg(ref[i]).arg(want)));
        }
    }

    // The row conversions to F16 give fp32_to_fp16's bits on every level:
    // normal values, ties, denormals, overflow to infinity, signed zero.
    void f16RowConversionsMatchTheScalarOne() {
        testing::LevelGuard guard;
        std::vector<float> x = random_vec(1003, 8.0f, 21);
        for (size_t i = 0; i < 200; ++i) x[i] *= 1e-5f;  // F16 denormals
        x[200] = 65504.0f;
        x[201] = 65520.0f;  // rounds to infinity
        x[202] = -1e9f;
        x[203] = -0.0f;
        x[204] = 1.0f + 1.0f / 2048.0f;  // a tie: rounds to even
        x[205] = 5.96e-8f;               // the smallest denormal
        std::vector<uint16_t> want(x.size());
        std::vector<float> want_round(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            want[i] = fp32_to_fp16(x[i]);
            want_round[i] = fp16_to_fp32(want[i]);
        }
        for (const auto& level : testing::simd_levels()) {
            QVERIFY(force_simd_level(level));
            for (const int64_t n : {int64_t(1003), int64_t(7), int64_t(16)}) {
                std::vector<uint16_t> y(size_t(n), 0x5555);
                to_f16(x.data(), y.data(), n);
                QVERIFY2(std::equal(y.begin(), y.end(), want.begin()), level.c_str());
                std::vector<float> r(x.begin(), x.begin() + n);
                round_to_f16(r.data(), n);
                for (int64_t i = 0; i < n; ++i)
                    QVERIFY2(std::memcmp(&r[size_t(i)], &want_round[size_t(i)], 4) == 0,
                             level.c_str());
            }
        }
    }

    // The attention kernels take their fast paths by head size and key count
    // (16 keys at a time on AVX-512, wider registers for the mix, one key at
    // a time for the rest): every shape gives the scalar table's bits.
    void attentionKernelsIdenticalOnEveryLevel() {
        testing::LevelGuard guard;
        std::mt19937 rng(5);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        for (const int64_t dim : {64, 80, 128, 256, 512})
            for (const int64_t n_keys : {1, 15, 16, 17, 64, 300}) {
                std::vector<uint16_t> keys(static_cast<size_t>(n_keys * dim)), vals(keys.size());
                std::vector<uint16_t> q(static_cast<size_t>(dim));
                for (auto& h : keys) h = fp32_to_fp16(nd(rng));
                for (auto& h : vals) h = fp32_to_fp16(nd(rng));
                for (auto& h : q) h = fp32_to_fp16(nd(rng));
                std::vector<float> p(static_cast<size_t>(n_keys));
                for (auto& v : p) v = fp16_to_fp32(fp32_to_fp16(std::abs(nd(rng)) / 8.0f));
                auto run = [&](bool batched, std::vector<float>& scores, std::vector<float>& mix) {
                    std::vector<float> scratch(static_cast<size_t>(mix_f16_scratch_floats(dim)));
                    scores.assign(static_cast<size_t>(n_keys), 0.0f);
                    scores_f16(keys.data(), n_keys, dim, q.data(), 0.125f, batched, scores.data());
                    mix.assign(static_cast<size_t>(dim), 0.0f);
                    mix_f16(p.data(), vals.data(), n_keys, dim, dim, batched, mix.data(),
                            scratch.data());
                };
                for (const bool batched : {false, true}) {
                    QVERIFY(force_simd_level("scalar"));
                    std::vector<float> want_scores, want_mix;
                    run(batched, want_scores, want_mix);
                    for (const auto& level : testing::simd_levels()) {
                        QVERIFY(force_simd_level(level));
                        std::vector<float> scores, mix;
                        run(batched, scores, mix);
                        const std::string what = level + " dim " + std::to_string(dim) + ", " +
                                                 std::to_string(n_keys) + " keys";
                        QVERIFY2(scores == want_scores, what.c_str());
                        QVERIFY2(mix == want_mix, what.c_str());
                    }
                }
            }
    }

    void addAccumulates() {
        auto y = random_vec(100, 1.0f, 7);
        const auto x = random_vec(100, 1.0f, 8);
        std::vector<double> want(100);
        for (int i = 0; i < 100; ++i) want[i] = double(y[i]) + x[i];
        add(y.data(), x.data(), 100);
        expect_close(y, want, 1e-7, 1e-7);
    }
};

QTEST_APPLESS_MAIN(TestOps)
#include "tst_ops.moc"
