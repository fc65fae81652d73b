// Device-side quantized dot products, bit-compatible with the GGUF block
// formats (engine/tensor is the CPU reference). Every type is walked in
// "units" of 32 elements so that one warp can spread a row over its lanes the
// same way for all types: a 32-element block is one unit; a 256-element
// K-quant super-block is eight.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace powerinfer::cuda {

__host__ __device__ __forceinline__ float load_half(const uint8_t* p) {
    uint16_t bits = static_cast<uint16_t>(p[0] | (p[1] << 8));
    return __half2float(__ushort_as_half(bits));
}

// Type ids as in GgmlType (engine/common/ggml_types.h).
enum : uint32_t {
    kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8,
    kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kBF16 = 30,
};

__host__ __device__ __forceinline__ void k_scale_min(int j, const uint8_t* q, int& d, int& m) {
    if (j < 4) {
        d = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Dot of unit `u` (elements 32u..32u+31) of a row with x (already offset to
// the row start).
template <uint32_t T>
__device__ __forceinline__ float unit_dot(const uint8_t* row, int u, const float* x) {
    const float* xs = x + 32 * u;
    float acc = 0.f;
    if constexpr (T == kF32) {
        const float* w = reinterpret_cast<const float*>(row) + 32 * u;
#pragma unroll
        for (int i = 0; i < 32; ++i) acc += w[i] * xs[i];
    } else if constexpr (T == kF16) {
        const __half* w = reinterpret_cast<const __half*>(row) + 32 * u;
#pragma unroll
        for (int i = 0; i < 32; ++i) acc += __half2float(w[i]) * xs[i];
    } else if constexpr (T == kBF16) {
        const uint16_t* w = reinterpret_cast<const uint16_t*>(row) + 32 * u;
#pragma unroll
        for (int i = 0; i < 32; ++i) acc += __uint_as_float(uint32_t(w[i]) << 16) * xs[i];
    } else if constexpr (T == kQ4_0) {
        const uint8_t* b = row + 18 * u;
        const float d = load_half(b);
        const uint8_t* qs = b + 2;
#pragma unroll
        for (int i = 0; i < 16; ++i)
            acc += (float((qs[i] & 0xF) - 8) * xs[i]) + (float((qs[i] >> 4) - 8) * xs[i + 16]);
        acc *= d;
    } else if constexpr (T == kQ4_1) {
        const uint8_t* b = row + 20 * u;
        const float d = load_half(b), m = load_half(b + 2);
        const uint8_t* qs = b + 4;
        float sx = 0.f;
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            acc += float(qs[i] & 0xF) * xs[i] + float(qs[i] >> 4) * xs[i + 16];
            sx += xs[i] + xs[i + 16];
        }
        acc = acc * d + sx * m;
    } else if constexpr (T == kQ8_0) {
        const uint8_t* b = row + 34 * u;
        const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2);
#pragma unroll
        for (int i = 0; i < 32; ++i) acc += float(qs[i]) * xs[i];
        acc *= load_half(b);
    } else if constexpr (T == kQ5_0 || T == kQ5_1) {
        constexpr bool has_min = (T == kQ5_1);
        const uint8_t* b = row + (has_min ? 24 : 22) * u;
        const float d = load_half(b);
        const float m = has_min ? load_half(b + 2) : 0.f;
        const uint8_t* qhp = b + (has_min ? 4 : 2);
        const uint32_t qh = uint32_t(qhp[0]) | (uint32_t(qhp[1]) << 8) | (uint32_t(qhp[2]) << 16) |
                            (uint32_t(qhp[3]) << 24);
        const uint8_t* qs = qhp + 4;
        const int off = has_min ? 0 : 16;
        float sx = 0.f;
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int x0 = ((qs[i] & 0xF) | (((qh >> i) << 4) & 0x10)) - off;
            const int x1 = ((qs[i] >> 4) | ((qh >> (i + 12)) & 0x10)) - off;
            acc += float(x0) * xs[i] + float(x1) * xs[i + 16];
            sx += xs[i] + xs[i + 16];
        }
        acc = acc * d + sx * m;
    } else if constexpr (T == kQ4_K || T == kQ5_K) {
        constexpr bool five = (T == kQ5_K);
        const uint8_t* b = row + (five ? 176 : 144) * (u >> 3);
        const int j = u & 7;
        const float d = load_half(b), dmin = load_half(b + 2);
        const uint8_t* scales = b + 4;
        const uint8_t* qh = b + 16;
        const uint8_t* qs = b + (five ? 48 : 16) + 32 * (j >> 1);
        int sc, mn;
        k_scale_min(j, scales, sc, mn);
        const int shift = (j & 1) ? 4 : 0;
        float sx = 0.f;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            int q = (qs[i] >> shift) & 0xF;
            if constexpr (five) q += ((qh[i] >> j) & 1) << 4;
            acc += float(q) * xs[i];
            sx += xs[i];
        }
        acc = d * float(sc) * acc - dmin * float(mn) * sx;
    } else if constexpr (T == kQ6_K) {
        const uint8_t* b = row + 210 * (u >> 3);
        const int j = u & 7, n = j >> 2, k = j & 3;
        const uint8_t* ql = b + 64 * n + (k & 1) * 32;
        const uint8_t* qh = b + 128 + 32 * n;
        const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192) + 8 * n + 2 * k;
        const float d = load_half(b + 208);
        const int qshift = (k >= 2) ? 4 : 0;
        float a0 = 0.f, a1 = 0.f;
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            const int q = (((ql[i] >> qshift) & 0xF) | (((qh[i] >> (2 * k)) & 3) << 4)) - 32;
            if (i < 16)
                a0 += float(q) * xs[i];
            else
                a1 += float(q) * xs[i];
        }
        acc = d * (float(sc[0]) * a0 + float(sc[1]) * a1);
    } else {
        static_assert(T == kF32, "unit_dot: no kernel for this type");
    }
    return acc;
}

// a * b + c rounded twice, as the CPU reference computes it (never fused
// into an FMA, whatever the compiler's contraction settings).
__host__ __device__ __forceinline__ float mul_add_unfused(float a, float b, float c) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(__fmul_rn(a, b), c);
#else
    volatile float p = a * b;
    return p + c;
#endif
}

// The 32 values of unit `u` of a row, dequantized exactly as the CPU
// reference (engine/tensor/quant_ref.cpp dequantize_*) computes them in F32.
// Host and device: the host copy is tested against the reference on
// machines without a GPU.
template <uint32_t T>
__host__ __device__ __forceinline__ void unit_dequant(const uint8_t* row, int u, float* out) {
    if constexpr (T == kF32) {
        const float* w = reinterpret_cast<const float*>(row) + 32 * u;
        #pragma unroll
        for (int i = 0; i < 32; ++i) out[i] = w[i];
    } else if constexpr (T == kF16) {
        const uint8_t* w = row + 64 * u;
        #pragma unroll
        for (int i = 0; i < 32; ++i) out[i] = load_half(w + 2 * i);
    } else if constexpr (T == kBF16) {
        const uint8_t* w = row + 64 * u;
        #pragma unroll
        for (int i = 0; i < 32; ++i) {
            const uint32_t bits = uint32_t(w[2 * i]) | (uint32_t(w[2 * i + 1]) << 8);
            const uint32_t f = bits << 16;
            float v;
            memcpy(&v, &f, sizeof v);
            out[i] = v;
        }
    } else if constexpr (T == kQ4_0) {
        const uint8_t* b = row + 18 * u;
        const float d = load_half(b);
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            out[i] = float((b[2 + i] & 0xF) - 8) * d;
            out[i + 16] = float((b[2 + i] >> 4) - 8) * d;
        }
    } else if constexpr (T == kQ4_1) {
        const uint8_t* b = row + 20 * u;
        const float d = load_half(b), m = load_half(b + 2);
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            out[i] = mul_add_unfused(float(b[4 + i] & 0xF), d, m);
            out[i + 16] = mul_add_unfused(float(b[4 + i] >> 4), d, m);
        }
    } else if constexpr (T == kQ8_0) {
        const uint8_t* b = row + 34 * u;
        const float d = load_half(b);
        #pragma unroll
        for (int i = 0; i < 32; ++i) out[i] = float(int8_t(b[2 + i])) * d;
    } else if constexpr (T == kQ5_0 || T == kQ5_1) {
        constexpr bool has_min = (T == kQ5_1);
        const uint8_t* b = row + (has_min ? 24 : 22) * u;
        const float d = load_half(b);
        const float m = has_min ? load_half(b + 2) : 0.f;
        const uint8_t* qhp = b + (has_min ? 4 : 2);
        const uint32_t qh = uint32_t(qhp[0]) | (uint32_t(qhp[1]) << 8) | (uint32_t(qhp[2]) << 16) |
                            (uint32_t(qhp[3]) << 24);
        const uint8_t* qs = qhp + 4;
        const int off = has_min ? 0 : 16;
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            const int x0 = ((qs[i] & 0xF) | (((qh >> i) << 4) & 0x10)) - off;
            const int x1 = ((qs[i] >> 4) | ((qh >> (i + 12)) & 0x10)) - off;
            if constexpr (has_min) {
                out[i] = mul_add_unfused(float(x0), d, m);
                out[i + 16] = mul_add_unfused(float(x1), d, m);
            } else {
                out[i] = float(x0) * d;
                out[i + 16] = float(x1) * d;
            }
        }
    } else if constexpr (T == kQ4_K || T == kQ5_K) {
        constexpr bool five = (T == kQ5_K);
        const uint8_t* b = row + (five ? 176 : 144) * (u >> 3);
        const int j = u & 7;
        const float d = load_half(b), dmin = load_half(b + 2);
        const uint8_t* qh = b + 16;
        const uint8_t* qs = b + (five ? 48 : 16) + 32 * (j >> 1);
        int sc, mn;
        k_scale_min(j, b + 4, sc, mn);
        const float d1 = d * float(sc), m1 = dmin * float(mn);
        const int shift = (j & 1) ? 4 : 0;
        #pragma unroll
        for (int i = 0; i < 32; ++i) {
            int q = (qs[i] >> shift) & 0xF;
            if constexpr (five) q += ((qh[i] >> j) & 1) << 4;
            out[i] = mul_add_unfused(d1, float(q), -m1);
        }
    } else if constexpr (T == kQ6_K) {
        const uint8_t* b = row + 210 * (u >> 3);
        const int j = u & 7, n = j >> 2, k = j & 3;
        const uint8_t* ql = b + 64 * n + (k & 1) * 32;
        const uint8_t* qh = b + 128 + 32 * n;
        const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192) + 8 * n + 2 * k;
        const float d = load_half(b + 208);
        const int qshift = (k >= 2) ? 4 : 0;
        #pragma unroll
        for (int i = 0; i < 32; ++i) {
            const int q = (((ql[i] >> qshift) & 0xF) | (((qh[i] >> (2 * k)) & 3) << 4)) - 32;
            out[i] = d * float(sc[i < 16 ? 0 : 1]) * float(q);
        }
    } else {
        static_assert(T == kF32, "unit_dequant: no kernel for this type");
    }
}

// Calls Launch<T>::run(args...) for a runtime type id; false for a type
// without a kernel.
template <template <uint32_t> class Launch, typename... Args>
bool dispatch_type(uint32_t type, Args&&... args) {
    switch (type) {
        case kF32: Launch<kF32>::run(args...); return true;
        case kF16: Launch<kF16>::run(args...); return true;
        case kBF16: Launch<kBF16>::run(args...); return true;
        case kQ4_0: Launch<kQ4_0>::run(args...); return true;
        case kQ4_1: Launch<kQ4_1>::run(args...); return true;
        case kQ5_0: Launch<kQ5_0>::run(args...); return true;
        case kQ5_1: Launch<kQ5_1>::run(args...); return true;
        case kQ8_0: Launch<kQ8_0>::run(args...); return true;
        case kQ4_K: Launch<kQ4_K>::run(args...); return true;
        case kQ5_K: Launch<kQ5_K>::run(args...); return true;
        case kQ6_K: Launch<kQ6_K>::run(args...); return true;
        default: return false;
    }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// One warp computes the dot of a whole row (cols elements) with x.
template <uint32_t T>
__device__ __forceinline__ float warp_row_dot(const uint8_t* row, int64_t cols, const float* x) {
    const int lane = threadIdx.x & 31;
    const int units = static_cast<int>(cols / 32);
    float acc = 0.f;
    for (int u = lane; u < units; u += 32) acc += unit_dot<T>(row, u, x);
    return warp_sum(acc);
}

}  // namespace powerinfer::cuda
