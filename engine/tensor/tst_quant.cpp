// Block formats: bit-exact dequantization against the gguf Python package's
// reference (committed fixtures) and between SIMD levels, the reference
// quantizers, activation quantization, and dot products.
#include <QTest>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/error.h"
#include "tensor/quant.h"
#include "tensor/quant_blocks.h"
#include "tensor/test_support.h"

using namespace powerinfer;
using namespace powerinfer::tensor;
using namespace powerinfer::tensor::testing;

namespace {

struct Fixture {
    std::string name;
    GgmlType type = GgmlType::F32;
    int64_t n = 0;
    std::vector<uint8_t> blocks;
    std::vector<float> dequantized;
    std::vector<float> source;  // empty unless the blocks are gguf's quantization of it
};

template <typename T>
T read_le(std::ifstream& in) {
    T v{};
    in.read(reinterpret_cast<char*>(&v), sizeof(v));
    return v;
}

std::vector<Fixture> load_fixtures() {
    const std::filesystem::path dir =
        std::filesystem::path(POWERINFER_SOURCE_DIR) / "engine" / "tensor" / "testdata";
    std::vector<Fixture> out;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".bin") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        char magic[4] = {};
        in.read(magic, 4);
        if (std::memcmp(magic, "PIQF", 4) != 0) continue;
        Fixture f;
        f.name = entry.path().stem().string();
        const auto version = read_le<uint32_t>(in);
        f.type = static_cast<GgmlType>(read_le<uint32_t>(in));
        f.n = read_le<uint32_t>(in);
        const bool has_source = read_le<uint32_t>(in) != 0;
        if (version != 1) continue;
        f.blocks.resize(row_bytes(f.type, f.n));
        in.read(reinterpret_cast<char*>(f.blocks.data()),
                static_cast<std::streamsize>(f.blocks.size()));
        f.dequantized.resize(static_cast<size_t>(f.n));
        in.read(reinterpret_cast<char*>(f.dequantized.data()), f.n * 4);
        if (has_source) {
            f.source.resize(static_cast<size_t>(f.n));
            in.read(reinterpret_cast<char*>(f.source.data()), f.n * 4);
        }
        if (in) out.push_back(std::move(f));
    }
    return out;
}

// Bound on |dot(w, xq) - dot(w, x)| from quantizing the activations: each
// x_i moves by at most half a step (amax of its block / 127), and the fp16
// scales (Q8_0/Q8_1 d and s) add a relative 2^-11 of their terms.
double activation_error_bound(GgmlType wt, const std::vector<float>& w,
                              const std::vector<float>& x) {
    const GgmlType act = vec_dot_type(wt);
    if (act == GgmlType::F32) return 0.0;
    const size_t block = ggml_traits(act).block_elems;
    const size_t wblock = ggml_traits(wt).block_elems;
    double bound = 0;
    for (size_t b = 0; b < x.size(); b += block) {
        double amax = 0;
        for (size_t i = b; i < b + block; ++i) amax = std::max(amax, std::fabs(double(x[i])));
        const double half_step = amax / 127.0 / 2.0 * 1.0001;
        for (size_t i = b; i < b + block; ++i) bound += std::fabs(double(w[i])) * half_step;
    }
    for (size_t b = 0; b < w.size(); b += wblock) {
        double wmax = 0;
        for (size_t i = b; i < b + wblock; ++i) wmax = std::max(wmax, std::fabs(double(w[i])));
        for (size_t i = b; i < b + wblock; ++i) bound += 2e-3 * wmax * std::fabs(double(x[i]));
    }
    return bound;
}

}  // namespace

class TestQuant : public QObject {
    Q_OBJECT

private slots:
    void blockSizesMatchTypeTable() {
        using namespace blocks;
        QCOMPARE(sizeof(BlockQ4_0), size_t(ggml_traits(GgmlType::Q4_0).block_bytes));
        QCOMPARE(sizeof(BlockQ4_1), size_t(ggml_traits(GgmlType::Q4_1).block_bytes));
        QCOMPARE(sizeof(BlockQ5_0), size_t(ggml_traits(GgmlType::Q5_0).block_bytes));
        QCOMPARE(sizeof(BlockQ5_1), size_t(ggml_traits(GgmlType::Q5_1).block_bytes));
        QCOMPARE(sizeof(BlockQ8_0), size_t(ggml_traits(GgmlType::Q8_0).block_bytes));
        QCOMPARE(sizeof(BlockQ8_1), size_t(ggml_traits(GgmlType::Q8_1).block_bytes));
        QCOMPARE(sizeof(BlockQ4_K), size_t(ggml_traits(GgmlType::Q4_K).block_bytes));
        QCOMPARE(sizeof(BlockQ5_K), size_t(ggml_traits(GgmlType::Q5_K).block_bytes));
        QCOMPARE(sizeof(BlockQ6_K), size_t(ggml_traits(GgmlType::Q6_K).block_bytes));
        QCOMPARE(sizeof(BlockQ8_K), size_t(ggml_traits(GgmlType::Q8_K).block_bytes));
    }

    void dispatcherReportsLevels() {
        const auto levels = simd_levels();
        QVERIFY(!levels.empty());
        QCOMPARE(levels.front(), std::string("scalar"));
        QVERIFY(!force_simd_level("no-such-level"));
        qInfo(
            "SIMD levels on this CPU: %s (default %s)",
            [&] {
                std::string s;
                for (const auto& l : levels) s += l + " ";
                return s;
            }()
                .c_str(),
            simd_level().c_str());
#if defined(__x86_64__) || defined(_M_X64)
        // Every x86-64 CPU this project targets has AVX2.
        QVERIFY(levels.size() >= 2);
#endif
    }

    void fp16RoundTripsEveryValue() {
        for (uint32_t h = 0; h < 65536; ++h) {
            const float f = fp16_to_fp32(static_cast<uint16_t>(h));
            if (std::isnan(f)) {
                QVERIFY(std::isnan(fp16_to_fp32(fp32_to_fp16(f))));
                continue;
            }
            QCOMPARE(fp32_to_fp16(f), static_cast<uint16_t>(h));
        }
        // Round to nearest even between 1 and the next fp16 (1 + 2^-10).
        QCOMPARE(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), uint16_t(0x3C00));
        QCOMPARE(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), uint16_t(0x3C02));
        QCOMPARE(fp32_to_fp16(65520.0f), uint16_t(0x7C00));  // rounds to infinity
        QCOMPARE(fp32_to_fp16(1e-8f), uint16_t(0x0000));
        QCOMPARE(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));
    }

    void bf16Conversions() {
        QCOMPARE(bf16_to_fp32(0x3F80), 1.0f);
        QCOMPARE(fp32_to_bf16(1.0f), uint16_t(0x3F80));
        // 1 + 2^-8 is halfway between two bf16 values: ties to even.
        QCOMPARE(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)), uint16_t(0x3F80));
        QCOMPARE(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), uint16_t(0x3F82));
        QVERIFY(std::isnan(bf16_to_fp32(fp32_to_bf16(std::nanf("")))));
    }

    // The committed fixtures hold gguf's (Python) dequantization of blocks.
    void dequantizeMatchesGgufFixtures() {
        LevelGuard guard;
        const auto fixtures = load_fixtures();
        QVERIFY2(fixtures.size() >= 15, "engine/tensor/testdata is missing fixture files");
        for (const auto& f : fixtures) {
            std::vector<float> out(static_cast<size_t>(f.n));
            dequantize_row_ref(f.type, f.blocks.data(), out.data(), f.n);
            QVERIFY2(same_bits(out.data(), f.dequantized.data(), out.size()),
                     ("reference dequantize differs from gguf: " + f.name).c_str());
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                std::fill(out.begin(), out.end(), 0.0f);
                dequantize_row(f.type, f.blocks.data(), out.data(), f.n);
                QVERIFY2(same_bits(out.data(), f.dequantized.data(), out.size()),
                         (level + " dequantize differs from gguf: " + f.name).c_str());
            }
        }
    }

    // Where gguf could quantize, our reference quantizer gives the same bytes.
    void quantizeMatchesGgufFixtures() {
        int checked = 0;
        for (const auto& f : load_fixtures()) {
            if (f.source.empty()) continue;
            std::vector<uint8_t> out(f.blocks.size());
            quantize_row_ref(f.type, f.source.data(), out.data(), f.n);
            QVERIFY2(out == f.blocks, ("quantize_row_ref differs from gguf: " + f.name).c_str());
            ++checked;
        }
        QVERIFY(checked >= 7);
    }

    void simdDequantizeEqualsReference_data() {
        QTest::addColumn<int>("type");
        for (GgmlType t : weight_types()) QTest::newRow(ggml_type_name(t).data()) << int(t);
    }
    void simdDequantizeEqualsReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        LevelGuard guard;
        std::mt19937 rng(7);
        const int64_t n = 4096;
        for (bool raw : {false, true}) {
            const auto row = random_row(rng, t, n, raw);
            std::vector<float> ref(n), out(n);
            dequantize_row_ref(t, row.data(), ref.data(), n);
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                dequantize_row(t, row.data(), out.data(), n);
                QVERIFY2(same_bits(ref.data(), out.data(), n), level.c_str());
            }
        }
    }

    // Quantize -> dequantize keeps the values within the format's precision.
    void quantizeRoundTripError_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<double>("max_rel_rms");
        QTest::newRow("F16") << int(GgmlType::F16) << 1e-3;
        QTest::newRow("BF16") << int(GgmlType::BF16) << 8e-3;
        QTest::newRow("Q8_0") << int(GgmlType::Q8_0) << 0.01;
        QTest::newRow("Q5_0") << int(GgmlType::Q5_0) << 0.06;
        QTest::newRow("Q5_1") << int(GgmlType::Q5_1) << 0.05;
        QTest::newRow("Q4_0") << int(GgmlType::Q4_0) << 0.12;
        QTest::newRow("Q4_1") << int(GgmlType::Q4_1) << 0.10;
        QTest::newRow("Q6_K") << int(GgmlType::Q6_K) << 0.03;
        QTest::newRow("Q5_K") << int(GgmlType::Q5_K) << 0.05;
        QTest::newRow("Q4_K") << int(GgmlType::Q4_K) << 0.10;
    }
    void quantizeRoundTripError() {
        QFETCH(int, type);
        QFETCH(double, max_rel_rms);
        const auto t = static_cast<GgmlType>(type);
        std::mt19937 rng(11);
        const int64_t n = 8192;
        const auto x = random_floats(rng, n, 0.1f);
        std::vector<uint8_t> q(row_bytes(t, n));
        quantize_row_ref(t, x.data(), q.data(), n);
        std::vector<float> back(n);
        dequantize_row_ref(t, q.data(), back.data(), n);
        double err = 0, ref = 0;
        for (int64_t i = 0; i < n; ++i) {
            err += (double(back[i]) - x[i]) * (double(back[i]) - x[i]);
            ref += double(x[i]) * x[i];
        }
        const double rel = std::sqrt(err / ref);
        QVERIFY2(rel < max_rel_rms, QByteArray::number(rel).constData());
        QVERIFY(rel > 0 || t == GgmlType::F16);
    }

    void zeroRowsQuantizeToZero() {
        for (GgmlType t : weight_types()) {
            const int64_t n = 512;
            std::vector<float> x(n, 0.0f), back(n, 1.0f);
            std::vector<uint8_t> q(row_bytes(t, n));
            quantize_row_ref(t, x.data(), q.data(), n);
            dequantize_row_ref(t, q.data(), back.data(), n);
            for (float v : back) QCOMPARE(v, 0.0f);
        }
    }

    // SIMD activation quantizers reproduce the reference bytes exactly.
    void activationQuantizationEqualsReference() {
        LevelGuard guard;
        std::mt19937 rng(3);
        const int64_t n = 4096;
        auto x = random_floats(rng, n, 2.0f);
        // Exact halves (ties for roundf) and a block whose largest magnitude
        // appears with both signs (the Q8_K sign rule).
        for (int i = 0; i < 32; ++i) x[i] = 0.5f * (i - 16);
        x[300] = 9.0f;
        x[301] = -9.0f;
        for (GgmlType act : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q8_K}) {
            const GgmlType wt = act == GgmlType::Q8_0   ? GgmlType::Q4_0
                                : act == GgmlType::Q8_1 ? GgmlType::Q4_1
                                                        : GgmlType::Q4_K;
            QuantizedVector ref;
            quantize_activations_ref(wt, x.data(), n, ref);
            QCOMPARE(ref.type, act);
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                QuantizedVector q;
                quantize_activations(wt, x.data(), n, q);
                QCOMPARE(q.type, act);
                QVERIFY2(q.data == ref.data,
                         (level + " " + std::string(ggml_type_name(act))).c_str());
            }
        }
    }

    // Q8_0/Q8_1 activations round as ggml's x86 code does (the llama.cpp
    // builds users run): scale 127 / amax, ties to even. With amax = 127 the
    // scale is exactly 1, so x.5 inputs are ties.
    void activationTiesRoundToEven() {
        LevelGuard guard;
        std::vector<float> x(32, 0.0f);
        x[0] = 127.0f;
        x[1] = 2.5f;
        x[2] = 3.5f;
        x[3] = -2.5f;
        x[4] = -0.5f;
        const int8_t want[5] = {127, 2, 4, -2, 0};
        for (const auto& level : simd_levels()) {
            QVERIFY(force_simd_level(level));
            for (GgmlType wt : {GgmlType::Q4_0, GgmlType::Q4_1}) {
                QuantizedVector q;
                quantize_activations(wt, x.data(), 32, q);
                // Both block layouts start with fp16 scale(s): 2 bytes for
                // Q8_0, 4 (d and s) for Q8_1.
                const size_t qs = wt == GgmlType::Q4_0 ? 2 : 4;
                for (int i = 0; i < 5; ++i)
                    QVERIFY2(int8_t(q.data[qs + size_t(i)]) == want[i],
                             (level + " element " + std::to_string(i)).c_str());
            }
        }
    }

    void dotProducts_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<bool>("raw");
        for (GgmlType t : weight_types()) {
            QTest::newRow((std::string(ggml_type_name(t)) + "/quantized").c_str())
                << int(t) << false;
            if (ggml_traits(t).block_elems > 1)
                QTest::newRow((std::string(ggml_type_name(t)) + "/random-blocks").c_str())
                    << int(t) << true;
        }
    }
    void dotProducts() {
        QFETCH(int, type);
        QFETCH(bool, raw);
        const auto t = static_cast<GgmlType>(type);
        LevelGuard guard;
        std::mt19937 rng(5);
        for (int64_t n : {int64_t(256), int64_t(4096), int64_t(11008)}) {
            const auto row = random_row(rng, t, n, raw);
            const auto x = random_floats(rng, n, 1.0f);
            std::vector<float> w(n);
            dequantize_row_ref(t, row.data(), w.data(), n);
            double exact = 0, magnitude = 0;
            for (int64_t i = 0; i < n; ++i) {
                exact += double(w[i]) * x[i];
                magnitude += std::fabs(double(w[i]) * x[i]);
            }
            const double act_bound = activation_error_bound(t, w, x);
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                QuantizedVector xq;
                quantize_activations(t, x.data(), n, xq);
                const double ref = vec_dot_ref(t, n, row.data(), xq);
                const double simd = vec_dot(t, n, row.data(), xq);
                // Same integer sums; only the float accumulation order differs.
                const auto xd = dequantize_activations(xq);
                double mag_q = 0;
                for (int64_t i = 0; i < n; ++i) mag_q += std::fabs(double(w[i]) * xd[i]);
                const double tight = 1e-5 * mag_q + 1e-30;
                QVERIFY2(std::fabs(simd - ref) <= tight,
                         qPrintable(QString("%1 n=%2: simd %3 ref %4 tol %5")
                                        .arg(level.c_str())
                                        .arg(n)
                                        .arg(simd, 0, 'g', 10)
                                        .arg(ref, 0, 'g', 10)
                                        .arg(tight)));
                // Against float64 on the unquantized activations.
                const double loose = act_bound + 1e-5 * magnitude + 1e-30;
                QVERIFY2(std::fabs(simd - exact) <= loose,
                         qPrintable(QString("%1 n=%2: simd %3 exact %4 tol %5")
                                        .arg(level.c_str())
                                        .arg(n)
                                        .arg(simd, 0, 'g', 10)
                                        .arg(exact, 0, 'g', 10)
                                        .arg(loose)));
            }
        }
    }

    void badInputThrows() {
        std::vector<uint8_t> buf(1024);
        std::vector<float> out(64);
        QVERIFY_THROWS_EXCEPTION(EngineError,
                                 dequantize_row(GgmlType::Q4_0, buf.data(), out.data(), 33));
        QVERIFY_THROWS_EXCEPTION(EngineError,
                                 dequantize_row(GgmlType::Q2_K, buf.data(), out.data(), 256));
        QVERIFY_THROWS_EXCEPTION(EngineError,
                                 quantize_row_ref(GgmlType::IQ2_XXS, out.data(), buf.data(), 256));
        QuantizedVector xq;
        std::vector<float> x(64, 1.0f);
        quantize_activations(GgmlType::Q4_0, x.data(), 64, xq);
        // Activations quantized for Q4_0 cannot feed a Q4_1 dot.
        QVERIFY_THROWS_EXCEPTION(EngineError, vec_dot(GgmlType::Q4_1, 64, buf.data(), xq));
        QVERIFY_THROWS_EXCEPTION(EngineError, vec_dot(GgmlType::Q4_0, 32, buf.data(), xq));
    }
};

QTEST_APPLESS_MAIN(TestQuant)
#include "tst_quant.moc"
