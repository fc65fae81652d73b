// "Will it fit, and how fast": from a model's shape (file bytes, layers,
// heads; from the catalog or the GGUF header) and the machine (RAM, free
// VRAM, measured memory bandwidth), where the model would run and the decode
// speed to expect. Pure arithmetic plus two small host probes; Qt-free.
#pragma once

#include <cstdint>
#include <filesystem>
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
    // measure_decode_rate(): the weight bytes per second a real decode of
    // this engine streams on this host (its kernels, threads and caches:
    // small models are compute-bound, not bandwidth-bound); 0: unknown.
    double decode_bytes_per_s = 0;
};

// The engine's placement preview for a model with a sidecar on this
// machine's GPU (preview_placement in powerinfer/placement.h, copied by the
// caller: this module does not load models). With it, the hybrid split is
// the engine's own: hot neurons placed over those the calibration asks for.
struct FitPlacement {
    bool valid = false;  // a sparse GPU plan from the preview
    int n_layers = 0;
    int gpu_attention_layers = 0;  // layers whose attention (and KV cache) the GPU holds
    int64_t hot_neurons = 0, total_neurons = 0;  // placed on the GPU / all FFN neurons
    int64_t hot_neuron_bytes = 0;                // placed
    int64_t wanted_hot_bytes = 0;                // what the calibrated hot sets ask for
    int64_t device_bytes = 0;                    // everything the GPU would hold
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
    // Hybrid from the engine's placement preview: of the hot neurons the
    // calibration asks for, the share on the GPU (by bytes); -1: no preview.
    double gpu_hot_fraction = -1;
    int64_t ram_bytes = 0;  // what stays in RAM
    int64_t gpu_bytes = 0;  // what goes to the GPU
    // Decode tokens/s: the bytes the CPU reads per token (the weights it
    // holds, the output head included, plus the KV cache of a 512-token
    // chat) at the host's measured rate: the decode probe's rate when there
    // is one (capped by the read bandwidth for models that read more than
    // kFitBandwidthBufferBytes per token), else the read bandwidth alone
    // ("up to"; not a true bound for a model that sits in a large L3).
    // 0 when unknown, or when the GPU holds everything (its bandwidth is
    // not measured).
    double tokens_per_s = 0;
    bool tokens_per_s_is_bound = true;  // from the read bandwidth alone
    std::string summary;                // one line for the catalog ("CPU only: …")
};

// The headroom the estimate leaves: RAM for the OS and the app, and VRAM for
// the driver's context (as the engine's "auto" budget does).
inline constexpr int64_t kFitRamReserveBytes = int64_t(512) << 20;
inline constexpr int64_t kFitVramReserveBytes = int64_t(512) << 20;
// The buffer measure_host_read_bandwidth reads (beyond most L3 caches).
inline constexpr int64_t kFitBandwidthBufferBytes = int64_t(256) << 20;

// F16 K and V per layer at n_ctx tokens (as the engine keeps them).
int64_t fit_kv_cache_bytes(const FitModelShape& shape, int n_ctx);
FitEstimate estimate_fit(const FitModelShape& shape, int n_ctx, const FitMachine& machine);
// The same with the engine's placement preview (used for the hybrid split
// when it is valid and the model does not fit the GPU whole).
FitEstimate estimate_fit(const FitModelShape& shape, int n_ctx, const FitMachine& machine,
                         const FitPlacement& placement);

struct HostMemory {
    int64_t total_bytes = -1;
    int64_t available_bytes = -1;
};
HostMemory host_memory();

// Read bandwidth of this machine's RAM (bytes/s) over `threads` threads
// (0: all cores): the best of a few passes over a 256 MiB buffer, about half
// a second. Measure once and keep the number.
double measure_host_read_bandwidth(int threads = 0);

// The decode probe: writes a synthetic model of the default model's shape
// (SmolLM2 135M, Q4_1, about 100 MB) under scratch_dir, decodes a few
// dozen tokens with this engine on `threads` threads (0: all cores) and
// returns the file bytes streamed per second (decode tok/s x file size),
// the best of a few runs; a few seconds. The file is removed. Implemented in
// the runtime (it loads a model); throws EngineError when it cannot write or
// load the model.
double measure_decode_rate(const std::filesystem::path& scratch_dir, int threads = 0);

}  // namespace powerinfer
