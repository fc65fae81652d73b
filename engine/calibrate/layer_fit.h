// Calibration's last phase, one layer at a time: per target sparsity the
// layer's threshold (the target's quantile of the recorded contributions),
// each neuron's activation frequency and mass, the neurons in order of mass,
// and (with predictors) the low-rank predictor, trained rank by rank until a
// higher rank stops paying. calibrate_model (calibrate.cpp) records the
// samples and writes the sidecars.
//
// Internal header: not part of the public API.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "calibrate/calibration_progress.h"
#include "powerinfer/calibration.h"
#include "sparse/sidecar.h"

namespace powerinfer::tensor {
class ThreadPool;
}

namespace powerinfer::calibrate {

// fp16 bit patterns as unsigned keys in value order (NaNs at both ends), and
// back: a count per key is a histogram in value order.
inline uint16_t fp16_key(uint16_t u) {
    return (u & 0x8000u) ? static_cast<uint16_t>(~u) : static_cast<uint16_t>(u | 0x8000u);
}
inline uint16_t fp16_unkey(size_t k) {
    return static_cast<uint16_t>((k & 0x8000u) ? (k & 0x7FFFu) : (~k & 0xFFFFu));
}

// One layer's kept samples from the corpus run.
struct LayerSamples {
    int64_t samples = 0;
    const std::vector<float>& x;      // [samples][n_embd] FFN inputs
    const std::vector<uint16_t>& c;   // [samples][n_ff] fp16 contributions
    const std::vector<double>& mass;  // per neuron, summed over every corpus token
};

// What every layer's fit shares.
struct LayerFit {
    tensor::ThreadPool& pool;
    const CalibrationOptions& opt;
    ProgressReporter& progress;
    std::function<void(const std::string&)> log;
    int64_t n_layer, n_embd, n_ff;
    int64_t n_tok;  // the corpus tokens the mass sums over
    std::span<const double> targets;
};

// Layer l's entries: sidecars[t].layers[l] (with the exact-activity stats
// `ex` copied in) and report.targets[t].layers, for every target t.
void fit_layer(const LayerFit& fit, int64_t l, const LayerSamples& r, const sparse::LayerStats& ex,
               std::vector<sparse::Sidecar>& sidecars, CalibrationReport& report);

}  // namespace powerinfer::calibrate
