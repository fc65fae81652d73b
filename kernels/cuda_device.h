// CudaDevice: the backend::Device interface on an NVIDIA GPU.
#pragma once

#include <memory>
#include <string>

#include "backend/device.h"

namespace powerinfer::cuda {

struct CudaDeviceOptions {
    int ordinal = 0;
    // -1: free memory reported by cudaMemGetInfo minus safety_margin_bytes.
    int64_t budget_bytes = -1;
    int64_t safety_margin_bytes = int64_t{512} << 20;
};

// Throws EngineError("no CUDA device: running on CPU" and why) when there is
// no usable GPU; callers then fall back to the CPU device.
std::unique_ptr<backend::Device> make_cuda_device(const CudaDeviceOptions& options = {});

// The device address of a buffer from allocate() on a CUDA device (for
// kernels that run whole layers on the GPU); null for another device.
void* buffer_pointer(backend::Device& device, backend::BufferHandle buffer);
// The CUDA stream a CUDA device enqueues on (as void* to keep this header
// free of CUDA types); null for another device.
void* device_stream(backend::Device& device);

}  // namespace powerinfer::cuda
