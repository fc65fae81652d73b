// CudaLayerExecutor: each offloaded layer is one accounted device buffer
// holding byte-exact copies of its GGUF tensors (laid out by
// model::layer_offload_costs), plus one F16 KV-cache buffer in the CPU
// model's layout; one scratch buffer serves every layer. Everything runs on
// the CudaDevice's stream; the residual stream crosses the bus once per batch
// of up to token_batch tokens.
//
// A batch of 2+ tokens (prefill) goes layer by layer: each projection
// dequantizes its weight rows to F16 tiles in the scratch and multiplies all
// tokens at once with cublasGemmEx (F16 in, F32 accumulate and out);
// attention loops the batch's tokens through the decode attention kernel with
// n_keys = position + 1 (the causal mask). Without cuBLAS, and for single
// tokens, tokens go through the decode path one at a time, all layers per
// token (causal attention makes that exact too).
//
// Attention only (sparse mode): the layer buffers hold the attention half;
// batches always go layer by layer (GEMMs, or the decode kernels token by
// token), and after each layer's attention the normalised FFN input travels
// to pinned host memory, the model's FfnExecutor computes the FFN (the
// HybridFfn: hot neurons on this same CudaDevice and stream, cold neurons on
// the CPU) and its output comes back to be added to the residual stream.
#include "cuda_layers.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "cublas_loader.h"
#include "cuda_device.h"
#include "cuda_ops.h"

namespace powerinfer::cuda {
namespace {

using backend::BufferHandle;
using backend::DeviceOutOfMemory;
using backend::MemCategory;

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

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw EngineError(std::string("CUDA error in layer offload (") + what +
                          "): " + cudaGetErrorString(e));
    }
}

void check_launch(const char* what) {
    const std::string err = last_error();
    if (!err.empty())
        throw EngineError(std::string("CUDA kernel launch failed in layer offload (") + what +
                          "): " + err);
}

struct GpuLayer {
    BufferHandle weights = 0, kv = 0;
    uint8_t* w = nullptr;  // device base of the weights buffer
    uint8_t* kv_base = nullptr;
};

class CudaLayerExecutor final : public model::LayerExecutor {
public:
    CudaLayerExecutor(model::Model& m, backend::Device& dev, model::OffloadParts parts)
        : m_(m), dev_(dev), costs_(model::layer_offload_costs(m, 128, parts)) {
        stream_ = static_cast<cudaStream_t>(device_stream(dev_));
        if (!stream_) throw EngineError("layer offload needs a CUDA device");
    }

    ~CudaLayerExecutor() override { release(); }

    int n_layers() const override { return static_cast<int>(layers_.size()); }
    bool runs_ffn() const override { return costs_.parts == model::OffloadParts::WholeLayers; }
    bool runs_output() const override { return output_ != 0; }

    // Allocates and uploads what the plan asks for, as far as it fits.
    void upload(const model::LayerPlan& plan, std::string& note, const CudaLayerOptions& options) {
        const auto& c = m_.config();
        const int want = std::min<int>(plan.n_gpu_layers, static_cast<int>(c.n_layer));
        if (want <= 0) return;
        try {
            scratch_ = dev_.allocate(MemCategory::Scratch, costs_.scratch.bytes);
        } catch (const DeviceOutOfMemory& e) {
            note = std::string("no layer could be placed on the GPU (") + e.what() +
                   "): running on CPU";
            return;
        }
        scratch_ptr_ = static_cast<uint8_t*>(buffer_pointer(dev_, scratch_));
        const auto& s = costs_.scratch;
        const int64_t rope_bytes = static_cast<int64_t>(m_.rope_cos().size() * sizeof(float));
        dev_.write(scratch_, s.rope_cos, m_.rope_cos().data(), rope_bytes);
        dev_.write(scratch_, s.rope_sin, m_.rope_sin().data(), rope_bytes);
        start_prefill_gemm(options);
        if (!runs_ffn()) {
            // Host side of the FFN round trip: pinned, so the copies are
            // true async DMA (host memory, not part of the VRAM accounting).
            const size_t bytes = size_t(s.token_batch) * size_t(c.n_embd) * sizeof(float);
            check(cudaMallocHost(reinterpret_cast<void**>(&host_in_), bytes),
                  "cudaMallocHost (FFN input)");
            check(cudaMallocHost(reinterpret_cast<void**>(&host_out_), bytes),
                  "cudaMallocHost (FFN output)");
        }

        for (int il = 0; il < want; ++il) {
            const model::LayerLayout& L = costs_.layers[static_cast<size_t>(il)];
            GpuLayer g;
            try {
                g.weights = dev_.allocate(MemCategory::DenseWeights, L.bytes);
                g.kv = dev_.allocate(MemCategory::KvCache, costs_.kv_bytes_per_layer);
            } catch (const DeviceOutOfMemory& e) {
                if (g.weights) dev_.free(g.weights);
                note = "only " + std::to_string(il) + " of " + std::to_string(want) +
                       " layers fit on the GPU (" + e.what() + ")";
                break;
            }
            g.w = static_cast<uint8_t*>(buffer_pointer(dev_, g.weights));
            g.kv_base = static_cast<uint8_t*>(buffer_pointer(dev_, g.kv));
            const model::LayerWeights& w = m_.layer(il);
            auto put_vec = [&](int64_t off, const float* v, int64_t n) {
                if (off >= 0 && v)
                    dev_.write(g.weights, off, v, n * static_cast<int64_t>(sizeof(float)));
            };
            auto put_mat = [&](int64_t off, const tensor::WeightView& v) {
                if (off >= 0)  // gate/up/down are not on the device in attention-only mode
                    dev_.write(g.weights, off, v.data, static_cast<int64_t>(v.row_bytes) * v.rows);
            };
            put_vec(L.attn_norm, w.attn_norm, c.n_embd);
            put_mat(L.q, w.q);
            put_mat(L.k, w.k);
            put_mat(L.v, w.v);
            put_mat(L.o, w.o);
            put_vec(L.q_bias, w.q_bias, c.q_dim());
            put_vec(L.k_bias, w.k_bias, c.kv_dim());
            put_vec(L.v_bias, w.v_bias, c.v_dim());
            put_vec(L.q_norm, w.q_norm, c.head_dim);
            put_vec(L.k_norm, w.k_norm, c.head_dim);
            put_vec(L.ffn_norm, w.ffn_norm, c.n_embd);
            put_mat(L.gate, w.ffn.gate);
            put_mat(L.up, w.ffn.up);
            put_mat(L.down, w.ffn.down);
            // Positions are written before they are read; zeros keep a stray
            // read finite.
            check(cudaMemsetAsync(g.kv_base, 0, size_t(costs_.kv_bytes_per_layer), stream_),
                  "cudaMemsetAsync");
            layers_.push_back(g);
        }
        if (plan.output_on_gpu && n_layers() == c.n_layer) {
            try {
                output_ = dev_.allocate(MemCategory::DenseWeights, costs_.output.bytes);
                output_ptr_ = static_cast<uint8_t*>(buffer_pointer(dev_, output_));
                const auto& head = m_.output();
                dev_.write(output_, costs_.output.norm, m_.output_norm(),
                           c.n_embd * static_cast<int64_t>(sizeof(float)));
                dev_.write(output_, costs_.output.head, head.data,
                           static_cast<int64_t>(head.row_bytes) * head.rows);
            } catch (const DeviceOutOfMemory& e) {
                output_ = 0;
                output_ptr_ = nullptr;
                note = std::string("the output head stays on the CPU (") + e.what() + ")";
            }
        }
        dev_.synchronize();
        check_launch("upload");
        if (layers_.empty()) release();
    }

    void run_layers(float* x, int64_t n, int64_t n_past, model::FfnExecutor& ffn) override {
        if (!runs_ffn()) {
            run_attention_layers(x, n, n_past, ffn);
            return;
        }
        const auto& c = m_.config();
        const int64_t E = c.n_embd;
        const int64_t batch = costs_.scratch.token_batch;
        float* dx = f32(costs_.scratch.x);
        for (int64_t b = 0; b < n; b += batch) {
            const int64_t nb = std::min(batch, n - b);
            const size_t bytes = size_t(nb * E) * sizeof(float);
            check(cudaMemcpyAsync(dx, x + b * E, bytes, cudaMemcpyHostToDevice, stream_),
                  "copy of the residual stream to the GPU");
            if (nb >= 2 && gemm_) {
                for (int il = 0; il < n_layers(); ++il) layer_batch(il, dx, nb, n_past + b);
                gemm_tokens_ += nb;
            } else {
                for (int64_t i = 0; i < nb; ++i)
                    for (int il = 0; il < n_layers(); ++il) layer(il, dx + i * E, n_past + b + i);
                token_by_token_ += nb;
            }
            check_launch("layers");
            check(cudaMemcpyAsync(x + b * E, dx, bytes, cudaMemcpyDeviceToHost, stream_),
                  "copy of the residual stream from the GPU");
            check(cudaStreamSynchronize(stream_), "layers");
        }
    }

    void run_output(const float* x, int64_t n, float* logits) override {
        if (!output_) throw EngineError("layer offload: the output head is not on the GPU");
        const auto& c = m_.config();
        const int64_t E = c.n_embd, V = c.n_vocab;
        const auto& head = m_.output();
        float* dx = f32(costs_.scratch.x);
        float* xn = f32(costs_.scratch.xn);
        float* dl = reinterpret_cast<float*>(output_ptr_ + costs_.output.logits);
        const float* norm = reinterpret_cast<const float*>(output_ptr_ + costs_.output.norm);
        for (int64_t r = 0; r < n; ++r) {
            check(cudaMemcpyAsync(dx, x + r * E, size_t(E) * sizeof(float), cudaMemcpyHostToDevice,
                                  stream_),
                  "copy of the final hidden state");
            rms_norm_rows(dx, norm, xn, 1, E, c.rms_eps, stream_);
            rows_dot(uint32_t(head.type), output_ptr_ + costs_.output.head, head.row_bytes, E,
                     nullptr, V, xn, dl, stream_);
            check_launch("output head");
            check(cudaMemcpyAsync(logits + r * V, dl, size_t(V) * sizeof(float),
                                  cudaMemcpyDeviceToHost, stream_),
                  "copy of the logits");
            check(cudaStreamSynchronize(stream_), "output head");
        }
    }

    // Attention only: n tokens in balanced batches of at most token_batch
    // rows (so that no batch of a multi-token prompt has a single row, which
    // the HybridFfn would take for a decoded token), each batch layer by
    // layer with the FFN on the host side.
    void run_attention_layers(float* x, int64_t n, int64_t n_past, model::FfnExecutor& ffn) {
        const auto& c = m_.config();
        const int64_t E = c.n_embd;
        const auto& s = costs_.scratch;
        const int64_t n_batches = (n + s.token_batch - 1) / s.token_batch;
        float* dx = f32(s.x);
        float* xn = f32(s.xn);
        float* tmp = f32(s.tmp);
        int64_t b = 0;
        for (int64_t k = 0; k < n_batches; ++k) {
            const int64_t nb = (n - b) / (n_batches - k);
            const int64_t pos0 = n_past + b;
            const size_t bytes = size_t(nb) * size_t(E) * sizeof(float);
            const bool gemm = nb >= 2 && gemm_ != nullptr;
            check(cudaMemcpyAsync(dx, x + b * E, bytes, cudaMemcpyHostToDevice, stream_),
                  "copy of the residual stream to the GPU");
            for (int il = 0; il < n_layers(); ++il) {
                if (gemm) {
                    attention_batch(il, dx, nb, pos0);
                } else {
                    for (int64_t t = 0; t < nb; ++t) attention_token(il, dx + t * E, pos0 + t);
                }
                const model::LayerLayout& L = costs_.layers[static_cast<size_t>(il)];
                const auto* norm =
                    reinterpret_cast<const float*>(layers_[static_cast<size_t>(il)].w + L.ffn_norm);
                rms_norm_rows(dx, norm, xn, nb, E, c.rms_eps, stream_);
                check_launch("attention");
                check(cudaMemcpyAsync(host_in_, xn, bytes, cudaMemcpyDeviceToHost, stream_),
                      "copy of the FFN input to the host");
                check(cudaStreamSynchronize(stream_), "attention");
                // The FFN executor may enqueue its hot part on this stream
                // (same CudaDevice); it returns with the output on the host.
                ffn.run(il, host_in_, nb, host_out_);
                check(cudaMemcpyAsync(tmp, host_out_, bytes, cudaMemcpyHostToDevice, stream_),
                      "copy of the FFN output to the GPU");
                add_inplace(dx, tmp, nb * E, stream_);
            }
            (gemm ? gemm_tokens_ : token_by_token_) += nb;
            check_launch("FFN residual");
            check(cudaMemcpyAsync(x + b * E, dx, bytes, cudaMemcpyDeviceToHost, stream_),
                  "copy of the residual stream from the GPU");
            check(cudaStreamSynchronize(stream_), "attention layers");
            b += nb;
        }
    }

    // Empty when prefill uses cuBLAS, else why not.
    const std::string& prefill_note() const { return prefill_note_; }

    LayerOffloadStats stats() const { return {gemm_ != nullptr, gemm_tokens_, token_by_token_}; }

private:
    float* f32(int64_t offset) const { return reinterpret_cast<float*>(scratch_ptr_ + offset); }

    void start_prefill_gemm(const CudaLayerOptions& options) {
        const char* consequence = ": prompt processing on the GPU runs token by token";
        if (!options.prefill_gemm) {
            prefill_note_ = std::string("prefill GEMMs off") + consequence;
            return;
        }
        std::string why;
        gemm_ = CublasGemm::create(stream_, scratch_ptr_ + costs_.scratch.gemm_workspace,
                                   size_t(model::kGemmWorkspaceBytes), why);
        if (!gemm_) prefill_note_ = why + consequence;
    }

    // y[t][0..rows) = W x16[t] for t < nb, W a layer matrix at `off` in the
    // weights buffer and x16 [nb][W.cols] F16 activations: F16 tiles of
    // whole rows (dequantized into the scratch), one cublasGemmEx per tile
    // writing columns r0.. of y's rows (row stride W.rows).
    void gemm_rows(const GpuLayer& g, const tensor::WeightView& m, int64_t off, const void* x16,
                   int64_t nb, float* y) {
        void* w16 = scratch_ptr_ + costs_.scratch.w16;
        const int64_t tile = model::gemm_tile_rows(m.cols);
        for (int64_t r0 = 0; r0 < m.rows; r0 += tile) {
            const int64_t tr = std::min(tile, m.rows - r0);
            if (!dequantize_rows_f16(uint32_t(m.type), g.w + off + size_t(r0) * m.row_bytes,
                                     m.row_bytes, m.cols, tr, w16, stream_))
                throw EngineError(std::string("layer offload: no F16 dequantization for ") +
                                  std::string(ggml_type_name(m.type)) + " weights");
            gemm_->rows_gemm(w16, tr, m.cols, x16, nb, y + r0, m.rows);
        }
    }

    // nb >= 2 tokens at positions pos0.. through layer il; x [nb][n_embd] is
    // their residual stream on the device. Mirrors Model::forward_chunk.
    void layer_batch(int il, float* x, int64_t nb, int64_t pos0) {
        attention_batch(il, x, nb, pos0);
        ffn_batch(il, x, nb);
    }

    // The attention half of layer_batch: x += attention(norm(x)).
    void attention_batch(int il, float* x, int64_t nb, int64_t pos0) {
        const auto& c = m_.config();
        const model::LayerLayout& L = costs_.layers[static_cast<size_t>(il)];
        const model::LayerWeights& w = m_.layer(il);
        const GpuLayer& g = layers_[static_cast<size_t>(il)];
        const auto& s = costs_.scratch;
        const int64_t E = c.n_embd, qd = c.q_dim(), kd = c.kv_dim(), vd = c.v_dim();
        const int64_t hd = c.head_dim, hdv = c.head_dim_v, half = c.n_rot / 2;
        const int64_t attn_dim = c.n_head * hdv;
        const float eps = c.rms_eps;
        auto vec = [&](int64_t off) { return reinterpret_cast<const float*>(g.w + off); };
        float *xn = f32(s.xn), *q = f32(s.q), *k = f32(s.k), *v = f32(s.v);
        float *attn = f32(s.attn), *tmp = f32(s.tmp);
        void* x16 = scratch_ptr_ + s.x16;

        rms_norm_rows(x, vec(L.attn_norm), xn, nb, E, eps, stream_);
        f32_to_f16(xn, x16, nb * E, stream_);
        gemm_rows(g, w.q, L.q, x16, nb, q);
        gemm_rows(g, w.k, L.k, x16, nb, k);
        gemm_rows(g, w.v, L.v, x16, nb, v);
        if (L.q_bias >= 0) add_bias_rows(q, vec(L.q_bias), nb, qd, stream_);
        if (L.k_bias >= 0) add_bias_rows(k, vec(L.k_bias), nb, kd, stream_);
        if (L.v_bias >= 0) add_bias_rows(v, vec(L.v_bias), nb, vd, stream_);
        if (L.q_norm >= 0) rms_norm_rows(q, vec(L.q_norm), q, nb * c.n_head, hd, eps, stream_);
        if (L.k_norm >= 0) rms_norm_rows(k, vec(L.k_norm), k, nb * c.n_head_kv, hd, eps, stream_);
        const bool neox = c.rope_style == model::RopeStyle::Neox;
        const float* cos_rows = f32(s.rope_cos) + pos0 * half;
        const float* sin_rows = f32(s.rope_sin) + pos0 * half;
        rope_table_rows(q, nb, c.n_head, hd, c.n_rot, cos_rows, sin_rows, neox, stream_);
        rope_table_rows(k, nb, c.n_head_kv, hd, c.n_rot, cos_rows, sin_rows, neox, stream_);
        uint8_t* k_cache = g.kv_base;
        uint8_t* v_cache = g.kv_base + costs_.kv_values_offset;
        store_kv_f16_rows(k, k_cache, nb, c.n_head_kv, m_.n_ctx(), hd, pos0, stream_);
        store_kv_f16_rows(v, v_cache, nb, c.n_head_kv, m_.n_ctx(), hdv, pos0, stream_);
        // Token t sees keys 0..pos0+t: the causal mask.
        for (int64_t t = 0; t < nb; ++t)
            attention_decode_f16(q + t * qd, k_cache, v_cache, attn + t * attn_dim, c.n_head,
                                 c.n_head_kv, hd, hdv, m_.n_ctx(), pos0 + t + 1, f32(s.scores),
                                 stream_);
        f32_to_f16(attn, x16, nb * attn_dim, stream_);
        gemm_rows(g, w.o, L.o, x16, nb, tmp);
        add_inplace(x, tmp, nb * E, stream_);
    }

    // The dense FFN half of layer_batch (whole layers only).
    void ffn_batch(int il, float* x, int64_t nb) {
        const auto& c = m_.config();
        const model::LayerLayout& L = costs_.layers[static_cast<size_t>(il)];
        const model::LayerWeights& w = m_.layer(il);
        const GpuLayer& g = layers_[static_cast<size_t>(il)];
        const auto& s = costs_.scratch;
        const int64_t E = c.n_embd;
        auto vec = [&](int64_t off) { return reinterpret_cast<const float*>(g.w + off); };
        float *xn = f32(s.xn), *tmp = f32(s.tmp), *gate = f32(s.gate), *up = f32(s.up);
        void* x16 = scratch_ptr_ + s.x16;
        rms_norm_rows(x, vec(L.ffn_norm), xn, nb, E, c.rms_eps, stream_);
        f32_to_f16(xn, x16, nb * E, stream_);
        gemm_rows(g, w.ffn.gate, L.gate, x16, nb, gate);
        gemm_rows(g, w.ffn.up, L.up, x16, nb, up);
        act_mul(gate, up, gate, nb * c.n_ff, false, stream_);
        f32_to_f16(gate, x16, nb * c.n_ff, stream_);
        gemm_rows(g, w.ffn.down, L.down, x16, nb, tmp);
        add_inplace(x, tmp, nb * E, stream_);
    }

    // One token through layer il at position pos; x is its residual stream
    // on the device. Mirrors Model::forward_chunk for n == 1.
    void layer(int il, float* x, int64_t pos) {
        attention_token(il, x, pos);
        ffn_token(il, x);
    }

    // The attention half of layer(): x += attention(norm(x)) for one token.
    void attention_token(int il, float* x, int64_t pos) {
        const auto& c = m_.config();
        const model::LayerLayout& L = costs_.layers[static_cast<size_t>(il)];
        const model::LayerWeights& w = m_.layer(il);
        const GpuLayer& g = layers_[static_cast<size_t>(il)];
        const auto& s = costs_.scratch;
        const int64_t E = c.n_embd, qd = c.q_dim(), kd = c.kv_dim(), vd = c.v_dim();
        const int64_t hd = c.head_dim, hdv = c.head_dim_v, half = c.n_rot / 2;
        const float eps = c.rms_eps;
        auto vec = [&](int64_t off) { return reinterpret_cast<const float*>(g.w + off); };
        auto dot = [&](const tensor::WeightView& m, int64_t off, const float* in, float* out) {
            rows_dot(uint32_t(m.type), g.w + off, m.row_bytes, m.cols, nullptr, m.rows, in, out,
                     stream_);
        };
        float *xn = f32(s.xn), *q = f32(s.q), *k = f32(s.k), *v = f32(s.v);
        float *attn = f32(s.attn), *tmp = f32(s.tmp);

        rms_norm_rows(x, vec(L.attn_norm), xn, 1, E, eps, stream_);
        dot(w.q, L.q, xn, q);
        dot(w.k, L.k, xn, k);
        dot(w.v, L.v, xn, v);
        if (L.q_bias >= 0) bias_act(q, vec(L.q_bias), qd, 0, stream_);
        if (L.k_bias >= 0) bias_act(k, vec(L.k_bias), kd, 0, stream_);
        if (L.v_bias >= 0) bias_act(v, vec(L.v_bias), vd, 0, stream_);
        if (L.q_norm >= 0) rms_norm_rows(q, vec(L.q_norm), q, c.n_head, hd, eps, stream_);
        if (L.k_norm >= 0) rms_norm_rows(k, vec(L.k_norm), k, c.n_head_kv, hd, eps, stream_);
        const bool neox = c.rope_style == model::RopeStyle::Neox;
        const float* cos_row = f32(s.rope_cos) + pos * half;
        const float* sin_row = f32(s.rope_sin) + pos * half;
        rope_table(q, c.n_head, hd, c.n_rot, cos_row, sin_row, neox, stream_);
        rope_table(k, c.n_head_kv, hd, c.n_rot, cos_row, sin_row, neox, stream_);
        uint8_t* k_cache = g.kv_base;
        uint8_t* v_cache = g.kv_base + costs_.kv_values_offset;
        store_kv_f16(k, k_cache, c.n_head_kv, m_.n_ctx(), hd, pos, stream_);
        store_kv_f16(v, v_cache, c.n_head_kv, m_.n_ctx(), hdv, pos, stream_);
        attention_decode_f16(q, k_cache, v_cache, attn, c.n_head, c.n_head_kv, hd, hdv, m_.n_ctx(),
                             pos + 1, f32(s.scores), stream_);
        dot(w.o, L.o, attn, tmp);
        add_inplace(x, tmp, E, stream_);
    }

    // The dense FFN half of layer() (whole layers only).
    void ffn_token(int il, float* x) {
        const auto& c = m_.config();
        const model::LayerLayout& L = costs_.layers[static_cast<size_t>(il)];
        const model::LayerWeights& w = m_.layer(il);
        const GpuLayer& g = layers_[static_cast<size_t>(il)];
        const auto& s = costs_.scratch;
        const int64_t E = c.n_embd;
        auto vec = [&](int64_t off) { return reinterpret_cast<const float*>(g.w + off); };
        auto dot = [&](const tensor::WeightView& m, int64_t off, const float* in, float* out) {
            rows_dot(uint32_t(m.type), g.w + off, m.row_bytes, m.cols, nullptr, m.rows, in, out,
                     stream_);
        };
        float *xn = f32(s.xn), *tmp = f32(s.tmp), *gate = f32(s.gate), *up = f32(s.up);
        rms_norm_rows(x, vec(L.ffn_norm), xn, 1, E, c.rms_eps, stream_);
        const auto& fg = w.ffn.gate;
        const auto& fu = w.ffn.up;
        if (fg.type == fu.type && fg.row_bytes == fu.row_bytes) {
            swiglu_rows(uint32_t(fg.type), g.w + L.gate, g.w + L.up, fg.row_bytes, E, nullptr,
                        c.n_ff, xn, gate, false, stream_);
        } else {
            dot(fg, L.gate, xn, gate);
            dot(fu, L.up, xn, up);
            act_mul(gate, up, gate, c.n_ff, false, stream_);
        }
        dot(w.ffn.down, L.down, gate, tmp);
        add_inplace(x, tmp, E, stream_);
    }

    void release() {
        if (stream_) cudaStreamSynchronize(stream_);  // no copy may still target host_in_/out_
        cudaFreeHost(host_in_);
        cudaFreeHost(host_out_);
        host_in_ = host_out_ = nullptr;
        gemm_.reset();  // before the scratch that holds its workspace
        for (const auto& g : layers_) {
            dev_.free(g.weights);
            dev_.free(g.kv);
        }
        layers_.clear();
        if (output_) dev_.free(output_);
        if (scratch_) dev_.free(scratch_);
        output_ = scratch_ = 0;
        output_ptr_ = scratch_ptr_ = nullptr;
    }

    model::Model& m_;
    backend::Device& dev_;
    model::LayerOffloadCosts costs_;
    cudaStream_t stream_ = nullptr;
    std::vector<GpuLayer> layers_;
    BufferHandle scratch_ = 0, output_ = 0;
    uint8_t* scratch_ptr_ = nullptr;
    uint8_t* output_ptr_ = nullptr;
    std::unique_ptr<CublasGemm> gemm_;
    float* host_in_ = nullptr;   // pinned [token_batch][n_embd]: FFN input (attention only)
    float* host_out_ = nullptr;  // pinned: FFN output
    std::string prefill_note_;
    int64_t gemm_tokens_ = 0, token_by_token_ = 0;
};

}  // namespace

std::string layer_offload_unsupported(const model::Model& model, model::OffloadParts parts) {
    const bool ffn = parts == model::OffloadParts::WholeLayers;
    const char* what = ffn ? "layer offload" : "attention on the GPU";
    const int64_t max_cols = max_row_floats();
    std::vector<const tensor::WeightView*> mats{&model.output()};
    for (int il = 0; il < model.config().n_layer; ++il) {
        const auto& w = model.layer(il);
        for (const auto* m : {&w.q, &w.k, &w.v, &w.o}) mats.push_back(m);
        if (ffn)
            for (const auto* m : {&w.ffn.gate, &w.ffn.up, &w.ffn.down}) mats.push_back(m);
    }
    for (const auto* m : mats) {
        if (!type_supported(uint32_t(m->type)))
            return std::string(what) + ": no CUDA kernel for " +
                   std::string(ggml_type_name(m->type)) + " weights: running on CPU";
        if (m->cols % 32 != 0 || m->cols > max_cols)
            return std::string(what) + ": rows of " + std::to_string(m->cols) +
                   " elements are not supported on the GPU: running on CPU";
    }
    return {};
}

std::unique_ptr<model::LayerExecutor> make_cuda_layer_executor(model::Model& model,
                                                               backend::Device& device,
                                                               const model::LayerPlan& plan,
                                                               std::string& note,
                                                               const CudaLayerOptions& options) {
    note.clear();
    if (plan.n_gpu_layers <= 0) {
        note = plan.note;
        return nullptr;
    }
    const std::string why = layer_offload_unsupported(model, options.parts);
    if (!why.empty()) {
        note = why;
        return nullptr;
    }
    try {
        auto e = std::make_unique<CudaLayerExecutor>(model, device, options.parts);
        e->upload(plan, note, options);
        if (e->n_layers() == 0) return nullptr;
        if (note.empty()) note = plan.note;
        if (!e->prefill_note().empty()) note += (note.empty() ? "" : "; ") + e->prefill_note();
        return e;
    } catch (const EngineError& e) {
        note = std::string(e.what()) + ": running on CPU";
        return nullptr;
    }
}

LayerOffloadStats layer_offload_stats(const model::LayerExecutor& executor) {
    const auto* e = dynamic_cast<const CudaLayerExecutor*>(&executor);
    return e ? e->stats() : LayerOffloadStats{};
}

}  // namespace powerinfer::cuda
