// Kernels that feed cuBLAS during prefill of offloaded layers: weight rows
// dequantized to F16 (one kernel per quant type, from quant_dot.cuh's
// unit_dequant, bit-equal to the CPU reference before the F16 rounding) and
// activations converted to F16.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda_ops.h"
#include "quant_dot.cuh"

namespace powerinfer::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
    return unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20));
}

// Eight F16 values packed for one 16-byte store.
__device__ __forceinline__ uint4 pack8(const float* v) {
    uint4 r;
    uint32_t* w = reinterpret_cast<uint32_t*>(&r);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const __half2 h = __floats2half2_rn(v[2 * i], v[2 * i + 1]);  // .x (low half) = v[2i]
        w[i] = *reinterpret_cast<const uint32_t*>(&h);
    }
    return r;
}

// One thread per 32-element unit: out[r][32u..32u+31] = F16(unit u of row r).
// out rows are cols = 32 * units_per_row halves, so every unit starts on a
// 64-byte boundary of the (256-byte aligned) output.
template <uint32_t T>
__global__ void dequant_f16_kernel(const uint8_t* w, size_t row_bytes, int64_t units_per_row,
                                   int64_t total_units, __half* out) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; idx < total_units;
         idx += stride) {
        const int64_t r = idx / units_per_row;
        const int u = int(idx - r * units_per_row);
        float v[32];
        unit_dequant<T>(w + size_t(r) * row_bytes, u, v);
        uint4* dst = reinterpret_cast<uint4*>(out + idx * 32);
#pragma unroll
        for (int i = 0; i < 4; ++i) dst[i] = pack8(v + 8 * i);
    }
}

__global__ void f32_to_f16_kernel(const float* x, __half* y, int64_t n) {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = __float2half_rn(x[i]);
}

template <uint32_t T>
struct LaunchDequant {
    static void run(const void* w, size_t row_bytes, int64_t cols, int64_t rows, void* out,
                    cudaStream_t s) {
        const int64_t upr = cols / 32, total = upr * rows;
        dequant_f16_kernel<T><<<grid_for(total), kThreads, 0, s>>>(
            static_cast<const uint8_t*>(w), row_bytes, upr, total, static_cast<__half*>(out));
    }
};

template <uint32_t T>
struct HostDequant {
    static void run(const void* row, int64_t cols, uint16_t* out) {
        float v[32];
        for (int64_t u = 0; u < cols / 32; ++u) {
            unit_dequant<T>(static_cast<const uint8_t*>(row), int(u), v);
            for (int i = 0; i < 32; ++i) out[32 * u + i] = __half_as_ushort(__float2half_rn(v[i]));
        }
    }
};

}  // namespace

bool dequantize_rows_f16(uint32_t type, const void* w, size_t row_bytes, int64_t cols, int64_t rows,
                         void* out, cudaStream_t stream) {
    if (cols % 32 != 0) return false;
    if (rows <= 0 || cols <= 0) return type_supported(type);
    return dispatch_type<LaunchDequant>(type, w, row_bytes, cols, rows, out, stream);
}

bool dequantize_row_f16_on_host(uint32_t type, const void* row, int64_t cols, uint16_t* out) {
    if (cols % 32 != 0) return false;
    return dispatch_type<HostDequant>(type, row, cols, out);
}

void f32_to_f16(const float* x, void* y, int64_t n, cudaStream_t stream) {
    if (n <= 0) return;
    f32_to_f16_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, static_cast<__half*>(y), n);
}

}  // namespace powerinfer::cuda
