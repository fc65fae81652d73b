#include "sparse/sparse_head.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <random>
#include <string>

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

namespace {

// Unsigned keys in the floats' order: negatives flipped whole, positives
// with the sign bit set.
inline uint32_t order_key(float f) {
    const auto u = std::bit_cast<uint32_t>(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

}  // namespace

float strided_kth_largest(const float* v, int64_t n, int64_t stride, int64_t k,
                          std::vector<uint32_t>& hist, std::vector<float>& bucket) {
    constexpr int kShift = 20;  // 12-bit buckets: sign, exponent, 3 mantissa bits
    constexpr size_t kBuckets = size_t{1} << (32 - kShift);
    // Four interleaved histograms: runs of equal buckets do not chain their
    // increments through one counter.
    hist.assign(4 * kBuckets, 0);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int64_t j = 0; j < 4; ++j)
            ++hist[static_cast<size_t>(j) * kBuckets + (order_key(v[(i + j) * stride]) >> kShift)];
    for (; i < n; ++i) ++hist[order_key(v[i * stride]) >> kShift];
    for (size_t b = 0; b < kBuckets; ++b)
        hist[b] += hist[kBuckets + b] + hist[2 * kBuckets + b] + hist[3 * kBuckets + b];
    // The bucket that holds the k-th largest, from the top.
    int64_t above = 0;
    uint32_t b = static_cast<uint32_t>(kBuckets);
    while (b > 0 && above + hist[b - 1] < k) above += hist[--b];
    const uint32_t want = b - 1;
    bucket.clear();
    for (i = 0; i < n; ++i) {
        const float f = v[i * stride];
        if ((order_key(f) >> kShift) == want) bucket.push_back(f);
    }
    const auto r = static_cast<std::ptrdiff_t>(k - above - 1);
    std::nth_element(bucket.begin(), bucket.begin() + r, bucket.end(), std::greater<>());
    return bucket[static_cast<size_t>(r)];
}

SparseHead::SparseHead(tensor::ThreadPool& pool, const tensor::WeightView& head,
                       const HeadBasis& basis)
    : pool_(pool), head_(head), basis_(basis) {
    const int64_t V = head.rows, d = head.cols, r = basis.rank;
    if (basis.n_embd != d || r <= 0 || r % 32 != 0 ||
        basis.rows.size() != static_cast<size_t>(r * d))
        throw EngineError("the sidecar's head basis (" + std::to_string(r) + " x " +
                          std::to_string(basis.n_embd) + ") does not match the output head (" +
                          std::to_string(d) +
                          " wide); recalibrate with `powerinfer-calibrate -m MODEL`");
    // A = W P^T, chunk by chunk of the vocabulary: the basis rows are the
    // batch of a prefill-style product (Y[k][v] = W_v . P_k), transposed
    // into Q8_0 rows of `rank`.
    const size_t row_bytes = static_cast<size_t>(r / 32) * 34;
    preview_store_.resize(static_cast<size_t>(V) * row_bytes);
    constexpr int64_t kChunk = 8192;  // a multiple of the panels' rows
    std::vector<float> y(static_cast<size_t>(r * std::min(V, kChunk))), row(static_cast<size_t>(r));
    for (int64_t v0 = 0; v0 < V; v0 += kChunk) {
        const int64_t v1 = std::min(V, v0 + kChunk), nv = v1 - v0;
        tensor::matmul(pool, head.slice(v0, v1), basis.rows.data(), r, y.data());
        for (int64_t v = 0; v < nv; ++v) {
            for (int64_t k = 0; k < r; ++k) row[static_cast<size_t>(k)] = y[static_cast<size_t>(k * nv + v)];
            tensor::quantize_row_ref(GgmlType::Q8_0, row.data(),
                                     preview_store_.data() + static_cast<size_t>(v0 + v) * row_bytes,
                                     r);
        }
    }
    preview_.type = GgmlType::Q8_0;
    preview_.data = preview_store_.data();
    preview_.rows = V;
    preview_.cols = r;
    preview_.row_bytes = row_bytes;
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
    tensor::quantize_activations(GgmlType::Q8_0, z_.data(), r, zq_);
    tensor::matvec_q(pool_, preview_, zq_, out);

    // The cut: the n-th largest preview, from a strided sample when the
    // vocabulary is large against n (about n rows pass; which ones is
    // still decided by the preview alone, deterministically).
    const int64_t stride = std::max<int64_t>(1, V / (16 * n));
    const int64_t sampled = (V + stride - 1) / stride;
    const int64_t want =
        std::max<int64_t>(1, std::min<int64_t>(sampled, (n + stride - 1) / stride));
    const float cut = strided_kth_largest(out, sampled, stride, want, hist_, bucket_);
    // Branch-free: which rows pass is in no order a predictor could learn.
    // (ids_ keeps V entries: resizing it per token would clear them.)
    ids_.resize(static_cast<size_t>(V));
    int64_t m = 0;
    for (int64_t i = 0; i < V; ++i) {
        ids_[static_cast<size_t>(m)] = static_cast<int32_t>(i);
        m += out[i] >= cut;
    }

    tensor::quantize_activations(head_.type, x, d, xq_);
    exact_.resize(static_cast<size_t>(m));
    tensor::matvec_rows(pool_, head_, xq_, ids_.data(), m, exact_.data());
    for (int64_t i = 0; i < m; ++i) out[ids_[static_cast<size_t>(i)]] = exact_[static_cast<size_t>(i)];
    counts_.exact_rows += m;
    counts_.bytes += preview_bytes() + m * static_cast<int64_t>(head_.row_bytes);
}

}  // namespace powerinfer::sparse
