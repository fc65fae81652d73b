// Reads the GPU's busy percentage through NVML (the driver's management
// library), loaded at run time so the server neither links nor needs it. On a
// machine without an NVIDIA driver, or when the model runs on the CPU, there
// is nothing to read and /metrics omits the metric instead of inventing one.
#pragma once

#include <QLibrary>
#include <optional>

namespace powerinfer::server {

class GpuUtilization {
public:
    // deviceIndex: the CUDA device the engine uses; negative disables reading.
    explicit GpuUtilization(int deviceIndex);
    ~GpuUtilization();
    GpuUtilization(const GpuUtilization&) = delete;
    GpuUtilization& operator=(const GpuUtilization&) = delete;

    bool available() const { return device_ != nullptr; }
    std::optional<double> percent() const;

private:
    using InitFn = int (*)();
    using ShutdownFn = int (*)();
    using HandleFn = int (*)(unsigned int, void**);
    struct Rates {
        unsigned int gpu;
        unsigned int memory;
    };
    using RatesFn = int (*)(void*, Rates*);

    QLibrary nvml_;
    ShutdownFn shutdown_ = nullptr;
    RatesFn rates_ = nullptr;
    void* device_ = nullptr;
};

// "cuda:N" (ModelInfo::device or the --gpu choice) → N; anything else → -1.
int cudaDeviceIndex(const QString& device);

}  // namespace powerinfer::server
