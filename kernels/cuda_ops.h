// Host-callable CUDA kernels (kernels/ is compiled only with CUDA). Plain C++
// signatures so engine-side C++ (CudaDevice) can call them; all pointers are
// device pointers unless named host_*. Weight matrices are stored as in GGUF
// (rows of `cols` elements, `row_bytes` each, type ids as GgmlType).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace powerinfer::cuda {

struct DeviceProbe {
    bool available = false;
    std::string name;    // e.g. "NVIDIA H200"
    std::string reason;  // why not available ("no CUDA device: running on CPU")
    int64_t total_bytes = 0;
    int64_t free_bytes = 0;
    int compute_capability = 0;  // e.g. 90
};
DeviceProbe probe_device(int ordinal = 0);

// Whether a weight type has a CUDA dot kernel.
bool type_supported(uint32_t type);

// y[i] = W.row(idx ? idx[i] : i) . x, for i < count.
void rows_dot(uint32_t type, const void* w, size_t row_bytes, int64_t cols, const int32_t* idx,
              int64_t count, const float* x, float* y, cudaStream_t stream);

// Sparse gated-FFN front half over compact neuron slots:
// h[i] = act(gate.row(slot[i]) . x) * (up.row(slot[i]) . x), act = SiLU or ReLU.
// slot == nullptr: every row 0..count-1 (the dense FFN of an offloaded layer).
void swiglu_rows(uint32_t type, const void* gate, const void* up, size_t row_bytes, int64_t cols,
                 const int32_t* slot, int64_t count, const float* x, float* h, bool relu,
                 cudaStream_t stream);

// Column-sparse down projection over a neuron-major matrix D (row r = the down
// column of the neuron in slot r: n_embd elements of `type`, F32, F16, Q8_0
// or Q4_0, row_bytes each): y[n_embd] = sum_i h[i] * D.row(slot[i]).
// Deterministic (fixed-order reduction through `scratch`, which must hold
// down_axpy_scratch_floats()).
bool down_type_supported(uint32_t type);
size_t down_axpy_scratch_floats(int64_t n_embd, int64_t count);
void down_axpy(uint32_t type, const void* D, size_t row_bytes, int64_t n_embd,
               const int32_t* slot, const float* h, int64_t count, float* y, float* scratch,
               cudaStream_t stream);

// Elementwise / attention pieces for a full decode layer on the GPU.
void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps, cudaStream_t stream);
void add_inplace(float* y, const float* x, int64_t n, cudaStream_t stream);
// h = act(g) * u (SiLU or ReLU).
void act_mul(const float* g, const float* u, float* h, int64_t n, bool relu, cudaStream_t stream);
// v = act(v + bias) in place: act 0 = none, 1 = ReLU.
void bias_act(float* v, const float* bias, int64_t n, int act, cudaStream_t stream);
// RoPE on n_head heads of head_dim (q or k, contiguous heads) at position pos.
void rope(float* v, int64_t n_head, int64_t head_dim, int64_t pos, float freq_base, bool neox,
          cudaStream_t stream);
// One-token attention with GQA over a float KV cache laid out
// [n_ctx][n_head_kv][head_dim]; positions 0..n_past inclusive are valid.
void attention_decode(const float* q, const float* k_cache, const float* v_cache, float* out,
                      int64_t n_head, int64_t n_head_kv, int64_t head_dim, int64_t n_past,
                      float* scores_scratch, cudaStream_t stream);

// ---- whole layers on the GPU (layer offload), matching the CPU model ----
// RMSNorm of `rows` rows of n (x and y may alias), one block per row.
void rms_norm_rows(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps,
                   cudaStream_t stream);
// RoPE of n_head contiguous heads of head_dim with the model's table rows for
// one position (n_rot/2 cos and sin values); the first n_rot dimensions rotate.
void rope_table(float* v, int64_t n_head, int64_t head_dim, int64_t n_rot, const float* cos_row,
                const float* sin_row, bool neox, cudaStream_t stream);
// cache[h][pos][0..dim) = F16(src[h][0..dim)) for a cache laid out
// [n_head][n_ctx][dim] (the CPU model's layout).
void store_kv_f16(const float* src, void* cache, int64_t n_head, int64_t n_ctx, int64_t dim,
                  int64_t pos, cudaStream_t stream);
// One query token's GQA attention over that F16 cache: keys/values
// 0..n_keys-1, scale 1/sqrt(head_dim); out [n_head][head_dim_v].
// scores_scratch holds n_head * n_ctx floats.
void attention_decode_f16(const float* q, const void* k_cache, const void* v_cache, float* out,
                          int64_t n_head, int64_t n_head_kv, int64_t head_dim, int64_t head_dim_v,
                          int64_t n_ctx, int64_t n_keys, float* scores_scratch,
                          cudaStream_t stream);

// The same for n_tokens tokens at positions pos..pos+n_tokens-1: v holds
// [n_tokens][n_head][head_dim] and the table rows for those positions start
// at cos_rows / sin_rows (n_rot/2 values per position).
void rope_table_rows(float* v, int64_t n_tokens, int64_t n_head, int64_t head_dim, int64_t n_rot,
                     const float* cos_rows, const float* sin_rows, bool neox, cudaStream_t stream);
// store_kv_f16 for src[n_tokens][n_head][dim] at rows pos..pos+n_tokens-1.
void store_kv_f16_rows(const float* src, void* cache, int64_t n_tokens, int64_t n_head,
                       int64_t n_ctx, int64_t dim, int64_t pos, cudaStream_t stream);
// v[r][i] += bias[i] for `rows` rows of n.
void add_bias_rows(float* v, const float* bias, int64_t rows, int64_t n, cudaStream_t stream);

// ---- prefill GEMMs of offloaded layers (cuBLAS on F16 tiles) ----
// out[r][0..cols) = F16(dequantized row r of W) for r < rows (cols a multiple
// of 32; out 16-byte aligned). False for a type without a kernel.
bool dequantize_rows_f16(uint32_t type, const void* w, size_t row_bytes, int64_t cols, int64_t rows,
                         void* out, cudaStream_t stream);
// The same dequantization run on the host for one row (host memory, F16
// bits): tests compare it with the CPU reference without a GPU.
bool dequantize_row_f16_on_host(uint32_t type, const void* row, int64_t cols, uint16_t* out);
// y[i] = F16(x[i]) (round to nearest even).
void f32_to_f16(const float* x, void* y, int64_t n, cudaStream_t stream);

// dst.row(slot[i]) = src.row(i) for i < n (rows of row_bytes): places a
// batch of staged neurons into their slots with one launch.
void scatter_rows(const void* src, size_t row_bytes, const int32_t* slot, int64_t n, void* dst,
                  cudaStream_t stream);

// Reads the last CUDA error into a message ("" if none).
std::string last_error();

}  // namespace powerinfer::cuda
