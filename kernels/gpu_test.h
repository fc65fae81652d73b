// Helpers for the Qt-free GPU tests: each check counts a pass or a failure;
// main() prints "N passed, N failed". Device buffers, random data, a
// synchronising error check, and logits comparisons against the CPU model.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "calibrate/synth_model.h"
#include "common/ggml_types.h"
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

struct Compare {
    double rel_rms = 0, max_abs = 0;
};

inline Compare compare_logits(const float* got, const float* want, int64_t n) {
    double num = 0, den = 0, worst = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = double(got[i]) - want[i];
        num += d * d;
        den += double(want[i]) * want[i];
        worst = std::max(worst, std::fabs(d));
    }
    return {std::sqrt(num / std::max(den, 1e-30)), worst};
}

inline int64_t argmax(const float* v, int64_t n) { return std::max_element(v, v + n) - v; }

// Top-1 minus top-2 logit.
inline double top_gap(const float* v, int64_t n) {
    float a = -INFINITY, b = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
        if (v[i] > a) {
            b = a;
            a = v[i];
        } else if (v[i] > b) {
            b = v[i];
        }
    }
    return double(a) - b;
}

inline std::vector<int32_t> random_prompt(int64_t n, int64_t n_vocab) {
    std::mt19937 rng(99);
    std::vector<int32_t> prompt(static_cast<size_t>(n));
    for (auto& t : prompt) t = int32_t(3 + rng() % uint32_t(n_vocab - 3));
    return prompt;
}

// Logits rows of `got` against `want` (n rows of V): the worst relative RMS,
// and greedy agreement wherever want's top-2 gap is clear (> 3x the largest
// difference in that row).
struct RowsCompare {
    double worst_rms = 0;
    int agree = 0, ties = 0, disagree = 0;
};
inline RowsCompare compare_rows(const float* got, const float* want, int64_t n, int64_t V) {
    RowsCompare r;
    for (int64_t i = 0; i < n; ++i) {
        const auto cmp = compare_logits(got + i * V, want + i * V, V);
        r.worst_rms = std::max(r.worst_rms, cmp.rel_rms);
        if (top_gap(want + i * V, V) > 3 * cmp.max_abs) {
            (argmax(got + i * V, V) == argmax(want + i * V, V) ? r.agree : r.disagree)++;
        } else {
            ++r.ties;
        }
    }
    return r;
}

// One synthetic model shape of the whole-model GPU tests (tst_cuda_model,
// tst_cuda_sparse): 4 layers, n_embd 256 (a whole K-quant super-block),
// n_ff 512, 700 tokens, random norms.
struct ModelCase {
    const char* arch;
    GgmlType type;
    int64_t n_head, n_head_kv;
    bool tied;
};

inline std::string case_name(const ModelCase& k) {
    return std::string(k.arch) + " " + std::string(ggml_type_name(k.type)) + " heads " +
           std::to_string(k.n_head) + "/" + std::to_string(k.n_head_kv) + (k.tied ? " tied" : "");
}

inline calibrate::SynthSpec case_spec(const ModelCase& k, int64_t n_ctx) {
    calibrate::SynthSpec spec;
    spec.arch = k.arch;
    spec.type = k.type;
    spec.n_layer = 4;
    spec.n_embd = 256;
    spec.n_ff = 512;
    spec.n_head = k.n_head;
    spec.n_head_kv = k.n_head_kv;
    spec.n_vocab = 700;
    spec.n_ctx = n_ctx;
    spec.random_norms = true;
    spec.tied_output = k.tied;
    spec.seed = 7;
    return spec;
}

}  // namespace powerinfer::gputest
