// The compute device that holds the hot part of the FFN (and, on a GPU, the
// dense weights, the KV cache and the predictors). The sparse executor talks
// only to this interface: CpuDevice (here) implements it on the host with a
// simulated memory budget and its own worker thread, CudaDevice (kernels/)
// with CUDA streams and cuBLAS.
//
// Execution model: work is queued in order on one device stream. Calls that
// enqueue (upload_neurons, evict_neurons, run_hot) return at once; residency
// and memory accounting are updated immediately on the caller's side, so
// is_resident()/memory() answer without waiting. synchronize() waits for the
// queue. predict() is synchronous (the caller needs its answer). All methods
// are called from one host thread (the model's); they are not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/ggml_types.h"
#include "tensor/matmul.h"

namespace powerinfer::backend {

enum class MemCategory : int {
    DenseWeights = 0,  // attention, norms, embeddings, dense FFN layers placed on the device
    HotNeurons,        // neurons pinned by the placement
    NeuronCache,       // cold neurons staged for a while (cache window, prefetch)
    KvCache,
    Predictors,
    Scratch,
    // The device's own transfer arena and kernel work buffers, allocated
    // when the device is created and when layers and predictors are set (a
    // CudaDevice; 0 on the CPU device).
    Staging,
};
inline constexpr int kMemCategoryCount = 7;
std::string_view mem_category_name(MemCategory c);

// Thrown by allocate() when the request does not fit the budget.
class DeviceOutOfMemory : public EngineError {
public:
    using EngineError::EngineError;
};

struct DeviceMemoryInfo {
    std::string name;       // "CPU device (simulated budget)" or the GPU's name
    bool simulated = true;  // budget enforced by accounting only (host memory)
    int64_t budget_bytes = 0;
    std::array<int64_t, kMemCategoryCount> used{};  // by MemCategory
    int64_t device_free_bytes = -1;                 // what the driver reports; -1 unknown
    int64_t device_allocations = 0;                 // live allocations on a real device
    // The last allocation the real device refused after the budget allowed
    // it (fewer neurons were placed or cached then); "" if none.
    std::string note;

    int64_t used_by(MemCategory c) const { return used[static_cast<size_t>(c)]; }
    int64_t used_total() const;
    int64_t available() const { return budget_bytes - used_total(); }
};

// The activation between gate and up of a gated FFN: SwiGLU (silu(g) * u),
// GeGLU with the tanh GELU (Gemma) or ReGLU (relu(g) * u, ReLU-fied models).
enum class GateActivation { SiLU, GeluTanh, ReLU };
const char* gate_activation_name(GateActivation a);  // "silu", "gelu_tanh", "relu"
// out[i] = act(gate[i]) * up[i], rounded as the dense CPU path does
// (tensor::swiglu / tensor::geglu; up = 1 gives act(gate) exactly).
void gate_activation(GateActivation a, const float* gate, const float* up, float* out, int64_t n);

// How one layer's neurons are stored on the device. Neuron j is: gate row j
// and up row j (n_embd elements each, the model's quant type, byte-exact
// copies) and down column j (n_embd elements from the neuron-major copy of
// ffn_down, in down_type: F32 is lossless, F16 halves the bytes).
struct NeuronFormat {
    int64_t n_embd = 0;
    int64_t n_ff = 0;
    GgmlType gate_type = GgmlType::F32;
    GgmlType up_type = GgmlType::F32;
    GgmlType down_type = GgmlType::F32;
    int64_t gate_row_bytes = 0;
    int64_t up_row_bytes = 0;
    int64_t down_col_bytes = 0;
    GateActivation activation = GateActivation::SiLU;

    int64_t bytes_per_neuron() const { return gate_row_bytes + up_row_bytes + down_col_bytes; }
};
// Throws EngineError if n_embd does not fit the types' block sizes.
NeuronFormat make_neuron_format(int64_t n_embd, int64_t n_ff, GgmlType gate_type, GgmlType up_type,
                                GgmlType down_type, GateActivation activation = GateActivation::SiLU);

// Where neuron data is copied from (host memory that outlives the upload's
// execution, e.g. the mmap'd model): gate/up as in the GGUF (n_ff rows of
// n_embd) and down_t, the neuron-major down copy (n_ff rows of n_embd).
// Every upload to one layer passes the same source: a device may copy a
// layer's resident neurons again from it (when its slot arrays grow and
// there is no room to hold the old and the new arrays at once).
struct NeuronSource {
    tensor::WeightView gate;
    tensor::WeightView up;
    tensor::WeightView down_t;
};

// One layer's activation predictor: p = sigmoid(W2 relu(W1 x + b1) + b2),
// W1: rank rows of n_embd, W2: n_ff rows of rank, weights in F32 or F16.
struct PredictorWeights {
    int64_t n_embd = 0;
    int64_t rank = 0;
    int64_t n_ff = 0;
    GgmlType type = GgmlType::F32;
    const uint8_t* w1 = nullptr;
    const float* b1 = nullptr;
    const uint8_t* w2 = nullptr;
    const float* b2 = nullptr;

    int64_t bytes() const;
};

using BufferHandle = uint64_t;  // 0 is never a valid handle

class Device {
public:
    virtual ~Device() = default;

    virtual std::string name() const = 0;

    // ---- memory -----------------------------------------------------------
    virtual int64_t budget() const = 0;
    // Lowering the budget below what is used is allowed; later allocations
    // and uploads fail until enough is freed/evicted.
    virtual void set_budget(int64_t bytes) = 0;
    virtual DeviceMemoryInfo memory() const = 0;
    // Generic buffers (dense weights, KV cache, scratch). Throws
    // DeviceOutOfMemory if bytes exceed what the budget leaves.
    virtual BufferHandle allocate(MemCategory category, int64_t bytes) = 0;
    virtual void free(BufferHandle buffer) = 0;
    // Enqueued copy of host bytes into a buffer (src must stay valid until
    // synchronize()).
    virtual void write(BufferHandle buffer, int64_t offset, const void* src, int64_t bytes) = 0;
    // The address of a buffer in the device's memory (a device pointer on a
    // GPU, host memory on the CPU device); null for an unknown handle.
    virtual void* buffer_address(BufferHandle buffer) = 0;
    // The op-level backend on this device's memory and stream (what a model
    // graph runs its dense layers on); null when the device has none. Owned
    // by the device.
    virtual class Compute* compute() { return nullptr; }

    // ---- FFN neurons -----------------------------------------------------
    // Declares the layers' neuron formats; drops every resident neuron and
    // predictor.
    virtual void configure_layers(const std::vector<NeuronFormat>& formats) = 0;
    virtual const NeuronFormat& layer_format(int layer) const = 0;
    // Makes neurons ids[0..count) of `layer` resident under `category`
    // (HotNeurons or NeuronCache). Ids already resident only change category
    // (no copy). Stops at the first neuron that does not fit the budget (or
    // the real device's memory: memory().note says so) and returns how many
    // of ids (a prefix) are now resident. A layer whose last neuron is
    // evicted holds no device memory.
    virtual int64_t upload_neurons(int layer, MemCategory category, const int32_t* ids,
                                   int64_t count, const NeuronSource& src) = 0;
    // Evicts resident neurons (non-resident ids are ignored).
    virtual void evict_neurons(int layer, const int32_t* ids, int64_t count) = 0;
    virtual bool is_resident(int layer, int32_t id) const = 0;
    // HotNeurons / NeuronCache for a resident neuron; Scratch if not resident.
    virtual MemCategory residency(int layer, int32_t id) const = 0;
    virtual int64_t resident_count(int layer) const = 0;

    // ---- compute -----------------------------------------------------------
    // Enqueues y[n_embd] = sum_j down_j * act(gate_j . x) * (up_j . x) over the
    // resident neurons ids[0..count), summed in the order given
    // (deterministic). x and ids are copied; y must stay valid until
    // synchronize(), which is when it holds the result.
    virtual void run_hot(int layer, const float* x, const int32_t* ids, int64_t count,
                         float* y) = 0;
    // Waits for all queued work; returns the device's busy time (ms) since
    // the previous synchronize().
    virtual double synchronize() = 0;

    // ---- predictors ----------------------------------------------------------
    // Copies the predictor onto the device (accounted as Predictors);
    // replaces an existing one. Throws DeviceOutOfMemory if it does not fit.
    virtual void set_predictor(int layer, const PredictorWeights& weights) = 0;
    virtual bool has_predictor(int layer) const = 0;
    // Synchronous: active = ids j (ascending) with p_j > threshold for input
    // x[n_embd]. If logits is not null, also writes the n_ff logits.
    virtual void predict(int layer, const float* x, float threshold, std::vector<int32_t>& active,
                         float* logits = nullptr) = 0;
};

struct CpuDeviceOptions {
    int64_t budget_bytes = int64_t{1} << 30;
    int n_threads = 1;          // the device's own workers (separate from the model's pool)
    bool low_priority = false;  // run them below normal priority (a GUI shares the cores)
};

// The host implementation: memory is host RAM accounted against a simulated
// budget; work runs on dedicated worker thread(s) so it overlaps with the
// cold part on the model's pool.
std::unique_ptr<Device> make_cpu_device(const CpuDeviceOptions& options = {});

}  // namespace powerinfer::backend
