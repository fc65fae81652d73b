// GpuUtilization against the machine it runs on: where NVML and a GPU exist
// there must be a reading in [0,100]; where they do not, no reading at all
// (not a made-up 0). Plain C++ so that it also runs on GPU machines without
// Qt; POWERINFER_EXPECT_GPU=1 makes "no GPU found" a failure there.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu_utilization.h"

using powerinfer::server::cudaDeviceIndex;
using powerinfer::server::GpuUtilization;

static int passed = 0, failed = 0;
#define CHECK(cond)                                                              \
    do {                                                                         \
        if (cond) {                                                              \
            ++passed;                                                            \
        } else {                                                                 \
            ++failed;                                                            \
            std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

int main() {
    CHECK(cudaDeviceIndex("cuda:0") == 0);
    CHECK(cudaDeviceIndex("CUDA:12 (NVIDIA H200)") == 12);
    CHECK(cudaDeviceIndex("cpu") == -1);
    CHECK(cudaDeviceIndex("auto") == -1);
    CHECK(cudaDeviceIndex("cuda:") == -1);
    CHECK(cudaDeviceIndex("") == -1);

    const GpuUtilization disabled(-1);
    CHECK(!disabled.available());
    CHECK(!disabled.percent().has_value());

    const GpuUtilization gpu(0);
    const bool expectGpu = std::getenv("POWERINFER_EXPECT_GPU") != nullptr;
    if (gpu.available()) {
        const auto p = gpu.percent();
        CHECK(p.has_value());
        if (p) {
            CHECK(*p >= 0 && *p <= 100);
            std::printf("GPU 0 utilization: %.0f%%\n", *p);
        }
    } else {
        CHECK(!expectGpu);
        CHECK(!gpu.percent().has_value());  // no GPU: nothing, not 0
        std::printf("no NVML GPU here: no reading, as expected\n");
    }
    const GpuUtilization absent(999);  // no such device anywhere
    CHECK(!absent.available() && !absent.percent().has_value());
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
