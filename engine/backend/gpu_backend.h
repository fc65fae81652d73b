// The door through which a GPU backend enters the engine at run time. A GPU
// backend (kernels/: CUDA, compiled only with nvcc) registers itself when the
// program starts; the engine asks gpu_backend() and never names CUDA, so
// that engine/model and engine/runtime build the same with or without one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/device.h"

namespace powerinfer::backend {

struct GpuDeviceOptions {
    int ordinal = 0;
    // Everything the device allocates counts against the budget. -1: what
    // the driver reports free minus safety_margin_bytes; a set budget is
    // capped at what is free.
    int64_t budget_bytes = -1;
    int64_t safety_margin_bytes = int64_t{512} << 20;
};

class GpuBackend {
public:
    virtual ~GpuBackend() = default;
    virtual std::string name() const = 0;  // "CUDA"
    // A device with its Compute (Device::compute()). Throws EngineError with
    // a message for the user ("no CUDA device: running on CPU (...)") when
    // there is no usable GPU.
    virtual std::unique_ptr<Device> make_device(const GpuDeviceOptions& options) const = 0;
    // The Staging bytes its device holds after configure_layers(formats) and
    // predictors whose work is at most predictor_floats (n_embd + rank +
    // n_ff); with no formats, what it holds right after creation.
    virtual int64_t staging_bytes(const std::vector<NeuronFormat>& formats,
                                  int64_t predictor_floats) const = 0;
};

// The GPU backend compiled into this program; null when there is none.
const GpuBackend* gpu_backend();

// Called once by a GPU backend's registration object at start-up (the
// backend must live for the whole program).
void register_gpu_backend(const GpuBackend* backend);

}  // namespace powerinfer::backend
