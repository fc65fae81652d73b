// CudaDevice: the backend::Device interface on an NVIDIA GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/device.h"
#include "backend/gpu_backend.h"

namespace powerinfer::cuda {

// The engine's GPU device options (ordinal, budget, safety margin).
using CudaDeviceOptions = backend::GpuDeviceOptions;

// Throws EngineError("no CUDA device: running on CPU" and why) when there is
// no usable GPU; callers then fall back to the CPU device.
std::unique_ptr<backend::Device> make_cuda_device(const CudaDeviceOptions& options = {});

// The Staging bytes a CUDA device holds after configure_layers(formats) and
// predictors whose work is at most predictor_floats (n_embd + rank + n_ff):
// a 32 MiB transfer arena (more for very wide layers) and the kernels' work
// buffers. The device holds nothing else of its own; the cuBLAS handle of
// layer offload and the CUDA context are the driver's (the safety margin).
int64_t staging_bytes(const std::vector<backend::NeuronFormat>& formats, int64_t predictor_floats);

}  // namespace powerinfer::cuda
