// Registers the CUDA backend with the engine when the program starts (this
// object is linked whole into every program that links pi_cuda).
#include "backend/gpu_backend.h"
#include "cuda_device.h"

namespace powerinfer::cuda {
namespace {

class CudaBackend final : public backend::GpuBackend {
public:
    std::string name() const override { return "CUDA"; }
    std::unique_ptr<backend::Device> make_device(
        const backend::GpuDeviceOptions& options) const override {
        return make_cuda_device(options);
    }
    int64_t staging_bytes(const std::vector<backend::NeuronFormat>& formats,
                          int64_t predictor_floats) const override {
        return cuda::staging_bytes(formats, predictor_floats);
    }
};

const struct Registration {
    Registration() {
        static const CudaBackend backend;
        backend::register_gpu_backend(&backend);
    }
} registration;

}  // namespace
}  // namespace powerinfer::cuda
