// The input-major copies and the input-sparse product (tensor/input_major.h):
// every weight of the copy equals the file's, the product over kept inputs
// equals a float64 reference of the same quantized inputs, every SIMD level
// gives the scalar reference's bits, and with every input kept it agrees
// with the dense product.
#include <QTest>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "tensor/input_major.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/test_support.h"

using namespace powerinfer;
using namespace powerinfer::tensor;
using namespace powerinfer::tensor::testing;

namespace {

const GgmlType kTypes[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q8_0,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

}  // namespace

class TestInputMajor : public QObject {
    Q_OBJECT

private slots:
    void copyIsLossless() {
        for (GgmlType t : kTypes) {
            const Matrix m = make_matrix(t, 96, 512, 1);
            const InputMajorMatrix im = make_input_major(m.view);
            QVERIFY(im.bytes() <= m.bytes.size() + m.bytes.size() / 8);
            // Built on a pool, with the column norms: the same copy.
            ThreadPool pool(2);
            std::vector<double> n2;
            const InputMajorMatrix par = make_input_major(m.view, &pool, &n2);
            QVERIFY(par.q == im.q && par.a16 == im.a16 && par.sc == im.sc && par.d16 == im.d16);
            for (int64_t i = 0; i < 512; ++i) {
                double want = 0;
                for (int64_t j = 0; j < 96; ++j)
                    want += double(m.deq[size_t(j * 512 + i)]) * m.deq[size_t(j * 512 + i)];
                QVERIFY(std::fabs(n2[size_t(i)] - want) <= 1e-9 * (1 + want));
            }
            for (int64_t j = 0; j < 96; ++j)
                for (int64_t i = 0; i < 512; ++i)
                    if (input_major_weight(im, j, i) != m.deq[size_t(j * 512 + i)])
                        QFAIL(qPrintable(
                            QString("%1: weight (%2, %3) is %4, the file's %5")
                                .arg(QString::fromStdString(std::string(ggml_type_name(t))))
                                .arg(j)
                                .arg(i)
                                .arg(input_major_weight(im, j, i))
                                .arg(m.deq[size_t(j * 512 + i)])));
        }
    }

    void productOverKeptInputs() {
        LevelGuard guard;
        ThreadPool pool(2);
        // 65 chunks: more than one block of outputs, and an odd last one;
        // 514: past one tile, so cut by outputs (a head) where it has enough
        // used groups, by used groups below it.
        for (int64_t n_out : {int64_t{96}, int64_t{2080}, int64_t{16448}})
            for (GgmlType t : kTypes) {
                const int64_t n_in = 512;
                const Matrix m = make_matrix(t, n_out, n_in, 7);
                const InputMajorMatrix im = make_input_major(m.view);
                std::mt19937 rng(3);
                const auto x = random_floats(rng, n_in, 2.0f);
                for (double keep : {0.0, 0.03, 0.5, 1.0}) {
                    std::vector<int32_t> ids;
                    for (int32_t i = 0; i < n_in; ++i)
                        if (std::uniform_real_distribution<double>(0, 1)(rng) < keep)
                            ids.push_back(i);
                    SparseInput in;
                    prepare_sparse_input(ids.data(), int64_t(ids.size()), x.data(), im.group, in);
                    QCOMPARE(in.kept, int64_t(ids.size()));
                    std::vector<float> ref(static_cast<size_t>(n_out)),
                        y(static_cast<size_t>(n_out));
                    colsparse_matvec_ref(im, in, ref.data());
                    for (int64_t j = 0; j < n_out; ++j) {
                        double want = 0, tol = 1e-4;
                        for (int32_t i : ids) {
                            const double w = m.deq[size_t(j * n_in + i)];
                            want += w * x[size_t(i)];
                            tol += std::fabs(w) * 2.0 / 127.0;  // half an int8 step of |x| <= 2
                        }
                        if (std::fabs(ref[size_t(j)] - want) > tol)
                            QFAIL(qPrintable(
                                QString("%1 keep %2 output %3: %4 vs %5")
                                    .arg(QString::fromStdString(std::string(ggml_type_name(t))))
                                    .arg(keep)
                                    .arg(j)
                                    .arg(ref[size_t(j)])
                                    .arg(want)));
                    }
                    for (const auto& level : simd_levels()) {
                        QVERIFY(force_simd_level(level));
                        std::fill(y.begin(), y.end(), -1.0f);
                        colsparse_matvec(pool, im, in, y.data());
                        QVERIFY2(same_bits(y.data(), ref.data(), y.size()),
                                 qPrintable(QString("%1 %2 keep %3")
                                                .arg(QString::fromStdString(
                                                    std::string(ggml_type_name(t))))
                                                .arg(level.c_str())
                                                .arg(keep)));
                    }
                    if (keep == 1.0) {
                        // Everything kept: the dense product, up to rounding.
                        std::vector<float> dense(static_cast<size_t>(n_out));
                        matvec(pool, m.view, x.data(), dense.data());
                        for (int64_t j = 0; j < n_out; ++j) {
                            double scale = 1e-3;
                            for (int64_t i = 0; i < n_in; ++i)
                                scale += std::fabs(m.deq[size_t(j * n_in + i)]) * 2.0 / 127.0;
                            QVERIFY2(std::fabs(dense[size_t(j)] - y[size_t(j)]) <= 2 * scale,
                                     qPrintable(QString("%1 output %2: dense %3, all kept %4")
                                                    .arg(QString::fromStdString(
                                                        std::string(ggml_type_name(t))))
                                                    .arg(j)
                                                    .arg(dense[size_t(j)])
                                                    .arg(y[size_t(j)])));
                        }
                    }
                }
            }
    }

    // Every code at its largest and every kept input at the int8 extreme:
    // the integer sums at their bounds (the AVX2 4-bit path sums eight pairs
    // in int16 before widening), the same bits as the reference.
    void extremeCodesKeepTheBits() {
        LevelGuard guard;
        ThreadPool pool(2);
        for (GgmlType t : kTypes) {
            const Matrix m = make_matrix(t, 64, 256, 5);
            InputMajorMatrix im = make_input_major(m.view);
            std::fill(im.q.begin(), im.q.end(), uint8_t{0xFF});
            for (const float sign : {1.0f, -1.0f}) {
                std::vector<float> x(256, 2.0f * sign);
                std::vector<int32_t> ids(256);
                for (int32_t i = 0; i < 256; ++i) ids[size_t(i)] = i;
                SparseInput in;
                prepare_sparse_input(ids.data(), 256, x.data(), im.group, in);
                std::vector<float> ref(64), y(64);
                colsparse_matvec_ref(im, in, ref.data());
                for (const auto& level : simd_levels()) {
                    QVERIFY(force_simd_level(level));
                    colsparse_matvec(pool, im, in, y.data());
                    QVERIFY2(
                        same_bits(y.data(), ref.data(), y.size()),
                        qPrintable(QString("%1 %2 sign %3")
                                       .arg(QString::fromStdString(std::string(ggml_type_name(t))))
                                       .arg(level.c_str())
                                       .arg(sign)));
                }
            }
        }
    }

    // The copy gives the file's rows back byte for byte: every format, all
    // rows and a slice, one tile and past it.
    void rowsComeBackFromTheCopy() {
        for (GgmlType t : kTypes)
            for (int64_t n_out : {int64_t{96}, int64_t{16448}}) {
                const int64_t n_in = n_out > 1000 ? 256 : 512;
                const Matrix m = make_matrix(t, n_out, n_in, 11);
                const InputMajorMatrix im = make_input_major(m.view);
                const size_t rb = input_major_row_bytes(im);
                QCOMPARE(rb, m.view.row_bytes);
                std::vector<uint8_t> rows(m.bytes.size(), 0xA5);
                input_major_rows(im, 0, n_out, rows.data());
                const std::string name(ggml_type_name(t));
                QVERIFY2(rows == m.bytes, name.c_str());
                std::fill(rows.begin(), rows.end(), uint8_t{0x5A});
                input_major_rows(im, 32, 96, rows.data());
                QVERIFY2(std::equal(rows.begin(), rows.begin() + 64 * std::ptrdiff_t(rb),
                                    m.bytes.begin() + 32 * std::ptrdiff_t(rb)),
                         name.c_str());
                QVERIFY_THROWS_EXCEPTION(EngineError, input_major_rows(im, 16, 48, rows.data()));
            }
    }

    // The dense product from the copies has the dense kernels' bits at every
    // SIMD level: one token, a few, past the Q8_0 rewrite of a prompt's
    // slices (8) and past a token tile (64); two matrices on one input, with
    // one activation format and with two.
    void denseProductFromTheCopy() {
        LevelGuard guard;
        ThreadPool pool(2);
        const std::pair<GgmlType, GgmlType> pairs[] = {{GgmlType::Q4_0, GgmlType::Q8_0},
                                                       {GgmlType::Q5_0, GgmlType::Q4_1},
                                                       {GgmlType::Q4_K, GgmlType::Q6_K},
                                                       {GgmlType::Q5_K, GgmlType::Q4_K}};
        const int64_t n_in = 512;
        for (const auto& [ta, tb] : pairs) {
            const Matrix a = make_matrix(ta, 160, n_in, 21), b = make_matrix(tb, 2080, n_in, 22);
            const InputMajorMatrix ia = make_input_major(a.view), ib = make_input_major(b.view);
            const InputMajorMatrix* ms[] = {&ia, &ib};
            std::mt19937 rng(5);
            for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{9}, int64_t{70}}) {
                const auto X = random_floats(rng, n * n_in, 2.0f);
                for (const auto& level : simd_levels()) {
                    QVERIFY(force_simd_level(level));
                    std::vector<float> ra(size_t(n * 160)), rb(size_t(n * 2080));
                    matmul(pool, a.view, X.data(), n, ra.data());
                    matmul(pool, b.view, X.data(), n, rb.data());
                    std::vector<float> ya(ra.size(), -1.0f), yb(rb.size(), -1.0f);
                    float* ys[] = {ya.data(), yb.data()};
                    input_major_matmul(pool, ms, X.data(), n, ys);
                    const QString what =
                        QString("%1 + %2, %3 tokens, %4")
                            .arg(QString::fromStdString(std::string(ggml_type_name(ta))))
                            .arg(QString::fromStdString(std::string(ggml_type_name(tb))))
                            .arg(n)
                            .arg(level.c_str());
                    QVERIFY2(same_bits(ya.data(), ra.data(), ya.size()), qPrintable(what));
                    QVERIFY2(same_bits(yb.data(), rb.data(), yb.size()), qPrintable(what));
                }
            }
        }
    }

    void refusesWhatItCannotTake() {
        const Matrix odd = make_matrix(GgmlType::Q4_0, 40, 64, 2);  // 40 outputs
        QVERIFY(!input_major_supported(odd.view));
        QVERIFY(!input_major_refusal(odd.view).empty());
        QVERIFY_THROWS_EXCEPTION(EngineError, make_input_major(odd.view));
        const Matrix q51 = make_matrix(GgmlType::Q5_1, 32, 64, 2);
        QVERIFY(!input_major_supported(q51.view));
        const Matrix ok = make_matrix(GgmlType::Q5_0, 32, 64, 2);
        const InputMajorMatrix im = make_input_major(ok.view);
        std::vector<float> x(65, 1.0f), y(32);  // x is long enough, the matrix is not
        const int32_t bad[] = {3, 64};
        SparseInput in;
        prepare_sparse_input(bad, 2, x.data(), im.group, in);
        ThreadPool pool(1);
        QVERIFY_THROWS_EXCEPTION(EngineError, colsparse_matvec(pool, im, in, y.data()));
        const int32_t fine[] = {3};
        prepare_sparse_input(fine, 1, x.data(), 16, in);  // prepared for other groups
        QVERIFY_THROWS_EXCEPTION(EngineError, colsparse_matvec(pool, im, in, y.data()));
    }
};

QTEST_APPLESS_MAIN(TestInputMajor)
#include "tst_input_major.moc"
