#include "model/architecture.h"

#include <string>
#include <vector>

#include "common/error.h"
#include "common/ggml_types.h"
#include "gguf/gguf.h"
#include "powerinfer/utf8_path.h"

namespace powerinfer::model {
namespace {

// "a, b and c".
std::string listed(const std::vector<std::string>& items) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i)
        s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    return s;
}

std::string shape_string(const std::vector<uint64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// Shape without trailing 1s (ggml pads shapes to 4 dims in places).
std::vector<uint64_t> squeeze(std::vector<uint64_t> shape) {
    while (shape.size() > 1 && shape.back() == 1) shape.pop_back();
    return shape;
}

}  // namespace

const Architecture& architecture_for(std::string_view arch) {
    std::vector<std::string> runs;
    for (const Architecture* unit : kArchitectures)
        for (std::string_view name : unit->names) {
            if (name == arch) return *unit;
            runs.emplace_back(name);
        }
    throw EngineError("unsupported architecture '" + std::string(arch) +
                      "': PowerInfer Desktop runs " + listed(runs) + " models");
}

std::string missing_capabilities(const Architecture& unit, const ModelConfig& c,
                                 const backend::Compute& device, OffloadParts parts) {
    std::vector<std::string> missing;
    for (backend::Capability need : unit.needs(c, parts))
        if (!device.supports(need)) missing.emplace_back(backend::capability_name(need));
    if (missing.empty()) return {};
    return device.name() + " cannot run " + listed(missing) + ", which " + c.arch +
           " layers need there";
}

void bind_attention(TensorBinder& bind, const ModelConfig& c, const std::string& blk,
                    int64_t q_rows, LayerWeights& L) {
    const int64_t E = c.n_embd;
    L.q = bind.matrix(blk + "attn_q.weight", E, q_rows);
    L.k = bind.matrix(blk + "attn_k.weight", E, c.kv_dim());
    L.v = bind.matrix(blk + "attn_v.weight", E, c.v_dim());
    L.o = bind.matrix(blk + "attn_output.weight", c.n_head * c.head_dim_v, E);
}

TensorBinder::TensorBinder(const gguf::GgufFile& file, std::string arch, int64_t& bound_bytes)
    : file_(file),
      arch_(std::move(arch)),
      where_(path_to_utf8(file.path()) + ": "),
      bound_bytes_(bound_bytes) {}

bool TensorBinder::has(const std::string& name) const { return file_.tensor(name) != nullptr; }

const gguf::TensorInfo* TensorBinder::find(const std::string& name, bool required) const {
    const auto* t = file_.tensor(name);
    if (!t && required)
        throw EngineError(where_ + "tensor '" + name + "' is missing: the file is incomplete or " +
                          "not a " + arch_ + " model");
    return t;
}

tensor::WeightView TensorBinder::matrix(const std::string& name, int64_t cols, int64_t rows,
                                        bool required, int64_t n_stack) {
    const auto* t = find(name, required);
    if (!t) return {};
    std::vector<uint64_t> want{static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)};
    if (n_stack > 0) want.push_back(static_cast<uint64_t>(n_stack));
    if (squeeze(t->shape) != squeeze(want))
        throw EngineError(where_ + "tensor '" + name + "' has shape " + shape_string(t->shape) +
                          ", expected " + shape_string(want) +
                          " for this model's configuration: the file is corrupt");
    const auto traits = ggml_traits(t->type);
    const auto row_bytes = ggml_row_bytes(t->type, static_cast<uint64_t>(cols));
    if (!traits.supported || !row_bytes)
        throw EngineError(where_ + "tensor '" + name + "' uses type " + std::string(traits.name) +
                          ", which PowerInfer Desktop cannot compute: use a model quantized "
                          "as F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K or Q6_K");
    bound_bytes_ += static_cast<int64_t>(t->n_bytes);
    tensor::WeightView w;
    w.type = t->type;
    w.data = t->data;
    w.rows = rows;
    w.cols = cols;
    w.row_bytes = static_cast<size_t>(*row_bytes);
    return w;
}

const float* TensorBinder::vector(const std::string& name, int64_t n, bool required) {
    const auto* t = find(name, required);
    if (!t) return nullptr;
    const auto shape = squeeze(t->shape);
    if (t->type != GgmlType::F32 || shape.size() != 1 || shape[0] != static_cast<uint64_t>(n))
        throw EngineError(where_ + "tensor '" + name + "' must be F32 of shape [" +
                          std::to_string(n) + "], found " + std::string(ggml_type_name(t->type)) +
                          " " + shape_string(t->shape) + ": the file is corrupt");
    bound_bytes_ += static_cast<int64_t>(t->n_bytes);
    return reinterpret_cast<const float*>(t->data);
}

}  // namespace powerinfer::model
