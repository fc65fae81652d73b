// Chooses the device that holds the hot neurons: a CUDA GPU when the build has
// the CUDA backend, one is present and the options allow it; else null (the
// sparse executor then uses a CpuDevice with a simulated budget).
#pragma once

#include <memory>
#include <string>

#include "backend/device.h"
#include "powerinfer/engine.h"

namespace powerinfer::runtime {

struct DeviceChoice {
    std::unique_ptr<backend::Device> device;  // null: CPU device
    std::string description;                  // for ModelInfo::device and the logs
};

// options.device: "auto" (GPU if any), "cpu", or "cuda:N". Never throws for a
// missing GPU: "no CUDA device: running on CPU" goes into the description.
// tuning.vram_budget_mb = 0 means nothing on the GPU: no device either.
// Throws EngineError for a malformed device string.
DeviceChoice choose_device(const LoadOptions& options);

// Checks a device string without touching any device (called early in
// load so a typo fails before the model is read). Returns the CUDA ordinal,
// or -1 for "cpu".
int parse_device(const std::string& device);

}  // namespace powerinfer::runtime
