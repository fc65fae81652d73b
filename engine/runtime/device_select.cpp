#include "runtime/device_select.h"

#include <cstdlib>

#include "backend/gpu_backend.h"

namespace powerinfer::runtime {

int parse_device(const std::string& d) {
    if (d == "cpu") return -1;
    if (d == "auto" || d == "cuda" || d.empty()) return 0;
    if (d.rfind("cuda:", 0) == 0) {
        char* end = nullptr;
        const long n = std::strtol(d.c_str() + 5, &end, 10);
        if (end != d.c_str() + 5 && *end == '\0' && n >= 0 && n <= 64) return static_cast<int>(n);
    }
    throw EngineError("unknown device '" + d + "': use auto, cpu or cuda:N");
}

DeviceChoice choose_device(const LoadOptions& options) {
    DeviceChoice choice;
    const int ordinal = parse_device(options.device);
    if (ordinal < 0) {
        choice.description = "CPU device (simulated budget)";
        return choice;
    }
    if (options.tuning.vram_budget_mb == 0) {
        choice.description = "nothing on the GPU (vram_budget_mb = 0): running on CPU";
        return choice;
    }
    const backend::GpuBackend* gpu = backend::gpu_backend();
    if (!gpu) {
        choice.description = "no CUDA device: running on CPU (this build has no CUDA backend)";
        return choice;
    }
    try {
        backend::GpuDeviceOptions o;
        o.ordinal = ordinal;
        if (options.tuning.vram_budget_mb > 0) o.budget_bytes = options.tuning.vram_budget_mb << 20;
        choice.device = gpu->make_device(o);
        choice.description = choice.device->name() + " (" + gpu->name() + ")";
    } catch (const EngineError& e) {
        choice.device.reset();
        choice.description = e.what();
    }
    return choice;
}

}  // namespace powerinfer::runtime
