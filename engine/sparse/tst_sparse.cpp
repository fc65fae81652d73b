// Placement, sidecar round trip / refusal, and the hybrid FFN against dense.
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <random>

#include "backend/device.h"
#include "gguf/gguf.h"
#include "model/dense_ffn.h"
#include "sparse/hybrid_ffn.h"
#include "sparse/input_sparsity.h"
#include "sparse/placement.h"
#include "sparse/sidecar.h"
#include "tensor/input_major.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/test_support.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
using namespace powerinfer::sparse;

namespace {

constexpr int64_t kEmbd = 64, kFf = 128, kLayers = 2;

// A Q8_0 head of V rows of d: random rows, every seventh one larger.
struct Q8Head {
    std::vector<uint8_t> w;
    tensor::WeightView view;
};
Q8Head q8_head(int64_t V, int64_t d, std::mt19937& rng) {
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const size_t rb = *ggml_row_bytes(GgmlType::Q8_0, d);
    Q8Head h;
    h.w.resize(rb * V);
    std::vector<float> row(d);
    for (int64_t r = 0; r < V; ++r) {
        for (auto& v : row) v = nd(rng) * (r % 7 == 0 ? 1.0f : 0.3f);
        tensor::quantize_row_ref(GgmlType::Q8_0, row.data(), h.w.data() + r * rb, d);
    }
    h.view = {GgmlType::Q8_0, h.w.data(), V, d, rb};
    return h;
}

struct Weights {
    std::vector<std::vector<uint8_t>> gate, up, down;
    std::vector<model::FfnWeights> views;
};

Weights make_weights(GgmlType t, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    Weights w;
    auto mat = [&](int64_t rows, int64_t cols) {
        const size_t rb = *ggml_row_bytes(t, cols);
        std::vector<uint8_t> d(rb * rows);
        std::vector<float> row(cols);
        for (int64_t r = 0; r < rows; ++r) {
            for (auto& v : row) v = nd(rng);
            tensor::quantize_row_ref(t, row.data(), d.data() + r * rb, cols);
        }
        return d;
    };
    for (int64_t l = 0; l < kLayers; ++l) {
        w.gate.push_back(mat(kFf, kEmbd));
        w.up.push_back(mat(kFf, kEmbd));
        w.down.push_back(mat(kEmbd, kFf));
    }
    for (int64_t l = 0; l < kLayers; ++l) {
        const size_t re = *ggml_row_bytes(t, kEmbd), rf = *ggml_row_bytes(t, kFf);
        w.views.push_back({{t, w.gate[l].data(), kFf, kEmbd, re},
                           {t, w.up[l].data(), kFf, kEmbd, re},
                           {t, w.down[l].data(), kEmbd, kFf, rf}});
    }
    return w;
}

// A sidecar whose predictors say "active" for all neurons (b2 = +20) or a
// fixed pattern; mass falls with the neuron id so the hot-first order is 0..n.
Sidecar make_sidecar(float b2) {
    Sidecar s;
    s.model_hash = "0123456789abcdef";
    s.n_layer = kLayers;
    s.n_embd = kEmbd;
    s.n_ff = kFf;
    s.target_sparsity = 0.5f;
    s.layers.resize(kLayers);
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 0.1f);
    for (auto& l : s.layers) {
        for (int64_t j = 0; j < kFf; ++j) {
            l.act_freq.push_back(1.0f / float(j + 1));
            l.act_mass.push_back(1.0f / float(j + 1));
            l.perm.push_back(static_cast<int32_t>(j));
        }
        l.threshold = 0.01f;
        l.predictor.rank = 4;
        l.predictor.type = GgmlType::F32;
        std::vector<float> w1(4 * kEmbd), w2(kFf * 4);
        for (auto& v : w1) v = nd(rng);
        for (auto& v : w2) v = nd(rng);
        l.predictor.w1.resize(w1.size() * 4);
        std::memcpy(l.predictor.w1.data(), w1.data(), l.predictor.w1.size());
        l.predictor.w2.resize(w2.size() * 4);
        std::memcpy(l.predictor.w2.data(), w2.data(), l.predictor.w2.size());
        l.predictor.b1.assign(4, 0.0f);
        l.predictor.b2.assign(kFf, b2);
    }
    return s;
}

// Reference for "all neurons active": same quantized gate/up dots as the
// kernels, then the down sum in double over the dequantized matrix.
std::vector<float> reference(const model::FfnWeights& w, const float* x) {
    tensor::QuantizedVector xq;
    tensor::quantize_activations(w.gate.type, x, kEmbd, xq);
    std::vector<double> y(kEmbd, 0.0);
    std::vector<float> down_row(kFf);
    std::vector<double> a(kFf);
    for (int64_t j = 0; j < kFf; ++j) {
        const float g = tensor::vec_dot(w.gate.type, kEmbd, w.gate.row(j), xq);
        const float u = tensor::vec_dot(w.up.type, kEmbd, w.up.row(j), xq);
        a[j] = double(g / (1.0f + std::exp(-g))) * u;
    }
    for (int64_t i = 0; i < kEmbd; ++i) {
        tensor::dequantize_row(w.down.type, w.down.row(i), down_row.data(), kFf);
        for (int64_t j = 0; j < kFf; ++j) y[i] += a[j] * down_row[j];
    }
    return {y.begin(), y.end()};
}

// The predictor-and-device path (what a GPU split runs), with the CPU
// device standing in for the GPU.
HybridOptions device_path() {
    HybridOptions o;
    o.cpu_exact = false;
    return o;
}

// The FFN in float64 over the neurons with |h| * ||down col|| >= t (t <= 0:
// all); `active` gets how many passed.
std::vector<float> masked_reference(const model::FfnWeights& w, const float* x, double t,
                                    int64_t& active) {
    tensor::QuantizedVector xq;
    tensor::quantize_activations(w.gate.type, x, kEmbd, xq);
    std::vector<std::vector<float>> down(kEmbd, std::vector<float>(kFf));
    for (int64_t i = 0; i < kEmbd; ++i)
        tensor::dequantize_row(w.down.type, w.down.row(i), down[size_t(i)].data(), kFf);
    std::vector<double> y(kEmbd, 0.0);
    active = 0;
    for (int64_t j = 0; j < kFf; ++j) {
        const float g = tensor::vec_dot(w.gate.type, kEmbd, w.gate.row(j), xq);
        const float u = tensor::vec_dot(w.up.type, kEmbd, w.up.row(j), xq);
        const double h = double(g / (1.0f + std::exp(-g))) * u;
        double dn = 0;
        for (int64_t i = 0; i < kEmbd; ++i)
            dn += double(down[size_t(i)][size_t(j)]) * down[size_t(i)][size_t(j)];
        if (std::fabs(h) * std::sqrt(dn) < t) continue;
        ++active;
        for (int64_t i = 0; i < kEmbd; ++i) y[size_t(i)] += h * down[size_t(i)][size_t(j)];
    }
    return {y.begin(), y.end()};
}

double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        den += double(b[i]) * b[i];
    }
    return std::sqrt(num / std::max(den, 1e-30));
}

std::vector<float> random_x(uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(kEmbd);
    for (auto& v : x) v = nd(rng);
    return x;
}

}  // namespace

class TestSparse : public QObject {
    Q_OBJECT
private slots:
    void placementRespectsBudgetToTheByte() {
        PlacementInput in;
        for (int l = 0; l < 3; ++l) {
            PlacementLayer pl;
            for (int j = 0; j < 100; ++j) pl.mass_sorted.push_back(float(100 - j) * float(l + 1));
            pl.bytes_per_neuron = 1000 + 7 * l;
            in.layers.push_back(pl);
        }
        in.hot_neuron_threshold = 1.0;
        in.fixed_bytes = 12345;
        in.budget_bytes = 12345 + 150'000;
        Placement p = place_hot_neurons(in);
        QVERIFY(p.budget_limited);
        QVERIFY(p.hot_bytes <= 150'000);
        int64_t bytes = 0;
        for (int l = 0; l < 3; ++l) bytes += p.hot_count[l] * in.layers[l].bytes_per_neuron;
        QCOMPARE(bytes, p.hot_bytes);
        // Greedy by mass per byte: the heaviest layer (2) gets the most.
        QVERIFY(p.hot_count[2] > p.hot_count[0]);
        // Nothing else would fit: the leftover is under one neuron.
        QVERIFY(150'000 - p.hot_bytes < 1014);
        // Budget below the fixed parts: no hot neurons, no negative room.
        in.budget_bytes = 100;
        p = place_hot_neurons(in);
        QCOMPARE(p.hot_bytes, int64_t(0));
        QCOMPARE(p.free_bytes, int64_t(0));
        // Dense layers get no hot set.
        in.budget_bytes = int64_t{1} << 40;
        in.layers[1].dense = true;
        p = place_hot_neurons(in);
        QCOMPARE(p.hot_count[1], int64_t(0));
        QCOMPARE(p.hot_count[0], int64_t(100));
    }

    void placementMonotoneInThreshold() {
        PlacementInput in;
        std::mt19937 rng(1);
        std::exponential_distribution<float> ed(1.0f);
        for (int l = 0; l < 4; ++l) {
            PlacementLayer pl;
            for (int j = 0; j < 500; ++j) pl.mass_sorted.push_back(ed(rng));
            std::sort(pl.mass_sorted.rbegin(), pl.mass_sorted.rend());
            pl.bytes_per_neuron = 3000;
            in.layers.push_back(pl);
        }
        for (int64_t budget : {int64_t{1} << 40, int64_t{3000} * 900}) {
            in.budget_bytes = budget;
            int64_t prev = -1;
            for (double t = 0.0; t <= 1.0001; t += 0.05) {
                in.hot_neuron_threshold = t;
                const Placement p = place_hot_neurons(in);
                QVERIFY(p.hot_bytes >= prev);
                QVERIFY(p.hot_bytes <= budget);
                prev = p.hot_bytes;
            }
        }
    }

    void sidecarRoundTripAndRefusal() {
        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("m.powerinfer.gguf").toStdString();
        Sidecar s = make_sidecar(1.0f);
        s.layers[1].recall = 0.97f;
        write_sidecar(path, s);
        const Sidecar r = read_sidecar(path, s.model_hash);
        QCOMPARE(r.n_layer, s.n_layer);
        QCOMPARE(r.layers[1].perm, s.layers[1].perm);
        QCOMPARE(r.layers[0].act_mass, s.layers[0].act_mass);
        QCOMPARE(r.layers[1].predictor.w2, s.layers[1].predictor.w2);
        QCOMPARE(r.layers[1].recall, 0.97f);
        // Another model's hash: refused with the recalibration hint.
        try {
            read_sidecar(path, "fedcba9876543210");
            QFAIL("a mismatched sidecar was accepted");
        } catch (const SidecarError& e) {
            QVERIFY(std::string(e.what()).find("powerinfer-calibrate -m") != std::string::npos);
        }
        // A truncated file is refused the same way.
        std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
        QVERIFY_THROWS_EXCEPTION(SidecarError, read_sidecar(path));
        QCOMPARE(default_sidecar_path("/a/b/model.Q4_0.gguf"),
                 std::filesystem::path("/a/b/model.Q4_0.powerinfer.gguf"));
    }

    // The head basis: the top eigenvectors of the inputs' second moment
    // (inputs from an 8-dimensional subspace plus a little noise: a basis
    // of 32 holds all but the noise), orthonormal, deterministic; too few
    // samples give none. It survives the sidecar; a wrong shape is refused.
    void headBasisSpansTheInputsAndRoundTrips() {
        constexpr int64_t d = kEmbd, k = 8, rank = 32;
        std::mt19937 rng(11);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> dirs(k * d);
        for (auto& v : dirs) v = nd(rng);
        auto sample = [&](std::vector<float>& x) {
            x.assign(d, 0.0f);
            for (int64_t j = 0; j < k; ++j) {
                const float c = nd(rng) * float(k - j);
                for (int64_t i = 0; i < d; ++i) x[i] += c * dirs[j * d + i];
            }
            for (auto& v : x) v += 0.01f * nd(rng);
        };
        HeadInputMoments m(d);
        std::vector<float> x;
        for (int t = 0; t < 200; ++t) {
            sample(x);
            m.add(x.data(), 1);
        }
        QCOMPARE(m.samples(), int64_t(200));
        QVERIFY(HeadInputMoments(d).basis(rank).empty());  // no samples: no basis
        const HeadBasis b = m.basis(rank);
        QCOMPARE(b.rank, rank);
        QCOMPARE(b.n_embd, d);
        for (int64_t a = 0; a < rank; ++a)
            for (int64_t c = a; c < rank; ++c) {
                double dot = 0;
                for (int64_t i = 0; i < d; ++i) dot += double(b.rows[a * d + i]) * b.rows[c * d + i];
                QVERIFY2(std::abs(dot - (a == c ? 1.0 : 0.0)) < 1e-4, "not orthonormal");
            }
        double kept = 0, all = 0;
        for (int t = 0; t < 50; ++t) {
            sample(x);
            for (int64_t a = 0; a < rank; ++a) {
                double z = 0;
                for (int64_t i = 0; i < d; ++i) z += double(b.rows[a * d + i]) * x[i];
                kept += z * z;
            }
            for (float v : x) all += double(v) * v;
        }
        QVERIFY2(kept / all > 0.9999, qPrintable(QString::number(kept / all, 'g', 8)));
        QCOMPARE(m.basis(rank).rows, b.rows);  // deterministic

        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("m.powerinfer.gguf").toStdString();
        Sidecar s = make_sidecar(1.0f);
        s.head_basis = b;
        write_sidecar(path, s);
        QCOMPARE(read_sidecar(path, s.model_hash).head_basis.rows, b.rows);
        s.head_basis.rank = 24;  // not whole Q8_0 blocks
        s.head_basis.rows.resize(static_cast<size_t>(24 * d));
        write_sidecar(path, s);
        QVERIFY_THROWS_EXCEPTION(SidecarError, read_sidecar(path, s.model_hash));
    }

    // The head from its preview: with every row a candidate, the dense
    // product's bits; with a few, those rows carry the dense bits, the
    // argmax is the dense one, and the others are the preview, close to
    // dense (the inputs lie in the basis' span). A basis of another width is
    // refused with the recalibration hint.
    void sparseHeadKeepsTheLikelyRowsExact() {
        constexpr int64_t d = kEmbd, V = 3000, rank = 32;
        std::mt19937 rng(5);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        const Q8Head q8 = q8_head(V, d, rng);
        const tensor::WeightView& head = q8.view;
        const size_t rb = head.row_bytes;
        std::vector<float> dirs(16 * d);
        for (auto& v : dirs) v = nd(rng);
        auto sample = [&](std::vector<float>& x) {
            x.assign(d, 0.0f);
            for (int64_t j = 0; j < 16; ++j) {
                const float c = nd(rng);
                for (int64_t i = 0; i < d; ++i) x[i] += c * dirs[j * d + i];
            }
        };
        HeadInputMoments m(d);
        std::vector<float> x;
        for (int t = 0; t < 300; ++t) {
            sample(x);
            m.add(x.data(), 1);
        }
        tensor::ThreadPool pool(2);
        SparseHead sh(pool, head, m.basis(rank));
        // 4-bit rows padded to 64 columns, a float scale and offset each.
        QCOMPARE(sh.preview_bytes(), int64_t(V * (64 / 2 + 8)));
        std::vector<float> dense(V), out(V);
        for (int t = 0; t < 5; ++t) {
            sample(x);
            tensor::matvec(pool, head, x.data(), dense.data());
            sh.logits(x.data(), V, out.data());
            QCOMPARE(out, dense);
            sh.reset_counts();
            sh.logits(x.data(), 100, out.data());
            const HeadCounts c = sh.counts();
            QCOMPARE(c.tokens, int64_t(1));
            QVERIFY2(c.exact_rows >= 50 && c.exact_rows <= 400, qPrintable(QString::number(c.exact_rows)));
            QCOMPARE(c.bytes, sh.preview_bytes() + c.exact_rows * int64_t(rb));
            QCOMPARE(c.dense_bytes, V * int64_t(rb));
            int64_t same = 0;
            double err = 0, scale = 0;
            for (int64_t i = 0; i < V; ++i) {
                same += out[i] == dense[i];
                err = std::max(err, double(std::abs(out[i] - dense[i])));
                scale = std::max(scale, double(std::abs(dense[i])));
            }
            QVERIFY(same >= c.exact_rows);
            // The preview's 16 levels per row: 7 % of the largest logit here
            // (5 % with Q8_0 rows).
            QVERIFY2(err < 0.1 * scale, qPrintable(QString::number(err / scale)));
            QCOMPARE(std::max_element(out.begin(), out.end()) - out.begin(),
                     std::max_element(dense.begin(), dense.end()) - dense.begin());
        }
        HeadBasis narrow = m.basis(rank);
        narrow.n_embd = d / 2;
        try {
            SparseHead bad(pool, head, narrow);
            QFAIL("a basis of another width was accepted");
        } catch (const EngineError& e) {
            QVERIFY(std::string(e.what()).find("powerinfer-calibrate -m") != std::string::npos);
        }
    }

    // The preview stored in the sidecar: it comes back byte for byte, and a
    // head given it reads the same logits as one that builds its own. A
    // preview of another vocabulary is refused by the head, one of another
    // rank by the sidecar's reader, each with the recalibration hint.
    void sparseHeadTakesTheSidecarsPreview() {
        constexpr int64_t d = kEmbd, V = 3000, rank = 32;
        std::mt19937 rng(6);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        const Q8Head q8 = q8_head(V, d, rng);
        const tensor::WeightView& head = q8.view;
        HeadInputMoments moments(d);
        std::vector<float> x(d);
        for (int t = 0; t < 300; ++t) {
            for (auto& v : x) v = nd(rng);
            moments.add(x.data(), 1);
        }
        const HeadBasis basis = moments.basis(rank);
        tensor::ThreadPool pool(2);
        const tensor::U4Rows preview = make_head_preview(pool, head, basis);
        QCOMPARE(preview.rows, V);
        QCOMPARE(preview.cols, int64_t(64));

        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("m.powerinfer.gguf").toStdString();
        Sidecar s = make_sidecar(1.0f);
        s.head_basis = basis;
        s.head_preview = preview;
        write_sidecar(path, s);
        Sidecar back = read_sidecar(path, s.model_hash);
        QCOMPARE(back.head_preview.rows, V);
        QCOMPARE(back.head_preview.cols, preview.cols);
        QVERIFY(back.head_preview.q == preview.q);
        QCOMPARE(back.head_preview.d, preview.d);
        QCOMPARE(back.head_preview.m, preview.m);
        QCOMPARE(read_sidecar(path, s.model_hash, false).head_preview.rows, int64_t(0));

        SparseHead built(pool, head, basis);
        SparseHead stored(pool, head, basis, std::move(back.head_preview));
        QCOMPARE(stored.preview_bytes(), built.preview_bytes());
        std::vector<float> a(V), b(V);
        for (int t = 0; t < 3; ++t) {
            for (auto& v : x) v = nd(rng);
            built.logits(x.data(), 100, a.data());
            stored.logits(x.data(), 100, b.data());
            QCOMPARE(b, a);
        }
        // The given preview is the one read: a flat one gives other logits.
        tensor::U4Rows flat = preview;
        std::fill(flat.d.begin(), flat.d.end(), 0.0f);
        std::fill(flat.m.begin(), flat.m.end(), 0.0f);
        SparseHead flat_head(pool, head, basis, std::move(flat));
        flat_head.logits(x.data(), 100, b.data());
        built.logits(x.data(), 100, a.data());
        QVERIFY(b != a);
        try {
            SparseHead bad(pool, head.slice(0, V - 32), basis, preview);
            QFAIL("a preview of another vocabulary was accepted");
        } catch (const EngineError& e) {
            QVERIFY(std::string(e.what()).find("powerinfer-calibrate -m") != std::string::npos);
        }
        s.head_preview.cols = 128;  // rows of 64 bytes for a basis of rank 32 (32 bytes)
        s.head_preview.q.resize(static_cast<size_t>(V * 64));
        write_sidecar(path, s);
        QVERIFY_THROWS_EXCEPTION(SidecarError, read_sidecar(path, s.model_hash));
        // Without a preview the sidecar still loads (older sidecars); the
        // engine then builds it.
        s.head_preview = {};
        write_sidecar(path, s);
        QCOMPARE(read_sidecar(path, s.model_hash).head_preview.rows, int64_t(0));
    }

    // The head's cut: the radix selection gives std::nth_element's value for
    // every k, with ties, both zeros, negatives, a value range packed into
    // one bucket and a wide one; histograms of two halves added together
    // give the same as one of the whole.
    void kthLargestIsNthElement() {
        std::mt19937 rng(11);
        std::normal_distribution<float> wide(0.0f, 8.0f);
        std::uniform_real_distribution<float> narrow(16.0f, 16.5f);  // one 12-bit bucket
        std::uniform_int_distribution<int> small(-3, 3);             // many ties
        std::vector<uint32_t> hist;
        std::vector<float> bucket;
        for (int kind = 0; kind < 3; ++kind) {
            for (int64_t m : {1, 2, 7, 1000, 12297}) {
                std::vector<float> v(static_cast<size_t>(m));
                for (auto& f : v)
                    f = kind == 0 ? wide(rng) : kind == 1 ? narrow(rng) : float(small(rng));
                if (kind == 2 && m > 2) v[0] = -0.0f;
                for (int64_t k : {int64_t{1}, m / 3 + 1, m / 2 + 1, m}) {
                    if (k > m) continue;
                    std::vector<float> ref = v;
                    std::nth_element(ref.begin(), ref.begin() + (k - 1), ref.end(),
                                     std::greater<>());
                    const float want = ref[static_cast<size_t>(k - 1)];
                    const float got = kth_largest(v.data(), m, k, hist, bucket);
                    QVERIFY2(got == want, qPrintable(QString("kind %1 m %2 k %3: %4 vs %5")
                                                         .arg(kind)
                                                         .arg(m)
                                                         .arg(k)
                                                         .arg(double(got))
                                                         .arg(double(want))));
                    std::vector<uint32_t> two(2 * kCutBuckets, 0);
                    add_to_cut_histogram(v.data(), m / 2, two.data());
                    add_to_cut_histogram(v.data() + m / 2, m - m / 2, two.data() + kCutBuckets);
                    for (size_t i = 0; i < kCutBuckets; ++i) two[i] += two[kCutBuckets + i];
                    QCOMPARE(kth_largest_from_histogram(two.data(), v.data(), m, k, bucket), want);
                }
            }
        }
    }

    // Calibration's threshold quantiles: what sorting gives at every asked
    // rank (unordered, repeated, the ends), over wide, narrow (one 16-bit
    // bucket), tied and signed-zero values; a rank past the end is refused.
    void valuesAtRanksIsSort() {
        std::mt19937 rng(12);
        std::normal_distribution<float> wide(0.0f, 8.0f);
        std::uniform_real_distribution<float> narrow(16.0f, 16.01f);
        std::uniform_int_distribution<int> small(-3, 3);
        for (int kind = 0; kind < 3; ++kind) {
            for (size_t m : {size_t{1}, size_t{2}, size_t{9}, size_t{4096}, size_t{100003}}) {
                std::vector<float> v(m);
                for (auto& f : v)
                    f = kind == 0 ? wide(rng) : kind == 1 ? narrow(rng) : float(small(rng));
                if (kind == 2 && m > 2) v[1] = -0.0f;
                std::vector<float> sorted = v;
                std::sort(sorted.begin(), sorted.end());
                const std::vector<size_t> ranks = {m - 1, 0, m / 2, m / 3, m / 2, m * 19 / 20};
                const std::vector<float> got = values_at_ranks(v, ranks);
                QCOMPARE(got.size(), ranks.size());
                for (size_t i = 0; i < ranks.size(); ++i)
                    QVERIFY2(got[i] == sorted[ranks[i]],
                             qPrintable(QString("kind %1 m %2 rank %3: %4 vs %5")
                                            .arg(kind)
                                            .arg(m)
                                            .arg(ranks[i])
                                            .arg(double(got[i]))
                                            .arg(double(sorted[ranks[i]]))));
            }
        }
        const std::vector<float> three = {1.0f, 2.0f, 3.0f};
        const std::vector<size_t> past = {3};
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, values_at_ranks(three, past));
    }

    // The measured sparsity curve and the levels that go with it survive a
    // write and a read; a sidecar without them reads as before (no curve, no
    // default level: activation_sparsity -1 is the target's threshold); a
    // damaged curve is refused.
    void sidecarCurveRoundTrip() {
        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("c.powerinfer.gguf").toStdString();
        Sidecar s = make_sidecar(1.0f);
        s.exact_levels = {0.0f, 0.5f, 0.9f};
        for (auto& l : s.layers) {
            l.exact_thresholds = {0.0f, 0.02f, 0.05f};
            l.up_bound = 1.05f;  // Cauchy-Schwarz (plus rounding): never wrong
        }
        write_sidecar(path, s);
        const Sidecar old = read_sidecar(path, s.model_hash);
        QVERIFY(old.curve.empty());
        QCOMPARE(old.recommended_sparsity, -1.0f);
        QCOMPARE(old.default_sparsity, -1.0f);
        QCOMPARE(old.input_default_sparsity, -1.0f);

        s.curve = {{0.0f, 0.0f, 0.001f, 0.003f, 0.96f},
                   {0.2f, 0.195f, 0.004f, 0.005f, 0.95f},
                   {0.5f, 0.49f, 0.0122f, 0.029f, 0.887f},
                   {0.6f, 0.59f, 0.055f, 0.061f, 0.833f}};
        s.curve_bound = 0.02f;
        s.curve_dense_ppl = 36.16f;
        s.curve_tokens = 504;
        s.recommended_sparsity = 0.5f;
        s.default_sparsity = 0.5f;
        s.input_default_sparsity = 0.1f;
        write_sidecar(path, s);
        const Sidecar untimed = read_sidecar(path, s.model_hash);
        for (const auto& p : untimed.curve) {
            QCOMPARE(p.speed, 0.0f);
            QCOMPARE(p.bytes, 0.0f);
        }
        s.curve[0].speed = 1.15f;  // timed up to the recommendation
        s.curve[1].speed = 0.97f;
        s.curve[2].speed = 1.02f;
        s.curve[0].bytes = 0.68f;  // and its bytes counted
        s.curve[1].bytes = 0.67f;
        s.curve[2].bytes = 0.61f;
        write_sidecar(path, s);
        const Sidecar r = read_sidecar(path, s.model_hash);
        QCOMPARE(r.curve.size(), s.curve.size());
        for (size_t i = 0; i < s.curve.size(); ++i) {
            QCOMPARE(r.curve[i].level, s.curve[i].level);
            QCOMPARE(r.curve[i].delivered, s.curve[i].delivered);
            QCOMPARE(r.curve[i].ppl_rise, s.curve[i].ppl_rise);
            QCOMPARE(r.curve[i].mean_kl, s.curve[i].mean_kl);
            QCOMPARE(r.curve[i].top1, s.curve[i].top1);
            QCOMPARE(r.curve[i].speed, s.curve[i].speed);
            QCOMPARE(r.curve[i].bytes, s.curve[i].bytes);
        }
        QCOMPARE(r.curve_bound, 0.02f);
        QCOMPARE(r.curve_dense_ppl, 36.16f);
        QCOMPARE(r.curve_tokens, uint64_t(504));
        QCOMPARE(r.recommended_sparsity, 0.5f);
        QCOMPARE(r.default_sparsity, 0.5f);
        QCOMPARE(r.input_default_sparsity, 0.1f);

        // The default level: -1 runs at default_sparsity (0.5 -> the 0.02
        // threshold), not at the target's threshold (0.01).
        Weights w = make_weights(GgmlType::Q4_0, 3);
        tensor::ThreadPool pool(1);
        ExactSparseFfn exact(pool, w.views, r);
        // The down copies are built as a layer first runs, not at load.
        QCOMPARE(exact.extra_bytes(), int64_t(0));
        QVERIFY(exact.planned_bytes() > 0);
        exact.set_level(-1);
        QCOMPARE(exact.effective_level(), 0.5);
        QCOMPARE(exact.default_level(), 0.5);
        ExactSparseFfn legacy(pool, w.views, old);
        legacy.set_level(-1);
        QCOMPARE(legacy.effective_level(), double(old.target_sparsity));
        const auto x = random_x(9);
        std::vector<float> y(kEmbd);
        int64_t want = 0;
        masked_reference(w.views[0], x.data(), 0.02, want);
        QVERIFY(std::llabs(exact.run(0, x.data(), y.data()).active - want) <= 2);
        QVERIFY(exact.extra_bytes() > 0);
        QVERIFY2(exact.extra_bytes() <= exact.planned_bytes(),
                 qPrintable(QString("%1 built, %2 planned")
                                .arg(exact.extra_bytes())
                                .arg(exact.planned_bytes())));

        // v3's default outside [0, 1): refused.
        s.input_default_sparsity = 1.5f;
        write_sidecar(path, s);
        QVERIFY_THROWS_EXCEPTION(SidecarError, read_sidecar(path));
        s.input_default_sparsity = 0.1f;
        // A negative speed: refused.
        s.curve[1].speed = -1.0f;
        write_sidecar(path, s);
        QVERIFY_THROWS_EXCEPTION(SidecarError, read_sidecar(path));
        s.curve[1].speed = 0.97f;
        // A byte count that is not a number: refused.
        s.curve[2].bytes = std::nanf("");
        write_sidecar(path, s);
        QVERIFY_THROWS_EXCEPTION(SidecarError, read_sidecar(path));
        s.curve[2].bytes = 0.61f;
        // Levels out of order: refused.
        s.curve[1].level = 0.7f;
        write_sidecar(path, s);
        QVERIFY_THROWS_EXCEPTION(SidecarError, read_sidecar(path));
    }

    // The curve's batch: run_batch gives run()'s bits and active sets token
    // for token, with a neuron-major down (Q4_0) and a dense one (Q8_0), the
    // up pre-filter loose (every block computes all rows) and tight (some
    // blocks gather), at several levels.
    void exactBatchIsTokenByToken_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<float>("up_bound");
        QTest::newRow("q4_0 loose") << int(GgmlType::Q4_0) << 1.05f;
        QTest::newRow("q4_0 tight") << int(GgmlType::Q4_0) << 0.002f;
        QTest::newRow("q8_0 tight") << int(GgmlType::Q8_0) << 0.002f;
    }
    void exactBatchIsTokenByToken() {
        QFETCH(int, type);
        QFETCH(float, up_bound);
        Weights w = make_weights(static_cast<GgmlType>(type), 4);
        Sidecar s = make_sidecar(1.0f);
        s.exact_levels = {0.0f, 0.5f, 0.9f};
        for (auto& l : s.layers) {
            l.exact_thresholds = {0.0f, 0.05f, 0.2f};
            l.up_bound = up_bound;
        }
        tensor::ThreadPool pool(2);
        ExactSparseFfn exact(pool, w.views, s);
        constexpr int64_t kTokens = 5;
        std::vector<float> x;
        for (int64_t t = 0; t < kTokens; ++t) {
            const auto xt = random_x(20 + static_cast<uint32_t>(t));
            x.insert(x.end(), xt.begin(), xt.end());
        }
        // The bytes each token read: the dense FFN's in full; the up rows
        // skipped off, and with a neuron-major down (Q4_0) its unused columns,
        // so fewer at each higher level (not necessarily fewer than dense:
        // the copy's scales cost 0.125 byte a weight wherever a group is used).
        double previous_bytes = -1;
        for (double level : {0.0, 0.5, 0.7}) {
            exact.set_level(level);
            double level_bytes = 0, level_dense = 0;
            for (int layer = 0; layer < kLayers; ++layer) {
                std::vector<float> one(x.size()), batch(x.size());
                int64_t active = 0, up_rows = 0;
                const auto& v = w.views[static_cast<size_t>(layer)];
                const double gate = double(v.gate.rows) * double(v.gate.row_bytes),
                             up = double(v.up.rows) * double(v.up.row_bytes),
                             down = double(v.down.rows) * double(v.down.row_bytes);
                for (int64_t t = 0; t < kTokens; ++t) {
                    const ExactCounts c =
                        exact.run(layer, x.data() + t * kEmbd, one.data() + t * kEmbd);
                    active += c.active;
                    up_rows += c.up_rows;
                    QCOMPARE(c.dense_bytes, gate + up + down);
                    if (type == int(GgmlType::Q8_0))  // no neuron-major form: a dense down
                        QCOMPARE(c.bytes,
                                 c.dense_bytes - double(kFf - c.up_rows) * double(v.up.row_bytes));
                    level_bytes += c.bytes;
                    level_dense += c.dense_bytes;
                }
                QCOMPARE(exact.run_batch(layer, x.data(), kTokens, batch.data()), active);
                QVERIFY(std::memcmp(one.data(), batch.data(), one.size() * sizeof(float)) == 0);
                if (level > 0) QVERIFY(active < kTokens * kFf);
                // The tight bound leaves some blocks gathering their up rows.
                if (level == 0.7 && up_bound < 1) QVERIFY(up_rows < kTokens * kFf);
            }
            if (type == int(GgmlType::Q4_0)) {
                QVERIFY2(previous_bytes < 0 || level_bytes < previous_bytes,
                         qPrintable(QString("level %1: %2 bytes").arg(level).arg(level_bytes)));
                QVERIFY(level_dense > 0);
            }
            previous_bytes = level_bytes;
        }
    }

    void hybridEqualsDenseWhenAllActive_data() {
        QTest::addColumn<double>("hot");
        QTest::newRow("all cold") << 0.0;
        QTest::newRow("split") << 0.6;
        QTest::newRow("all hot") << 1.0;
    }
    void hybridEqualsDenseWhenAllActive() {
        QFETCH(double, hot);
        tensor::ThreadPool pool(2);
        Weights w = make_weights(GgmlType::Q8_0, 3);
        auto host = backend::make_cpu_compute(pool);
        model::DenseFfn dense(*host, w.views);
        Tuning tuning;
        tuning.hot_neuron_threshold = hot;
        tuning.prefetch_depth = 1;
        HybridOptions exact = device_path();
        exact.down_type = GgmlType::F32;  // lossless down copy
        HybridFfn ffn(pool, w.views, make_sidecar(20.0f), backend::make_cpu_device({1 << 24, 1}),
                      dense, tuning, exact);
        // The default Q8_0 down copy adds at most the 8-bit rounding of down.
        HybridFfn ffn_q8(pool, w.views, make_sidecar(20.0f), backend::make_cpu_device({1 << 24, 1}),
                         dense, tuning, device_path());
        for (int l = 0; l < kLayers; ++l) {
            const auto x = random_x(10 + l);
            std::vector<float> y(kEmbd), yd(kEmbd);
            ffn.run(l, x.data(), 1, y.data());
            dense.run(l, x.data(), 1, yd.data());
            // vs the float reference: only the float summation order differs.
            QVERIFY2(rel_err(y, reference(w.views[l], x.data())) < 1e-5,
                     qPrintable(QString::number(rel_err(y, reference(w.views[l], x.data())))));
            // vs DenseFfn: it also quantizes the activations before down (8 bit).
            QVERIFY(rel_err(y, yd) < 2e-2);
            std::vector<float> yq(kEmbd);
            ffn_q8.run(l, x.data(), 1, yq.data());
            QVERIFY(rel_err(yq, y) < 1e-2);
        }
        ffn.end_token();
        const TokenMetrics m = ffn.last_metrics();
        QCOMPARE(m.active, kLayers * kFf);
        QCOMPARE(m.hot_hits + m.cache_hits + m.cold_misses, m.active);
        if (hot == 1.0) QCOMPARE(m.hit_rate(), 1.0);
        if (hot == 0.0) QCOMPARE(m.hot_hits, int64_t(0));
        QCOMPARE(int64_t(m.layer_hit_rate.size()), kLayers);
    }

    // Without a GPU: exact activity. At level 0 every neuron counts and the
    // output is the FFN up to the int8 rounding of h; at 50 % it is the FFN
    // over exactly the neurons the threshold keeps (the up bound only skips
    // neurons that cannot pass), the same with 1 and 2 threads; the knob
    // acts before the next token.
    void exactPathComputesWhatTheThresholdKeeps() {
        Weights w = make_weights(GgmlType::Q4_0, 7);
        Sidecar sc = make_sidecar(20.0f);
        sc.exact_levels = {0.0f, 0.5f, 0.9f};
        for (int l = 0; l < kLayers; ++l) {
            // Thresholds from the data: the median contribution over a few inputs.
            std::vector<float> c;
            for (uint32_t seed = 100; seed < 110; ++seed) {
                const auto x = random_x(seed);
                tensor::QuantizedVector xq;
                tensor::quantize_activations(w.views[l].gate.type, x.data(), kEmbd, xq);
                for (int64_t j = 0; j < kFf; ++j) {
                    const float g =
                        tensor::vec_dot(GgmlType::Q4_0, kEmbd, w.views[l].gate.row(j), xq);
                    const float u =
                        tensor::vec_dot(GgmlType::Q4_0, kEmbd, w.views[l].up.row(j), xq);
                    c.push_back(std::fabs(g / (1.0f + std::exp(-g)) * u));
                }
            }
            std::sort(c.begin(), c.end());
            sc.layers[size_t(l)].exact_thresholds = {0.0f, c[c.size() / 2], c[c.size() * 9 / 10]};
            sc.layers[size_t(l)].up_bound = 1.05f;  // Cauchy-Schwarz (plus rounding): never wrong
        }
        std::vector<float> first;
        for (int threads : {1, 2}) {
            tensor::ThreadPool pool(threads);
            auto host = backend::make_cpu_compute(pool);
            model::DenseFfn dense(*host, w.views);
            Tuning tuning;
            tuning.activation_sparsity = 0.0;
            HybridFfn ffn(pool, w.views, sc, backend::make_cpu_device({1 << 24, 1}), dense, tuning,
                          {});
            QVERIFY(ffn.exact());
            QVERIFY2(ffn.status().find("exact activity") != std::string::npos,
                     ffn.status().c_str());
            const auto x = random_x(42);
            std::vector<float> y(kEmbd);
            int64_t active = 0;
            ffn.run(0, x.data(), 1, y.data());
            QVERIFY2(rel_err(y, masked_reference(w.views[0], x.data(), 0.0, active)) < 2e-2,
                     qPrintable(QString::number(
                         rel_err(y, masked_reference(w.views[0], x.data(), 0.0, active)))));
            ffn.end_token();
            QCOMPARE(ffn.last_metrics().active, kFf);  // layer 0 only
            tuning.activation_sparsity = 0.5;
            ffn.set_tuning(tuning);
            ffn.run(0, x.data(), 1, y.data());
            ffn.end_token();
            const double t = sc.layers[0].exact_thresholds[1];
            const auto want = masked_reference(w.views[0], x.data(), t, active);
            QVERIFY(active > 0 && active < kFf);
            // A neuron right at the threshold may fall either way (float vs double).
            QVERIFY2(std::llabs(ffn.last_metrics().active - active) <= 2,
                     qPrintable(QString("%1 vs %2").arg(ffn.last_metrics().active).arg(active)));
            QVERIFY2(rel_err(y, want) < 3e-2, qPrintable(QString::number(rel_err(y, want))));
            if (first.empty())
                first = y;
            else
                QCOMPARE(y, first);
        }
    }

    void denseSwitchAndPrefillAreExact() {
        tensor::ThreadPool pool(2);
        Weights w = make_weights(GgmlType::Q4_0, 4);
        auto host = backend::make_cpu_compute(pool);
        model::DenseFfn dense(*host, w.views);
        Tuning tuning;
        HybridFfn ffn(pool, w.views, make_sidecar(-20.0f), backend::make_cpu_device({1 << 24, 1}),
                      dense, tuning, device_path());
        const auto x = random_x(3);
        std::vector<float> y(kEmbd), yd(kEmbd);
        // Predictor says nothing is active: the sparse output is zero.
        ffn.run(0, x.data(), 1, y.data());
        QCOMPARE(y, std::vector<float>(kEmbd, 0.0f));
        ffn.end_token();
        tuning.sparse = false;
        ffn.set_tuning(tuning);
        ffn.run(0, x.data(), 1, y.data());
        dense.run(0, x.data(), 1, yd.data());
        QCOMPARE(y, yd);
        tuning.sparse = true;
        tuning.force_full_precision_layers = {1};
        ffn.set_tuning(tuning);
        ffn.run(0, x.data(), 1, y.data());
        QCOMPARE(y, std::vector<float>(kEmbd, 0.0f));
        ffn.run(1, x.data(), 1, y.data());
        dense.run(1, x.data(), 1, yd.data());
        QCOMPARE(y, yd);
    }

    // v3 hands each matrix it copied to release_rows once its copy is built
    // (HybridFfn then drops the file's rows behind panels); a matrix it
    // refuses stays dense, reads its rows, and is not handed over.
    void inputSparsityReleasesOnlyCopiedRows() {
        tensor::ThreadPool pool(2);
        const size_t row_bytes = 2 * 18;  // 64 Q4_0 columns
        std::vector<uint8_t> copied(64 * row_bytes, 0x11), refused(40 * row_bytes, 0x11);
        model::SiteMatrices a, b;
        a.site = model::InputSite::AttnIn;
        a.layer = 0;
        a.ws.push_back({GgmlType::Q4_0, copied.data(), 64, 64, row_bytes});
        b.site = model::InputSite::AttnOut;
        b.layer = 0;
        b.ws.push_back({GgmlType::Q4_0, refused.data(), 40, 64, row_bytes});  // 40 outputs
        std::vector<const uint8_t*> released;
        InputSparsity in(pool, {a, b}, default_input_allocation(), true,
                         [&](const tensor::WeightView& w) { released.push_back(w.data); });
        QCOMPARE(released.size(), size_t(1));
        QCOMPARE(released[0], static_cast<const uint8_t*>(copied.data()));
        QCOMPARE(in.dense_products().size(), size_t(1));
    }

    // With replace_rows the copies serve every product of their matrices
    // once the owner has dropped the rows: a batch (a prompt) and level 0
    // give the dense kernels' bits from the copies alone; a refused matrix
    // is left to the dense path.
    void replacedRowsServeEveryProduct() {
        using tensor::testing::make_matrix;
        using tensor::testing::same_bits;
        tensor::ThreadPool pool(2);
        const auto q = make_matrix(GgmlType::Q4_0, 64, 128, 3);
        const auto k = make_matrix(GgmlType::Q8_0, 32, 128, 4);
        const auto odd = make_matrix(GgmlType::Q4_0, 40, 128, 5);  // 40 outputs: no copy
        std::vector<uint8_t> qb = q.bytes, kb = k.bytes;           // the rows the owner drops
        model::SiteMatrices a, b;
        a.site = model::InputSite::AttnIn;
        a.layer = 0;
        a.ws = {q.view, k.view};
        a.ws[0].data = qb.data();
        a.ws[1].data = kb.data();
        b.site = model::InputSite::AttnOut;
        b.layer = 0;
        b.ws = {odd.view};
        // The owner gets each copied matrix whole (before its copy is built:
        // its dense layout goes first) and its rows in slices as they are
        // read, from the pool's threads; never the refused one.
        std::mutex mu;
        std::vector<tensor::WeightView> released;
        InputSparsity in(
            pool, {a, b}, default_input_allocation(), true,
            [&](const tensor::WeightView& w) {
                std::lock_guard<std::mutex> lock(mu);
                released.push_back(w);
            },
            true);
        QVERIFY(in.replaces_rows());
        int whole = 0;
        for (const auto& w : released) {
            const bool in_q = w.data >= qb.data() && w.data + w.bytes() <= qb.data() + qb.size();
            const bool in_k = w.data >= kb.data() && w.data + w.bytes() <= kb.data() + kb.size();
            QVERIFY(in_q || in_k);
            whole += (w.data == qb.data() && w.rows == 64) || (w.data == kb.data() && w.rows == 32);
        }
        // Each small matrix three times: before, as its one block of rows,
        // after (kept without replace_rows: once, after).
        QCOMPARE(whole, 6);
        QCOMPARE(in.copied_bytes(), int64_t(q.bytes.size() + k.bytes.size()));
        std::fill(qb.begin(), qb.end(), uint8_t{0});
        std::fill(kb.begin(), kb.end(), uint8_t{0});
        std::mt19937 rng(9);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        const int64_t n = InputSparsity::kTokenRows + 1;  // a prompt's batch
        std::vector<float> X(size_t(n * 128));
        for (float& v : X) v = nd(rng);
        std::vector<float> rq(size_t(n * 64)), rk(size_t(n * 32)), yq(rq.size()), yk(rk.size());
        tensor::matmul(pool, q.view, X.data(), n, rq.data());
        tensor::matmul(pool, k.view, X.data(), n, rk.data());
        float* ys[] = {yq.data(), yk.data()};
        QVERIFY(in.matmul(a.ws, X.data(), n, ys));
        QVERIFY(same_bits(yq.data(), rq.data(), rq.size()));
        QVERIFY(same_bits(yk.data(), rk.data(), rk.size()));
        // One token at level 0: the dense bits, from a dense layout rebuilt
        // from the copies while the level stays 0.
        in.set_level(0.0);
        const int64_t copies_only = in.extra_bytes();
        tensor::matvec(pool, q.view, X.data(), rq.data());
        tensor::matvec(pool, k.view, X.data(), rk.data());
        std::fill(yq.begin(), yq.end(), -1.0f);
        QVERIFY(in.matvec(a.ws, X.data(), ys));
        QVERIFY(same_bits(yq.data(), rq.data(), 64));
        QVERIFY(same_bits(yk.data(), rk.data(), 32));
        QCOMPARE(in.extra_bytes(), copies_only + int64_t(q.bytes.size() + k.bytes.size()));
        in.set_level(0.0);  // a tuning change that keeps the level keeps the layout
        in.set_dense_layers({});
        QCOMPARE(in.extra_bytes(), copies_only + int64_t(q.bytes.size() + k.bytes.size()));
        std::fill(yq.begin(), yq.end(), -1.0f);
        QVERIFY(in.matvec(a.ws, X.data(), ys));  // again, from the rebuilt layout
        QVERIFY(same_bits(yq.data(), rq.data(), 64));
        in.set_level(0.5);  // sparse again: the rebuilt layout goes
        QCOMPARE(in.extra_bytes(), copies_only);
        QVERIFY(in.matvec(a.ws, X.data(), ys));
        // A few rows (a decode step of several sequences) are decoded
        // tokens, each with the bits it gets alone.
        std::vector<float> one_q(64), one_k(32), few_q(3 * 64), few_k(3 * 32);
        float* few[] = {few_q.data(), few_k.data()};
        float* one[] = {one_q.data(), one_k.data()};
        QVERIFY(in.matmul(a.ws, X.data(), 3, few));
        for (int64_t r = 0; r < 3; ++r) {
            QVERIFY(in.matvec(a.ws, X.data() + r * 128, one));
            QVERIFY(same_bits(few_q.data() + r * 64, one_q.data(), 64));
            QVERIFY(same_bits(few_k.data() + r * 32, one_k.data(), 32));
        }
        // The refused matrix is the dense path's.
        std::vector<float> yo(size_t(n * 40));
        float* yos[] = {yo.data()};
        QVERIFY(!in.matmul(b.ws, X.data(), n, yos));
        // Without replace_rows batches are the dense path's too.
        InputSparsity keep(pool, {a}, default_input_allocation(), true);
        QVERIFY(!keep.replaces_rows());
        QVERIFY(!keep.matmul(a.ws, X.data(), n, ys));
    }

    // Matrices of one type that take one input (q/k/v) share one stacked
    // copy: each still gets its own product, bit for bit what its own copy
    // gives over the same kept inputs (the top |x_j| * ||W[:, j]|| over all
    // of them), and a prompt and level 0 still give the dense bits.
    void stackedCopyGivesEachMatrixItsOwnProduct_data() {
        QTest::addColumn<int>("type");
        QTest::newRow("Q4_0") << int(GgmlType::Q4_0);
        QTest::newRow("Q5_K") << int(GgmlType::Q5_K);  // the Q5_K_M models' q/k/v
    }
    void stackedCopyGivesEachMatrixItsOwnProduct() {
        using tensor::testing::make_matrix;
        using tensor::testing::same_bits;
        QFETCH(int, type);
        const auto t = static_cast<GgmlType>(type);
        tensor::ThreadPool pool(2);
        const int64_t n_in = 256;
        const tensor::testing::Matrix ms[] = {make_matrix(t, 96, n_in, 21),
                                              make_matrix(t, 32, n_in, 22),
                                              make_matrix(t, 64, n_in, 23)};
        model::SiteMatrices a;
        a.site = model::InputSite::AttnIn;
        a.layer = 0;
        for (const auto& m : ms) a.ws.push_back(m.view);
        InputSparsity in(pool, {a}, default_input_allocation(), true, {}, true);
        // One copy for the three: the copies' bytes are one matrix's worth.
        const auto alone = tensor::make_input_major(ms[0].view);
        QVERIFY(in.extra_bytes() < int64_t(3 * alone.bytes()) + int64_t(n_in * sizeof(float)));
        std::mt19937 rng(5);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(n_in));
        for (float& v : x) v = nd(rng);
        std::vector<float> y0(96), y1(32), y2(64);
        float* ys[] = {y0.data(), y1.data(), y2.data()};
        in.set_level(0.5);
        QVERIFY(in.matvec(a.ws, x.data(), ys));
        QCOMPARE(in.take_counts().kept[static_cast<int>(model::InputSite::AttnIn)], n_in / 2);
        // The reference: each matrix's own copy over the same kept inputs.
        std::vector<double> n2(size_t(n_in), 0.0);
        for (const auto& m : ms)
            for (int64_t r = 0; r < m.view.rows; ++r)
                for (int64_t j = 0; j < n_in; ++j)
                    n2[size_t(j)] +=
                        double(m.deq[size_t(r * n_in + j)]) * m.deq[size_t(r * n_in + j)];
        std::vector<std::pair<float, int32_t>> crit;
        for (int32_t j = 0; j < n_in; ++j)
            crit.push_back({std::fabs(x[size_t(j)]) * float(std::sqrt(n2[size_t(j)])), j});
        std::sort(crit.begin(), crit.end(), std::greater<>());
        std::vector<int32_t> ids;
        for (int64_t k = 0; k < n_in / 2; ++k) ids.push_back(crit[size_t(k)].second);
        std::sort(ids.begin(), ids.end());
        tensor::SparseInput si;
        tensor::prepare_sparse_input(ids.data(), int64_t(ids.size()), x.data(), 32, si);
        for (int k = 0; k < 3; ++k) {
            std::vector<float> ref(size_t(ms[k].view.rows));
            tensor::colsparse_matvec_ref(tensor::make_input_major(ms[k].view), si, ref.data());
            QVERIFY2(same_bits(ys[k], ref.data(), ref.size()), qPrintable(QString::number(k)));
        }
        // Level 0 and a prompt's batch: the dense kernels' bits.
        in.set_level(0.0);
        std::vector<float> r0(96), r1(32), r2(64);
        tensor::matvec(pool, ms[0].view, x.data(), r0.data());
        tensor::matvec(pool, ms[1].view, x.data(), r1.data());
        tensor::matvec(pool, ms[2].view, x.data(), r2.data());
        QVERIFY(in.matvec(a.ws, x.data(), ys));
        QVERIFY(same_bits(y0.data(), r0.data(), 96));
        QVERIFY(same_bits(y1.data(), r1.data(), 32));
        QVERIFY(same_bits(y2.data(), r2.data(), 64));
        const int64_t n = InputSparsity::kTokenRows + 1;
        std::vector<float> X(size_t(n * n_in));
        for (float& v : X) v = nd(rng);
        std::vector<float> b0(size_t(n * 96)), b1(size_t(n * 32)), b2(size_t(n * 64));
        std::vector<float> d0(b0.size()), d1(b1.size()), d2(b2.size());
        float* bs[] = {b0.data(), b1.data(), b2.data()};
        in.set_level(0.5);  // batches are dense at every level
        QVERIFY(in.matmul(a.ws, X.data(), n, bs));
        tensor::matmul(pool, ms[0].view, X.data(), n, d0.data());
        tensor::matmul(pool, ms[1].view, X.data(), n, d1.data());
        tensor::matmul(pool, ms[2].view, X.data(), n, d2.data());
        QVERIFY(same_bits(b0.data(), d0.data(), d0.size()));
        QVERIFY(same_bits(b1.data(), d1.data(), d1.size()));
        QVERIFY(same_bits(b2.data(), d2.data(), d2.size()));
    }

    // TEAL's count weighs each product by its weights and leaves the head
    // out; the delivered sparsity counts inputs.
    void weightedSparsityCountsWeightsNotInputs() {
        tensor::ThreadPool pool(1);
        const size_t row_bytes = 2 * 18;  // 64 Q4_0 columns
        std::vector<uint8_t> q(128 * row_bytes, 0x11), down(64 * 2 * row_bytes, 0x11),
            head(96 * row_bytes, 0x11);
        model::SiteMatrices a, d, h;
        a.site = model::InputSite::AttnIn;
        a.layer = 0;
        a.ws.push_back({GgmlType::Q4_0, q.data(), 128, 64, row_bytes});  // 8192 weights
        d.site = model::InputSite::FfnMid;
        d.layer = 0;
        d.ws.push_back({GgmlType::Q4_0, down.data(), 64, 128, 2 * row_bytes});  // 8192
        h.site = model::InputSite::Head;
        h.ws.push_back({GgmlType::Q4_0, head.data(), 96, 64, row_bytes});
        InputAllocation alloc;
        alloc.share[static_cast<int>(model::InputSite::AttnIn)] = 0.5;
        alloc.share[static_cast<int>(model::InputSite::FfnMid)] = 1.5;
        alloc.share[static_cast<int>(model::InputSite::Head)] = 2.0;
        InputSparsity in(pool, {a, d, h}, alloc);
        in.set_level(0.4);
        std::vector<float> x(128), y(128);
        for (size_t j = 0; j < x.size(); ++j) x[j] = 1.0f + float(j % 7);
        float* ys[1] = {y.data()};
        for (const auto* m : {&a, &d, &h}) QVERIFY(in.matvec(m->ws, x.data(), ys));
        const InputCounts c = in.take_counts();
        const double da = c.delivered(model::InputSite::AttnIn),
                     dd = c.delivered(model::InputSite::FfnMid);
        QVERIFY(da > 0 && dd > da && c.delivered(model::InputSite::Head) > dd);
        QCOMPARE(c.delivered_weights(), (da + dd) / 2);  // as many weights each
        QCOMPARE(c.delivered(),
                 (64 * da + 128 * dd + 64 * c.delivered(model::InputSite::Head)) / 256);
        QVERIFY(std::fabs(c.delivered_weights() - c.delivered()) > 0.01);
    }

    void neuronCacheKeepsRecentColdNeurons() {
        tensor::ThreadPool pool(1);
        Weights w = make_weights(GgmlType::Q8_0, 6);
        auto host = backend::make_cpu_compute(pool);
        model::DenseFfn dense(*host, w.views);
        Tuning tuning;
        tuning.hot_neuron_threshold = 0.0;  // nothing pinned: everything goes through the cache
        tuning.cache_window_size = 2;
        tuning.prefetch_depth = 0;
        HybridFfn ffn(pool, w.views, make_sidecar(20.0f), backend::make_cpu_device({1 << 24, 1}),
                      dense, tuning, device_path());
        const auto x = random_x(8);
        std::vector<float> y(kEmbd), y2(kEmbd);
        ffn.run(0, x.data(), 1, y.data());
        ffn.end_token();
        QCOMPARE(ffn.last_metrics().cold_misses, kFf);
        ffn.run(0, x.data(), 1, y2.data());
        ffn.end_token();
        QCOMPARE(ffn.last_metrics().cache_hits, kFf);
        QVERIFY(rel_err(y2, y) < 1e-6);  // the cache changes where, not what
        QCOMPARE(ffn.memory().neuron_cache, kFf * ffn.device().layer_format(0).bytes_per_neuron());
        // Layer 0 unused for the window: its cache entries expire.
        for (int t = 0; t < 3; ++t) {
            ffn.run(1, x.data(), 1, y.data());
            ffn.end_token();
        }
        QCOMPARE(ffn.device().resident_count(0), int64_t(0));
        // Live threshold change re-runs placement.
        tuning.hot_neuron_threshold = 0.9;
        ffn.set_tuning(tuning);
        ffn.run(0, x.data(), 1, y.data());
        QVERIFY(ffn.placement().hot_count[0] > 0);
        QCOMPARE(ffn.device().residency(0, 0), backend::MemCategory::HotNeurons);
    }
};

QTEST_GUILESS_MAIN(TestSparse)
#include "tst_sparse.moc"
