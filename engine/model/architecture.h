// An architecture is one unit, in one file under engine/model: the
// general.architecture names it runs, its own metadata keys, its tensor
// names, its layer graph and what it asks of a backend. The units are listed
// in one table (kArchitectures); the model, its config reader and the
// shared forward pass ask the unit instead of naming architectures.
//
// Adding one: a file with its Architecture (e.g. gemma3_graph.cpp), its
// static member and its line in the table below, and the file in
// CMakeLists.txt. Its own hyper-parameters, tensors and per-sequence state
// stay in the unit (UnitConfig, UnitWeights, Architecture::memory).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/compute.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "model/model_config.h"

namespace powerinfer::gguf {
class GgufFile;
struct TensorInfo;
}  // namespace powerinfer::gguf

namespace powerinfer::model {

// Binds tensors by name from the model's file, checking each one's shape and
// type against the config (a missing required tensor or a mismatch throws
// EngineError naming it), and counts the bytes it bound.
class TensorBinder {
public:
    TensorBinder(const gguf::GgufFile& file, std::string arch, int64_t& bound_bytes);
    // A matrix of `rows` rows of `cols`, or with n_stack > 0 a stack of
    // n_stack such matrices (experts; the view is the first one). An empty
    // view when the tensor is absent and not required.
    tensor::WeightView matrix(const std::string& name, int64_t cols, int64_t rows,
                              bool required = true, int64_t n_stack = 0);
    // An F32 vector of n values (null when absent and not required).
    const float* vector(const std::string& name, int64_t n, bool required = true);
    bool has(const std::string& name) const;
    // "<file>: ", the start of every message about the file.
    const std::string& where() const { return where_; }

private:
    const gguf::TensorInfo* find(const std::string& name, bool required) const;

    const gguf::GgufFile& file_;
    std::string arch_, where_;
    int64_t& bound_bytes_;
};

// The attention matrices as llama names them, in layer `blk` ("blk.N."):
// attn_q of q_rows rows (the query heads, or more where an architecture packs
// a gate with them), attn_k, attn_v and attn_output.
void bind_attention(TensorBinder& bind, const ModelConfig& c, const std::string& blk,
                    int64_t q_rows, LayerWeights& L);

// What a layer keeps per sequence.
struct LayerMemory {
    bool kv_cache = true;  // a KV cache of its own (n_ctx positions)
    // Floats of state it carries from token to token (Model::sequence_state),
    // which cannot be rewound: the model rebuilds it when a sequence goes
    // back to an earlier position.
    int64_t state_floats = 0;
};

struct Architecture {
    // The general.architecture values it runs.
    std::span<const std::string_view> names;
    // Its own keys (and its switches of ModelConfig), after the common ones
    // (context, sizes, heads, norms, RoPE) are read. Throws EngineError.
    void (*read_config)(const gguf::GgufFile& file, ModelConfig& c);
    // Layer il's tensors but its FFN (the model binds the dense FFN or the
    // experts by their common names).
    void (*bind_layer)(TensorBinder& bind, const ModelConfig& c, int64_t il, LayerWeights& L);
    // Layer il over the rows of the residual stream in the scratch of `be`.
    Model::LayerGraph layer;
    // What layer il keeps per sequence; null: a KV cache and no state.
    LayerMemory (*memory)(const ModelConfig& c, int64_t il) = nullptr;
    // The backend capabilities its layers need there (the FFN too with
    // OffloadParts::WholeLayers); the model asks the backend before it
    // places any layer on it.
    std::vector<backend::Capability> (*needs)(const ModelConfig& c, OffloadParts parts);
    // Why its layers stay on the host even on a backend with every
    // capability (parts of the layer the graph computes on host memory, or
    // that the device copy leaves out); null: they go where the plan says.
    const char* host_only = nullptr;
    // Whether several sequences may run at once (Model::set_sequence_slots).
    bool several_sequences = true;
    // Whether its one-token products are the input sites of input_sites.h
    // (q|k|v, o, gate|up, down per layer, then the head).
    bool input_sites = true;

    // The units, one file each.
    static const Architecture llama, gemma3, qwen35;
};

// The registry: every unit, in the order messages list them.
inline constexpr const Architecture* kArchitectures[] = {
    &Architecture::llama,
    &Architecture::gemma3,
    &Architecture::qwen35,
};

// The unit that runs general.architecture `arch`; throws EngineError naming
// it and the architectures that run when no unit does.
const Architecture& architecture_for(std::string_view arch);

// What `device` lacks of the capabilities `unit` needs there for c, as a
// sentence naming each missing one ("" when it has them all).
std::string missing_capabilities(const Architecture& unit, const ModelConfig& c,
                                 const backend::Compute& device, OffloadParts parts);

}  // namespace powerinfer::model
