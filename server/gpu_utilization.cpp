#include "gpu_utilization.h"

#include <QRegularExpression>

namespace powerinfer::server {

GpuUtilization::GpuUtilization(int deviceIndex) {
    if (deviceIndex < 0) return;
#ifdef Q_OS_WIN
    nvml_.setFileName(QStringLiteral("nvml"));
#else
    nvml_.setFileNameAndVersion(QStringLiteral("nvidia-ml"), 1);
#endif
    if (!nvml_.load()) return;
    auto init = reinterpret_cast<InitFn>(nvml_.resolve("nvmlInit_v2"));
    auto handle = reinterpret_cast<HandleFn>(nvml_.resolve("nvmlDeviceGetHandleByIndex_v2"));
    shutdown_ = reinterpret_cast<ShutdownFn>(nvml_.resolve("nvmlShutdown"));
    rates_ = reinterpret_cast<RatesFn>(nvml_.resolve("nvmlDeviceGetUtilizationRates"));
    if (!init || !handle || !shutdown_ || !rates_ || init() != 0) {
        shutdown_ = nullptr;
        return;
    }
    void* device = nullptr;
    if (handle(unsigned(deviceIndex), &device) == 0) device_ = device;
}

GpuUtilization::~GpuUtilization() {
    if (shutdown_) shutdown_();
}

std::optional<double> GpuUtilization::percent() const {
    if (!device_) return std::nullopt;
    Rates rates{};
    if (rates_(device_, &rates) != 0) return std::nullopt;
    return double(rates.gpu);
}

int cudaDeviceIndex(const QString& device) {
    static const QRegularExpression re(QStringLiteral("^cuda:(\\d+)"));
    const auto m = re.match(device.trimmed().toLower());
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

}  // namespace powerinfer::server
