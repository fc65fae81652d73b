#include "backend/device.h"
#include "backend/gpu_backend.h"

#include <algorithm>
#include <string>

#include "tensor/ops.h"

namespace powerinfer::backend {

const char* gate_activation_name(GateActivation a) {
    switch (a) {
        case GateActivation::SiLU: return "silu";
        case GateActivation::GeluTanh: return "gelu_tanh";
        case GateActivation::ReLU: return "relu";
    }
    return "?";
}

void gate_activation(GateActivation a, const float* gate, const float* up, float* out, int64_t n) {
    switch (a) {
        case GateActivation::SiLU: return tensor::swiglu(gate, up, out, n);
        case GateActivation::GeluTanh: return tensor::geglu(gate, up, out, n);
        case GateActivation::ReLU:
            for (int64_t i = 0; i < n; ++i) out[i] = std::max(0.0f, gate[i]) * up[i];
            return;
    }
}

std::string_view mem_category_name(MemCategory c) {
    switch (c) {
        case MemCategory::DenseWeights:
            return "dense_weights";
        case MemCategory::HotNeurons:
            return "hot_neurons";
        case MemCategory::NeuronCache:
            return "neuron_cache";
        case MemCategory::KvCache:
            return "kv_cache";
        case MemCategory::Predictors:
            return "predictors";
        case MemCategory::Scratch:
            return "scratch";
        case MemCategory::Staging:
            return "staging";
    }
    return "unknown";
}

int64_t DeviceMemoryInfo::used_total() const {
    int64_t total = 0;
    for (int64_t u : used) total += u;
    return total;
}

NeuronFormat make_neuron_format(int64_t n_embd, int64_t n_ff, GgmlType gate_type, GgmlType up_type,
                                GgmlType down_type, GateActivation activation) {
    auto row = [&](GgmlType t, const char* what) -> int64_t {
        auto bytes = ggml_row_bytes(t, static_cast<uint64_t>(n_embd));
        if (n_embd <= 0 || !bytes) {
            throw EngineError(std::string("FFN ") + what + " rows of " + std::to_string(n_embd) +
                              " elements do not fit type " + std::string(ggml_type_name(t)));
        }
        return static_cast<int64_t>(*bytes);
    };
    // F32 is lossless; F16 and Q8_0 trade a measured error for fewer bytes
    // per neuron, which is what the cold (CPU) part is bound by.
    if (down_type != GgmlType::F32 && down_type != GgmlType::F16 && down_type != GgmlType::Q8_0) {
        throw EngineError("the neuron-major down copy must be F32, F16 or Q8_0");
    }
    NeuronFormat f;
    f.n_embd = n_embd;
    f.n_ff = n_ff;
    f.gate_type = gate_type;
    f.up_type = up_type;
    f.down_type = down_type;
    f.gate_row_bytes = row(gate_type, "gate");
    f.up_row_bytes = row(up_type, "up");
    f.down_col_bytes = row(down_type, "down");
    f.activation = activation;
    return f;
}

int64_t PredictorWeights::bytes() const {
    const int64_t elem = type == GgmlType::F16 ? 2 : 4;
    return (rank * n_embd + n_ff * rank) * elem + (rank + n_ff) * 4;
}

}  // namespace powerinfer::backend

namespace powerinfer::backend {
namespace {
const GpuBackend*& registered_gpu_backend() {
    static const GpuBackend* backend = nullptr;
    return backend;
}
}  // namespace

const GpuBackend* gpu_backend() { return registered_gpu_backend(); }

void register_gpu_backend(const GpuBackend* backend) { registered_gpu_backend() = backend; }

}  // namespace powerinfer::backend
