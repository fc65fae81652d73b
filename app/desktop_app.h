// The desktop app's main(), shared by the real executable (which injects
// powerinfer::Engine::load) and the demo/test executable (the scripted
// engine, testsupport/scripted_engine.h).
#pragma once

#include "download_catalog.h"
#include "engine_worker.h"
#include "model_catalog.h"

namespace powerinfer::app {

// The GPU the engine would use, for the catalog's fit estimates.
struct GpuFacts {
    bool present = false;
    qint64 freeBytes = 0;
    QString description;
};

struct DesktopServices {
    EngineFactory engineFactory;
    ModelInspector modelInspector;       // null: file-system facts only
    Calibrator calibrator;               // null: "Calibrate…" reports it cannot
    PlacementPreviewer previewer;        // null: no placement preview
    std::function<GpuFacts()> gpuProbe;  // null: no GPU
    // The fit estimate's decode probe and placement preview (catalog); null: none.
    DownloadCatalog::DecodeProbe decodeProbe;
    DownloadCatalog::PlacementPreviewer fitPreviewer;
    // A --model that is not a file is reported (the demo's scripted engine
    // needs no file).
    bool modelMustExist = true;
};

// Parses the command line, builds the services, shows the window. With
// --prompt/--screenshot/--quit-after-reply it runs the headless smoke mode.
int runDesktopApp(int argc, char** argv, DesktopServices services);

}  // namespace powerinfer::app
