// Norms, RoPE, elementwise ops and one-token attention for decode layers that
// run wholly on the GPU (attention, dense layers under layer offload).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "cuda_ops.h"
#include "quant_dot.cuh"

namespace powerinfer::cuda {
namespace {

// One block per row of n (x and y may alias).
__global__ void rms_norm_kernel(const float* x, const float* w, float* y, int64_t n, float eps) {
    x += int64_t(blockIdx.x) * n;
    y += int64_t(blockIdx.x) * n;
    __shared__ float partial[32];
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += x[i] * x[i];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < (blockDim.x >> 5) ? partial[threadIdx.x] : 0.f;
        v = warp_sum(v);
        if (threadIdx.x == 0) partial[0] = v;
    }
    __syncthreads();
    const float scale = rsqrtf(partial[0] / float(n) + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) y[i] = x[i] * scale * w[i];
}

__global__ void add_kernel(float* y, const float* x, int64_t n) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}

__global__ void act_mul_kernel(const float* g, const float* u, float* h, int64_t n, bool relu) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) h[i] = (relu ? fmaxf(g[i], 0.f) : g[i] / (1.f + __expf(-g[i]))) * u[i];
}

__global__ void bias_act_kernel(float* v, const float* bias, int64_t n, int act) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = v[i] + (bias ? bias[i] : 0.f);
    v[i] = act == 1 ? fmaxf(x, 0.f) : x;
}

// v[r][i] += bias[i] for rows of n.
__global__ void add_bias_rows_kernel(float* v, const float* bias, int64_t rows, int64_t n) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * n; i += stride)
        v[i] += bias[i % n];
}

__global__ void rope_kernel(float* v, int64_t head_dim, int64_t pos, float freq_base, bool neox) {
    float* head = v + int64_t(blockIdx.x) * head_dim;
    const int64_t half = head_dim / 2;
    for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
        const float theta = float(pos) * powf(freq_base, -2.f * float(i) / float(head_dim));
        float c, s;
        sincosf(theta, &s, &c);
        const int64_t a = neox ? i : 2 * i;
        const int64_t b = neox ? i + half : 2 * i + 1;
        const float x0 = head[a], x1 = head[b];
        head[a] = x0 * c - x1 * s;
        head[b] = x0 * s + x1 * c;
    }
}

// RoPE from the model's own cos/sin table (rows of n_rot/2 per position):
// pairs (2i, 2i+1), or (i, i + n_rot/2) for NeoX, as the CPU does. Block
// (h, t): head h of token t, whose heads start at v + t * gridDim.x * head_dim
// and whose table row is t rows after cos_row.
__global__ void rope_table_kernel(float* v, int64_t head_dim, int64_t n_rot, const float* cos_row,
                                  const float* sin_row, bool neox) {
    const int64_t t = blockIdx.y, half = n_rot / 2;
    float* head = v + (t * gridDim.x + blockIdx.x) * head_dim;
    cos_row += t * half;
    sin_row += t * half;
    for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
        const float c = cos_row[i], s = sin_row[i];
        const int64_t a = neox ? i : 2 * i;
        const int64_t b = neox ? i + half : 2 * i + 1;
        const float x0 = head[a], x1 = head[b];
        head[a] = x0 * c - x1 * s;
        head[b] = x0 * s + x1 * c;
    }
}

// Block (h, t): src[t][h][dim] -> cache[h][n_ctx][dim] at row pos + t, as F16.
__global__ void store_kv_f16_kernel(const float* src, __half* cache, int64_t n_ctx, int64_t dim,
                                    int64_t pos) {
    const int64_t h = blockIdx.x, t = blockIdx.y;
    __half* dst = cache + (h * n_ctx + pos + t) * dim;
    src += t * gridDim.x * dim;
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) dst[d] = __float2half_rn(src[h * dim + d]);
}

// Block-wide reductions for 256-thread blocks (red holds 32 floats).
__device__ float block_max(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();  // red may still be read from a previous reduction
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float m = red[0];
    for (int w = 1; w < warps; ++w) m = fmaxf(m, red[w]);
    return m;
}
__device__ float block_sum(float v, float* red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float s = 0.f;
    for (int w = 0; w < warps; ++w) s += red[w];
    return s;
}

// One block per query head over the F16 cache of its KV group, laid out like
// the CPU's ([head][n_ctx][dim]); keys 0..n_keys-1 are valid. The query is
// rounded to F16 first, as the CPU rounds it for its F16 dot products.
constexpr int kAttnThreads = 256;
__global__ void attention_f16_kernel(const float* q, const __half* k_cache, const __half* v_cache,
                                     float* out, int64_t group, int64_t head_dim,
                                     int64_t head_dim_v, int64_t n_ctx, int64_t n_keys,
                                     float* scores_all) {
    extern __shared__ float qs[];  // head_dim
    __shared__ float red[32];
    const int64_t h = blockIdx.x, g = h / group;
    const __half* K = k_cache + g * n_ctx * head_dim;
    const __half* V = v_cache + g * n_ctx * head_dim_v;
    float* scores = scores_all + h * n_ctx;
    for (int64_t d = threadIdx.x; d < head_dim; d += blockDim.x)
        qs[d] = __half2float(__float2half_rn(q[h * head_dim + d]));
    __syncthreads();
    const float scale = rsqrtf(float(head_dim));
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    for (int64_t t = warp; t < n_keys; t += warps) {
        const __half* kt = K + t * head_dim;
        float s = 0.f;
        for (int64_t d = lane; d < head_dim; d += 32) s += qs[d] * __half2float(kt[d]);
        s = warp_sum(s);
        if (lane == 0) scores[t] = s * scale;
    }
    __syncthreads();
    float m = -INFINITY;
    for (int64_t t = threadIdx.x; t < n_keys; t += blockDim.x) m = fmaxf(m, scores[t]);
    m = block_max(m, red);
    float sum = 0.f;
    for (int64_t t = threadIdx.x; t < n_keys; t += blockDim.x) {
        const float e = __expf(scores[t] - m);
        scores[t] = e;
        sum += e;
    }
    sum = block_sum(sum, red);  // its barriers also publish the scores written above
    const float inv = 1.f / sum;
    for (int64_t d = threadIdx.x; d < head_dim_v; d += blockDim.x) {
        float acc = 0.f;
        for (int64_t t = 0; t < n_keys; ++t) acc += scores[t] * __half2float(V[t * head_dim_v + d]);
        out[h * head_dim_v + d] = acc * inv;
    }
}

// One block per head: scores over all positions, softmax, weighted V sum.
__global__ void attention_kernel(const float* q, const float* k_cache, const float* v_cache,
                                 float* out, int64_t n_head_kv, int64_t head_dim, int64_t n_past,
                                 int64_t group, float* scores_all) {
    const int64_t h = blockIdx.x;
    const int64_t kvh = h / group;
    const int64_t n = n_past + 1;
    const int64_t kv_stride = n_head_kv * head_dim;
    float* scores = scores_all + h * n;
    const float* qh = q + h * head_dim;
    const float scale = rsqrtf(float(head_dim));
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    for (int64_t t = warp; t < n; t += warps) {
        const float* kt = k_cache + t * kv_stride + kvh * head_dim;
        float s = 0.f;
        for (int64_t d = lane; d < head_dim; d += 32) s += qh[d] * kt[d];
        s = warp_sum(s);
        if (lane == 0) scores[t] = s * scale;
    }
    __syncthreads();
    __shared__ float red[32];
    float m = -INFINITY;
    for (int64_t t = threadIdx.x; t < n; t += blockDim.x) m = fmaxf(m, scores[t]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) red[warp] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        float mm = red[0];
        for (int w = 1; w < warps; ++w) mm = fmaxf(mm, red[w]);
        red[0] = mm;
    }
    __syncthreads();
    m = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int64_t t = threadIdx.x; t < n; t += blockDim.x) {
        const float e = __expf(scores[t] - m);
        scores[t] = e;
        sum += e;
    }
    sum = warp_sum(sum);
    if (lane == 0) red[warp] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
        float ss = 0.f;
        for (int w = 0; w < warps; ++w) ss += red[w];
        red[0] = ss;
    }
    __syncthreads();
    const float inv = 1.f / red[0];
    for (int64_t d = threadIdx.x; d < head_dim; d += blockDim.x) {
        float acc = 0.f;
        for (int64_t t = 0; t < n; ++t) acc += scores[t] * v_cache[t * kv_stride + kvh * head_dim + d];
        out[h * head_dim + d] = acc * inv;
    }
}

__global__ void scatter_rows_kernel(const uint8_t* src, size_t row_bytes, const int32_t* slot,
                                    uint8_t* dst) {
    const uint8_t* s = src + size_t(blockIdx.x) * row_bytes;
    uint8_t* d = dst + size_t(slot[blockIdx.x]) * row_bytes;
    for (size_t i = threadIdx.x; i < row_bytes; i += blockDim.x) d[i] = s[i];
}

unsigned blocks_for(int64_t n, int threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace

DeviceProbe probe_device(int ordinal) {
    DeviceProbe p;
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count <= ordinal) {
        cudaGetLastError();
        p.reason = err == cudaSuccess ? "no CUDA device: running on CPU"
                                      : std::string("no CUDA device: running on CPU (") +
                                            cudaGetErrorString(err) + ")";
        return p;
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess || cudaSetDevice(ordinal) != cudaSuccess) {
        p.reason = "CUDA device " + std::to_string(ordinal) + " could not be opened: running on CPU";
        cudaGetLastError();
        return p;
    }
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        p.reason = "CUDA device memory could not be queried: running on CPU";
        cudaGetLastError();
        return p;
    }
    p.available = true;
    p.name = prop.name;
    p.total_bytes = int64_t(total_b);
    p.free_bytes = int64_t(free_b);
    p.compute_capability = prop.major * 10 + prop.minor;
    return p;
}

void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps, cudaStream_t s) {
    rms_norm_kernel<<<1, 512, 0, s>>>(x, w, y, n, eps);
}

void rms_norm_rows(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps,
                   cudaStream_t s) {
    if (rows <= 0) return;
    rms_norm_kernel<<<unsigned(rows), 256, 0, s>>>(x, w, y, n, eps);
}

void rope_table(float* v, int64_t n_head, int64_t head_dim, int64_t n_rot, const float* cos_row,
                const float* sin_row, bool neox, cudaStream_t s) {
    rope_table_rows(v, 1, n_head, head_dim, n_rot, cos_row, sin_row, neox, s);
}

void rope_table_rows(float* v, int64_t n_tokens, int64_t n_head, int64_t head_dim, int64_t n_rot,
                     const float* cos_rows, const float* sin_rows, bool neox, cudaStream_t s) {
    if (n_tokens <= 0 || n_head <= 0 || n_rot <= 0) return;
    const dim3 grid{unsigned(n_head), unsigned(n_tokens)};
    rope_table_kernel<<<grid, 64, 0, s>>>(v, head_dim, n_rot, cos_rows, sin_rows, neox);
}

void store_kv_f16(const float* src, void* cache, int64_t n_head, int64_t n_ctx, int64_t dim,
                  int64_t pos, cudaStream_t s) {
    store_kv_f16_rows(src, cache, 1, n_head, n_ctx, dim, pos, s);
}

void store_kv_f16_rows(const float* src, void* cache, int64_t n_tokens, int64_t n_head,
                       int64_t n_ctx, int64_t dim, int64_t pos, cudaStream_t s) {
    if (n_tokens <= 0 || n_head <= 0) return;
    const dim3 grid{unsigned(n_head), unsigned(n_tokens)};
    store_kv_f16_kernel<<<grid, 128, 0, s>>>(src, static_cast<__half*>(cache), n_ctx, dim, pos);
}

void add_bias_rows(float* v, const float* bias, int64_t rows, int64_t n, cudaStream_t s) {
    if (rows <= 0 || n <= 0) return;
    const int64_t blocks = std::min<int64_t>((rows * n + 255) / 256, int64_t{1} << 20);
    add_bias_rows_kernel<<<unsigned(blocks), 256, 0, s>>>(v, bias, rows, n);
}

void attention_decode_f16(const float* q, const void* k_cache, const void* v_cache, float* out,
                          int64_t n_head, int64_t n_head_kv, int64_t head_dim, int64_t head_dim_v,
                          int64_t n_ctx, int64_t n_keys, float* scores_scratch, cudaStream_t s) {
    if (n_head <= 0 || n_keys <= 0) return;
    const size_t smem = size_t(head_dim) * sizeof(float);
    if (smem > 48 * 1024)
        cudaFuncSetAttribute(attention_f16_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(smem));
    attention_f16_kernel<<<unsigned(n_head), kAttnThreads, smem, s>>>(
        q, static_cast<const __half*>(k_cache), static_cast<const __half*>(v_cache), out,
        n_head / n_head_kv, head_dim, head_dim_v, n_ctx, n_keys, scores_scratch);
}

void add_inplace(float* y, const float* x, int64_t n, cudaStream_t s) {
    add_kernel<<<blocks_for(n, 256), 256, 0, s>>>(y, x, n);
}

void act_mul(const float* g, const float* u, float* h, int64_t n, bool relu, cudaStream_t s) {
    act_mul_kernel<<<blocks_for(n, 256), 256, 0, s>>>(g, u, h, n, relu);
}

void bias_act(float* v, const float* bias, int64_t n, int act, cudaStream_t s) {
    bias_act_kernel<<<blocks_for(n, 256), 256, 0, s>>>(v, bias, n, act);
}

void rope(float* v, int64_t n_head, int64_t head_dim, int64_t pos, float freq_base, bool neox,
          cudaStream_t s) {
    rope_kernel<<<unsigned(n_head), 64, 0, s>>>(v, head_dim, pos, freq_base, neox);
}

void attention_decode(const float* q, const float* k_cache, const float* v_cache, float* out,
                      int64_t n_head, int64_t n_head_kv, int64_t head_dim, int64_t n_past,
                      float* scores_scratch, cudaStream_t s) {
    attention_kernel<<<unsigned(n_head), 256, 0, s>>>(q, k_cache, v_cache, out, n_head_kv,
                                                      head_dim, n_past, n_head / n_head_kv,
                                                      scores_scratch);
}

void scatter_rows(const void* src, size_t row_bytes, const int32_t* slot, int64_t n, void* dst,
                  cudaStream_t s) {
    if (n <= 0) return;
    scatter_rows_kernel<<<unsigned(n), 128, 0, s>>>(static_cast<const uint8_t*>(src), row_bytes,
                                                   slot, static_cast<uint8_t*>(dst));
}

std::string last_error() {
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? std::string() : std::string(cudaGetErrorString(e));
}

}  // namespace powerinfer::cuda
