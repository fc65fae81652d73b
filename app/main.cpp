// powerinfer-desktop: the Qt Quick chat app on the real engine, through the
// engine's facade only (calibration with structured progress, the placement
// preview the engine's own planners compute, the GPU probe).
#include "desktop_app.h"
#include "gguf_inspector.h"
#include "powerinfer/calibration.h"
#include "powerinfer/engine.h"
#include "powerinfer/placement.h"

namespace {

using powerinfer::app::CalibrationProgress;
using powerinfer::app::CalibrationRequest;
using powerinfer::app::PlacementPreview;

// Probed once per process (creating a device takes time and GPU memory).
const powerinfer::GpuStatus& gpu() {
    static const powerinfer::GpuStatus status = powerinfer::gpu_status();
    return status;
}

std::filesystem::path calibrate(const CalibrationRequest& r, const CalibrationProgress& progress) {
    powerinfer::CalibrationOptions o;
    o.model_path = r.model;
    o.corpus_path = r.corpus;
    o.target_sparsity = r.targetSparsity;
    o.tokens = r.tokens;
    o.n_threads = r.threads;
    // Predictors only serve a GPU split; without a GPU the engine computes
    // activity exactly, and calibration takes a fraction of the time.
    o.train_predictors = gpu().present;
    // Returning false cancels: calibrate_model throws CalibrationCancelled
    // (a LoadCancelled) before anything is written.
    o.progress = [&](const powerinfer::CalibrationProgress& p) {
        return progress(p.fraction, p.eta_seconds, p.message);
    };
    const auto report = powerinfer::calibrate_model(o);
    if (report.targets.empty()) throw powerinfer::EngineError("calibration wrote no sidecar");
    return report.targets.front().sidecar_path;
}

// The placement a tuning would give, computed by the engine's own planners
// (the preview is what a load with this tuning does).
PlacementPreview preview(const powerinfer::Engine* engine, const std::filesystem::path& model,
                         const powerinfer::Tuning& tuning) {
    PlacementPreview p;
    if (!engine || !engine->info().has_sidecar) {
        p.note = "no sidecar: the model runs dense";
        return p;
    }
    powerinfer::LoadOptions o;
    o.model_path = model;
    o.n_ctx = engine->info().n_ctx;
    o.tuning = tuning;
    const powerinfer::PlacementPreview pv = powerinfer::preview_placement(o, gpu());
    p.available = pv.sparse;
    p.hotNeurons = pv.hot_neurons;
    p.totalNeurons = pv.total_neurons;
    p.deviceBytes = pv.device_bytes;
    p.budgetLimited = pv.budget_limited;
    p.note = QString::fromStdString(pv.sparse && !pv.note.empty() ? pv.note : pv.status);
    return p;
}

}  // namespace

int main(int argc, char** argv) {
    powerinfer::app::DesktopServices services;
    services.engineFactory = [](const powerinfer::LoadOptions& options) {
        return powerinfer::Engine::load(options);
    };
    services.modelInspector = powerinfer::app::ggufModelInfo;
    services.calibrator = calibrate;
    services.previewer = preview;
    services.decodeProbe = [](const QString& scratch) {
        return powerinfer::measure_decode_rate(scratch.toStdU16String());
    };
    services.fitPreviewer = [](const QString& model, int nCtx) {
        powerinfer::LoadOptions o;
        o.model_path = model.toStdU16String();
        o.n_ctx = nCtx;
        return powerinfer::fit_placement(powerinfer::preview_placement(o, gpu()));
    };
    services.gpuProbe = [] {
        return powerinfer::app::GpuFacts{gpu().present, gpu().free_bytes,
                                         QString::fromStdString(gpu().description)};
    };
    return powerinfer::app::runDesktopApp(argc, argv, std::move(services));
}
