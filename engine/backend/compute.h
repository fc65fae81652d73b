// The op-level half of a backend: the dense operations a model graph is
// written in (quantized matmul, RMSNorm, RoPE, attention over an F16 KV
// cache, the gated FFN, adds), over memory the backend owns and accounts.
// The neuron-level half (hot FFN neurons, predictors) is backend::Device.
//
// The CPU backend (cpu_compute.cpp) runs every op on the host thread pool and
// reads the mmap'd weights in place; the CUDA backend (kernels/, compiled
// only with nvcc) enqueues the same ops on its stream; a CPU backend with an
// accounted budget stands in for a GPU in tests (same op code as the plain
// CPU plan, so the graph's plans compare bit for bit).
//
// Pointers passed to ops are in the backend's memory (device pointers on a
// GPU); ops are enqueued in order and complete at synchronize(), or at once
// on the CPU. Called from one host thread (the model's); not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/device.h"
#include "tensor/matmul.h"

namespace powerinfer::tensor {
class ThreadPool;
}

namespace powerinfer::backend {

// Bytes held per MemCategory.
using MemoryUse = std::array<int64_t, kMemCategoryCount>;

// One layer's gated FFN weights as stored in the GGUF (row-major, ggml
// order): gate/up n_ff rows of n_embd, down n_embd rows of n_ff.
struct GatedFfnWeights {
    tensor::WeightView gate;
    tensor::WeightView up;
    tensor::WeightView down;
    GateActivation activation = GateActivation::SiLU;
};

// RoPE over the first n_rot dimensions of each head, from tables of
// [n_ctx][n_rot / 2] cos/sin values in the backend's memory.
struct RopeTable {
    const float* cos = nullptr;
    const float* sin = nullptr;
    int64_t n_rot = 0;
    bool neox = false;  // rotate (i, i + n_rot/2) instead of (2i, 2i+1)
};

// Causal grouped-query attention over a cache laid out [head][n_ctx][dim]
// in F16 (keys and values each).
struct AttentionShape {
    int64_t n_head = 0, n_head_kv = 0, head_dim = 0, head_dim_v = 0, n_ctx = 0;
    float scale = 1.0f;  // applied to q.k
    // Sliding window: a query at position p sees keys p - window + 1 .. p
    // (the older ones are masked, as llama.cpp masks them); 0 = all.
    int64_t window = 0;
};

// Temporary memory of a device backend's ops, carved by the graph out of its
// scratch buffer (model/layer_plan lays it out): F16 activations and weight
// tiles for batched matmuls on a BLAS, its workspace, attention scores.
// Batched matmuls dequantize weights in tiles of at most kGemmTileElements
// (16 MiB of F16), whole rows each.
inline constexpr int64_t kGemmTileElements = int64_t{8} << 20;
inline constexpr int64_t kGemmWorkspaceBytes = int64_t{4} << 20;
// Rows of a matrix with `cols` columns per F16 tile (at least one).
inline int64_t gemm_tile_rows(int64_t cols) {
    return cols > 0 && cols < kGemmTileElements ? kGemmTileElements / cols : 1;
}
struct Workspace {
    void* x16 = nullptr;  // F16 activations, x16_halves
    int64_t x16_halves = 0;
    void* w16 = nullptr;  // F16 weight tile, w16_halves
    int64_t w16_halves = 0;
    void* blas = nullptr;       // kGemmWorkspaceBytes
    float* scores = nullptr;    // [n_head][n_ctx]
    float* ffn_gate = nullptr;  // ffn_floats each: [rows][n_ff] (whole layers on the device)
    float* ffn_up = nullptr;
    int64_t ffn_floats = 0;
};

// A hook on the host backend's one-token products: sparse engine v3's input
// sparsity (sparse/input_sparsity.h) computes ys itself and returns true, or
// returns false and the backend multiplies densely. Batches (2+ rows,
// prefill) are observed, and offered to matmul().
class MatvecHook {
public:
    virtual ~MatvecHook() = default;
    virtual bool matvec(std::span<const tensor::WeightView> ws, const float* x,
                        std::span<float* const> ys) = 0;
    // The same for a batch of rows > 1 (prompts): true when the hook ran
    // the products itself.
    virtual bool matmul(std::span<const tensor::WeightView>, const float*, int64_t,
                        std::span<float* const>) {
        return false;
    }
    // Sees every product's input first, batches included (calibration).
    virtual void observe(std::span<const tensor::WeightView>, const float*, int64_t) {}
    // Whether, once observed, the product's outputs go unread (calibration
    // wants the head's inputs, not its logits): the backend then skips it
    // and leaves ys as they were.
    virtual bool skip(std::span<const tensor::WeightView>) { return false; }
};

// Sees a gated FFN between its two halves (Compute::gated_ffn): for FFN k of
// the call, up = up_k x and h = act(gate_k x) * up, [rows][n_ff] each, in
// host memory, before the down product reads h. Calibration records its
// neuron statistics here; only host backends call it.
class FfnTap {
public:
    virtual ~FfnTap() = default;
    virtual void hidden(int64_t k, const float* x, int64_t rows, const float* up,
                        const float* h) = 0;
};

// What a model graph may ask of a backend beyond the ops every backend runs
// (matmul, RMSNorm, RoPE, attention at 1/sqrt(head_dim) over the whole
// context, the SwiGLU FFN, adds). An architecture says which it needs
// (model/architecture.h) and the model asks the backend before it places
// layers there, so a plan is refused up front, naming what is missing,
// rather than by an op failing mid-run.
enum class Capability {
    ActivationScale,  // scale()
    AttentionScale,   // AttentionShape::scale other than 1/sqrt(head_dim)
    SlidingWindow,    // AttentionShape::window > 0
    GeGLU,            // gated_ffn() with GateActivation::GeluTanh
    // Qwen3.5's recurrent layer (short convolution, delta rule): not an op
    // of this interface yet; the graph computes it on host memory.
    GatedDeltaNet,
};
// What a user reads: "sliding-window attention", ...
constexpr std::string_view capability_name(Capability c) {
    switch (c) {
        case Capability::ActivationScale:
            return "activation scaling";
        case Capability::AttentionScale:
            return "an attention scale other than 1/sqrt(head_dim)";
        case Capability::SlidingWindow:
            return "sliding-window attention";
        case Capability::GeGLU:
            return "the GeGLU (tanh GELU) FFN";
        case Capability::GatedDeltaNet:
            return "Gated DeltaNet layers (short convolution, delta rule)";
    }
    return "an unknown capability";
}

class Compute {
public:
    virtual ~Compute() = default;
    virtual std::string name() const = 0;

    // ---- memory -------------------------------------------------------------
    // True when the backend computes on host memory in place: the graph then
    // hands it the mmap'd weights without a copy and its activations to host
    // code (the FFN executors) without a transfer.
    virtual bool host_memory() const = 0;
    // Accounted buffer; throws DeviceOutOfMemory when it does not fit.
    virtual void* allocate(MemCategory category, int64_t bytes) = 0;
    virtual void release(void* buffer) = 0;
    // Bytes held, per category (what allocate() handed out and not released).
    virtual MemoryUse memory_use() const = 0;
    // Enqueued copies; host memory must stay valid until synchronize().
    virtual void upload(void* dst, const void* host_src, int64_t bytes) = 0;
    virtual void download(void* host_dst, const void* src, int64_t bytes) = 0;
    virtual void fill_zero(void* dst, int64_t bytes) = 0;
    // Host memory the backend copies from and to without blocking the
    // caller: pinned (page-locked) on a GPU, where a copy from or to
    // pageable memory makes cudaMemcpyAsync wait; plain host memory on the
    // CPU. Not accounted (it is RAM, not the device's). Throws EngineError
    // when none can be had.
    virtual void* allocate_host(int64_t bytes);
    virtual void release_host(void* host);
    // Hands the backend its temporary memory (ignored on the CPU, which has
    // its own); valid until the next call or release of the buffer it lies in.
    virtual void set_workspace(const Workspace&) {}
    // Waits for everything enqueued. Throws EngineError when the device failed.
    virtual void synchronize() = 0;

    // Why this backend cannot multiply a matrix ("" if it can): a weight
    // type without a kernel, a row length its kernels do not take.
    virtual std::string unsupported(const tensor::WeightView&) const { return {}; }
    // What the user should know about this backend's paths ("" if nothing):
    // e.g. that batches run row by row without cuBLAS.
    virtual std::string note() const { return {}; }
    // True when batches of 2+ rows multiply as one (a BLAS on a device; the
    // CPU always); false when they go row by row.
    virtual bool batched_matmul() const { return true; }
    // Routes one-token products through `hook` (null: none). Only host
    // backends take one; the others ignore it.
    virtual void set_matvec_hook(MatvecHook*) {}
    // Whether the ops run what `c` asks of them (an op asked for what its
    // backend does not support throws EngineError).
    virtual bool supports(Capability c) const = 0;

    // ---- ops ----------------------------------------------------------------
    // ys[k][r][0..ws[k].rows) = ws[k] x[r] for r < rows: several matrices
    // that take the same input (q/k/v) at once.
    virtual void matmul(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                        std::span<float* const> ys) = 0;
    void matmul(const tensor::WeightView& w, const float* x, int64_t rows, float* y) {
        float* const ys[1] = {y};
        matmul(std::span<const tensor::WeightView>(&w, 1), x, rows, ys);
    }
    // y[r] = rms_norm(x[r]) * w for `rows` rows of n (x and y may alias).
    virtual void rms_norm(const float* x, const float* w, float* y, int64_t rows, int64_t n,
                          float eps) = 0;
    virtual void add(float* y, const float* x, int64_t n) = 0;                        // y += x
    virtual void scale(float* v, int64_t n, float s) = 0;                             // v *= s
    virtual void add_bias(float* v, const float* bias, int64_t rows, int64_t n) = 0;  // v[r] += b
    // RoPE of v[rows][n_head][head_dim], row r at position pos0 + r.
    virtual void rope(float* v, int64_t rows, int64_t n_head, int64_t head_dim,
                      const RopeTable& table, int64_t pos0) = 0;
    // cache[h][pos0 + r][0..dim) = F16(src[r][h][0..dim)).
    virtual void store_kv(const float* src, void* cache, int64_t rows, int64_t n_head,
                          int64_t n_ctx, int64_t dim, int64_t pos0) = 0;
    // out[r][h][0..head_dim_v) for the queries q[r][h][0..head_dim) of the
    // tokens at pos0 + r over keys/values 0..pos0 + r (the cache already
    // holds the rows' own).
    virtual void attention(const AttentionShape& shape, const float* q, const void* k_cache,
                           const void* v_cache, int64_t rows, int64_t pos0, float* out) = 0;
    // The rows of a step over several sequences: row r is one query of its
    // own sequence at positions[r], over that sequence's caches k_caches[r]
    // and v_caches[r] (already holding its own key and value). The same
    // bits as attention() one row at a time, which is what it does unless
    // the backend runs them together.
    virtual void attention_rows(const AttentionShape& shape, const float* q,
                                const void* const* k_caches, const void* const* v_caches,
                                const int64_t* positions, int64_t rows, float* out) {
        for (int64_t r = 0; r < rows; ++r)
            attention(shape, q + r * shape.n_head * shape.head_dim, k_caches[r], v_caches[r], 1,
                      positions[r], out + r * shape.n_head * shape.head_dim_v);
    }

    // ---- the gated FFN, written once over the three ops below ----------------
    // outs[k][r] = down_k(act_k(gate_k x[r]) * up_k x[r]) for FFNs that take
    // the same input: one dense layer, or the experts a token was routed to
    // (model/moe_ffn.h). A variant is data (which weights, how many) or a tap
    // (FfnTap); the neuron-subset form the sparse executors use is
    // backend/neuron_ffn.h. A tap needs a host backend (EngineError else).
    void gated_ffn(std::span<const GatedFfnWeights> ffns, const float* x, int64_t rows,
                   std::span<float* const> outs, FfnTap* tap = nullptr);
    void gated_ffn(const GatedFfnWeights& w, const float* x, int64_t rows, float* out,
                   FfnTap* tap = nullptr) {
        float* const outs[1] = {out};
        gated_ffn(std::span<const GatedFfnWeights>(&w, 1), x, rows, outs, tap);
    }

    // The FFN's activations: h and up, `floats` each, in the backend's memory
    // and valid until the next call. Throws EngineError when there is no room.
    struct FfnBuffers {
        float* h = nullptr;
        float* up = nullptr;
    };
    virtual FfnBuffers ffn_buffers(int64_t floats) = 0;
    // hs[k][r] = act_k(gate_k x[r]) * (up_k x[r]); us[k][r] = up_k x[r] where
    // the backend computes it apart (always on the host; a GPU's fused
    // one-token kernel does not write it).
    virtual void gated_products(std::span<const GatedFfnWeights> ffns, const float* x,
                                int64_t rows, std::span<float* const> hs,
                                std::span<float* const> us) = 0;
    // ys[k][r] = ws[k] xs[k][r]: several matrices, each over its own input
    // (the experts' down products). One matmul() per matrix unless the
    // backend runs them together.
    virtual void matmul_each(std::span<const tensor::WeightView> ws,
                             std::span<const float* const> xs, int64_t rows,
                             std::span<float* const> ys) {
        for (size_t k = 0; k < ws.size(); ++k) matmul(ws[k], xs[k], rows, ys[k]);
    }

private:
    // gated_ffn()'s per-call lists (kept: no allocation per token).
    std::vector<float*> ffn_hs_, ffn_us_;
    std::vector<const float*> ffn_xs_;
    std::vector<tensor::WeightView> ffn_downs_;
};

// The host backend over the model's thread pool (which must outlive it): no
// copies of weights, memory accounted but unbudgeted.
std::unique_ptr<Compute> make_cpu_compute(tensor::ThreadPool& pool);

// The same ops on a budget: buffers are host memory charged to `device`
// (a CPU device with a simulated budget, which must outlive it), and the
// graph copies the weights of the layers it places here as it would onto a
// GPU. The tests' stand-in for a GPU backend; `lacking` makes it answer
// supports() as a GPU without those capabilities would (its ops still run
// them).
std::unique_ptr<Compute> make_budgeted_cpu_compute(tensor::ThreadPool& pool, Device& device,
                                                   std::vector<Capability> lacking = {});

}  // namespace powerinfer::backend
