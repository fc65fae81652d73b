// Test support for the model-level GPU tests (tst_gpu_model, tst_gpu_sparse):
// plain C++ with no CUDA header, reaching the GPU through the registered
// backend (backend/gpu_backend.h); synthetic model shapes; a device with a
// budget on top of its own staging.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "backend/gpu_backend.h"
#include "calibrate/synth_model.h"
#include "common/error.h"
#include "common/ggml_types.h"
#include "common/logits_compare.h"
#include "common/plain_test.h"

namespace powerinfer::gputest {

using Counter = plaintest::Counter;

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

// A GPU device whose budget leaves `budget` bytes after its own staging
// (what it holds right after creation); budget -1: what the driver allows.
inline std::unique_ptr<backend::Device> gpu_device(int64_t budget = -1) {
    const backend::GpuBackend* gpu = backend::gpu_backend();
    if (!gpu) throw EngineError("this build has no GPU backend");
    auto dev = gpu->make_device({});
    if (budget >= 0) dev->set_budget(dev->memory().used_by(backend::MemCategory::Staging) + budget);
    return dev;
}

// Sets (value) or removes (null) an environment variable.
inline void set_env(const char* key, const char* value) {
#ifdef _WIN32
    _putenv_s(key, value ? value : "");
#else
    if (value) {
        setenv(key, value, 1);
    } else {
        unsetenv(key);
    }
#endif
}

// What the device holds of its own right after creation.
inline int64_t base_staging(backend::Device& dev) {
    return dev.memory().used_by(backend::MemCategory::Staging);
}

// Exits 77 (skipped) with the reason when there is no GPU to test on.
inline bool gpu_present() {
    const backend::GpuBackend* gpu = backend::gpu_backend();
    if (!gpu) {
        std::printf("this build has no GPU backend — skipping\n0 passed, 0 failed\n");
        return false;
    }
    try {
        auto dev = gpu->make_device({});
        const auto m = dev->memory();
        std::printf("device: %s (%s, %.1f GiB free)\n", dev->name().c_str(), gpu->name().c_str(),
                    double(m.device_free_bytes) / (1 << 30));
        return true;
    } catch (const EngineError& e) {
        std::printf("%s — skipping GPU tests\n0 passed, 0 failed\n", e.what());
        return false;
    }
}

}  // namespace powerinfer::gputest
