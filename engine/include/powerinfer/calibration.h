// Calibration through the facade: runs the dense model over a corpus,
// records per layer the FFN inputs and per-neuron contributions, picks
// per-layer thresholds for a target sparsity, optionally trains one
// low-rank predictor per layer, and writes the sidecar
// (MODEL.powerinfer.gguf) that sparse inference loads.
//
// Progress is structured (phase, fraction, ETA from measured rates), and the
// callback cancels: returning false throws CalibrationCancelled before any
// sidecar is written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer {

enum class CalibrationPhase {
    Reading,  // opening the model, tokenizing the corpus
    Corpus,   // the dense model over the corpus (done/total: tokens)
    Curve,    // the sparsity curve on held-out text (done/total: window x level steps)
    Layers,   // thresholds, statistics and predictors (done/total: layer x target steps)
    Writing,  // the sidecars
    Done,
};

struct CalibrationProgress {
    CalibrationPhase phase = CalibrationPhase::Reading;
    int64_t done = 0, total = 0;  // units of the phase
    double elapsed_seconds = 0;
    // Seconds left, over every phase still to come: the current phase's
    // measured rate for its rest; a phase not yet started is estimated from
    // the rates measured so far (its work in matmul FLOPs at the corpus
    // run's FLOP rate). -1: nothing measured yet.
    double eta_seconds = -1;
    // True once the estimate rests only on phases already running (the last
    // long phase has started): the UI can drop its "about".
    bool eta_measured = false;
    // elapsed / (elapsed + eta): consistent with the ETA, in [0, 1].
    double fraction = 0;
    std::string message;  // the log line of this step, for display
};

struct CalibrationOptions {
    std::filesystem::path model_path;
    std::filesystem::path corpus_path;
    std::filesystem::path output_path;  // empty: MODEL.powerinfer.gguf next to the model
    int64_t tokens = 8192;              // corpus tokens to run
    // Fraction of (token, neuron) pairs counted inactive (the thresholds and
    // predictors); < 0: the measured recommendation (0.5 without a curve).
    double target_sparsity = 0.5;
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
    // gate is computed; the CPU's exact path needs none. gpu_status()
    // (powerinfer/placement.h) says whether a GPU is there to use them.
    bool train_predictors = true;
    // The exact path's per-neuron up bound: mean + up_sigmas standard
    // deviations of |u_j| / ||x|| (lower skips more up rows, and may skip a
    // neuron that would have passed the threshold).
    double up_sigmas = 4.0;
    // The sparsity curve (docs/architecture.md, "Calibration"): held-out
    // tokens (the corpus past the calibration tokens; a shorter corpus gives
    // up its last part, at most a quarter) in windows of curve_window, the
    // first half of each as context, the second scored, at every level of
    // curve_levels through the exact CPU path against dense. At most
    // tokens / 4 (whole windows). 0: no curve.
    int64_t curve_tokens = 2048;
    int64_t curve_window = 256;
    // Empty: 0, 0.2, 0.3, 0.4, 0.5, 0.6, higher while within the bound, then
    // the midpoint past the highest level within it.
    std::vector<double> curve_levels;
    double max_ppl_rise = 0.02;  // the bound the recommendation keeps
    // The sidecar's default (activation_sparsity -1) is the recommendation;
    // false: the target's threshold (an explicit choice).
    bool default_to_recommended = true;
    // Time decoding at the curve's levels within the bound on this CPU
    // (what the engine runs there: the head's preview included) and make the
    // fastest the default; a higher level only where it decodes more than
    // 3 % faster (where the kernels are compute-bound, skipping neurons can
    // cost more than it saves). 7 s on SmolLM2, 31 s on Qwen2.5-Coder-0.5B
    // (Zen 1, 2 cores). false: the default is the recommendation, as
    // without a curve.
    bool curve_speed = true;
    uint64_t seed = 42;
    std::function<void(const std::string&)> log;  // progress lines (stderr in the tool)
    // Called at every step (each corpus window, each layer and target, before
    // writing); return false to cancel (throws CalibrationCancelled, nothing
    // written). May be null.
    std::function<bool(const CalibrationProgress&)> progress;
};

struct CalibrationLayerReport {
    int64_t rank = 0;
    double recall = 0, precision = 0;
    double predicted_active = 0;  // fraction of neurons the predictor turns on (held out)
    double threshold = 0;
};

struct CalibrationTargetReport {
    double target_sparsity = 0;
    std::filesystem::path sidecar_path;
    std::vector<CalibrationLayerReport> layers;
};

struct CalibrationReport {
    int64_t tokens = 0;
    double run_seconds = 0, train_seconds = 0;
    std::vector<CalibrationTargetReport> targets;
    SparsityCurve curve;  // empty points: not measured (see curve_note)
    std::string curve_note;
    double curve_seconds = 0;
    // Sparse engine v3's default (-1: not timed): the fastest of its
    // candidate levels on this CPU (their rise is not measured; they are
    // the levels up to the one found within +2 % on the test models), with
    // the points (level, speed, bytes) and rounds it was chosen from.
    double input_default_level = -1;
    std::vector<SparsityCurvePoint> input_points;
    std::vector<std::vector<double>> input_speed_rounds;
};

class CalibrationCancelled : public LoadCancelled {
public:
    CalibrationCancelled() : LoadCancelled("calibration cancelled: no sidecar was written") {}
};

// Throws EngineError (unreadable model/corpus, corpus too short) or
// CalibrationCancelled.
CalibrationReport calibrate_model(const CalibrationOptions& options);

}  // namespace powerinfer
