// Sparse FFN and dense row-dot kernels. One warp per output row/neuron; the
// input vector is staged in shared memory once per block.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_ops.h"
#include "quant_dot.cuh"

namespace powerinfer::cuda {
namespace {

constexpr int kWarpsPerBlock = 16;
constexpr int kThreads = kWarpsPerBlock * 32;

// Blocks for `count` rows: enough to fill the GPU a few times over, few
// enough that staging x in shared memory (once per block) stays cheap next
// to reading the weights.
unsigned row_blocks(int64_t count) {
    static const int sms = [] {
        int dev = 0, n = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
        return n > 0 ? n : 32;
    }();
    const int64_t wanted = (count + kWarpsPerBlock - 1) / kWarpsPerBlock;
    return unsigned(std::min<int64_t>(wanted, int64_t(sms) * 4));
}

template <uint32_t T>
__global__ void rows_dot_kernel(const uint8_t* w, size_t row_bytes, int64_t cols,
                                const int32_t* idx, int64_t count, const float* x, float* y) {
    extern __shared__ float xs[];
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) xs[i] = x[i];
    __syncthreads();
    const int64_t stride = int64_t(gridDim.x) * kWarpsPerBlock;
    for (int64_t i = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5); i < count; i += stride) {
        const int64_t r = idx ? idx[i] : i;
        const float v = warp_row_dot<T>(w + size_t(r) * row_bytes, cols, xs);
        if ((threadIdx.x & 31) == 0) y[i] = v;
    }
}

template <uint32_t T>
__global__ void swiglu_rows_kernel(const uint8_t* gate, const uint8_t* up, size_t row_bytes,
                                   int64_t cols, const int32_t* slot, int64_t count,
                                   const float* x, float* h, bool relu) {
    extern __shared__ float xs[];
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) xs[i] = x[i];
    __syncthreads();
    const int64_t stride = int64_t(gridDim.x) * kWarpsPerBlock;
    for (int64_t i = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5); i < count; i += stride) {
        const size_t off = size_t(slot ? slot[i] : i) * row_bytes;
        const float g = warp_row_dot<T>(gate + off, cols, xs);
        const float u = warp_row_dot<T>(up + off, cols, xs);
        if ((threadIdx.x & 31) == 0) h[i] = (relu ? fmaxf(g, 0.f) : g / (1.f + __expf(-g))) * u;
    }
}

constexpr int kDownChunk = 64;  // neurons per partial sum

// Element c of neuron-major row r (n_embd elements) in the down copy's type.
template <uint32_t T>
__device__ __forceinline__ float down_elem(const uint8_t* D, size_t row_bytes, int64_t r, int64_t c) {
    const uint8_t* row = D + size_t(r) * row_bytes;
    if constexpr (T == kF32) {
        return reinterpret_cast<const float*>(row)[c];
    } else if constexpr (T == kF16) {
        return __half2float(reinterpret_cast<const __half*>(row)[c]);
    } else if constexpr (T == kQ8_0) {
        const uint8_t* b = row + 34 * (c >> 5);
        return load_half(b) * float(reinterpret_cast<const int8_t*>(b + 2)[c & 31]);
    } else {  // kQ4_0
        const uint8_t* b = row + 18 * (c >> 5);
        const int i = int(c & 31);
        const int q = i < 16 ? (b[2 + i] & 0xF) : (b[2 + i - 16] >> 4);
        return load_half(b) * float(q - 8);
    }
}

template <uint32_t T>
__global__ void down_partial_kernel(const uint8_t* D, size_t row_bytes, int64_t n_embd,
                                    const int32_t* slot, const float* h, int64_t count,
                                    float* scratch) {
    const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t chunk = blockIdx.y;
    if (c >= n_embd) return;
    const int64_t begin = chunk * kDownChunk;
    const int64_t end = min(count, begin + kDownChunk);
    float acc = 0.f;
    for (int64_t i = begin; i < end; ++i) acc += h[i] * down_elem<T>(D, row_bytes, slot[i], c);
    scratch[chunk * n_embd + c] = acc;
}

__global__ void down_reduce_kernel(const float* scratch, int64_t n_embd, int64_t chunks,
                                   float* y) {
    const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= n_embd) return;
    float acc = 0.f;
    for (int64_t k = 0; k < chunks; ++k) acc += scratch[k * n_embd + c];
    y[c] = acc;
}

// Rows longer than 12k floats need more than the default 48 KiB of dynamic
// shared memory for x.
template <typename Kernel>
void allow_smem(Kernel kernel, size_t bytes) {
    if (bytes > 48 * 1024)
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
}

template <uint32_t T>
struct LaunchRowsDot {
    static void run(const void* w, size_t row_bytes, int64_t cols, const int32_t* idx,
                    int64_t count, const float* x, float* y, cudaStream_t s) {
        const unsigned blocks = row_blocks(count);
        allow_smem(rows_dot_kernel<T>, size_t(cols) * sizeof(float));
        rows_dot_kernel<T><<<blocks, kThreads, size_t(cols) * sizeof(float), s>>>(
            static_cast<const uint8_t*>(w), row_bytes, cols, idx, count, x, y);
    }
};

template <uint32_t T>
struct LaunchSwiglu {
    static void run(const void* gate, const void* up, size_t row_bytes, int64_t cols,
                    const int32_t* slot, int64_t count, const float* x, float* h, bool relu,
                    cudaStream_t s) {
        const unsigned blocks = row_blocks(count);
        allow_smem(swiglu_rows_kernel<T>, size_t(cols) * sizeof(float));
        swiglu_rows_kernel<T><<<blocks, kThreads, size_t(cols) * sizeof(float), s>>>(
            static_cast<const uint8_t*>(gate), static_cast<const uint8_t*>(up), row_bytes, cols,
            slot, count, x, h, relu);
    }
};

}  // namespace

bool type_supported(uint32_t type) {
    switch (type) {
        case kF32: case kF16: case kBF16: case kQ4_0: case kQ4_1: case kQ5_0: case kQ5_1:
        case kQ8_0: case kQ4_K: case kQ5_K: case kQ6_K:
            return true;
        default:
            return false;
    }
}

void rows_dot(uint32_t type, const void* w, size_t row_bytes, int64_t cols, const int32_t* idx,
              int64_t count, const float* x, float* y, cudaStream_t stream) {
    if (count <= 0) return;
    dispatch_type<LaunchRowsDot>(type, w, row_bytes, cols, idx, count, x, y, stream);
}

void swiglu_rows(uint32_t type, const void* gate, const void* up, size_t row_bytes, int64_t cols,
                 const int32_t* slot, int64_t count, const float* x, float* h, bool relu,
                 cudaStream_t stream) {
    if (count <= 0) return;
    dispatch_type<LaunchSwiglu>(type, gate, up, row_bytes, cols, slot, count, x, h, relu, stream);
}

size_t down_axpy_scratch_floats(int64_t n_embd, int64_t count) {
    const int64_t chunks = (count + kDownChunk - 1) / kDownChunk;
    return size_t(chunks > 0 ? chunks : 1) * size_t(n_embd);
}

bool down_type_supported(uint32_t type) {
    return type == kF32 || type == kF16 || type == kQ8_0 || type == kQ4_0;
}

void down_axpy(uint32_t type, const void* D, size_t row_bytes, int64_t n_embd,
               const int32_t* slot, const float* h, int64_t count, float* y, float* scratch,
               cudaStream_t stream) {
    const unsigned col_blocks = unsigned((n_embd + 255) / 256);
    if (count <= 0) {
        cudaMemsetAsync(y, 0, size_t(n_embd) * sizeof(float), stream);
        return;
    }
    const int64_t chunks = (count + kDownChunk - 1) / kDownChunk;
    const dim3 grid(col_blocks, unsigned(chunks));
    const auto* d = static_cast<const uint8_t*>(D);
    switch (type) {
        case kF32: down_partial_kernel<kF32><<<grid, 256, 0, stream>>>(d, row_bytes, n_embd, slot, h, count, scratch); break;
        case kF16: down_partial_kernel<kF16><<<grid, 256, 0, stream>>>(d, row_bytes, n_embd, slot, h, count, scratch); break;
        case kQ8_0: down_partial_kernel<kQ8_0><<<grid, 256, 0, stream>>>(d, row_bytes, n_embd, slot, h, count, scratch); break;
        case kQ4_0: down_partial_kernel<kQ4_0><<<grid, 256, 0, stream>>>(d, row_bytes, n_embd, slot, h, count, scratch); break;
        default: return;
    }
    down_reduce_kernel<<<col_blocks, 256, 0, stream>>>(scratch, n_embd, chunks, y);
}

}  // namespace powerinfer::cuda
