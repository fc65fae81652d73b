// Synthetic llama-architecture models: random weights of any shape and quant
// type, a minimal SentencePiece vocabulary (so the engine loads them) and a
// matching sidecar whose neuron activity follows a power law. Used for
// benchmarks on machines that cannot download models, and by tests.
//
// Random data is made fast by quantizing a pool of random blocks once and
// copying block-aligned runs from it at random offsets (a 7B Q4_0 model is
// mostly memcpy + disk write).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/ggml_types.h"

namespace powerinfer::calibrate {

struct SynthSpec {
    int64_t n_layer = 2;
    int64_t n_embd = 64;
    int64_t n_ff = 128;
    int64_t n_head = 4;
    int64_t n_head_kv = 4;
    int64_t n_vocab = 512;  // >= 259 (3 specials + 256 byte tokens)
    int64_t n_ctx = 2048;
    GgmlType type = GgmlType::Q4_0;  // FFN, attention, embeddings and output
    uint64_t seed = 1;
    // Variants that exercise every part of the graph in tests: "llama",
    // "qwen2" (Q/K/V biases, NeoX RoPE) or "qwen3" (per-head Q/K norms, NeoX
    // RoPE); random norm weights instead of ones; no output.weight (the head
    // shares the token embedding).
    std::string arch = "llama";
    bool random_norms = false;
    bool tied_output = false;
    // Sidecar: neuron k (in a random hot-first order) is active with
    // probability min(1, c (k+1)^-zipf_s), c set so that 1 - sparsity of the
    // neurons are active on average.
    bool write_sidecar = true;
    double zipf_s = 1.0;
    double sparsity = 0.8;
    int64_t predictor_rank = 0;  // 0: 64 for n_embd < 2048, else 256
    bool predictor_f16 = true;
};

// The presets: "smollm2-135m", "llama-7b". Throws EngineError if unknown.
SynthSpec synth_preset(const std::string& name);

// Writes the model (and, if asked, default_sidecar_path(path)). Throws
// EngineError for an impossible shape (e.g. n_embd not a multiple of the
// type's block size).
void write_synthetic_model(const std::filesystem::path& path, const SynthSpec& spec);

}  // namespace powerinfer::calibrate
