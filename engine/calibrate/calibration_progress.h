// Calibration's progress and ETA (powerinfer/calibration.h). The ETA is made
// of measured rates only: the corpus run's rest from its own tokens per
// second; the layer phase, before it starts, from micro-measurements of the
// operations it runs (F32 matmul FLOPs, sorting, element-wise loops) taken
// when calibration starts, and once it runs, from its own seconds per step.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "powerinfer/calibration.h"

namespace powerinfer::tensor {
class ThreadPool;
}

namespace powerinfer::calibrate {

// A progress or log line: printf's format with up to five numbers.
std::string fmt(const char* f, double a = 0, double b = 0, double c = 0, double d = 0,
                double e = 0);

struct MeasuredRates {
    double matmul_flops_per_s = 1e9;  // tensor::matmul on F32 weights, the trainer's shapes
    double sort_ns = 5;               // std::sort, per element and log2(elements)
    double nth_ns = 5;                // std::nth_element, per element
    double sigmoid_ns = 5;            // the trainer's per-output loss step, per element
};

// About 0.1 s on any machine.
MeasuredRates measure_rates(tensor::ThreadPool& pool, int64_t n_embd);

// What the layer phase will cost, in seconds, for these shapes: per layer
// the quantiles of the kept contributions, per layer and target the
// threshold, the labels and (with predictors) the trainer. Training assumes
// the first two ranks are tried (the usual case; the phase's own rate takes
// over after its first step).
double estimate_layer_phase_seconds(const MeasuredRates& rates, const CalibrationOptions& options,
                                    int64_t n_layer, int64_t n_embd, int64_t n_ff, int64_t samples,
                                    int64_t n_targets);

class ProgressReporter {
public:
    explicit ProgressReporter(const CalibrationOptions& options);

    void set_layer_phase_estimate(double seconds) { layer_estimate_ = seconds; }
    // The curve phase's work in corpus-token equivalents (its estimate before
    // it starts is that over the corpus run's measured rate).
    void set_curve_work(double corpus_tokens) { curve_work_ = corpus_tokens; }
    // The state at this step (message empty); the caller formats its line
    // with the ETA, then emits it.
    CalibrationProgress at(CalibrationPhase phase, int64_t done, int64_t total);
    // Logs the message and calls the progress callback; throws
    // CalibrationCancelled if it returned false.
    void emit(const CalibrationProgress& progress) const;

private:
    using Clock = std::chrono::steady_clock;
    double since(Clock::time_point t) const;

    const CalibrationOptions& options_;
    Clock::time_point start_ = Clock::now();
    Clock::time_point phase_start_ = start_;
    CalibrationPhase phase_ = CalibrationPhase::Reading;
    double layer_estimate_ = -1;
    double curve_work_ = 0, curve_estimate_ = 0;
};

}  // namespace powerinfer::calibrate
