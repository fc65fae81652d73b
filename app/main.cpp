// powerinfer-desktop: the Qt Quick chat app on the real engine.
#include <cstdio>
#include <map>
#include <mutex>

#include "calibrate/calibrate.h"
#include "desktop_app.h"
#include "gguf_inspector.h"
#include "powerinfer/engine.h"
#include "runtime/device_select.h"
#include "sparse/placement.h"
#include "sparse/sidecar.h"

namespace {

using powerinfer::app::CalibrationProgress;
using powerinfer::app::CalibrationRequest;
using powerinfer::app::PlacementPreview;

// calibrate_model reports through log lines only: progress and ETA are read
// from them ("N/M tokens ... ETA S s" for the corpus run = first half,
// "layer L/N target ..." for the thresholds (and predictors) = second half), and
// a cancel is an exception thrown from the log callback.
std::filesystem::path calibrate(const CalibrationRequest& r, const CalibrationProgress& progress) {
    powerinfer::calibrate::CalibrateOptions o;
    o.model_path = r.model;
    o.corpus_path = r.corpus;
    o.target_sparsity = r.targetSparsity;
    o.tokens = r.tokens;
    o.n_threads = r.threads;
    // Predictors only serve a GPU split; without a GPU the engine computes
    // activity exactly, and calibration takes a fraction of the time.
    {
        powerinfer::LoadOptions probe;
        probe.device = "auto";
        const auto device = powerinfer::runtime::choose_device(probe);
        o.train_predictors = device.device && !device.device->memory().simulated;
    }
    o.log = [&](const std::string& line) {
        double a = 0, b = 0, eta = -1, fraction = -1;
        const char* s = line.c_str();
        if (std::sscanf(s, "calibrate: layer %lf/%lf target", &a, &b) == 2 && b > 0)
            fraction = 0.5 + 0.5 * a / b;
        else if (std::sscanf(s, "calibrate: %lf/%lf tokens", &a, &b) == 2 && b > 0)
            fraction = 0.5 * a / b;
        const auto at = line.rfind("ETA ");
        if (at != std::string::npos) std::sscanf(s + at, "ETA %lf", &eta);
        if (fraction >= 0 && !progress(fraction, eta, line)) throw powerinfer::LoadCancelled();
    };
    const auto report = powerinfer::calibrate::calibrate_model(o);
    if (report.targets.empty()) throw powerinfer::EngineError("calibration wrote no sidecar");
    return report.targets.front().sidecar_path;
}

// The placement a tuning would give, from the sidecar's activation masses
// and the engine's memory report (the same greedy as the engine's own
// placement). Bytes per neuron are taken from the current placement.
PlacementPreview preview(const powerinfer::Engine* engine, const std::filesystem::path& model,
                         const powerinfer::Tuning& tuning) {
    PlacementPreview p;
    if (!engine || !engine->info().has_sidecar) {
        p.note = "no sidecar: the model runs dense";
        return p;
    }
    static std::mutex mutex;
    static std::map<std::filesystem::path, powerinfer::sparse::Sidecar> cache;
    std::lock_guard lock(mutex);
    const auto path = powerinfer::sparse::default_sidecar_path(model);
    auto it = cache.find(path);
    if (it == cache.end()) it = cache.emplace(path, powerinfer::sparse::read_sidecar(path)).first;
    const powerinfer::sparse::Sidecar& sc = it->second;
    const powerinfer::MemoryReport mem = engine->memory();

    const auto placementFor = [&](double threshold, int64_t budget, int64_t bytesPerNeuron) {
        powerinfer::sparse::PlacementInput in;
        in.hot_neuron_threshold = threshold;
        in.budget_bytes = budget;
        in.fixed_bytes = mem.dense_weights + mem.kv_cache + mem.predictors;
        for (size_t l = 0; l < sc.layers.size(); ++l) {
            powerinfer::sparse::PlacementLayer pl;
            pl.bytes_per_neuron = bytesPerNeuron;
            for (const int l2 : tuning.force_full_precision_layers)
                if (size_t(l2) == l) pl.dense = true;
            for (int32_t id : sc.layers[l].perm)
                pl.mass_sorted.push_back(sc.layers[l].act_mass[size_t(id)]);
            in.layers.push_back(std::move(pl));
        }
        return powerinfer::sparse::place_hot_neurons(in);
    };
    const int64_t unlimited = int64_t(1) << 60;
    const powerinfer::Tuning current = engine->tuning();
    int64_t nowCount = 0;
    for (int64_t c : placementFor(current.hot_neuron_threshold, unlimited, 1).hot_count)
        nowCount += c;
    const int64_t bytesPerNeuron =
        nowCount > 0 && mem.hot_neurons > 0 ? mem.hot_neurons / nowCount : 0;
    if (bytesPerNeuron <= 0) {
        p.note = "no hot neurons placed yet";
        return p;
    }
    // vram_budget_mb: -1 auto (the device's own budget), 0 nothing, N MiB.
    const int64_t budget = tuning.vram_budget_mb >= 0 ? tuning.vram_budget_mb << 20
                           : mem.budget_bytes > 0     ? mem.budget_bytes
                                                      : unlimited;
    const auto pl = placementFor(tuning.hot_neuron_threshold, budget, bytesPerNeuron);
    p.available = true;
    for (size_t l = 0; l < pl.hot_count.size(); ++l) {
        p.hotNeurons += pl.hot_count[l];
        p.totalNeurons += int64_t(sc.layers[l].perm.size());
    }
    p.deviceBytes = mem.dense_weights + mem.kv_cache + mem.predictors + pl.hot_bytes;
    p.budgetLimited = pl.budget_limited;
    p.note = "from the sidecar's activation mass";
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
    return powerinfer::app::runDesktopApp(argc, argv, std::move(services));
}
