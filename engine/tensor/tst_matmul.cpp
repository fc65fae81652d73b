// matvec / matmul / matvec_rows / axpy_rows against float64 references
// built from dequantize_row_ref, on every SIMD level, and their determinism
// across thread counts.
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/matmul.h"
#include "tensor/panels.h"
#include "tensor/quant.h"
#include "tensor/sparse_down.h"
#include "tensor/test_support.h"
#include "tensor/u4_rows.h"

using namespace powerinfer;
using namespace powerinfer::tensor;
using namespace powerinfer::tensor::testing;

namespace {

// y = W xq in float64 from the dequantized weights and activations; the
// tolerance only covers float accumulation in the kernels.
void check_products(const Matrix& m, const std::vector<double>& x, const float* y,
                    const int64_t* rows, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        const int64_t r = rows ? rows[i] : i;
        double want = 0, mag = 0;
        for (int64_t c = 0; c < m.view.cols; ++c) {
            const double p = double(m.deq[r * m.view.cols + c]) * x[c];
            want += p;
            mag += std::fabs(p);
        }
        double tol = 1e-5 * mag + 1e-30;
        if (vec_dot_type(m.view.type) == GgmlType::Q8_1) {
            // The kernels use the block sum s = d * sum(q) rounded to fp16
            // (times the weight block's offset m, |m| <= 2 max|w|).
            for (int64_t b = 0; b < m.view.cols; b += 32) {
                double wmax = 0, xsum = 0;
                for (int64_t c = b; c < b + 32; ++c) {
                    wmax = std::max(wmax, std::fabs(double(m.deq[r * m.view.cols + c])));
                    xsum += x[c];
                }
                tol += 2 * wmax * std::fabs(xsum) * std::ldexp(1.0, -10);
            }
        }
        if (!(std::fabs(y[i] - want) <= tol))
            QFAIL(qPrintable(QString("%1 row %2: got %3 want %4 (tol %5)")
                                 .arg(ggml_type_name(m.view.type).data())
                                 .arg(r)
                                 .arg(y[i], 0, 'g', 9)
                                 .arg(want, 0, 'g', 9)
                                 .arg(tol)));
    }
}

void add_type_rows() {
    QTest::addColumn<int>("type");
    for (GgmlType t : weight_types()) QTest::newRow(ggml_type_name(t).data()) << int(t);
}

// A dot-product fixture from llama.cpp's CPU library
// (tests/reference/make_dot_fixtures.py): weight rows, float activations,
// ggml's quantization of them, and ggml's dots (token-major).
struct GgmlDots {
    std::string name;
    GgmlType type = GgmlType::F32, act = GgmlType::F32;
    int64_t n = 0, rows = 0, tokens = 0;
    std::vector<uint8_t> weights, xq;
    std::vector<float> x, dots;
};

std::vector<GgmlDots> load_ggml_dots() {
    const auto dir = std::filesystem::path(POWERINFER_SOURCE_DIR) / "engine/tensor/testdata";
    std::vector<GgmlDots> out;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".bin") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        char magic[4] = {};
        uint32_t h[6] = {};
        in.read(magic, 4);
        in.read(reinterpret_cast<char*>(h), sizeof(h));
        if (!in || std::memcmp(magic, "PIDF", 4) != 0 || h[0] != 1) continue;
        GgmlDots f;
        f.name = entry.path().stem().string();
        f.type = static_cast<GgmlType>(h[1]);
        f.act = static_cast<GgmlType>(h[2]);
        f.n = h[3];
        f.rows = h[4];
        f.tokens = h[5];
        const auto read = [&in](auto& v, size_t count) {
            v.resize(count);
            in.read(reinterpret_cast<char*>(v.data()),
                    static_cast<std::streamsize>(count * sizeof(v[0])));
        };
        read(f.weights, size_t(f.rows) * row_bytes(f.type, f.n));
        read(f.x, size_t(f.tokens * f.n));
        read(f.xq, size_t(f.tokens) * row_bytes(f.act, f.n));
        read(f.dots, size_t(f.tokens * f.rows));
        if (in) out.push_back(std::move(f));
    }
    return out;
}

}  // namespace

class TestMatmul : public QObject {
    Q_OBJECT

private slots:
    void matvecMatchesReference_data() { add_type_rows(); }
    void matvecMatchesReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        LevelGuard guard;
        // Big enough (>64 KB) to take the parallel path.
        const Matrix m = make_matrix(t, 301, 512, 1);
        std::mt19937 rng(2);
        const auto x = random_floats(rng, 512);
        ThreadPool pool(2);
        for (const auto& level : simd_levels()) {
            QVERIFY(force_simd_level(level));
            QuantizedVector xq;
            quantize_activations(t, x.data(), 512, xq);
            const auto xd = dequantize_activations(xq);
            std::vector<float> y(301), y2(301);
            matvec_q(pool, m.view, xq, y.data());
            check_products(m, xd, y.data(), nullptr, 301);
            matvec(pool, m.view, x.data(), y2.data());
            QVERIFY(y == y2);
            // Rows computed several at a time equal the single-row dot bit
            // for bit (the greedy match with llama.cpp relies on its order).
            for (int64_t r = 0; r < 301; ++r)
                QVERIFY2(y[size_t(r)] == vec_dot(t, 512, m.view.row(r), xq),
                         qPrintable(QString("%1 row %2").arg(level.c_str()).arg(r)));
        }
    }

    // Rows longer than the kernels' scale buffers take the single-row path.
    void longRowsMatchSingleDot() {
        LevelGuard guard;
        const int64_t rows = 6, cols = 33 * 1024;
        ThreadPool pool(2);
        std::mt19937 rng(9);
        for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q8_0}) {
            const Matrix m = make_matrix(t, rows, cols, 10);
            const auto X = random_floats(rng, 5 * cols);
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                std::vector<float> Y(static_cast<size_t>(5 * rows)), y(static_cast<size_t>(rows));
                matmul(pool, m.view, X.data(), 5, Y.data());
                matvec(pool, m.view, X.data(), y.data());
                QuantizedVector xq;
                for (int64_t tok = 0; tok < 5; ++tok) {
                    quantize_activations(t, X.data() + tok * cols, cols, xq);
                    for (int64_t r = 0; r < rows; ++r)
                        QVERIFY(Y[size_t(tok * rows + r)] == vec_dot(t, cols, m.view.row(r), xq));
                }
                for (int64_t r = 0; r < rows; ++r) QCOMPARE(y[size_t(r)], Y[size_t(r)]);
            }
        }
    }

    // The neuron-major copy is lossless, and the column-sparse product over
    // an active set equals the scalar reference bit for bit on every level
    // and float64 within the int8 rounding of h.
    void sparseDownMatchesReference_data() {
        QTest::addColumn<int>("type");
        for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q4_K})
            QTest::newRow(ggml_type_name(t).data()) << int(t);
    }
    void sparseDownMatchesReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        LevelGuard guard;
        const int64_t n_out = 96, n_ff = 512;
        const Matrix m = make_matrix(t, n_out, n_ff, 11);
        QVERIFY(neuron_major_supported(m.view));
        const NeuronMajorDown nm = make_neuron_major_down(m.view);
        // Q4_0/Q4_1 keep d and m as fp16 already: their scales halve, losslessly.
        if (t != GgmlType::Q4_K) QVERIFY(!nm.a16.empty() && nm.a.empty());
        auto scale = [&](const WeightVector<float>& f, const WeightVector<uint16_t>& h, size_t at) {
            return f.empty() ? fp16_to_fp32_portable(h[at]) : f[at];
        };
        for (int64_t j = 0; j < n_out; ++j)
            for (int64_t i = 0; i < n_ff; ++i) {
                const size_t at = size_t((i / 32) * n_out + scale_pos(j));
                const int q = (nm.q[size_t(i * n_out / 2 + (j / 32) * 16 + j % 16)] >>
                               ((j % 32) >= 16 ? 4 : 0)) &
                              15;
                volatile float prod = scale(nm.a, nm.a16, at) * float(q);
                const float v = prod + scale(nm.c, nm.c16, at);
                if (v != m.deq[size_t(j * n_ff + i)])
                    QFAIL(qPrintable(QString("weight (%1, %2) is not lossless").arg(j).arg(i)));
            }
        std::mt19937 rng(12);
        std::uniform_real_distribution<float> u(-2.0f, 2.0f);
        ThreadPool pool(2);
        for (double keep : {0.0, 0.03, 0.4, 1.0}) {
            std::vector<int32_t> ids;
            std::vector<float> h;
            for (int32_t i = 0; i < n_ff; ++i)
                if (std::uniform_real_distribution<double>(0, 1)(rng) < keep) {
                    ids.push_back(i);
                    h.push_back(u(rng));
                }
            SparseDownInput in;
            prepare_sparse_down(ids.data(), h.data(), int64_t(ids.size()), in);
            std::vector<float> ref(static_cast<size_t>(n_out)), y(static_cast<size_t>(n_out));
            sparse_down_ref(nm, in, ref.data());
            for (int64_t j = 0; j < n_out; ++j) {
                double want = 0, tol = 1e-5;
                for (size_t k = 0; k < ids.size(); ++k) {
                    const double w = m.deq[size_t(j * n_ff + ids[k])];
                    want += w * h[k];
                    tol += std::fabs(w) * 2.0 / 127.0;  // |h| <= 2: half an int8 step each
                }
                QVERIFY2(std::fabs(ref[size_t(j)] - want) <= tol,
                         qPrintable(QString("keep %1 output %2: %3 vs %4")
                                        .arg(keep)
                                        .arg(j)
                                        .arg(ref[size_t(j)])
                                        .arg(want)));
            }
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                sparse_down(pool, nm, in, y.data());
                QVERIFY2(y == ref, qPrintable(QString("%1, keep %2").arg(level.c_str()).arg(keep)));
            }
            // Slices ending on 32-neuron groups, prepared apart and
            // concatenated (what the exact FFN's blocks do), give the same.
            const size_t cut = size_t(std::lower_bound(ids.begin(), ids.end(), 192) - ids.begin());
            SparseDownInput lo, hi, joined;
            prepare_sparse_down(ids.data(), h.data(), int64_t(cut), lo);
            prepare_sparse_down(ids.data() + cut, h.data() + cut, int64_t(ids.size() - cut), hi);
            clear_sparse_down(joined);
            append_sparse_down(lo, joined);
            append_sparse_down(hi, joined);
            QCOMPARE(joined.active, in.active);
            QVERIFY(joined.quad_ids == in.quad_ids && joined.quad_qh == in.quad_qh &&
                    joined.group == in.group && joined.quad_begin == in.quad_begin &&
                    joined.dh == in.dh && joined.hsum == in.hsum);
            // Out of order is refused, not summed wrongly.
            if (!lo.group.empty() && !hi.group.empty()) {
                SparseDownInput wrong;
                append_sparse_down(hi, wrong);
                QVERIFY_THROWS_EXCEPTION(EngineError, append_sparse_down(lo, wrong));
            }
        }
    }

    // The 4-bit row format (the sparse head's preview): within its
    // quantization's error of the float64 product, and the same bits on
    // every level, tails of fewer than four rows and more than four chunks
    // (the int16 sums widen every four) included.
    void u4RowsMatchReference() {
        LevelGuard guard;
        std::mt19937 rng(21);
        std::normal_distribution<float> g(0.0f, 1.0f);
        for (const int64_t cols : {32, 64, 150, 192, 320, 832}) {
            const int64_t rows = 37;
            std::vector<float> a(static_cast<size_t>(rows * cols)), x(static_cast<size_t>(cols));
            for (float& v : a) v = g(rng) * 0.3f + 0.05f;
            for (float& v : x) v = g(rng) * 2.0f;
            x[0] = 9.0f;  // one large component, as the preview's input has
            U4Rows w = make_u4_rows(rows, cols);
            QCOMPARE(w.cols % kU4Chunk, int64_t(0));
            QVERIFY(w.cols >= cols && w.cols < cols + kU4Chunk);
            for (int64_t i = 0; i < rows; ++i) set_u4_row(w, i, a.data() + i * cols, cols);
            U4Input in;
            quantize_u4_input(x.data(), cols, w.cols, in);
            std::vector<float> ref(static_cast<size_t>(rows)), y(ref.size());
            u4_rows_product_ref(w, in, 0, rows, ref.data());
            for (int64_t i = 0; i < rows; ++i) {
                double want = 0, tol = 1e-4;
                const float* row = a.data() + i * cols;
                const double d = w.d[size_t(i)];
                for (int64_t k = 0; k < cols; ++k) {
                    want += double(row[k]) * x[size_t(k)];
                    // Half a weight step and half an input step per term.
                    tol += 0.5 * d * std::fabs(x[size_t(k)]) +
                           0.5 * in.scale * (std::fabs(row[k]) + 0.5 * d);
                }
                QVERIFY2(std::fabs(ref[size_t(i)] - want) <= tol,
                         qPrintable(QString("cols %1 row %2: %3 vs %4 (tol %5)")
                                        .arg(cols)
                                        .arg(i)
                                        .arg(ref[size_t(i)])
                                        .arg(want)
                                        .arg(tol)));
            }
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                for (const int64_t begin : {int64_t(0), int64_t(3)}) {
                    std::fill(y.begin(), y.end(), -1.0f);
                    u4_rows_product(w, in, begin, rows, y.data());
                    for (int64_t i = begin; i < rows; ++i)
                        QVERIFY2(y[size_t(i - begin)] == ref[size_t(i)],
                                 qPrintable(QString("%1, cols %2, row %3")
                                                .arg(level.c_str())
                                                .arg(cols)
                                                .arg(i)));
                }
            }
        }
        // A zero input and a constant row: no division by zero.
        U4Rows w = make_u4_rows(1, 64);
        const std::vector<float> c(64, 0.25f), zero(64, 0.0f);
        set_u4_row(w, 0, c.data(), 64);
        U4Input in;
        quantize_u4_input(zero.data(), 64, 64, in);
        float y = -1;
        u4_rows_product(w, in, 0, 1, &y);
        QCOMPARE(y, 0.0f);
        quantize_u4_input(c.data(), 64, 64, in);
        u4_rows_product(w, in, 0, 1, &y);
        QVERIFY(std::fabs(y - 64 * 0.0625f) < 1e-3f);
    }

    void matvecIdenticalAcrossThreadCounts() {
        const Matrix m = make_matrix(GgmlType::Q4_1, 1000, 1024, 3);
        std::mt19937 rng(4);
        const auto x = random_floats(rng, 1024);
        std::vector<float> first;
        for (int threads : {1, 2, 3, 2}) {
            ThreadPool pool(threads);
            std::vector<float> y(1000);
            matvec(pool, m.view, x.data(), y.data());
            if (first.empty())
                first = y;
            else
                QVERIFY(y == first);
        }
    }

    void matmulMatchesReference_data() { add_type_rows(); }
    void matmulMatchesReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        LevelGuard guard;
        const int64_t rows = 67, cols = 512;
        const Matrix m = make_matrix(t, rows, cols, 5);
        ThreadPool pool(2);
        std::mt19937 rng(6);
        for (const auto& level : simd_levels()) {
            QVERIFY(force_simd_level(level));
            // 70 tokens cross a token tile boundary; 3 and 1 are small batches.
            for (int64_t n : {int64_t(1), int64_t(3), int64_t(70)}) {
                const auto X = random_floats(rng, n * cols);
                std::vector<float> Y(static_cast<size_t>(n * rows));
                matmul(pool, m.view, X.data(), n, Y.data());
                for (int64_t tok = 0; tok < n; ++tok) {
                    QuantizedVector xq;
                    quantize_activations(t, X.data() + tok * cols, cols, xq);
                    check_products(m, dequantize_activations(xq), Y.data() + tok * rows, nullptr,
                                   rows);
                    // Tiles of rows x tokens keep each pair's single-dot order.
                    for (int64_t r = 0; r < rows; ++r)
                        QVERIFY2(Y[size_t(tok * rows + r)] == vec_dot(t, cols, m.view.row(r), xq),
                                 qPrintable(QString("%1 n=%2 token %3 row %4")
                                                .arg(level.c_str())
                                                .arg(n)
                                                .arg(tok)
                                                .arg(r)));
                }
            }
        }
    }

    // The token-tile kernels (the K-quants' and the 32-element formats') give
    // each token the single-row dot's bits: every token count the tile splits
    // (1-3 tokens left over, whole tiles, both), row slices, padded activation
    // and output strides, and matmul's split of a batch into tiles and single
    // rows.
    void tilesGiveTheDotBits() {
        LevelGuard guard;
        ThreadPool pool(2);
        std::mt19937 rng(12);
        const int64_t rows = 37, cols = 1536;  // six K-quant blocks per row
        for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q4_0,
                           GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q8_0}) {
            const Matrix m = make_matrix(t, rows, cols, 13);
            const size_t act = row_bytes(vec_dot_type(t), cols);
            const size_t x_stride = act + 64;  // padding the kernel must skip
            const size_t out_stride = static_cast<size_t>(rows) + 5;
            constexpr int64_t kMaxTokens = 11;
            const auto X = random_floats(rng, kMaxTokens * cols);
            for (const auto& level : simd_levels()) {
                QVERIFY(force_simd_level(level));
                std::vector<QuantizedVector> xq(kMaxTokens);
                std::vector<uint8_t> xs(x_stride * kMaxTokens, 0xA5);
                for (int64_t k = 0; k < kMaxTokens; ++k) {
                    quantize_activations(t, X.data() + k * cols, cols, xq[size_t(k)]);
                    QCOMPARE(xq[size_t(k)].data.size(), act);
                    std::copy(xq[size_t(k)].data.begin(), xq[size_t(k)].data.end(),
                              xs.begin() + static_cast<std::ptrdiff_t>(k * x_stride));
                }
                const auto tile = kernels::active_table().types[kernels::type_index(t)].dot_tile;
                for (int64_t count = 1; count <= kMaxTokens; ++count)
                    for (const auto& [r0, r1] :
                         {std::pair<int64_t, int64_t>{0, rows}, {5, 6}, {3, 30}}) {
                        std::vector<float> out(out_stride * size_t(count), -7.0f);
                        tile(cols, m.view.row(r0), m.view.row_bytes, r1 - r0, xs.data(), x_stride,
                             count, out.data(), out_stride);
                        for (int64_t k = 0; k < count; ++k)
                            for (int64_t r = 0; r < int64_t(out_stride); ++r) {
                                const float got = out[size_t(k) * out_stride + size_t(r)];
                                const float want =
                                    r < r1 - r0
                                        ? vec_dot(t, cols, m.view.row(r0 + r), xq[size_t(k)])
                                        : -7.0f;  // outside the tile: untouched
                                QVERIFY2(same_bits(&got, &want, 1),
                                         qPrintable(QString("%1 %2 count %3 rows %4-%5 token %6 "
                                                            "row %7: %8 vs %9")
                                                        .arg(ggml_type_name(t).data())
                                                        .arg(level.c_str())
                                                        .arg(count)
                                                        .arg(r0)
                                                        .arg(r1)
                                                        .arg(k)
                                                        .arg(r)
                                                        .arg(got, 0, 'g', 9)
                                                        .arg(want, 0, 'g', 9)));
                            }
                    }
                for (int64_t n = 1; n <= kMaxTokens; ++n) {
                    std::vector<float> Y(static_cast<size_t>(n * rows));
                    matmul(pool, m.view, X.data(), n, Y.data());
                    for (int64_t k = 0; k < n; ++k)
                        for (int64_t r = 0; r < rows; ++r) {
                            const float want = vec_dot(t, cols, m.view.row(r), xq[size_t(k)]);
                            QVERIFY2(same_bits(&Y[size_t(k * rows + r)], &want, 1),
                                     qPrintable(QString("%1 %2 matmul n=%3 token %4 row %5")
                                                    .arg(ggml_type_name(t).data())
                                                    .arg(level.c_str())
                                                    .arg(n)
                                                    .arg(k)
                                                    .arg(r)));
                        }
                }
            }
        }
    }

    // llama.cpp's own bits: every x86 level's activation quantization and
    // dot products (one row; 9 tokens through the prompt tiles, Q4_0's and
    // Q5_0's rewrite as Q8_0, and the row panels) equal ggml's on committed
    // fixtures from its AVX2 build. The scalar level keeps its own float
    // order (ggml's generic C is compiled with contraction, ours without).
    void kernelsGiveGgmlBits() {
        LevelGuard guard;
        ThreadPool pool(2);
        const auto fixtures = load_ggml_dots();
        QVERIFY2(fixtures.size() >= 8, "engine/tensor/testdata is missing dot_*.bin");
        int checked = 0;
        for (const auto& level : simd_levels()) {
            if (level == "scalar") continue;
            QVERIFY(force_simd_level(level));
            for (const auto& f : fixtures) {
                const QString where = QString("%1 %2").arg(level.c_str(), f.name.c_str());
                QCOMPARE(vec_dot_type(f.type), f.act);
                const size_t xb = row_bytes(f.act, f.n);
                const WeightView w{f.type, f.weights.data(), f.rows, f.n, row_bytes(f.type, f.n)};
                for (int64_t t = 0; t < f.tokens; ++t) {
                    QuantizedVector xq;
                    quantize_activations(f.type, f.x.data() + t * f.n, f.n, xq);
                    QVERIFY2(std::equal(xq.data.begin(), xq.data.end(), f.xq.begin() + t * xb),
                             qPrintable(where + " activations"));
                    for (int64_t r = 0; r < f.rows; ++r) {
                        const float got = vec_dot(f.type, f.n, w.row(r), xq);
                        const float want = f.dots[size_t(t * f.rows + r)];
                        QVERIFY2(std::memcmp(&got, &want, 4) == 0,
                                 qPrintable(QString("%1 token %2 row %3: %4, ggml %5")
                                                .arg(where)
                                                .arg(t)
                                                .arg(r)
                                                .arg(got, 0, 'g', 9)
                                                .arg(want, 0, 'g', 9)));
                    }
                }
                const auto packed = pack_panels(w);
                WeightView pv = w;
                pv.panels = packed.data();  // null where the level has no panels
                for (const WeightView& v : {w, pv}) {
                    std::vector<float> got(f.dots.size());
                    matmul(pool, v, f.x.data(), f.tokens, got.data());
                    QVERIFY2(std::memcmp(got.data(), f.dots.data(), got.size() * 4) == 0,
                             qPrintable(where + (v.panels ? " panels" : " rows") + " matmul"));
                }
                ++checked;
            }
        }
        if (simd_levels().size() > 1) QVERIFY(checked >= 8);
    }

    // Row panels give the row layout's bits: matvec, matmul at every token
    // count the kernel splits (pairs, odd ones, groups of 8), slices on and
    // off panel boundaries, and the fused products.
    void panelsGiveTheRowBits() {
        LevelGuard guard;
        ThreadPool pool(2);
        std::mt19937 rng(11);
        int levels_with_panels = 0;
        for (const auto& level : simd_levels()) {
            QVERIFY(force_simd_level(level));
            struct Case {
                GgmlType type;
                int64_t rows, cols;
            };
            std::vector<Case> cases;
            for (const GgmlType type :
                 {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::Q5_0})
                for (const auto& [rows, cols] :
                     {std::pair<int64_t, int64_t>{16, 32}, {48, 576}, {80, 1536}, {1536, 576}})
                    cases.push_back({type, rows, cols});
            // Gemma 3 270M's Q5_0 shapes (q, k, gate and up over 640 columns).
            for (const auto& [rows, cols] :
                 {std::pair<int64_t, int64_t>{256, 640}, {1024, 640}, {2048, 640}})
                cases.push_back({GgmlType::Q5_0, rows, cols});
            // K-quants: one super-block, an expert slice's shape (gate/up,
            // down), a taller one.
            for (const GgmlType type : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K})
                for (const auto& [rows, cols] :
                     {std::pair<int64_t, int64_t>{16, 256}, {768, 2048}, {2048, 768}, {80, 768}})
                    cases.push_back({type, rows, cols});
            for (const auto& [type, rows, cols] : cases) {
                Matrix m = make_matrix(type, rows, cols, unsigned(rows + cols));
                if (type == GgmlType::Q8_0)  // the quants' extremes, -128 included
                    for (int64_t r = 0; r < 3; ++r)
                        for (int64_t j = 0; j < 32; ++j)
                            m.bytes[size_t(r) * m.view.row_bytes + 2 + size_t(j)] =
                                uint8_t(j % 3 == 0 ? 0x80 : (j % 3 == 1 ? 0x7F : 0x81));
                if (type == GgmlType::Q5_0)  // -16 and 15 (fifth bits all 0 / all 1)
                    for (int64_t r = 0; r < 2; ++r)
                        for (int64_t j = 0; j < 20; ++j)
                            m.bytes[size_t(r) * m.view.row_bytes + 2 + size_t(j)] =
                                uint8_t(r == 0 ? 0x00 : 0xFF);
                if (type == GgmlType::Q5_K)  // codes 0 and 31 (nibbles and fifth bits all 0 / 1)
                    for (int64_t r = 0; r < 2; ++r)
                        std::memset(m.bytes.data() + size_t(r) * m.view.row_bytes + 16,
                                    r == 0 ? 0x00 : 0xFF, 160);
                if (type == GgmlType::Q4_0)  // -8 and 7 (nibbles all 0 / all 15)
                    for (int64_t r = 0; r < 2; ++r)
                        for (int64_t j = 0; j < 16; ++j)
                            m.bytes[size_t(r) * m.view.row_bytes + 2 + size_t(j)] =
                                uint8_t(r == 0 ? 0x00 : 0xFF);
                const auto packed = pack_panels(m.view);
                if (packed.empty()) continue;
                ++levels_with_panels;
                QCOMPARE(packed.size(), m.bytes.size());
                WeightView pv = m.view;
                pv.panels = packed.data();
                // Q4_0 and Q5_0: every token count 1-17 (their panels are
                // new; the others keep the counts the kernel splits
                // differently).
                std::vector<int64_t> counts = {1, 2, 3, 5, 8, 9, 17};
                if (type == GgmlType::Q4_0 || type == GgmlType::Q5_0) {
                    counts.clear();
                    for (int64_t n = 1; n <= 17; ++n) counts.push_back(n);
                }
                for (const int64_t n : counts) {
                    const auto X = random_floats(rng, n * cols);
                    std::vector<float> want(size_t(n * rows)), got(want.size());
                    matmul(pool, m.view, X.data(), n, want.data());
                    matmul(pool, pv, X.data(), n, got.data());
                    QVERIFY2(got == want,
                             qPrintable(QString("%1 %2 %3x%4 n=%5")
                                            .arg(level.c_str())
                                            .arg(QString::fromUtf8(ggml_type_name(type)))
                                            .arg(rows)
                                            .arg(cols)
                                            .arg(n)));
                }
                QuantizedVector xq;
                quantize_activations(type, random_floats(rng, cols).data(), cols, xq);
                std::vector<float> want(static_cast<size_t>(rows)), got(want.size());
                matvec_q(pool, m.view, xq, want.data());
                matvec_q(pool, pv, xq, got.data());
                QVERIFY(got == want);
                for (const auto& [r0, r1] :
                     {std::pair<int64_t, int64_t>{0, 16}, {16, rows}, {3, rows}, {0, rows - 1}}) {
                    if (r1 <= r0) continue;
                    const WeightView s = pv.slice(r0, r1);
                    QCOMPARE(s.panels != nullptr, r0 % 16 == 0 && (r1 - r0) % 16 == 0);
                    std::vector<float> part(size_t(r1 - r0));
                    matvec_q(pool, s, xq, part.data());
                    QVERIFY(std::equal(part.begin(), part.end(), want.begin() + r0));
                }
            }
        }
        // A matrix whose rows are not a multiple of 16 keeps the row layout.
        const Matrix odd = make_matrix(GgmlType::Q4_1, 40, 64, 9);
        QVERIFY(pack_panels(odd.view).empty());
        QVERIFY(pack_panels(make_matrix(GgmlType::Q8_0, 40, 64, 9).view).empty());
        QVERIFY(pack_panels(make_matrix(GgmlType::Q5_0, 40, 64, 9).view).empty());
        // Q4_0's panels are AVX2 / AVX-VNNI only (none at the AVX-512 level).
        QCOMPARE(pack_panels(make_matrix(GgmlType::Q4_0, 32, 64, 9).view).empty(),
                 kernels::active_table().types[kernels::kQ4_0].dot_panel == nullptr);
        QVERIFY(pack_panels(make_matrix(GgmlType::Q4_0, 40, 64, 9).view).empty());
        QVERIFY(pack_panels(make_matrix(GgmlType::Q4_K, 40, 256, 9).view).empty());
        QVERIFY(pack_panels(make_matrix(GgmlType::Q6_K, 24, 256, 9).view).empty());
        QVERIFY(pack_panels(make_matrix(GgmlType::Q5_K, 24, 256, 9).view).empty());
        const auto levels = simd_levels();
        // Q4_1 and Q5_0 have panels on AVX2, AVX-VNNI and AVX-512.
        if (std::find(levels.begin(), levels.end(), "avx2") != levels.end()) {
            QVERIFY(force_simd_level("avx2"));
            QVERIFY(!pack_panels(make_matrix(GgmlType::Q4_0, 32, 64, 9).view).empty());
        }
        // The K-quants too, at every level (on AVX2 and AVX-VNNI as two halves of
        // eight rows), but Q6_K on AVX2 (no VNNI: its halves did not beat its rows).
        for (const std::string level : {"avx2", "avxvnni", "avx512"})
            if (std::find(levels.begin(), levels.end(), level) != levels.end()) {
                QVERIFY(force_simd_level(level));
                for (const GgmlType type : {GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K})
                    QVERIFY2(pack_panels(make_matrix(type, 32, 256, 9).view).empty() ==
                                 (type == GgmlType::Q6_K && level == "avx2"),
                             level.c_str());
            }
        if (std::find(levels.begin(), levels.end(), "avx2") != levels.end() ||
            std::find(levels.begin(), levels.end(), "avx512") != levels.end())
            QVERIFY(levels_with_panels > 0);
        set_panels_enabled(false);
        QVERIFY(pack_panels(make_matrix(GgmlType::Q4_1, 32, 64, 9).view).empty());
        QVERIFY(pack_panels(make_matrix(GgmlType::Q5_0, 32, 64, 9).view).empty());
        set_panels_enabled(true);
    }

    void matvecRowsSelectsRows_data() { add_type_rows(); }
    void matvecRowsSelectsRows() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        const Matrix m = make_matrix(t, 200, 256, 7);
        std::mt19937 rng(8);
        const auto x = random_floats(rng, 256);
        QuantizedVector xq;
        quantize_activations(t, x.data(), 256, xq);
        const std::vector<int32_t> idx = {199, 0, 5, 5, 77, 123, 1, 198};
        ThreadPool pool(2);
        std::vector<float> full(200), sparse(idx.size());
        matvec_q(pool, m.view, xq, full.data());
        matvec_rows(pool, m.view, xq, idx.data(), int64_t(idx.size()), sparse.data());
        std::vector<int64_t> rows(idx.begin(), idx.end());
        check_products(m, dequantize_activations(xq), sparse.data(), rows.data(),
                       int64_t(rows.size()));
        for (size_t i = 0; i < idx.size(); ++i)
            QCOMPARE(sparse[i], full[static_cast<size_t>(idx[i])]);
    }

    void axpyRowsMatchesReference_data() { add_type_rows(); }
    void axpyRowsMatchesReference() {
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        LevelGuard guard;
        // cols = 1536: several K-quant blocks, so slices differ per thread count.
        const int64_t rows = 300, cols = 1536;
        const Matrix m = make_matrix(t, rows, cols, 9);
        std::mt19937 rng(10);
        std::vector<int32_t> idx;
        std::vector<float> a;
        std::uniform_int_distribution<int> pick(0, rows - 1);
        std::normal_distribution<float> coef(0.0f, 1.0f);
        for (int i = 0; i < 90; ++i) {
            idx.push_back(pick(rng));
            a.push_back(coef(rng));
        }
        const auto y0 = random_floats(rng, cols);
        std::vector<double> want(y0.begin(), y0.end());
        std::vector<double> mag(cols);
        for (size_t i = 0; i < idx.size(); ++i)
            for (int64_t c = 0; c < cols; ++c) {
                const double p = double(a[i]) * m.deq[idx[i] * cols + c];
                want[c] += p;
                mag[c] += std::fabs(p);
            }
        for (const auto& level : simd_levels()) {
            QVERIFY(force_simd_level(level));
            std::vector<float> first;
            for (int threads : {1, 2, 3}) {
                ThreadPool pool(threads);
                std::vector<float> y = y0;
                axpy_rows(pool, m.view, idx.data(), a.data(), int64_t(idx.size()), y.data());
                for (int64_t c = 0; c < cols; ++c)
                    QVERIFY2(
                        std::fabs(y[c] - want[c]) <= 1e-5 * (mag[c] + std::fabs(y0[c])) + 1e-30,
                        qPrintable(QString("%1 col %2").arg(level.c_str()).arg(c)));
                if (first.empty())
                    first = y;
                else
                    QVERIFY2(y == first, "axpy_rows depends on the thread count");
            }
        }
    }

    void badInputThrows() {
        const Matrix m = make_matrix(GgmlType::Q8_0, 4, 64, 11);
        ThreadPool pool(2);
        std::vector<float> x(64, 1.0f), y(64);
        QuantizedVector xq;
        quantize_activations(GgmlType::Q4_1, x.data(), 64, xq);
        QVERIFY_THROWS_EXCEPTION(EngineError, matvec_q(pool, m.view, xq, y.data()));
        quantize_activations(GgmlType::Q8_0, x.data(), 64, xq);
        const int32_t bad[] = {0, 4};
        const float a[] = {1.0f, 1.0f};
        QVERIFY_THROWS_EXCEPTION(EngineError, matvec_rows(pool, m.view, xq, bad, 2, y.data()));
        QVERIFY_THROWS_EXCEPTION(EngineError, axpy_rows(pool, m.view, bad, a, 2, y.data()));
        WeightView broken = m.view;
        broken.row_bytes = 10;
        QVERIFY_THROWS_EXCEPTION(EngineError, matvec(pool, broken, x.data(), y.data()));
    }
};

QTEST_APPLESS_MAIN(TestMatmul)
#include "tst_matmul.moc"
