#include "calibrate/calibration_progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace powerinfer::calibrate {

std::string fmt(const char* f, double a, double b, double c, double d, double e) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c, d, e);
    return buf;
}
namespace {

using Clock = std::chrono::steady_clock;

// Runs f until at least min_s seconds have passed; returns seconds per call.
template <typename F>
double time_per_call(F&& f, double min_s = 0.02) {
    const auto t0 = Clock::now();
    int calls = 0;
    double el = 0;
    do {
        f();
        ++calls;
        el = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (el < min_s);
    return el / calls;
}

// The first two ranks the trainer tries (32, 64), capped by rank_max.
std::vector<int64_t> assumed_ranks(int64_t rank_max) {
    std::vector<int64_t> r{32};
    if (rank_max >= 64) r.push_back(64);
    return r;
}

}  // namespace

MeasuredRates measure_rates(tensor::ThreadPool& pool, int64_t n_embd) {
    MeasuredRates m;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    // The trainer's first layer: [64][n_embd] F32 over a batch of 128.
    const int64_t rows = 64, cols = std::max<int64_t>(32, n_embd), batch = 128;
    std::vector<float> w(static_cast<size_t>(rows * cols)), x(static_cast<size_t>(batch * cols)),
        y(static_cast<size_t>(batch * rows));
    for (auto& v : w) v = u(rng);
    for (auto& v : x) v = u(rng);
    const tensor::WeightView view{GgmlType::F32, reinterpret_cast<const uint8_t*>(w.data()), rows,
                                  cols, static_cast<size_t>(cols) * 4};
    const double mm = time_per_call([&] { tensor::matmul(pool, view, x.data(), batch, y.data()); });
    m.matmul_flops_per_s = 2.0 * double(rows * cols * batch) / std::max(1e-9, mm);

    const size_t n = size_t{1} << 17;
    std::vector<float> src(n), work(n);
    for (auto& v : src) v = std::fabs(u(rng));
    const double sort_s = time_per_call([&] {
        work = src;
        std::sort(work.begin(), work.end());
    });
    m.sort_ns = 1e9 * sort_s / (double(n) * std::log2(double(n)));
    const double nth_s = time_per_call([&] {
        work = src;
        std::nth_element(work.begin(), work.begin() + static_cast<std::ptrdiff_t>(n / 2),
                         work.end());
    });
    m.nth_ns = 1e9 * nth_s / double(n);
    volatile float sink = 0;
    const double sig_s = time_per_call([&] {
        float acc = 0;
        for (size_t i = 0; i < n; ++i) acc += 1.0f / (1.0f + std::exp(-src[i]));
        sink = sink + acc;
    });
    m.sigmoid_ns = 1e9 * sig_s / double(n);
    return m;
}

double estimate_layer_phase_seconds(const MeasuredRates& r, const CalibrationOptions& o,
                                    int64_t n_layer, int64_t d, int64_t n_ff, int64_t samples,
                                    int64_t n_targets) {
    const double c = double(samples) * double(n_ff);  // kept contributions per layer
    const double sub = std::min(c, double(size_t{2} << 20));
    // Per layer: F16 -> F32, the strided quantile sort, the per-neuron bound.
    double per_layer =
        c * r.sigmoid_ns * 1e-9 * 0.25 + sub * std::log2(std::max(2.0, sub)) * r.sort_ns * 1e-9;
    // Per target: copy + nth_element for the threshold, labels and counts.
    double per_target = c * (r.nth_ns + 2 * r.sigmoid_ns * 0.25) * 1e-9;
    if (o.train_predictors) {
        const double train = double(samples) * 7 / 8, hold = double(samples) / 8;
        for (int64_t rank : assumed_ranks(o.rank_max)) {
            const double mm = double(rank) * double(d + n_ff);  // one sample's W1 and W2
            // Forward + two backward products per epoch, the loss step per output;
            // then about 16 held-out evaluations for the recall shift.
            per_target += double(o.epochs) * train *
                          (6 * mm / r.matmul_flops_per_s + double(n_ff) * r.sigmoid_ns * 1e-9);
            per_target += 16 * hold * (2 * mm / r.matmul_flops_per_s);
        }
    }
    return double(n_layer) * (per_layer + double(n_targets) * per_target);
}

ProgressReporter::ProgressReporter(const CalibrationOptions& options) : options_(options) {}

double ProgressReporter::since(Clock::time_point t) const {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

CalibrationProgress ProgressReporter::at(CalibrationPhase phase, int64_t done, int64_t total) {
    if (phase != phase_) {
        phase_ = phase;
        phase_start_ = Clock::now();
    }
    CalibrationProgress p;
    p.phase = phase;
    p.done = done;
    p.total = total;
    p.elapsed_seconds = since(start_);
    const double in_phase = since(phase_start_);
    // The current phase's rest at its own measured rate (-1 before its first step).
    const double rest =
        done > 0 ? in_phase / double(done) * double(std::max<int64_t>(0, total - done)) : -1;
    switch (phase) {
        case CalibrationPhase::Reading:
            break;
        case CalibrationPhase::Corpus:
            if (rest >= 0) curve_estimate_ = curve_work_ * in_phase / double(done);
            if (rest >= 0 && layer_estimate_ >= 0)
                p.eta_seconds = rest + curve_estimate_ + layer_estimate_;
            break;
        case CalibrationPhase::Curve:
            p.eta_seconds = (rest >= 0 ? rest : curve_estimate_) + std::max(0.0, layer_estimate_);
            break;
        case CalibrationPhase::Layers:
            p.eta_seconds = rest >= 0 ? rest : layer_estimate_;
            p.eta_measured = rest >= 0;
            break;
        case CalibrationPhase::Writing:
        case CalibrationPhase::Done:
            p.eta_seconds = 0;
            p.eta_measured = true;
            break;
    }
    if (phase == CalibrationPhase::Done)
        p.fraction = 1.0;
    else if (p.eta_seconds >= 0)
        p.fraction =
            std::clamp(p.elapsed_seconds / (p.elapsed_seconds + p.eta_seconds + 1e-9), 0.0, 1.0);
    return p;
}

void ProgressReporter::emit(const CalibrationProgress& p) const {
    if (options_.log && !p.message.empty()) options_.log(p.message);
    // After Done the sidecars exist: a late "cancel" changes nothing.
    if (options_.progress && !options_.progress(p) && p.phase != CalibrationPhase::Done)
        throw CalibrationCancelled();
}

}  // namespace powerinfer::calibrate
