// The sparsity curve of calibration (docs/architecture.md, "Calibration"):
// the exact CPU path (sparse::ExactSparseFfn, what the engine runs without a
// GPU) at a few levels over held-out text, against dense. Per window of W
// tokens: the first half runs dense as context (once), then the second half
// once dense and once per level, each over the same context (the second
// half's KV entries are rewritten, the first half's kept). The scored half
// runs as one batch whose FFN goes token by token through the exact path,
// which is what decoding it computes (the FFN of a token depends on that
// token alone), at a fraction of decoding's cost (attention and the output
// head run batched).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "backend/compute.h"
#include "calibrate/calibration_progress.h"
#include "model/model.h"
#include "sparse/exact_ffn.h"
#include "sparse/sidecar.h"
#include "sparse/sparse_head.h"
#include "tensor/thread_pool.h"

namespace powerinfer::calibrate {

// The output head's input rows since clear() (its product in each chunk of
// a forward()), as the host backend's hook sees them; every product still
// reaches `next` (may be null).
class HeadRows final : public backend::MatvecHook {
public:
    explicit HeadRows(const tensor::WeightView& head, backend::MatvecHook* next = nullptr)
        : head_(head), next_(next) {}
    bool matvec(std::span<const tensor::WeightView> ws, const float* x,
                std::span<float* const> ys) override {
        return next_ && next_->matvec(ws, x, ys);
    }
    void observe(std::span<const tensor::WeightView> ws, const float* x, int64_t rows) override {
        if (sparse::is_head_product(ws, head_)) rows_.insert(rows_.end(), x, x + rows * head_.cols);
        if (next_) next_->observe(ws, x, rows);
    }
    // With skip_head set, the head's products are only observed (their
    // logits left unwritten): the corpus pass wants the inputs alone.
    bool skip(std::span<const tensor::WeightView> ws) override {
        return (skip_head && sparse::is_head_product(ws, head_)) || (next_ && next_->skip(ws));
    }
    bool skip_head = false;
    void clear() { rows_.clear(); }
    void swap(HeadRows& other) { rows_.swap(other.rows_); }
    int64_t count() const { return static_cast<int64_t>(rows_.size()) / head_.cols; }
    const float* row(int64_t i) const { return rows_.data() + i * head_.cols; }

private:
    tensor::WeightView head_;
    backend::MatvecHook* next_;
    std::vector<float> rows_;
};

// The model's FFN for the curve: dense, or token by token through the exact path.
class CurveFfn final : public model::FfnExecutor {
public:
    CurveFfn(model::FfnExecutor& dense, sparse::ExactSparseFfn& exact, int64_t n_embd, int64_t n_ff)
        : dense_(dense), exact_(exact), n_embd_(n_embd), n_ff_(n_ff) {}
    bool sparse = false;
    int64_t active = 0, total = 0;
    backend::MatvecHook* hook = nullptr;  // the model's products (the head's inputs)
    backend::MatvecHook* matvec_hook() override { return hook; }
    void run(int layer, const float* x, int64_t n, float* out) override;

private:
    model::FfnExecutor& dense_;
    sparse::ExactSparseFfn& exact_;
    int64_t n_embd_, n_ff_;
};

struct CurveAcc {
    double nll = 0, kl = 0, agree = 0;
    int64_t scored = 0, active = 0, total = 0;
};

class CurveMeter {
public:
    // head (may be null): the sparse passes' logits come from its preview,
    // as the engine's decoded tokens do.
    CurveMeter(tensor::ThreadPool& pool, model::Model& m, sparse::ExactSparseFfn& exact,
               sparse::SparseHead* head, const std::vector<int32_t>& held, int64_t window,
               int32_t bos, ProgressReporter& progress)
        : pool_(pool),
          m_(m),
          head_(head),
          head_rows_(m.output()),
          dense_rows_(m.output()),
          exact_(exact),
          held_(held),
          W_(window),
          bos_(bos),
          progress_(progress),
          ffn_(m.dense_ffn(), exact, m.config().n_embd, m.config().n_ff) {
        if (head_) ffn_.hook = &head_rows_;
    }

    int64_t windows() const { return static_cast<int64_t>(held_.size()) / W_; }
    double dense_ppl() const { return dense_.scored ? std::exp(dense_.nll / dense_.scored) : 0; }
    int64_t scored() const { return dense_.scored; }

    // One point per level (every window at every level).
    std::vector<sparse::CurvePoint> measure(const std::vector<double>& levels, int64_t& step,
                                            int64_t& steps);

private:
    tensor::ThreadPool& pool_;  // the scoring's rows
    model::Model& m_;
    sparse::SparseHead* head_;
    HeadRows head_rows_;
    HeadRows dense_rows_;  // the dense pass's head inputs (level 0's)
    sparse::ExactSparseFfn& exact_;
    const std::vector<int32_t>& held_;
    int64_t W_;
    int32_t bos_;
    ProgressReporter& progress_;
    CurveFfn ffn_;
    CurveAcc dense_;
};

// The curve at `levels` (ascending); with `refine` (the default grid), then
// higher levels in steps of 0.1 while the top one is within the bound (up to
// 0.85), and the midpoint past the highest level within it where the gap is
// wider than 0.06; each extra level is one more pass over the windows, added
// to `steps`. Sorted by level.
std::vector<sparse::CurvePoint> measure_curve(CurveMeter& meter, const std::vector<double>& levels,
                                              bool refine, double bound, int64_t& step,
                                              int64_t& steps);

// Decode speed of what the engine runs on this CPU (sparse::HybridFfn from
// the sidecar being made: level 0 the dense FFN, the head from its preview)
// at each level, against dense decode (the dense FFN and head): for each
// level, one ratio per round (dense seconds over the level's). Each round
// decodes `n_decode` of `tokens` after the ones before them, dense first and
// then the levels ascending; odd rounds the levels descending and dense
// last. `step` (may be empty) is called before each level's run, e.g. to
// report progress; what it throws leaves the model on its dense FFN. With
// `bytes`, each level's weight bytes per decoded token against dense's
// (measured in an untimed pass before the rounds). With `v3`, the levels are
// sparse engine v3's (input sparsity on every one-token product, from the
// sidecar's input thresholds; its copies beside the dense layout).
std::vector<std::vector<double>> decode_speed(
    model::Model& m, tensor::ThreadPool& pool, const sparse::Sidecar& sidecar,
    const std::vector<double>& levels, std::span<const int32_t> tokens, int64_t n_decode,
    int rounds, const std::function<void(int64_t done, int64_t total)>& step = {},
    std::vector<double>* bytes = nullptr, bool v3 = false);

// What time_curve decodes: kTimedTokens after kTimedPrompt held-out tokens,
// kTimedRounds rounds.
inline constexpr int64_t kTimedPrompt = 32;
inline constexpr int64_t kTimedTokens = 24;
inline constexpr int kTimedRounds = 5;

// decode_speed at every level of `curve` up to `recommended` (the others
// keep speed 0), the median of the rounds and the bytes written into the
// points and the rounds into `rounds`; returns fastest_within with the
// rounds.
double time_curve(model::Model& m, tensor::ThreadPool& pool, const sparse::Sidecar& sidecar,
                  std::vector<sparse::CurvePoint>& curve, double recommended, double bound,
                  std::span<const int32_t> tokens, std::vector<std::vector<double>>& rounds,
                  const std::function<void(int64_t done, int64_t total)>& step = {});

// Sparse engine v3's default on this CPU: decode_speed (v3) at
// HybridFfn::kInputDefaultCandidates (the levels up to the one measured
// within +2 % perplexity on the test models; calibration does not measure
// v3's perplexity), and the fastest of them by fastest_within's rules.
// `timed` gets the points (level, speed, bytes; the rest 0: not measured),
// `rounds` the rounds.
double time_input_default(model::Model& m, tensor::ThreadPool& pool, const sparse::Sidecar& sidecar,
                          std::span<const int32_t> tokens, std::vector<sparse::CurvePoint>& timed,
                          std::vector<std::vector<double>>& rounds,
                          const std::function<void(int64_t done, int64_t total)>& step = {});

// The level to run by default: among the timed points within the bound
// (speed > 0), ascending, a higher level only where it decodes more than
// `margin` faster than the one chosen so far (by the median, and, with
// `rounds` (decode_speed's, one entry per point from the first), in more than
// half of the rounds paired with it) and, where both points have bytes,
// reads more than `margin` fewer bytes; without timings, recommend().
double fastest_within(const std::vector<sparse::CurvePoint>& curve, double bound,
                      double margin = 0.03,
                      const std::vector<std::vector<double>>* rounds = nullptr);

// The highest level within the bound below the first level beyond it
// (ascending; noise above the first failure is not trusted); -1 if even the
// lowest is beyond it.
double recommend(const std::vector<sparse::CurvePoint>& curve, double bound);

}  // namespace powerinfer::calibrate
