// Scalar reference kernels: dequantize, quantize and dot for the float and
// 32-element block formats (the K-quants are in quant_ref_k.cpp), following
// ggml's reference C code (ggml-quants.c, ggml-cpu/quants.c, MIT licence) so
// that results are bit-compatible. These are the portable baseline and the
// oracle every SIMD kernel is tested against; the scalar dispatch table is
// assembled at the end.
#include "tensor/quant_ref.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/quant_blocks.h"

namespace powerinfer::tensor::ref {

using namespace blocks;

// ---------------------------------------------------------------- floats

void dequantize_f32(const void* src, float* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
void dequantize_f16(const void* src, float* dst, int64_t n) {
    const auto* s = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32_portable(s[i]);
}
void dequantize_bf16(const void* src, float* dst, int64_t n) {
    const auto* s = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32_portable(s[i]);
}

// Float weights take float activations; the reference sums in double.
float dot_f32(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const float*>(w);
    const auto* b = static_cast<const float*>(x);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
    return static_cast<float>(s);
}
float dot_f16(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const uint16_t*>(w);
    const auto* b = static_cast<const float*>(x);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(fp16_to_fp32_portable(a[i])) * b[i];
    return static_cast<float>(s);
}
float dot_bf16(int64_t n, const void* w, const void* x) {
    const auto* a = static_cast<const uint16_t*>(w);
    const auto* b = static_cast<const float*>(x);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(bf16_to_fp32_portable(a[i])) * b[i];
    return static_cast<float>(s);
}

void quantize_f32(const float* x, void* dst, int64_t n) {
    std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
}
void quantize_f16(const float* x, void* dst, int64_t n) {
    auto* d = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16_portable(x[i]);
}
void quantize_bf16(const float* x, void* dst, int64_t n) {
    auto* d = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_bf16_portable(x[i]);
}

// ---------------------------------------------------------------- 32-element blocks

void dequantize_q4_0(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ4_0*>(src);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_fp32_portable(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            const int x0 = (x[i].qs[j] & 0x0F) - 8;
            const int x1 = (x[i].qs[j] >> 4) - 8;
            dst[i * kQK + j] = x0 * d;
            dst[i * kQK + j + kQK / 2] = x1 * d;
        }
    }
}
void dequantize_q4_1(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ4_1*>(src);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_fp32_portable(x[i].d);
        const float m = fp16_to_fp32_portable(x[i].m);
        for (int j = 0; j < kQK / 2; ++j) {
            const int x0 = x[i].qs[j] & 0x0F;
            const int x1 = x[i].qs[j] >> 4;
            dst[i * kQK + j] = x0 * d + m;
            dst[i * kQK + j + kQK / 2] = x1 * d + m;
        }
    }
}
void dequantize_q5_0(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ5_0*>(src);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_fp32_portable(x[i].d);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < kQK / 2; ++j) {
            const int xh0 = ((qh >> j) << 4) & 0x10;
            const int xh1 = (qh >> (j + 12)) & 0x10;
            const int x0 = ((x[i].qs[j] & 0x0F) | xh0) - 16;
            const int x1 = ((x[i].qs[j] >> 4) | xh1) - 16;
            dst[i * kQK + j] = x0 * d;
            dst[i * kQK + j + kQK / 2] = x1 * d;
        }
    }
}
void dequantize_q5_1(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ5_1*>(src);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_fp32_portable(x[i].d);
        const float m = fp16_to_fp32_portable(x[i].m);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < kQK / 2; ++j) {
            const int xh0 = ((qh >> j) << 4) & 0x10;
            const int xh1 = (qh >> (j + 12)) & 0x10;
            const int x0 = (x[i].qs[j] & 0x0F) | xh0;
            const int x1 = (x[i].qs[j] >> 4) | xh1;
            dst[i * kQK + j] = x0 * d + m;
            dst[i * kQK + j + kQK / 2] = x1 * d + m;
        }
    }
}
void dequantize_q8_0(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ8_0*>(src);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_fp32_portable(x[i].d);
        for (int j = 0; j < kQK; ++j) dst[i * kQK + j] = x[i].qs[j] * d;
    }
}

void quantize_q4_0(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ4_0*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        float max = 0.0f;
        for (int j = 0; j < kQK; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16_portable(d);
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[kQK / 2 + j] * id;
            const uint8_t xi0 = static_cast<uint8_t>(
                std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 8.5f))));
            const uint8_t xi1 = static_cast<uint8_t>(
                std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 8.5f))));
            y[i].qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
        }
    }
}
void quantize_q4_1(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ4_1*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float min = FLT_MAX;
        float max = -FLT_MAX;
        for (int j = 0; j < kQK; ++j) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        const float d = (max - min) / ((1 << 4) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16_portable(d);
        y[i].m = fp32_to_fp16_portable(min);
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[kQK / 2 + j] - min) * id;
            const uint8_t xi0 = static_cast<uint8_t>(
                std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 0.5f))));
            const uint8_t xi1 = static_cast<uint8_t>(
                std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 0.5f))));
            y[i].qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
        }
    }
}
void quantize_q5_0(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ5_0*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        float max = 0.0f;
        for (int j = 0; j < kQK; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -16;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16_portable(d);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[kQK / 2 + j] * id;
            const uint8_t xi0 = static_cast<uint8_t>(
                std::min(31, static_cast<int>(static_cast<int8_t>(x0 + 16.5f))));
            const uint8_t xi1 = static_cast<uint8_t>(
                std::min(31, static_cast<int>(static_cast<int8_t>(x1 + 16.5f))));
            y[i].qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
            qh |= ((xi0 & 0x10u) >> 4) << j;
            qh |= ((xi1 & 0x10u) >> 4) << (j + kQK / 2);
        }
        std::memcpy(y[i].qh, &qh, sizeof(qh));
    }
}
void quantize_q5_1(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ5_1*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float min = FLT_MAX;
        float max = -FLT_MAX;
        for (int j = 0; j < kQK; ++j) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        const float d = (max - min) / ((1 << 5) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16_portable(d);
        y[i].m = fp32_to_fp16_portable(min);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[kQK / 2 + j] - min) * id;
            const uint8_t xi0 = static_cast<uint8_t>(x0 + 0.5f);
            const uint8_t xi1 = static_cast<uint8_t>(x1 + 0.5f);
            y[i].qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
            qh |= ((xi0 & 0x10u) >> 4) << j;
            qh |= ((xi1 & 0x10u) >> 4) << (j + kQK / 2);
        }
        std::memcpy(y[i].qh, &qh, sizeof(qh));
    }
}
void quantize_q8_0(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / ((1 << 7) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = fp32_to_fp16_portable(d);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    }
}
// Activations are quantized as ggml does on x86 (the builds users run):
// id = 127 / amax rather than 1 / d, and round half to even (std::nearbyint
// in the default rounding mode) rather than roundf. One differently rounded
// element moves a logit of the default model by up to 0.3.
void quantize_act_q8_0(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[i].d = fp32_to_fp16_portable(amax / 127.0f);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
    }
}

void quantize_q8_1(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ8_1*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[i].d = fp32_to_fp16_portable(d);
        int sum = 0;
        for (int j = 0; j < kQK; ++j) {
            y[i].qs[j] = static_cast<int8_t>(std::nearbyint(x[j] * id));
            sum += y[i].qs[j];
        }
        y[i].s = fp32_to_fp16_portable(static_cast<float>(sum) * d);
    }
}

float dot_q4_0(int64_t n, const void* w, const void* xv) {
    const auto* x = static_cast<const BlockQ4_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(xv);
    float sumf = 0;
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
        int sumi = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            sumi += ((x[ib].qs[j] & 0x0F) - 8) * y[ib].qs[j];
            sumi += ((x[ib].qs[j] >> 4) - 8) * y[ib].qs[j + kQK / 2];
        }
        sumf += sumi * fp16_to_fp32_portable(x[ib].d) * fp16_to_fp32_portable(y[ib].d);
    }
    return sumf;
}
float dot_q4_1(int64_t n, const void* w, const void* xv) {
    const auto* x = static_cast<const BlockQ4_1*>(w);
    const auto* y = static_cast<const BlockQ8_1*>(xv);
    float sumf = 0;
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
        int sumi = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            sumi += (x[ib].qs[j] & 0x0F) * y[ib].qs[j];
            sumi += (x[ib].qs[j] >> 4) * y[ib].qs[j + kQK / 2];
        }
        sumf += (fp16_to_fp32_portable(x[ib].d) * fp16_to_fp32_portable(y[ib].d)) * sumi +
                fp16_to_fp32_portable(x[ib].m) * fp16_to_fp32_portable(y[ib].s);
    }
    return sumf;
}
float dot_q5_0(int64_t n, const void* w, const void* xv) {
    const auto* x = static_cast<const BlockQ5_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(xv);
    float sumf = 0;
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
        uint32_t qh;
        std::memcpy(&qh, x[ib].qh, sizeof(qh));
        int sumi = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const int xh0 = ((qh & (1u << j)) >> j) << 4;
            const int xh1 = ((qh & (1u << (j + 16))) >> (j + 12));
            sumi += (((x[ib].qs[j] & 0x0F) | xh0) - 16) * y[ib].qs[j];
            sumi += (((x[ib].qs[j] >> 4) | xh1) - 16) * y[ib].qs[j + kQK / 2];
        }
        sumf += (fp16_to_fp32_portable(x[ib].d) * fp16_to_fp32_portable(y[ib].d)) * sumi;
    }
    return sumf;
}
float dot_q5_1(int64_t n, const void* w, const void* xv) {
    const auto* x = static_cast<const BlockQ5_1*>(w);
    const auto* y = static_cast<const BlockQ8_1*>(xv);
    float sumf = 0;
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
        uint32_t qh;
        std::memcpy(&qh, x[ib].qh, sizeof(qh));
        int sumi = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const int xh0 = ((qh >> j) << 4) & 0x10;
            const int xh1 = (qh >> (j + 12)) & 0x10;
            sumi += ((x[ib].qs[j] & 0x0F) | xh0) * y[ib].qs[j];
            sumi += ((x[ib].qs[j] >> 4) | xh1) * y[ib].qs[j + kQK / 2];
        }
        sumf += (fp16_to_fp32_portable(x[ib].d) * fp16_to_fp32_portable(y[ib].d)) * sumi +
                fp16_to_fp32_portable(x[ib].m) * fp16_to_fp32_portable(y[ib].s);
    }
    return sumf;
}
float dot_q8_0(int64_t n, const void* w, const void* xv) {
    const auto* x = static_cast<const BlockQ8_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(xv);
    float sumf = 0;
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += x[ib].qs[j] * y[ib].qs[j];
        sumf += sumi * (fp16_to_fp32_portable(x[ib].d) * fp16_to_fp32_portable(y[ib].d));
    }
    return sumf;
}

}  // namespace powerinfer::tensor::ref

namespace powerinfer::tensor::kernels {
namespace {

// Generic kernels built from a type's dequantize and dot.
template <DotFn Dot>
void dot_tile_loop(int64_t n, const void* w, size_t row_bytes, int64_t rows, const void* x,
                   size_t x_stride, int64_t count, float* out, size_t out_stride) {
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < count; ++k)
            out[static_cast<size_t>(k) * out_stride + static_cast<size_t>(r)] =
                Dot(n, static_cast<const uint8_t*>(w) + static_cast<size_t>(r) * row_bytes,
                    static_cast<const uint8_t*>(x) + static_cast<size_t>(k) * x_stride);
}

template <DotFn Dot>
void dot_rows_loop(int64_t n, const void* w, size_t row_bytes, int64_t rows, const void* x,
                   float* out) {
    for (int64_t r = 0; r < rows; ++r)
        out[r] = Dot(n, static_cast<const uint8_t*>(w) + static_cast<size_t>(r) * row_bytes, x);
}

template <DotFn Dot>
void dot_gather_loop(int64_t n, const void* w, size_t row_bytes, const int32_t* idx, int64_t count,
                     const void* x, float* out) {
    for (int64_t r = 0; r < count; ++r)
        out[r] =
            Dot(n, static_cast<const uint8_t*>(w) + static_cast<size_t>(idx[r]) * row_bytes, x);
}

template <DequantizeFn Dequant, int BlockElems, int BlockBytes>
void axpy_by_blocks(int64_t n, const void* w, float a, float* y) {
    float tmp[BlockElems];
    const auto* src = static_cast<const uint8_t*>(w);
    for (int64_t i = 0; i < n; i += BlockElems, src += BlockBytes) {
        Dequant(src, tmp, BlockElems);
        for (int j = 0; j < BlockElems; ++j) y[i + j] += a * tmp[j];
    }
}

void axpy_f32(int64_t n, const void* w, float a, float* y) {
    const auto* s = static_cast<const float*>(w);
    for (int64_t i = 0; i < n; ++i) y[i] += a * s[i];
}
void axpy_f16(int64_t n, const void* w, float a, float* y) {
    const auto* s = static_cast<const uint16_t*>(w);
    for (int64_t i = 0; i < n; ++i) y[i] += a * fp16_to_fp32_portable(s[i]);
}
void axpy_bf16(int64_t n, const void* w, float a, float* y) {
    const auto* s = static_cast<const uint16_t*>(w);
    for (int64_t i = 0; i < n; ++i) y[i] += a * bf16_to_fp32_portable(s[i]);
}

template <DequantizeFn Dequant, DotFn Dot, typename Block, int BlockElems>
constexpr TypeKernels block_kernels() {
    return {Dequant,
            Dot,
            axpy_by_blocks<Dequant, BlockElems, static_cast<int>(sizeof(Block))>,
            dot_rows_loop<Dot>,
            dot_gather_loop<Dot>,
            dot_tile_loop<Dot>,
            nullptr,   // no panel form: models keep the row layout
            nullptr,   // no Q8_0 rewrite: the scalar dots' float steps differ per type
            nullptr};
}

void gm_h2f_row(const uint16_t* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32_portable(src[i]);
}
#include "tensor/ggml_math.inc"

void to_f16_scalar(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16_portable(x[i]);
}
void round_f16_scalar(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = fp16_to_fp32_portable(fp32_to_fp16_portable(x[i]));
}
void geglu_scalar(const float* g, const float* u, const uint16_t* table, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float x = g[i];
        if (x <= -10.0f)
            out[i] = 0.0f;
        else if (x >= 10.0f)
            out[i] = x * u[i];
        else
            out[i] = fp16_to_fp32_portable(table[fp32_to_fp16_portable(x)]) * u[i];
    }
}

// The reference of the neuron-major down product: per output, the integer
// sum of each group, then the two fused multiply-adds the SIMD forms use.
void sparse_down_scalar(const SparseDownArgs& A, int64_t c0, int64_t c1, float* y) {
    for (int64_t j = 32 * c0; j < 32 * c1; ++j) {
        const size_t byte = static_cast<size_t>((j / 32) * 16 + (j % 16));
        const int shift = (j % 32) >= 16 ? 4 : 0;
        float acc = 0.0f;
        for (int64_t g = 0; g < A.n_groups; ++g) {
            int32_t sum = 0;
            for (int32_t qd = A.quad_begin[g]; qd < A.quad_begin[g + 1]; ++qd)
                for (int t = 0; t < 4; ++t) {
                    const int32_t id = A.quad_ids[4 * qd + t];
                    const int q =
                        (A.q[static_cast<size_t>(id) * A.col_bytes + byte] >> shift) & 0x0F;
                    sum += q * static_cast<int8_t>(A.quad_qh[qd] >> (8 * t));
                }
            const int64_t r = j % 32;  // tensor::scale_pos(j)
            const int64_t pos = j - r + 8 * ((r % 16) / 4) + (r >= 16 ? 4 : 0) + r % 4;
            const size_t at = static_cast<size_t>(A.group[g] * A.n_out + pos);
            const float a = A.a ? A.a[at] : fp16_to_fp32_portable(A.a16[at]);
            const float c = A.c ? A.c[at] : fp16_to_fp32_portable(A.c16[at]);
            acc = std::fma(a, static_cast<float>(sum) * A.dh[g], acc);
            acc = std::fma(c, A.hsum[g], acc);
        }
        y[j] = acc;
    }
}

KernelTable make_scalar_table() {
    using namespace ref;
    using namespace blocks;
    KernelTable t{};
    t.name = "scalar";
    t.types[kF32] = {
        dequantize_f32,         dot_f32, axpy_f32, dot_rows_loop<dot_f32>, dot_gather_loop<dot_f32>,
        dot_tile_loop<dot_f32>, nullptr,  nullptr, nullptr};
    t.types[kF16] = {
        dequantize_f16,         dot_f16, axpy_f16, dot_rows_loop<dot_f16>, dot_gather_loop<dot_f16>,
        dot_tile_loop<dot_f16>, nullptr,  nullptr, nullptr};
    t.types[kBF16] = {dequantize_bf16,
                      dot_bf16,
                      axpy_bf16,
                      dot_rows_loop<dot_bf16>,
                      dot_gather_loop<dot_bf16>,
                      dot_tile_loop<dot_bf16>,
                      nullptr,
                      nullptr,
                      nullptr};
    t.types[kQ4_0] = block_kernels<dequantize_q4_0, dot_q4_0, BlockQ4_0, kQK>();
    t.types[kQ4_1] = block_kernels<dequantize_q4_1, dot_q4_1, BlockQ4_1, kQK>();
    t.types[kQ5_0] = block_kernels<dequantize_q5_0, dot_q5_0, BlockQ5_0, kQK>();
    t.types[kQ5_1] = block_kernels<dequantize_q5_1, dot_q5_1, BlockQ5_1, kQK>();
    t.types[kQ8_0] = block_kernels<dequantize_q8_0, dot_q8_0, BlockQ8_0, kQK>();
    t.types[kQ4_K] = block_kernels<dequantize_q4_k, dot_q4_k, BlockQ4_K, kQKK>();
    t.types[kQ5_K] = block_kernels<dequantize_q5_k, dot_q5_k, BlockQ5_K, kQKK>();
    t.types[kQ6_K] = block_kernels<dequantize_q6_k, dot_q6_k, BlockQ6_K, kQKK>();
    t.quantize_act[kActQ8_0] = quantize_act_q8_0;
    t.quantize_act[kActQ8_1] = quantize_q8_1;
    t.quantize_act[kActQ8_K] = quantize_q8_k;
    t.math = {gm_swiglu,     gm_softmax,       gm_scores_f16, gm_mix_f16,
              to_f16_scalar, round_f16_scalar, geglu_scalar};
    t.sparse_down = sparse_down_scalar;
    t.colsparse = colsparse_scalar;
    t.u4_rows = u4_rows_scalar;
    return t;
}

}  // namespace

const KernelTable& scalar_table() {
    static const KernelTable table = make_scalar_table();
    return table;
}

}  // namespace powerinfer::tensor::kernels
