// The CUDA implementation of the op-level backend (backend/compute.h), on a
// CudaDevice's stream and accounted buffers. A CudaDevice hands out its one
// instance through Device::compute().
#pragma once

#include <memory>

#include "backend/compute.h"
#include "backend/device.h"

namespace powerinfer::cuda {

// `stream` is the device's cudaStream_t (void* keeps CUDA types out of this
// header). The device must outlive the backend.
std::unique_ptr<backend::Compute> make_cuda_compute(backend::Device& device, void* stream);

}  // namespace powerinfer::cuda
