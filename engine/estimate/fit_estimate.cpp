#include "powerinfer/fit_estimate.h"

#include <algorithm>
#include <cstdio>

namespace powerinfer {

namespace {

// The KV cache a typical chat reads per token (its length so far).
constexpr int kChatTokensForSpeed = 512;

// Binary gigabytes, labelled "GB" as the app's other sizes are (QLocale's
// traditional format), so that the numbers on one screen agree.
std::string gib(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / double(int64_t(1) << 30));
    return buf;
}

std::string speed(double tps, bool bound) {
    char buf[48];
    if (tps <= 0) return {};
    // A bound ("up to") from the read bandwidth alone: compute, attention
    // and sampling only take from it. With the decode probe's rate, an
    // estimate ("about"); docs/benchmarks.md compares both with decodes.
    const char* word = bound ? "up to" : "about";
    std::snprintf(buf, sizeof buf, tps >= 10 ? ", %s %.0f tok/s" : ", %s %.1f tok/s", word, tps);
    return buf;
}

}  // namespace

int64_t fit_kv_cache_bytes(const FitModelShape& s, int n_ctx) {
    if (s.n_layers <= 0 || s.n_head <= 0 || n_ctx <= 0) return 0;
    const int64_t head_dim = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head;
    const int64_t kv_heads = s.n_head_kv > 0 ? s.n_head_kv : s.n_head;
    return 2 * int64_t(s.n_layers) * head_dim * kv_heads * int64_t(n_ctx) * 2;  // K and V, F16
}

FitEstimate estimate_fit(const FitModelShape& s, int n_ctx, const FitMachine& m) {
    return estimate_fit(s, n_ctx, m, FitPlacement{});
}

FitEstimate estimate_fit(const FitModelShape& s, int n_ctx, const FitMachine& m,
                         const FitPlacement& placement) {
    FitEstimate e;
    e.weight_bytes = s.weight_bytes;
    e.kv_cache_bytes = fit_kv_cache_bytes(s, n_ctx);
    // Logits (F32 over the vocabulary, plus a copy for sampling) and 32 MiB
    // of activations and thread scratch.
    e.runtime_bytes = 2 * int64_t(std::max(0, s.n_vocab)) * 4 + (int64_t(32) << 20);
    e.total_bytes = e.weight_bytes + e.kv_cache_bytes + e.runtime_bytes;
    // Gated FFN: three n_embd x n_ff matrices per layer, a share of the
    // parameters that the bytes follow; 2/3 when the shape is unknown.
    double ffn_share = 2.0 / 3.0;
    if (s.n_params > 0 && s.n_embd > 0 && s.n_ff > 0 && s.n_layers > 0)
        ffn_share = std::min(
            1.0, 3.0 * double(s.n_embd) * double(s.n_ff) * double(s.n_layers) / double(s.n_params));
    e.ffn_bytes = int64_t(double(e.weight_bytes) * ffn_share);
    if (s.weight_bytes <= 0) {
        e.summary = "unknown size";
        return e;
    }
    const int64_t speed_kv = fit_kv_cache_bytes(s, std::min(n_ctx, kChatTokensForSpeed));
    const int64_t vram = m.gpu ? std::max<int64_t>(0, m.vram_free_bytes - kFitVramReserveBytes) : 0;
    const int64_t ram = m.ram_available_bytes >= 0
                            ? std::max<int64_t>(0, m.ram_available_bytes - kFitRamReserveBytes)
                            : -1;
    int64_t cpu_read = 0;  // bytes the CPU reads per token
    if (m.gpu && e.total_bytes <= vram) {
        e.verdict = FitVerdict::Gpu;
        e.gpu_bytes = e.total_bytes;
        e.gpu_ffn_fraction = 1;
        e.summary = "fits on the GPU: " + gib(e.total_bytes) + " of " + gib(vram) + " free VRAM";
        return e;
    }
    const bool preview = m.gpu && placement.valid && placement.total_neurons > 0;
    if (preview) {
        // The engine's own plan: attention of gpu_attention_layers layers
        // with their KV cache, and the hot neurons that fit after them.
        e.gpu_bytes = placement.device_bytes;
        e.gpu_hot_fraction = placement.wanted_hot_bytes > 0
                                 ? std::min(1.0, double(placement.hot_neuron_bytes) /
                                                     double(placement.wanted_hot_bytes))
                                 : 0;
        const double neurons_on_gpu =
            double(placement.hot_neurons) / double(placement.total_neurons);
        e.gpu_ffn_fraction = neurons_on_gpu;
        const double cpu_layers =
            placement.n_layers > 0
                ? 1.0 - double(placement.gpu_attention_layers) / double(placement.n_layers)
                : 1.0;
        // The CPU's share read densely (its cold neurons, the attention and
        // KV cache of its layers): sparse skipping only lowers it.
        cpu_read = int64_t(double(e.ffn_bytes) * (1.0 - neurons_on_gpu) +
                           double(e.weight_bytes - e.ffn_bytes + speed_kv) * cpu_layers);
    } else if (m.gpu) {
        // As the engine's sparse placement: attention, KV cache and buffers
        // first, then as many FFN bytes (hot neurons) as the rest holds.
        const int64_t fixed = e.total_bytes - e.ffn_bytes;
        if (fixed < vram && e.ffn_bytes > 0) {
            e.gpu_ffn_fraction = double(vram - fixed) / double(e.ffn_bytes);
            e.gpu_bytes = vram;
            cpu_read = int64_t(double(e.ffn_bytes) * (1.0 - e.gpu_ffn_fraction));
        }
    }
    e.ram_bytes = e.total_bytes - e.gpu_bytes;
    if (ram >= 0 && e.ram_bytes > ram) {
        e.verdict = FitVerdict::DoesNotFit;
        e.summary = "does not fit: needs " + gib(e.ram_bytes) + " of RAM, " + gib(ram) +
                    " available" + (m.gpu ? " beside the GPU's share" : "");
        return e;
    }
    char line[160];
    if (e.gpu_bytes > 0 && preview) {
        e.verdict = FitVerdict::Hybrid;
        std::snprintf(line, sizeof line,
                      "hybrid: %.0f %% of hot neurons on the GPU (%lld of %lld FFN neurons)",
                      100.0 * e.gpu_hot_fraction, static_cast<long long>(placement.hot_neurons),
                      static_cast<long long>(placement.total_neurons));
        e.summary = line;
    } else if (e.gpu_bytes > 0) {
        e.verdict = FitVerdict::Hybrid;
        // Without a sidecar there is no hot set yet: a share of the bytes.
        std::snprintf(line, sizeof line,
                      "hybrid: about %.0f %% of the FFN on the GPU (calibrate for the hot neurons)",
                      100.0 * e.gpu_ffn_fraction);
        e.summary = line;
    } else {
        e.verdict = FitVerdict::CpuOnly;
        cpu_read = e.weight_bytes + speed_kv;
        e.summary = "CPU only: " + gib(e.ram_bytes) + " of RAM" +
                    (ram >= 0 ? " (" + gib(ram) + " available)" : std::string());
    }
    // The probe decodes a model of about 100 MB, which may sit in a large
    // L3 cache; what reads more per token than the bandwidth measurement's
    // buffer streams from RAM, so there the read bandwidth caps the rate.
    double rate = m.host_read_bytes_per_s;
    if (m.decode_bytes_per_s > 0) {
        rate = rate > 0 && cpu_read > kFitBandwidthBufferBytes
                   ? std::min(rate, m.decode_bytes_per_s)
                   : m.decode_bytes_per_s;
        e.tokens_per_s_is_bound = false;
    }
    if (rate > 0 && cpu_read > 0) e.tokens_per_s = rate / double(cpu_read);
    e.summary += speed(e.tokens_per_s, e.tokens_per_s_is_bound);
    return e;
}

}  // namespace powerinfer
