// The CUDA backend's ops (backend::Compute) on a CudaDevice's stream and
// accounted buffers: the model graph's dense layers on the GPU (layer
// offload, and attention in sparse placement). Single tokens go through the
// decode kernels; a batch of 2+ rows multiplies through cuBLAS on F16 weight
// tiles (dequantized into the graph's workspace) when cuBLAS is loaded, else
// row by row through the decode kernels; attention loops the batch's rows
// through the decode attention kernel with n_keys = position + 1 (the causal
// mask).
#include "cuda_compute.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.h"
#include "cublas_loader.h"
#include "cuda_ops.h"

namespace powerinfer::cuda {
namespace {

using backend::MemCategory;

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw EngineError(std::string("CUDA error (") + what + "): " + cudaGetErrorString(e));
    }
}

// Longest row the dot kernels can stage in shared memory on the current
// device (227 KiB per block on sm_90, 99 KiB on sm_86/89, 64 KiB on sm_75).
int64_t max_row_floats() {
    int dev = 0, bytes = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess ||
        bytes <= 0) {
        cudaGetLastError();
        bytes = 48 * 1024;
    }
    return bytes / int64_t(sizeof(float));
}

class CudaCompute final : public backend::Compute {
public:
    CudaCompute(backend::Device& device, cudaStream_t stream) : dev_(device), stream_(stream) {}
    ~CudaCompute() override {
        cudaStreamSynchronize(stream_);
        gemm_.reset();
        for (auto& [p, b] : buffers_) dev_.free(b.handle);
    }
    using Compute::matmul;

    std::string name() const override { return dev_.name() + " (CUDA)"; }
    bool host_memory() const override { return false; }
    // No kernels yet for any Capability (backend/compute.h): the model asks
    // before it places layers here; the ops below still throw as a last
    // guard.
    bool supports(backend::Capability) const override { return false; }

    std::string unsupported(const tensor::WeightView& w) const override {
        if (!type_supported(uint32_t(w.type)))
            return "no CUDA kernel for " + std::string(ggml_type_name(w.type)) + " weights";
        if (w.cols % 32 != 0 || w.cols > max_cols_)
            return "rows of " + std::to_string(w.cols) + " elements are not supported on the GPU";
        return {};
    }

    void* allocate(MemCategory category, int64_t bytes) override {
        const backend::BufferHandle h = dev_.allocate(category, bytes);
        void* p = dev_.buffer_address(h);
        buffers_[p] = {h, category, bytes};
        use_[static_cast<size_t>(category)] += bytes;
        return p;
    }
    void release(void* buffer) override {
        auto it = buffers_.find(buffer);
        if (it == buffers_.end()) return;
        if (ws_.blas && static_cast<uint8_t*>(ws_.blas) >= static_cast<uint8_t*>(buffer) &&
            static_cast<uint8_t*>(ws_.blas) < static_cast<uint8_t*>(buffer) + it->second.bytes)
            set_workspace({});  // the cuBLAS workspace goes with it
        dev_.free(it->second.handle);
        use_[static_cast<size_t>(it->second.category)] -= it->second.bytes;
        buffers_.erase(it);
    }
    backend::MemoryUse memory_use() const override { return use_; }

    // Pinned, so that copies from and to it are asynchronous (a pageable
    // source or destination makes cudaMemcpyAsync wait for the stream).
    void* allocate_host(int64_t bytes) override {
        void* p = nullptr;
        if (cudaHostAlloc(&p, size_t(std::max<int64_t>(bytes, 1)), cudaHostAllocDefault) !=
            cudaSuccess) {
            cudaGetLastError();
            throw EngineError("could not pin " + std::to_string((bytes + (1 << 20) - 1) >> 20) +
                              " MiB of host memory for GPU transfers");
        }
        return p;
    }
    void release_host(void* host) override {
        if (host) cudaFreeHost(host);
    }

    void upload(void* dst, const void* src, int64_t bytes) override {
        check(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyHostToDevice, stream_),
              "copy to the GPU");
    }
    void download(void* dst, const void* src, int64_t bytes) override {
        check(cudaMemcpyAsync(dst, src, size_t(bytes), cudaMemcpyDeviceToHost, stream_),
              "copy from the GPU");
    }
    void fill_zero(void* dst, int64_t bytes) override {
        check(cudaMemsetAsync(dst, 0, size_t(bytes), stream_), "cudaMemsetAsync");
    }
    void synchronize() override {
        check(cudaStreamSynchronize(stream_), "synchronize");
        const std::string err = last_error();
        if (!err.empty()) throw EngineError("CUDA kernel failed: " + err);
    }

    void set_workspace(const backend::Workspace& ws) override {
        gemm_.reset();
        ws_ = ws;
        gemm_note_.clear();
        if (!ws_.blas) return;
        std::string why;
        gemm_ = CublasGemm::create(stream_, ws_.blas, size_t(backend::kGemmWorkspaceBytes), why);
        if (!gemm_) gemm_note_ = why + ": prompt processing on the GPU runs token by token";
    }
    std::string note() const override { return gemm_note_; }

    void matmul(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                std::span<float* const> ys) override {
        if (rows >= 2 && gemm_) {
            const int64_t cols = ws[0].cols;
            if (rows * cols > ws_.x16_halves)
                throw EngineError("GPU matmul: the batch exceeds the workspace");
            f32_to_f16(x, ws_.x16, rows * cols, stream_);
            for (size_t k = 0; k < ws.size(); ++k) gemm_rows(ws[k], rows, ys[k]);
            return;
        }
        for (size_t k = 0; k < ws.size(); ++k) {
            const tensor::WeightView& w = ws[k];
            for (int64_t r = 0; r < rows; ++r)
                rows_dot(uint32_t(w.type), w.data, w.row_bytes, w.cols, nullptr, w.rows,
                         x + r * w.cols, ys[k] + r * w.rows, stream_);
        }
    }

    void rms_norm(const float* x, const float* w, float* y, int64_t rows, int64_t n,
                  float eps) override {
        rms_norm_rows(x, w, y, rows, n, eps, stream_);
    }
    void add(float* y, const float* x, int64_t n) override { add_inplace(y, x, n, stream_); }
    // Gemma 3's query scaling: supports() says no, so no kernel exists yet.
    void scale(float*, int64_t, float) override {
        throw EngineError("GPU: scaling activations is not implemented (Gemma 3 runs on the CPU)");
    }
    void add_bias(float* v, const float* bias, int64_t rows, int64_t n) override {
        add_bias_rows(v, bias, rows, n, stream_);
    }
    void rope(float* v, int64_t rows, int64_t n_head, int64_t head_dim, const backend::RopeTable& t,
              int64_t pos0) override {
        const int64_t half = t.n_rot / 2;
        rope_table_rows(v, rows, n_head, head_dim, t.n_rot, t.cos + pos0 * half,
                        t.sin + pos0 * half, t.neox, stream_);
    }
    void store_kv(const float* src, void* cache, int64_t rows, int64_t n_head, int64_t n_ctx,
                  int64_t dim, int64_t pos0) override {
        store_kv_f16_rows(src, cache, rows, n_head, n_ctx, dim, pos0, stream_);
    }
    void attention(const backend::AttentionShape& a, const float* q, const void* k_cache,
                   const void* v_cache, int64_t rows, int64_t pos0, float* out) override {
        if (std::abs(a.scale - 1.0f / std::sqrt(static_cast<float>(a.head_dim))) > 0.0f)
            throw EngineError("GPU attention: only the 1/sqrt(head_dim) scale is implemented");
        if (!ws_.scores) throw EngineError("GPU attention without a workspace");
        if (a.window > 0) throw EngineError("GPU attention: sliding windows are not implemented");
        for (int64_t r = 0; r < rows; ++r)
            attention_decode_f16(q + r * a.n_head * a.head_dim, k_cache, v_cache,
                                 out + r * a.n_head * a.head_dim_v, a.n_head, a.n_head_kv,
                                 a.head_dim, a.head_dim_v, a.n_ctx, pos0 + r + 1, ws_.scores,
                                 stream_);
    }
    FfnBuffers ffn_buffers(int64_t floats) override {
        if (!ws_.ffn_gate || floats > ws_.ffn_floats)
            throw EngineError("GPU FFN without room for its activations");
        return {ws_.ffn_gate, ws_.ffn_up};
    }

    // A batch: the cuBLAS products, then the activation. One token (or a
    // batch without cuBLAS), row by row: gate and up in one fused SwiGLU
    // kernel where they share a format (up is then not written).
    void gated_products(std::span<const backend::GatedFfnWeights> ffns, const float* x,
                        int64_t rows, std::span<float* const> hs,
                        std::span<float* const> us) override {
        for (size_t k = 0; k < ffns.size(); ++k) {
            const backend::GatedFfnWeights& w = ffns[k];
            if (w.activation != backend::GateActivation::SiLU)
                throw EngineError("GPU FFN: only SwiGLU is implemented (GeGLU runs on the CPU)");
            const int64_t n_ff = w.gate.rows, E = w.gate.cols;
            float *g = hs[k], *u = us[k];
            if (rows >= 2 && gemm_) {
                const tensor::WeightView gu[2] = {w.gate, w.up};
                float* const ys[2] = {g, u};
                matmul(gu, x, rows, ys);
                act_mul(g, u, g, rows * n_ff, false, stream_);
                continue;
            }
            const bool fused = w.gate.type == w.up.type && w.gate.row_bytes == w.up.row_bytes;
            for (int64_t r = 0; r < rows; ++r) {
                const float* xr = x + r * E;
                float *gr = g + r * n_ff, *ur = u + r * n_ff;
                if (fused) {
                    swiglu_rows(uint32_t(w.gate.type), w.gate.data, w.up.data, w.gate.row_bytes,
                                E, nullptr, n_ff, xr, gr, false, stream_);
                } else {
                    rows_dot(uint32_t(w.gate.type), w.gate.data, w.gate.row_bytes, E, nullptr,
                             n_ff, xr, gr, stream_);
                    rows_dot(uint32_t(w.up.type), w.up.data, w.up.row_bytes, E, nullptr, n_ff, xr,
                             ur, stream_);
                    act_mul(gr, ur, gr, n_ff, false, stream_);
                }
            }
        }
    }

    bool batched_matmul() const override { return gemm_ != nullptr; }

private:
    // y[t][0..w.rows) = w x16[t] for t < rows: F16 tiles of whole rows
    // dequantized into the workspace, one cublasGemmEx per tile writing
    // columns r0.. of y's rows (row stride w.rows).
    void gemm_rows(const tensor::WeightView& w, int64_t rows, float* y) {
        const int64_t tile = std::min(backend::gemm_tile_rows(w.cols), w.rows);
        if (tile * w.cols > ws_.w16_halves)
            throw EngineError("GPU matmul: a weight tile exceeds the workspace");
        for (int64_t r0 = 0; r0 < w.rows; r0 += tile) {
            const int64_t tr = std::min(tile, w.rows - r0);
            if (!dequantize_rows_f16(uint32_t(w.type), w.data + size_t(r0) * w.row_bytes,
                                     w.row_bytes, w.cols, tr, ws_.w16, stream_))
                throw EngineError(std::string("GPU matmul: no F16 dequantization for ") +
                                  std::string(ggml_type_name(w.type)) + " weights");
            gemm_->rows_gemm(ws_.w16, tr, w.cols, ws_.x16, rows, y + r0, w.rows);
        }
    }

    struct Buffer {
        backend::BufferHandle handle;
        MemCategory category;
        int64_t bytes;
    };
    backend::Device& dev_;
    cudaStream_t stream_;
    const int64_t max_cols_ = max_row_floats();
    std::map<void*, Buffer> buffers_;
    backend::MemoryUse use_{};
    backend::Workspace ws_;
    std::unique_ptr<CublasGemm> gemm_;
    std::string gemm_note_;
};

}  // namespace

std::unique_ptr<backend::Compute> make_cuda_compute(backend::Device& device, void* stream) {
    return std::make_unique<CudaCompute>(device, static_cast<cudaStream_t>(stream));
}

}  // namespace powerinfer::cuda
