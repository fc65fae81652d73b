// Helpers for the Qt-free GPU tests: each check counts a pass or a failure;
// main() prints "N passed, N failed". Device buffers, random data and a
// synchronising error check (logits comparisons: common/logits_compare.h).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/ggml_types.h"
#include "common/logits_compare.h"
#include "common/plain_test.h"
#include "cuda_ops.h"

namespace powerinfer::gputest {

using Counter = plaintest::Counter;

// cudaMalloc'd memory for n values of T (at least one), freed on scope exit.
template <typename T>
struct DeviceBuffer {
    T* ptr = nullptr;
    explicit DeviceBuffer(size_t n) {
        cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<size_t>(n, 1) * sizeof(T));
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
        cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    }
    ~DeviceBuffer() { cudaFree(ptr); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    std::vector<T> download(size_t n) const {
        std::vector<T> out(n);
        cudaMemcpy(out.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost);
        return out;
    }
};

inline std::vector<float> random_floats(size_t n, std::mt19937& rng, float scale = 1.f) {
    std::normal_distribution<float> dist(0.f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

// Waits for the device and counts a check that no CUDA error happened.
inline bool sync_ok(Counter& c, const std::string& what) {
    const cudaError_t e = cudaDeviceSynchronize();
    const std::string err = e == cudaSuccess ? cuda::last_error() : cudaGetErrorString(e);
    c.check(err.empty(), what + ": no CUDA error (" + err + ")");
    return err.empty();
}

}  // namespace powerinfer::gputest
