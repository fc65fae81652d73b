// Synthetic llama-architecture models: random weights of any shape and quant
// type, a minimal SentencePiece vocabulary (so the engine loads them) and a
// matching sidecar whose neuron activity follows a power law. For benchmarks
// on machines that cannot download models, and for tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "powerinfer/error.h"

namespace powerinfer {

struct SyntheticModelSpec {
    int64_t n_layer = 2;
    int64_t n_embd = 64;
    int64_t n_ff = 128;
    int64_t n_head = 4;
    int64_t n_head_kv = 4;
    int64_t n_vocab = 512;  // >= 259 (3 specials + 256 byte tokens)
    int64_t n_ctx = 2048;
    std::string weight_type = "Q4_0";  // FFN, attention, embeddings and output
    uint64_t seed = 1;
    // Sidecar: neuron k (in a random hot-first order) is active with
    // probability min(1, c (k+1)^-zipf_s), c set so that 1 - sparsity of the
    // neurons are active on average.
    bool write_sidecar = true;
    double zipf_s = 1.0;
    double sparsity = 0.8;
    int64_t predictor_rank = 0;  // 0: 64 for n_embd < 2048, else 256
};

// The presets: "smollm2-135m", "llama-7b". Throws EngineError if unknown.
SyntheticModelSpec synthetic_preset(const std::string& name);

// Throws EngineError("unknown or unsupported type 'X'") unless the engine
// can write and run weights of this type ("Q4_0", "F16", ...).
void check_synthetic_weight_type(const std::string& type);

// Writes the model and, if asked, its sidecar next to it
// (MODEL.powerinfer.gguf). Throws EngineError for an unknown or unsupported
// weight type or an impossible shape (e.g. n_embd not a multiple of the
// type's block size).
void write_synthetic_model(const std::filesystem::path& path, const SyntheticModelSpec& spec);

}  // namespace powerinfer
