#include "gpu_utilization.h"

#include <cctype>

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace powerinfer::server {

namespace {

// The driver installs NVML as nvml.dll (System32) or libnvidia-ml.so.1.
void* openNvml() {
#ifdef _WIN32
    return reinterpret_cast<void*>(LoadLibraryA("nvml.dll"));
#else
    return dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
#endif
}

void* symbol(void* library, const char* name) {
#ifdef _WIN32
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name));
#else
    return dlsym(library, name);
#endif
}

void closeNvml(void* library) {
#ifdef _WIN32
    FreeLibrary(static_cast<HMODULE>(library));
#else
    dlclose(library);
#endif
}

}  // namespace

GpuUtilization::GpuUtilization(int deviceIndex) {
    if (deviceIndex < 0) return;
    library_ = openNvml();
    if (!library_) return;
    auto init = reinterpret_cast<InitFn>(symbol(library_, "nvmlInit_v2"));
    auto handle = reinterpret_cast<HandleFn>(symbol(library_, "nvmlDeviceGetHandleByIndex_v2"));
    auto shutdown = reinterpret_cast<ShutdownFn>(symbol(library_, "nvmlShutdown"));
    rates_ = reinterpret_cast<RatesFn>(symbol(library_, "nvmlDeviceGetUtilizationRates"));
    if (!init || !handle || !shutdown || !rates_ || init() != 0) return;
    shutdown_ = shutdown;
    void* device = nullptr;
    if (handle(unsigned(deviceIndex), &device) == 0) device_ = device;
}

GpuUtilization::~GpuUtilization() {
    if (shutdown_) shutdown_();
    if (library_) closeNvml(library_);
}

std::optional<double> GpuUtilization::percent() const {
    if (!device_) return std::nullopt;
    Rates rates{};
    if (rates_(device_, &rates) != 0 || rates.gpu > 100) return std::nullopt;
    return double(rates.gpu);
}

int cudaDeviceIndex(const std::string& device) {
    std::string d;
    for (char c : device) d += char(std::tolower(static_cast<unsigned char>(c)));
    const size_t start = d.find_first_not_of(" \t");
    if (start == std::string::npos || d.compare(start, 5, "cuda:") != 0) return -1;
    size_t i = start + 5;
    int index = -1;
    while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i])) && index < 1000)
        index = (index < 0 ? 0 : index * 10) + (d[i++] - '0');
    return index;
}

}  // namespace powerinfer::server
