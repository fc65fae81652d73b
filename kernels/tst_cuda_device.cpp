// CudaDevice against CpuDevice (the reference implementation of the same
// interface): budget accounting, hot FFN results, predictors, and CPU/GPU
// overlap.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/device.h"
#include "cuda_device.h"
#include "cuda_ops.h"
#include "gpu_test.h"
#include "tensor/quant.h"

using namespace powerinfer;
using backend::MemCategory;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

struct LayerData {
    backend::NeuronFormat format;
    std::vector<uint8_t> gate, up;
    std::vector<float> down_t;
    backend::NeuronSource source() const {
        backend::NeuronSource s;
        s.gate = {format.gate_type, gate.data(), format.n_ff, format.n_embd,
                  static_cast<size_t>(format.gate_row_bytes)};
        s.up = {format.up_type, up.data(), format.n_ff, format.n_embd,
                static_cast<size_t>(format.up_row_bytes)};
        s.down_t = {GgmlType::F32, reinterpret_cast<const uint8_t*>(down_t.data()), format.n_ff,
                    format.n_embd, static_cast<size_t>(format.down_col_bytes)};
        return s;
    }
};

LayerData make_layer(GgmlType t, int64_t n_embd, int64_t n_ff, std::mt19937& rng) {
    LayerData d;
    d.format = backend::make_neuron_format(n_embd, n_ff, t, t, GgmlType::F32);
    std::normal_distribution<float> dist(0.f, 0.05f);
    std::vector<float> row(static_cast<size_t>(n_embd));
    d.gate.resize(static_cast<size_t>(n_ff * d.format.gate_row_bytes));
    d.up.resize(static_cast<size_t>(n_ff * d.format.up_row_bytes));
    for (int64_t j = 0; j < n_ff; ++j) {
        for (auto& v : row) v = dist(rng);
        tensor::quantize_row_ref(t, row.data(), d.gate.data() + j * d.format.gate_row_bytes,
                                 n_embd);
        for (auto& v : row) v = dist(rng);
        tensor::quantize_row_ref(t, row.data(), d.up.data() + j * d.format.up_row_bytes, n_embd);
    }
    d.down_t.resize(static_cast<size_t>(n_ff * n_embd));
    for (auto& v : d.down_t) v = dist(rng);
    return d;
}

bool close(float a, float b, float tol) { return std::fabs(a - b) <= tol * (1.f + std::fabs(b)); }

void test_hot_ffn_matches_cpu(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_embd = 768, n_ff = 1536;  // 768: a whole number of K-quant super-blocks
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::Q4_K,
                       GgmlType::Q6_K, GgmlType::F16}) {
        const LayerData layer = make_layer(t, n_embd, n_ff, rng);
        auto gpu = cuda::make_cuda_device({});
        auto cpu = backend::make_cpu_device({int64_t{1} << 30, 1});
        std::vector<int32_t> ids;
        for (int32_t j = 0; j < n_ff; ++j)
            if (rng() % 2) ids.push_back(j);
        for (auto* dev : {gpu.get(), cpu.get()}) {
            dev->configure_layers({layer.format});
            const int64_t n = dev->upload_neurons(0, MemCategory::HotNeurons, ids.data(),
                                                  int64_t(ids.size()), layer.source());
            c.check(n == int64_t(ids.size()), "all neurons uploaded");
        }
        std::normal_distribution<float> dist(0.f, 1.f);
        std::vector<float> x(static_cast<size_t>(n_embd)), y_gpu(static_cast<size_t>(n_embd)),
            y_cpu(static_cast<size_t>(n_embd));
        for (auto& v : x) v = dist(rng);
        gpu->run_hot(0, x.data(), ids.data(), int64_t(ids.size()), y_gpu.data());
        cpu->run_hot(0, x.data(), ids.data(), int64_t(ids.size()), y_cpu.data());
        gpu->synchronize();
        cpu->synchronize();
        // The CPU quantizes the activations (Q8_0/Q8_1/Q8_K, as llama.cpp
        // does); the GPU uses them in float. That costs about 1% of the
        // output's norm on this data, so compare norms, not elements.
        double diff = 0, norm = 0;
        for (int64_t i = 0; i < n_embd; ++i) {
            const double d = double(y_gpu[static_cast<size_t>(i)]) - y_cpu[static_cast<size_t>(i)];
            diff += d * d;
            norm += double(y_cpu[static_cast<size_t>(i)]) * y_cpu[static_cast<size_t>(i)];
        }
        const bool ok = norm > 0 && std::sqrt(diff / norm) < 2e-2;
        std::printf("run_hot %s: relative error vs CpuDevice %.2e\n",
                    std::string(ggml_type_name(t)).c_str(),
                    norm > 0 ? std::sqrt(diff / norm) : -1.0);
        c.check(ok, (std::string("run_hot matches CpuDevice for ") + std::string(ggml_type_name(t)))
                        .c_str());
    }
}

int64_t driver_free() {
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    return int64_t(free_b);
}

void test_budget(gputest::Counter& c, std::mt19937& rng) {
    const LayerData layer = make_layer(GgmlType::Q4_0, 512, 1024, rng);
    const int64_t per = layer.format.bytes_per_neuron();
    const int64_t staging = cuda::staging_bytes({layer.format}, 0);
    auto gpu = cuda::make_cuda_device({0, staging + per * 100 + per / 2});
    gpu->configure_layers({layer.format});
    c.check(gpu->memory().used_by(MemCategory::Staging) == staging &&
                gpu->memory().used_total() == staging,
            "after configure: only the staging arena and work buffers (" + std::to_string(staging) +
                " bytes)");
    const int64_t free0 = driver_free(), allocs0 = gpu->memory().device_allocations;
    std::vector<int32_t> ids(1024);
    for (int32_t j = 0; j < 1024; ++j) ids[static_cast<size_t>(j)] = j;
    const int64_t n =
        gpu->upload_neurons(0, MemCategory::HotNeurons, ids.data(), 1024, layer.source());
    c.check(n == 100, "upload stops at the budget (100 neurons fit)");
    const auto mem = gpu->memory();
    c.check(mem.used_by(MemCategory::HotNeurons) == 100 * per,
            "hot-neuron bytes accounted exactly");
    c.check(mem.used_total() == staging + 100 * per && mem.used_by(MemCategory::NeuronCache) == 0,
            "used = staging + exactly the 100 slots placed (no spare slots)");
    c.check(mem.used_total() <= mem.budget_bytes, "budget respected");
    c.check(!mem.simulated && mem.device_free_bytes > 0, "real device memory reported");
    // The driver's view: the slot arrays and nothing else (allocation
    // granularity: up to 2 MiB per block).
    const int64_t taken = free0 - driver_free();
    const int64_t blocks = mem.device_allocations - allocs0;
    c.check(blocks == 3 && taken >= 0 && taken <= 100 * per + blocks * (int64_t{2} << 20),
            "the driver lost " + std::to_string(taken) + " bytes in " + std::to_string(blocks) +
                " blocks for " + std::to_string(100 * per) + " accounted");
    gpu->evict_neurons(0, ids.data(), 50);
    c.check(gpu->resident_count(0) == 50, "eviction frees slots");
    c.check(gpu->memory().used_by(MemCategory::HotNeurons) == 50 * per, "eviction uncharges");
    c.check(gpu->memory().used_by(MemCategory::NeuronCache) == 50 * per &&
                gpu->memory().used_total() == staging + 100 * per,
            "empty slots stay allocated and count as neuron-cache room");
    gpu->evict_neurons(0, ids.data() + 50, 50);
    c.check(gpu->resident_count(0) == 0 && gpu->memory().used_total() == staging &&
                gpu->memory().device_allocations == allocs0,
            "an emptied layer frees its arrays");
    c.check(gpu->upload_neurons(0, MemCategory::HotNeurons, ids.data(), 60, layer.source()) == 60 &&
                gpu->memory().used_total() == staging + 60 * per,
            "placed again: exactly 60 slots");
    // The cache grows the arrays; a growth that cannot keep the old arrays
    // beside the new ones rebuilds them from the host.
    c.check(gpu->upload_neurons(0, MemCategory::NeuronCache, ids.data() + 60, 40, layer.source()) ==
                    40 &&
                gpu->memory().used_total() <= gpu->budget() && gpu->resident_count(0) == 100,
            "cache growth up to the budget (rebuild)");
    bool threw = false;
    try {
        gpu->allocate(MemCategory::KvCache, per * 1000);
    } catch (const backend::DeviceOutOfMemory&) {
        threw = true;
    }
    c.check(threw, "allocation over budget throws DeviceOutOfMemory");
}

// Another program takes the GPU's memory after the budget was set: uploads
// that need new slot arrays place fewer neurons, with a note, never throw;
// the resident ones still compute like the CPU device.
void test_gpu_full(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_embd = 4096, n_ff = 11008;
    const LayerData layer = make_layer(GgmlType::Q4_0, n_embd, n_ff, rng);
    auto gpu = cuda::make_cuda_device({});
    auto cpu = backend::make_cpu_device({int64_t{1} << 40, 1});
    gpu->configure_layers({layer.format});
    cpu->configure_layers({layer.format});
    std::vector<int32_t> ids(static_cast<size_t>(n_ff));
    for (int32_t j = 0; j < n_ff; ++j) ids[static_cast<size_t>(j)] = j;
    const int64_t half = n_ff / 2;
    c.check(
        gpu->upload_neurons(0, MemCategory::HotNeurons, ids.data(), half, layer.source()) == half,
        "GPU full: first half placed");
    std::vector<float> x(static_cast<size_t>(n_embd), 0.01f), y(static_cast<size_t>(n_embd));
    gpu->run_hot(0, x.data(), ids.data(), half, y.data());  // kernels loaded before the GPU fills
    gpu->synchronize();
    std::vector<void*> hog;
    for (int64_t chunk = int64_t{1} << 30; chunk >= 2 * kMiB; chunk /= 2) {
        for (;;) {
            void* p = nullptr;
            if (cudaMalloc(&p, size_t(chunk)) != cudaSuccess) {
                cudaGetLastError();
                break;
            }
            hog.push_back(p);
        }
    }
    std::printf("GPU full: %.1f MiB left free, budget %.0f MiB\n", double(driver_free()) / kMiB,
                double(gpu->budget()) / kMiB);
    int64_t n = -1;
    try {
        n = gpu->upload_neurons(0, MemCategory::NeuronCache, ids.data() + half, n_ff - half,
                                layer.source());
    } catch (const std::exception& e) {
        c.check(false, std::string("GPU full: upload threw ") + e.what());
    }
    const auto mem = gpu->memory();
    std::printf("GPU full: %lld of %lld more neurons placed; note '%s'\n", (long long)n,
                (long long)(n_ff - half), mem.note.c_str());
    c.check(n >= 0 && n < n_ff - half && mem.note.find("refused") != std::string::npos,
            "GPU full: fewer neurons, and the note says the GPU refused memory");
    c.check(gpu->resident_count(0) == half + n && mem.used_total() <= gpu->budget(),
            "GPU full: the accounting holds what is resident");
    // The resident ones compute like the CPU device.
    const int64_t resident = half + std::max<int64_t>(n, 0);
    cpu->upload_neurons(0, MemCategory::HotNeurons, ids.data(), resident, layer.source());
    std::normal_distribution<float> dist(0.f, 1.f);
    for (auto& v : x) v = dist(rng);
    std::vector<float> yc(static_cast<size_t>(n_embd));
    try {
        gpu->run_hot(0, x.data(), ids.data(), resident, y.data());
        gpu->synchronize();
        cpu->run_hot(0, x.data(), ids.data(), resident, yc.data());
        cpu->synchronize();
        double diff = 0, norm = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            diff += (double(y[i]) - yc[i]) * (double(y[i]) - yc[i]);
            norm += double(yc[i]) * yc[i];
        }
        c.check(norm > 0 && std::sqrt(diff / norm) < 2e-2, "GPU full: resident neurons compute");
    } catch (const std::exception& e) {
        c.check(false, std::string("GPU full: run_hot threw ") + e.what());
    }
    for (void* p : hog) cudaFree(p);
}

void test_predictor(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_embd = 576, rank = 64, n_ff = 1536;
    std::normal_distribution<float> dist(0.f, 0.2f);
    std::vector<float> w1(static_cast<size_t>(rank * n_embd)), b1(static_cast<size_t>(rank)),
        w2(static_cast<size_t>(n_ff * rank)), b2(static_cast<size_t>(n_ff)),
        x(static_cast<size_t>(n_embd));
    for (auto* v : {&w1, &b1, &w2, &b2, &x})
        for (auto& e : *v) e = dist(rng);
    backend::PredictorWeights pw;
    pw.n_embd = n_embd;
    pw.rank = rank;
    pw.n_ff = n_ff;
    pw.w1 = reinterpret_cast<const uint8_t*>(w1.data());
    pw.b1 = b1.data();
    pw.w2 = reinterpret_cast<const uint8_t*>(w2.data());
    pw.b2 = b2.data();
    const LayerData layer = make_layer(GgmlType::Q4_0, n_embd, n_ff, rng);
    auto gpu = cuda::make_cuda_device({});
    auto cpu = backend::make_cpu_device({int64_t{1} << 30, 1});
    std::vector<float> lg(static_cast<size_t>(n_ff)), lc(static_cast<size_t>(n_ff));
    std::vector<int32_t> ag, ac;
    for (auto* dev : {gpu.get(), cpu.get()}) {
        dev->configure_layers({layer.format});
        dev->set_predictor(0, pw);
    }
    gpu->predict(0, x.data(), 0.5f, ag, lg.data());
    cpu->predict(0, x.data(), 0.5f, ac, lc.data());
    bool ok = true;
    for (int64_t j = 0; j < n_ff; ++j)
        ok &= close(lg[static_cast<size_t>(j)], lc[static_cast<size_t>(j)], 1e-3f);
    c.check(ok, "predictor logits match CpuDevice");
    size_t same = 0;
    for (int32_t j : ag) same += std::binary_search(ac.begin(), ac.end(), j);
    c.check(same + 2 >= ac.size() && ag.size() <= ac.size() + 2, "predicted active sets agree");
    c.check(gpu->memory().used_by(MemCategory::Predictors) == pw.bytes(),
            "predictor bytes accounted");
    c.check(gpu->memory().used_by(MemCategory::Staging) ==
                cuda::staging_bytes({layer.format}, n_embd + rank + n_ff),
            "predictor work buffer accounted as staging");
}

// The hot part runs on the GPU while the host computes, as in a decode step:
// enqueue the hot part, compute on the CPU, synchronise. The wall time of
// both together must be well under the sum of each alone.
void test_overlap(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_embd = 4096, n_ff = 11008;
    const LayerData layer = make_layer(GgmlType::Q4_0, n_embd, n_ff, rng);
    auto gpu = cuda::make_cuda_device({});
    gpu->configure_layers({layer.format});
    std::vector<int32_t> ids(static_cast<size_t>(n_ff));
    for (int32_t j = 0; j < n_ff; ++j) ids[static_cast<size_t>(j)] = j;
    gpu->upload_neurons(0, MemCategory::HotNeurons, ids.data(), n_ff, layer.source());
    gpu->synchronize();
    std::vector<float> x(static_cast<size_t>(n_embd), 0.01f), y(static_cast<size_t>(n_embd));
    auto now = [] { return std::chrono::steady_clock::now(); };
    auto ms = [](auto a, auto b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
    };
    volatile double sink = 0;
    auto cpu_work = [&](int64_t iters) {
        double s = 0;
        for (int64_t i = 0; i < iters; ++i) s += std::sqrt(double(i));
        sink = s;
    };
    const int kSteps = 30, kHotCalls = 8;
    auto steps = [&](bool gpu_part, bool cpu_part, int64_t iters) {
        double device_ms = 0;
        const auto t0 = now();
        for (int s = 0; s < kSteps; ++s) {
            if (gpu_part)
                for (int k = 0; k < kHotCalls; ++k)
                    gpu->run_hot(0, x.data(), ids.data(), n_ff, y.data());
            if (cpu_part) cpu_work(iters);
            device_ms += gpu->synchronize();
        }
        return std::make_pair(ms(t0, now()), device_ms);
    };
    steps(true, false, 0);  // warm-up
    const auto [t_gpu, busy] = steps(true, false, 0);
    // Size the CPU part like the GPU part.
    const auto t_probe = now();
    cpu_work(1'000'000);
    const double per_iter = ms(t_probe, now()) / 1e6;
    const int64_t iters = int64_t(t_gpu / kSteps / per_iter);
    const double t_cpu = steps(false, true, iters).first;
    const double t_both = steps(true, true, iters).first;
    const double overlap = (t_gpu + t_cpu - t_both) / std::min(t_gpu, t_cpu);
    std::printf(
        "overlap: gpu %.1f ms (device busy %.1f ms), cpu %.1f ms, together %.1f ms -> "
        "%.0f%% of the shorter part hidden\n",
        t_gpu, busy, t_cpu, t_both, 100.0 * overlap);
    c.check(overlap > 0.6, "CPU and GPU work overlap");
    c.check(busy > 0 && busy <= t_gpu * 1.05, "device busy time is measured");
    (void)sink;
}

}  // namespace

int main() {
    const cuda::DeviceProbe probe = cuda::probe_device(0);
    if (!probe.available) {
        std::printf("%s — skipping CudaDevice tests\n0 passed, 0 failed\n", probe.reason.c_str());
        return 77;
    }
    gputest::Counter c;
    std::mt19937 rng(99);
    test_budget(c, rng);
    test_gpu_full(c, rng);
    test_hot_ffn_matches_cpu(c, rng);
    test_predictor(c, rng);
    test_overlap(c, rng);
    return c.finish();
}
