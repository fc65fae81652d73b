#include "calibrate/layer_fit.h"

#include <algorithm>
#include <numeric>

#include "calibrate/predictor_trainer.h"
#include "tensor/quant.h"

namespace powerinfer::calibrate {

void fit_layer(const LayerFit& fit, int64_t l, const LayerSamples& r, const sparse::LayerStats& ex,
               std::vector<sparse::Sidecar>& sidecars, CalibrationReport& report) {
    const CalibrationOptions& opt = fit.opt;
    const std::span<const double> targets = fit.targets;
    const int64_t n_ff = fit.n_ff, d = fit.n_embd, n_tok = fit.n_tok, N = r.samples;
    const int64_t layer_steps = fit.n_layer * static_cast<int64_t>(targets.size());
    ProgressReporter& progress = fit.progress;
    // The contributions by value: a count per fp16 bit pattern in value
    // order (their quantiles below without a selection over the floats).
    std::vector<uint32_t> count(size_t{1} << 16, 0);
    for (uint16_t u : r.c) ++count[fp16_key(u)];
    // Every 8th sample is held out (the predictors' training).
    std::vector<int64_t> train, hold;
    if (opt.train_predictors)
        for (int64_t s = 0; s < N; ++s) (s % 8 == 7 ? hold : train).push_back(s);
    const float up_bound = ex.up_bound;
    for (size_t ti = 0; ti < targets.size(); ++ti) {
        sidecars[ti].layers[static_cast<size_t>(l)].exact_thresholds = ex.exact_thresholds;
        sidecars[ti].layers[static_cast<size_t>(l)].up_bound = ex.up_bound;
        sidecars[ti].layers[static_cast<size_t>(l)].up_scale = ex.up_scale;
        // Threshold: the target sparsity's quantile of contributions
        // (the value sorting them puts at that rank).
        const size_t q = std::min(std::max<size_t>(r.c.size(), 1) - 1,
                                  static_cast<size_t>(targets[ti] * double(r.c.size())));
        size_t below = 0, k = 0;
        if (!r.c.empty())
            while (below + count[k] <= q) below += count[k++];
        const float thr = r.c.empty() ? 0.0f : tensor::fp16_to_fp32(fp16_unkey(k));
        // Which contributions pass, per bit pattern.
        std::vector<uint8_t> passes(count.size());
        for (size_t u = 0; u < passes.size(); ++u)
            passes[u] = tensor::fp16_to_fp32(static_cast<uint16_t>(u)) > thr;
        std::vector<uint8_t> Y(opt.train_predictors ? r.c.size() : 0);
        sparse::LayerStats& ls = sidecars[ti].layers[static_cast<size_t>(l)];
        ls.threshold = thr;
        std::vector<int64_t> on_count(static_cast<size_t>(n_ff), 0);
        for (int64_t s = 0; s < N; ++s) {
            const uint16_t* cs = r.c.data() + s * n_ff;
            for (int64_t j = 0; j < n_ff; ++j) on_count[static_cast<size_t>(j)] += passes[cs[j]];
            if (!Y.empty())
                for (int64_t j = 0; j < n_ff; ++j)
                    Y[static_cast<size_t>(s * n_ff + j)] = passes[cs[j]];
        }
        ls.act_freq.assign(on_count.begin(), on_count.end());
        ls.act_mass.resize(static_cast<size_t>(n_ff));
        for (int64_t j = 0; j < n_ff; ++j) {
            ls.act_freq[static_cast<size_t>(j)] /= float(std::max<int64_t>(1, N));
            ls.act_mass[static_cast<size_t>(j)] =
                static_cast<float>(r.mass[static_cast<size_t>(j)] / double(n_tok));
        }
        ls.perm.resize(static_cast<size_t>(n_ff));
        std::iota(ls.perm.begin(), ls.perm.end(), 0);
        std::stable_sort(ls.perm.begin(), ls.perm.end(), [&](int32_t a, int32_t b) {
            return ls.act_mass[static_cast<size_t>(a)] > ls.act_mass[static_cast<size_t>(b)];
        });
        // Ranks in ascending order. Each predictor's biases are shifted
        // until held-out recall reaches the target at predictor_threshold;
        // the next rank is tried while it lowers the predicted-active
        // fraction (the sparsity actually delivered) by >= 1 point, unless
        // the target recall was met unshifted within 5 points of the
        // target sparsity.
        const int64_t step =
            l * static_cast<int64_t>(targets.size()) + static_cast<int64_t>(ti) + 1;
        if (!opt.train_predictors) {
            report.targets[ti].layers.push_back({0, 0, 0, 1.0 - targets[ti], thr});
            CalibrationProgress p = progress.at(CalibrationPhase::Layers, step, layer_steps);
            p.message = fmt("calibrate: layer %.0f/%.0f target %.2f: threshold %.4g, up bound %.3f",
                            double(l + 1), double(fit.n_layer), targets[ti], thr, up_bound);
            progress.emit(p);
            continue;
        }
        PredictorTrainer trainer(fit.pool, d, n_ff, r.x, Y, train, hold, opt);
        Trained best;
        for (int64_t rank = 32; rank <= std::max<int64_t>(32, opt.rank_max); rank *= 2) {
            Trained t = trainer.train(rank, opt.seed + static_cast<uint64_t>(l * 131 + rank));
            const bool met = t.recall >= opt.target_recall;
            const float shift = trainer.recall_shift(t, opt.target_recall);
            for (auto& b : t.b2) b += shift;
            fit.log(fmt("calibrate: layer %.0f rank %.0f: recall %.3f precision %.3f active %.3f",
                        double(l), double(rank), t.recall, t.precision, t.active));
            const bool better = best.rank == 0 || t.active < best.active - 0.01;
            if (better) best = std::move(t);
            if (!better || (met && best.active <= 1.0 - targets[ti] + 0.05)) break;
        }
        ls.recall = static_cast<float>(best.recall);
        ls.precision = static_cast<float>(best.precision);
        ls.predictor.rank = best.rank;
        ls.predictor.type = opt.f16_predictors ? GgmlType::F16 : GgmlType::F32;
        ls.predictor.w1 = pack(best.w1, opt.f16_predictors);
        ls.predictor.w2 = pack(best.w2, opt.f16_predictors);
        ls.predictor.b1 = best.b1;
        ls.predictor.b2 = best.b2;
        report.targets[ti].layers.push_back(
            {best.rank, best.recall, best.precision, best.active, thr});
        CalibrationProgress p = progress.at(CalibrationPhase::Layers, step, layer_steps);
        p.message =
            fmt("calibrate: layer %.0f/%.0f target %.2f: rank %.0f, recall %.3f", double(l + 1),
                double(fit.n_layer), targets[ti], double(best.rank), best.recall) +
            fmt(", predicted active %.3f, ETA %.0f s", best.active, p.eta_seconds);
        progress.emit(p);
    }
}

}  // namespace powerinfer::calibrate
