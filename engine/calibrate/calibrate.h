// Calibration: runs the dense model over a corpus, records per layer the FFN
// inputs and per-neuron contributions |act(g) * u| * ||down column||, picks
// per-layer thresholds for a target sparsity, trains one low-rank predictor
// per layer and writes the sidecar (sparse/sidecar.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace powerinfer::calibrate {

struct CalibrateOptions {
    std::filesystem::path model_path;
    std::filesystem::path corpus_path;
    std::filesystem::path output_path;  // empty: default_sidecar_path(model_path)
    int64_t tokens = 20000;             // corpus tokens to run
    double target_sparsity = 0.5;       // fraction of (token, neuron) pairs counted inactive
    // Several targets from one corpus run (each its own sidecar, named
    // "<output stem>.sNN.gguf"); empty: just target_sparsity.
    std::vector<double> target_sparsities;
    int64_t rank_max = 256;       // ranks tried: 32, 64, 128, 256 up to this
    double target_recall = 0.95;  // at predictor_threshold, on held-out tokens
    float predictor_threshold = 0.5f;
    int64_t max_samples = 4096;  // (input, activity) pairs kept per layer; 1/8 held out
    int epochs = 8;
    int n_threads = 0;
    int64_t window = 512;  // tokens per evaluation window (each from an empty cache)
    bool f16_predictors = true;
    // Predictors are what a GPU split needs to pick cold neurons before the
    // gate is computed; the CPU's exact path needs none (sparse/exact_ffn.h).
    bool train_predictors = true;
    // The exact path's per-neuron up bound: mean + up_sigmas standard
    // deviations of |u_j| / ||x|| (lower skips more up rows, and may skip a
    // neuron that would have passed the threshold).
    double up_sigmas = 4.0;
    uint64_t seed = 42;
    std::function<void(const std::string&)> log;  // progress lines (stderr in the tool)
};

struct LayerReport {
    int64_t rank = 0;
    double recall = 0, precision = 0;
    double predicted_active = 0;  // fraction of neurons the predictor turns on (held out)
    double threshold = 0;
};

struct TargetReport {
    double target_sparsity = 0;
    std::filesystem::path sidecar_path;
    std::vector<LayerReport> layers;
};

struct CalibrateReport {
    int64_t tokens = 0;
    double run_seconds = 0, train_seconds = 0;
    std::vector<TargetReport> targets;
};

// Throws EngineError (unreadable model/corpus, corpus too short).
CalibrateReport calibrate_model(const CalibrateOptions& options);

}  // namespace powerinfer::calibrate
