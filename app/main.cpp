// powerinfer-desktop: the Qt Quick chat app on the real engine.
#include "desktop_app.h"
#include "gguf_inspector.h"
#include "powerinfer/engine.h"

int main(int argc, char** argv) {
    powerinfer::app::DesktopServices services;
    services.engineFactory = [](const powerinfer::LoadOptions& options) {
        return powerinfer::Engine::load(options);
    };
    services.modelInspector = powerinfer::app::ggufModelInfo;
    return powerinfer::app::runDesktopApp(argc, argv, std::move(services));
}
