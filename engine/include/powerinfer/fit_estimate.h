// "Will it fit, and how fast": from a model's shape (file bytes, layers,
// heads; from the catalog or the GGUF header) and the machine (RAM, free
// VRAM, measured memory bandwidth), where the model would run and the decode
// speed to expect. Pure arithmetic plus two small host probes; Qt-free.
#pragma once

#include <cstdint>
#include <string>

namespace powerinfer {

struct FitModelShape {
    int64_t weight_bytes = 0;  // the file's size (its tensors, nearly all of it)
    int64_t n_params = 0;      // 0: unknown
    int n_layers = 0, n_embd = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_vocab = 0;
    int head_dim = 0;  // 0: n_embd / n_head (Qwen 3 and Gemma 3 set it apart)
};

struct FitMachine {
    int64_t ram_total_bytes = -1;
    int64_t ram_available_bytes = -1;  // what the OS can give now
    bool gpu = false;
    int64_t vram_free_bytes = 0;
    double host_read_bytes_per_s = 0;  // measure_host_read_bandwidth(); 0: unknown
};

enum class FitVerdict { Gpu, Hybrid, CpuOnly, DoesNotFit, Unknown };

struct FitEstimate {
    FitVerdict verdict = FitVerdict::Unknown;
    int64_t weight_bytes = 0;
    int64_t kv_cache_bytes = 0;   // F16 K and V at the context length
    int64_t runtime_bytes = 0;    // logits and work buffers
    int64_t total_bytes = 0;      // the three above
    int64_t ffn_bytes = 0;        // the FFN share of the weights (what a hybrid split moves)
    double gpu_ffn_fraction = 0;  // hybrid: of the FFN bytes, on the GPU
    int64_t ram_bytes = 0;        // what stays in RAM
    int64_t gpu_bytes = 0;        // what goes to the GPU
    // Decode tokens/s, memory-bandwidth bound: the host's read bandwidth
    // over the bytes the CPU reads per token (weights it holds, plus the KV
    // cache of a 512-token chat). An upper bound: compute, attention and
    // sampling come on top (small models that sit in a large L3 are far from
    // it). 0 when unknown, or when the GPU holds everything (its bandwidth is
    // not measured).
    double tokens_per_s = 0;
    std::string summary;  // one line for the catalog ("CPU only: …")
};

// The headroom the estimate leaves: RAM for the OS and the app, and VRAM for
// the driver's context (as the engine's "auto" budget does).
inline constexpr int64_t kFitRamReserveBytes = int64_t(512) << 20;
inline constexpr int64_t kFitVramReserveBytes = int64_t(512) << 20;

// F16 K and V per layer at n_ctx tokens (as the engine keeps them).
int64_t fit_kv_cache_bytes(const FitModelShape& shape, int n_ctx);
FitEstimate estimate_fit(const FitModelShape& shape, int n_ctx, const FitMachine& machine);

struct HostMemory {
    int64_t total_bytes = -1;
    int64_t available_bytes = -1;
};
HostMemory host_memory();

// Read bandwidth of this machine's RAM (bytes/s) over `threads` threads
// (0: all cores): the best of a few passes over a 256 MiB buffer, about half
// a second. Measure once and keep the number.
double measure_host_read_bandwidth(int threads = 0);

}  // namespace powerinfer
