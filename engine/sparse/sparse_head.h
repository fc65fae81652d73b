// The output head by a low-rank preview (docs/architecture.md, "Sparse
// subsystem"): a decoded token's logits read a small preview matrix instead
// of the whole head, and only the likely rows of the head itself.
//
// The head's inputs (the final RMS-normalised hidden states) lie close to a
// low-dimensional subspace: calibration records their second moment and
// keeps its top `rank` eigenvectors as an orthonormal basis P (rank x
// n_embd, in the sidecar). At load the preview A = W P^T (n_vocab x rank,
// 4-bit rows with a scale and offset each, tensor/u4_rows.h) is built from
// the head W by one batched product. Per token:
//   z = P x                      (rank x n_embd floats)
//   preview = A z                (n_vocab x rank: rank / n_embd of the head)
//   the `candidates` rows with the largest preview get the head's own
//   product (the dense kernel's bits); every other row keeps its preview.
// With candidates >= n_vocab every logit is the dense one, bit for bit. The
// head is a neuron layer with a predictor in PowerInfer's sense: the
// preview predicts which rows matter, and only those are computed exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sparse/select.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"
#include "tensor/u4_rows.h"

namespace powerinfer::sparse {

// An orthonormal basis of the head's input subspace: rank rows of n_embd.
struct HeadBasis {
    int64_t rank = 0, n_embd = 0;
    std::vector<float> rows;
    bool empty() const { return rank == 0; }
};

// Whether a product a matvec hook sees (backend::MatvecHook) is the head's.
inline bool is_head_product(std::span<const tensor::WeightView> ws,
                            const tensor::WeightView& head) {
    return ws.size() == 1 && ws[0].data == head.data;
}

// The basis's rank for a model of this width: a fifth of it, in whole
// 32-element blocks.
int64_t head_basis_rank(int64_t n_embd);

// Calibration: the second moment of the head's inputs, then its top
// eigenvectors.
class HeadInputMoments {
public:
    explicit HeadInputMoments(int64_t n_embd);
    void add(const float* x, int64_t rows);  // x[rows][n_embd]
    int64_t samples() const { return samples_; }
    // The top-`rank` eigenvectors of the moment (orthonormal rows), by
    // subspace iteration from a fixed start (deterministic). Empty basis
    // when fewer samples than rank were recorded.
    HeadBasis basis(int64_t rank) const;

private:
    int64_t n_;
    int64_t samples_ = 0;
    std::vector<double> m_;  // n x n, upper triangle accumulated
};

// What the decoded tokens read of the head since load (or reset).
struct HeadCounts {
    int64_t tokens = 0;
    int64_t exact_rows = 0;       // rows multiplied exactly
    int64_t bytes = 0;            // head bytes read: preview + exact rows
    int64_t dense_bytes = 0;      // what the dense head would have read
    // The head bytes a token did not read, on average (0 before any).
    double saved_per_token() const {
        return tokens > 0 ? double(dense_bytes - bytes) / double(tokens) : 0.0;
    }
};

// The preview A = W P^T of `head` (n_vocab rows of n_embd) in the basis:
// n_vocab 4-bit rows of the basis's rank, from one batched product over
// every row of the head (about 1.4 s of CPU for Qwen2.5-Coder-0.5B's
// 151,936 rows). Calibration stores it in the sidecar, so that a load need
// not read the whole head to build it again. Throws EngineError when the
// basis does not match the head's width.
tensor::U4Rows make_head_preview(tensor::ThreadPool& pool, const tensor::WeightView& head,
                                 const HeadBasis& basis);
// "" when the basis fits the head's width and `preview` (unless it has no
// rows) the head's rows and the basis's rank; else what does not, with the
// recalibration hint.
std::string head_mismatch(const tensor::WeightView& head, const HeadBasis& basis,
                          const tensor::U4Rows& preview = {});

class SparseHead {
public:
    // Takes `preview` when it has rows (make_head_preview's, from the
    // sidecar), else builds it. Throws EngineError when the basis does not
    // match the head's width or the preview the head's rows and the basis's
    // rank.
    SparseHead(tensor::ThreadPool& pool, const tensor::WeightView& head, const HeadBasis& basis,
               tensor::U4Rows preview = {});

    const tensor::WeightView& head() const { return head_; }
    int64_t rank() const { return basis_.rank; }
    // Bytes of the preview matrix (RAM beyond the dense model).
    int64_t preview_bytes() const { return static_cast<int64_t>(preview_.bytes()); }
    // The default number of exactly computed rows for a vocabulary.
    static int64_t default_candidates(int64_t n_vocab);

    // logits[n_vocab] for one token x[n_embd]: the `candidates` rows with
    // the largest preview exact, the rest their preview (candidates <= 0:
    // default_candidates; >= n_vocab: every row exact, the dense bits).
    void logits(const float* x, int64_t candidates, float* out);

    HeadCounts counts() const { return counts_; }
    void reset_counts() { counts_ = {}; }

private:
    tensor::ThreadPool& pool_;
    tensor::WeightView head_;
    HeadBasis basis_;
    tensor::WeightView basis_view_;  // basis_.rows as an F32 matrix
    tensor::U4Rows preview_;
    std::vector<float> z_, sample_, bucket_, exact_;
    std::vector<uint32_t> hist_;
    std::vector<int32_t> ids_, sample_pos_;  // sample_pos_: ascending
    std::vector<int64_t> passed_;            // per scan range: its rows that pass
    tensor::U4Input zq_;
    tensor::QuantizedVector xq_;
    HeadCounts counts_;
};

}  // namespace powerinfer::sparse
