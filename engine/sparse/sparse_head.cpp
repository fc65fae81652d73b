#include "sparse/sparse_head.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "common/error.h"

namespace powerinfer::sparse {

int64_t head_basis_rank(int64_t n_embd) {
    const int64_t r = (n_embd / 5 + 31) / 32 * 32;
    return r <= n_embd ? r : 0;
}

HeadInputMoments::HeadInputMoments(int64_t n_embd)
    : n_(n_embd), m_(static_cast<size_t>(n_embd * n_embd), 0.0) {}

void HeadInputMoments::add(const float* x, int64_t rows) {
    for (int64_t t = 0; t < rows; ++t, x += n_) {
        for (int64_t i = 0; i < n_; ++i) {
            const double xi = x[i];
            double* m = m_.data() + i * n_;
            for (int64_t j = i; j < n_; ++j) m[j] += xi * x[j];
        }
        ++samples_;
    }
}

namespace {

// A pseudo-random value in [-0.5, 0.5) from the generator's bits (not a
// distribution, so every platform draws alike).
double draw(std::mt19937_64& rng) {
    return double(rng() >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

// Orthonormalises the columns of q (n x r, row-major) in place by modified
// Gram-Schmidt, twice (the second pass restores what rounding lost). A
// column the others already span (a moment of lower rank than r) is
// replaced by a fresh draw.
void orthonormalise(std::vector<double>& q, int64_t n, int64_t r, std::mt19937_64& rng) {
    for (int64_t k = 0; k < r; ++k) {
        for (;;) {
            double before = 0;
            for (int64_t i = 0; i < n; ++i) before += q[i * r + k] * q[i * r + k];
            for (int pass = 0; pass < 2; ++pass)
                for (int64_t j = 0; j < k; ++j) {
                    double dot = 0;
                    for (int64_t i = 0; i < n; ++i) dot += q[i * r + k] * q[i * r + j];
                    for (int64_t i = 0; i < n; ++i) q[i * r + k] -= dot * q[i * r + j];
                }
            double norm = 0;
            for (int64_t i = 0; i < n; ++i) norm += q[i * r + k] * q[i * r + k];
            if (norm > 1e-20 * before && norm > 0) {
                const double inv = 1.0 / std::sqrt(norm);
                for (int64_t i = 0; i < n; ++i) q[i * r + k] *= inv;
                break;
            }
            for (int64_t i = 0; i < n; ++i) q[i * r + k] = draw(rng);
        }
    }
}

}  // namespace

HeadBasis HeadInputMoments::basis(int64_t rank) const {
    HeadBasis b;
    if (rank <= 0 || rank > n_ || samples_ < rank) return b;
    const int64_t n = n_, r = rank;
    std::vector<double> s(static_cast<size_t>(n * n));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i; j < n; ++j)
            s[static_cast<size_t>(i * n + j)] = s[static_cast<size_t>(j * n + i)] =
                m_[static_cast<size_t>(i * n + j)] / double(samples_);
    // A fixed pseudo-random start, then subspace iteration: the top
    // eigenvectors' span converges first.
    std::mt19937_64 rng(0x9e3779b97f4a7c15ull);
    std::vector<double> q(static_cast<size_t>(n * r)), z(static_cast<size_t>(n * r));
    for (double& v : q) v = draw(rng);
    orthonormalise(q, n, r, rng);
    constexpr int kIterations = 16;
    for (int it = 0; it < kIterations; ++it) {
        std::fill(z.begin(), z.end(), 0.0);
        for (int64_t i = 0; i < n; ++i) {
            double* zi = z.data() + i * r;
            for (int64_t j = 0; j < n; ++j) {
                const double sij = s[static_cast<size_t>(i * n + j)];
                const double* qj = q.data() + j * r;
                for (int64_t k = 0; k < r; ++k) zi[k] += sij * qj[k];
            }
        }
        q.swap(z);
        orthonormalise(q, n, r, rng);
    }
    b.rank = r;
    b.n_embd = n;
    b.rows.resize(static_cast<size_t>(r * n));
    for (int64_t k = 0; k < r; ++k)
        for (int64_t i = 0; i < n; ++i)
            b.rows[static_cast<size_t>(k * n + i)] = static_cast<float>(q[i * r + k]);
    return b;
}

int64_t SparseHead::default_candidates(int64_t n_vocab) {
    return std::min<int64_t>(4096, std::max<int64_t>(1, n_vocab / 8));
}

std::string head_mismatch(const tensor::WeightView& head, const HeadBasis& basis,
                          const tensor::U4Rows& preview) {
    const int64_t d = head.cols, r = basis.rank;
    if (basis.n_embd != d || r <= 0 || r % 32 != 0 ||
        basis.rows.size() != static_cast<size_t>(r * d))
        return "the sidecar's head basis (" + std::to_string(r) + " x " +
               std::to_string(basis.n_embd) + ") does not match the output head (" +
               std::to_string(d) + " wide); recalibrate with `powerinfer-calibrate -m MODEL`";
    const auto rows = static_cast<size_t>(preview.rows);
    if (preview.rows != 0 &&
        (preview.rows != head.rows || preview.cols != tensor::u4_padded_cols(r) ||
         preview.q.size() != rows * preview.row_bytes() || preview.d.size() != rows ||
         preview.m.size() != rows))
        return "the sidecar's head preview (" + std::to_string(preview.rows) + " rows of " +
               std::to_string(preview.cols) + ") does not match the output head (" +
               std::to_string(head.rows) + " rows) and its basis (rank " + std::to_string(r) +
               "); recalibrate with `powerinfer-calibrate -m MODEL`";
    return {};
}

tensor::U4Rows make_head_preview(tensor::ThreadPool& pool, const tensor::WeightView& head,
                                 const HeadBasis& basis) {
    if (std::string why = head_mismatch(head, basis); !why.empty()) throw EngineError(why);
    const int64_t V = head.rows, r = basis.rank;
    // A = W P^T, chunk by chunk of the vocabulary: the basis rows are the
    // batch of a prefill-style product (Y[k][v] = W_v . P_k), transposed
    // into the preview's 4-bit rows of `rank`.
    tensor::U4Rows preview = tensor::make_u4_rows(V, r);
    constexpr int64_t kChunk = 8192;  // a multiple of the panels' rows
    std::vector<float> y(static_cast<size_t>(r * std::min(V, kChunk)));
    for (int64_t v0 = 0; v0 < V; v0 += kChunk) {
        const int64_t v1 = std::min(V, v0 + kChunk), nv = v1 - v0;
        tensor::matmul(pool, head.slice(v0, v1), basis.rows.data(), r, y.data());
        // The preview's rows over the pool (each is its own: the same
        // rows as on one thread).
        pool.parallel_for(
            nv,
            [&](int64_t b, int64_t e, int) {
                std::vector<float> row(static_cast<size_t>(r));
                for (int64_t v = b; v < e; ++v) {
                    for (int64_t k = 0; k < r; ++k)
                        row[static_cast<size_t>(k)] = y[static_cast<size_t>(k * nv + v)];
                    tensor::set_u4_row(preview, v0 + v, row.data(), r);
                }
            },
            256);
    }
    return preview;
}

SparseHead::SparseHead(tensor::ThreadPool& pool, const tensor::WeightView& head,
                       const HeadBasis& basis, tensor::U4Rows preview)
    : pool_(pool), head_(head), basis_(basis) {
    if (std::string why = head_mismatch(head, basis, preview); !why.empty()) throw EngineError(why);
    const int64_t d = head.cols, r = basis.rank;
    preview_ = preview.rows == 0 ? make_head_preview(pool, head, basis) : std::move(preview);
    z_.resize(static_cast<size_t>(r));
    basis_view_.type = GgmlType::F32;
    basis_view_.data = reinterpret_cast<const uint8_t*>(basis_.rows.data());
    basis_view_.rows = r;
    basis_view_.cols = d;
    basis_view_.row_bytes = static_cast<size_t>(d) * sizeof(float);
}

void SparseHead::logits(const float* x, int64_t candidates, float* out) {
    const int64_t V = head_.rows, d = head_.cols, r = basis_.rank;
    const int64_t n = candidates <= 0 ? default_candidates(V) : candidates;
    const int64_t dense_bytes = V * static_cast<int64_t>(head_.row_bytes);
    ++counts_.tokens;
    counts_.dense_bytes += dense_bytes;
    if (n >= V) {
        tensor::matvec(pool_, head_, x, out);
        counts_.exact_rows += V;
        counts_.bytes += dense_bytes;
        return;
    }
    tensor::matvec(pool_, basis_view_, x, z_.data());
    tensor::quantize_u4_input(z_.data(), r, preview_.cols, zq_);
    // The preview, and in the same pass (each range's rows still in its
    // core's cache) the sample for the cut: the n-th largest preview, or
    // where the vocabulary is large against n, the matching quantile of 4n
    // previews spread over it by a golden-ratio step coprime with V (evenly;
    // no period of the vocabulary's order lines up with it as with a plain
    // stride). About n rows pass, within a few percent; which ones is still
    // decided by the preview alone, deterministically.
    const int64_t m_sample = std::min(V, 4 * n);
    const bool all = m_sample == V;
    if (!all && static_cast<int64_t>(sample_pos_.size()) != m_sample) {
        auto step = static_cast<int64_t>(0.6180339887 * static_cast<double>(V));
        while (std::gcd(step, V) != 1) ++step;
        sample_pos_.resize(static_cast<size_t>(m_sample));
        for (int64_t k = 0, pos = 0; k < m_sample; ++k, pos = (pos + step) % V)
            sample_pos_[static_cast<size_t>(k)] = static_cast<int32_t>(pos);
        std::sort(sample_pos_.begin(), sample_pos_.end());
    }
    sample_.resize(all ? 0 : static_cast<size_t>(m_sample));
    constexpr int64_t kPreviewGrain = 256;
    const auto threads = static_cast<size_t>(pool_.size());
    hist_.assign(threads * kCutBuckets, 0);
    pool_.parallel_for(
        V,
        [&](int64_t b, int64_t e, int t) {
            tensor::u4_rows_product(preview_, zq_, b, e, out + b);
            uint32_t* h = hist_.data() + static_cast<size_t>(t) * kCutBuckets;
            if (all) return add_to_cut_histogram(out + b, e - b, h);
            const auto k0 = std::lower_bound(sample_pos_.begin(), sample_pos_.end(), b);
            const auto k1 = std::lower_bound(k0, sample_pos_.end(), e);
            float* s = sample_.data() + (k0 - sample_pos_.begin());
            for (auto k = k0; k != k1; ++k) *s++ = out[*k];
            add_to_cut_histogram(s - (k1 - k0), k1 - k0, h);
        },
        kPreviewGrain);
    for (size_t t = 1; t < threads; ++t)
        for (size_t b = 0; b < kCutBuckets; ++b) hist_[b] += hist_[t * kCutBuckets + b];
    const int64_t want = std::clamp<int64_t>((n * m_sample + V - 1) / V, 1, m_sample);
    const float cut = kth_largest_from_histogram(hist_.data(), all ? out : sample_.data(), m_sample,
                                                 want, bucket_);
    // The rows that pass, in order: each range of the vocabulary writes its
    // ids where the range starts (ids_ keeps V entries: resizing it per token
    // would clear them), then the ranges close up in order. Branch-free:
    // which rows pass is in no order a predictor could learn.
    ids_.resize(static_cast<size_t>(V));
    constexpr int64_t kScanGrain = 4096;
    passed_.assign(static_cast<size_t>((V + kScanGrain - 1) / kScanGrain), 0);
    pool_.parallel_for(
        V,
        [&](int64_t b, int64_t e, int) {
            int32_t* ids = ids_.data() + b;
            int64_t k = 0;
            for (int64_t i = b; i < e; ++i) {
                ids[k] = static_cast<int32_t>(i);
                k += out[i] >= cut;
            }
            passed_[static_cast<size_t>(b / kScanGrain)] = k;
        },
        kScanGrain);
    int64_t m = 0;
    for (size_t c = 0; c < passed_.size(); ++c) {
        const int64_t k = passed_[c], b = static_cast<int64_t>(c) * kScanGrain;
        if (k > 0 && b != m) std::copy_n(ids_.begin() + b, k, ids_.begin() + m);
        m += k;
    }

    tensor::quantize_activations(head_.type, x, d, xq_);
    exact_.resize(static_cast<size_t>(m));
    tensor::matvec_rows(pool_, head_, xq_, ids_.data(), m, exact_.data());
    for (int64_t i = 0; i < m; ++i) out[ids_[static_cast<size_t>(i)]] = exact_[static_cast<size_t>(i)];
    counts_.exact_rows += m;
    counts_.bytes += preview_bytes() + m * static_cast<int64_t>(head_.row_bytes);
}

}  // namespace powerinfer::sparse
