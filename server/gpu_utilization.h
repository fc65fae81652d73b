// Reads the GPU's busy percentage through NVML (the driver's management
// library), loaded at run time so the server neither links nor needs it. On a
// machine without an NVIDIA driver, or when the model runs on the CPU, there
// is nothing to read and /metrics omits the metric instead of inventing one.
// Qt-free (a plain dlopen/LoadLibrary), so it is also checked on GPU machines
// that have no Qt.
#pragma once

#include <optional>
#include <string>

namespace powerinfer::server {

class GpuUtilization {
public:
    // deviceIndex: the CUDA device the engine uses; negative disables reading.
    explicit GpuUtilization(int deviceIndex);
    ~GpuUtilization();
    GpuUtilization(const GpuUtilization&) = delete;
    GpuUtilization& operator=(const GpuUtilization&) = delete;

    bool available() const { return device_ != nullptr; }
    // 0-100: the share of the last sample period in which a kernel ran.
    std::optional<double> percent() const;

private:
    struct Rates {  // nvmlUtilization_t
        unsigned int gpu;
        unsigned int memory;
    };
    using InitFn = int (*)();
    using ShutdownFn = int (*)();
    using HandleFn = int (*)(unsigned int, void**);
    using RatesFn = int (*)(void*, Rates*);

    void* library_ = nullptr;
    ShutdownFn shutdown_ = nullptr;
    RatesFn rates_ = nullptr;
    void* device_ = nullptr;
};

// "cuda:N..." (ModelInfo::device, LoadOptions::device) → N; anything else → -1.
int cudaDeviceIndex(const std::string& device);

}  // namespace powerinfer::server
