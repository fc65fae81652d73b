// Scalar reference kernels, one per block format (internal header). The
// public API in quant.h dispatches to these or to their SIMD versions.
#pragma once

#include <cstdint>

namespace powerinfer::tensor::ref {

void dequantize_f32(const void* src, float* dst, int64_t n);
void dequantize_f16(const void* src, float* dst, int64_t n);
void dequantize_bf16(const void* src, float* dst, int64_t n);
void dequantize_q4_0(const void* src, float* dst, int64_t n);
void dequantize_q4_1(const void* src, float* dst, int64_t n);
void dequantize_q5_0(const void* src, float* dst, int64_t n);
void dequantize_q5_1(const void* src, float* dst, int64_t n);
void dequantize_q8_0(const void* src, float* dst, int64_t n);
void dequantize_q4_k(const void* src, float* dst, int64_t n);
void dequantize_q5_k(const void* src, float* dst, int64_t n);
void dequantize_q6_k(const void* src, float* dst, int64_t n);

// Weight quantizers (ggml's quantize_row_*_ref).
void quantize_f32(const float* x, void* dst, int64_t n);
void quantize_f16(const float* x, void* dst, int64_t n);
void quantize_bf16(const float* x, void* dst, int64_t n);
void quantize_q4_0(const float* x, void* dst, int64_t n);
void quantize_q4_1(const float* x, void* dst, int64_t n);
void quantize_q5_0(const float* x, void* dst, int64_t n);
void quantize_q5_1(const float* x, void* dst, int64_t n);
void quantize_q8_0(const float* x, void* dst, int64_t n);
void quantize_q4_k(const float* x, void* dst, int64_t n);
void quantize_q5_k(const float* x, void* dst, int64_t n);
void quantize_q6_k(const float* x, void* dst, int64_t n);
// Activation quantizers (ggml's x86 rounding, see quant_ref.cpp).
void quantize_act_q8_0(const float* x, void* dst, int64_t n);
void quantize_q8_1(const float* x, void* dst, int64_t n);
void quantize_q8_k(const float* x, void* dst, int64_t n);

// w in the weight format, x in its vec_dot format (F32 for float weights).
float dot_f32(int64_t n, const void* w, const void* x);
float dot_f16(int64_t n, const void* w, const void* x);
float dot_bf16(int64_t n, const void* w, const void* x);
float dot_q4_0(int64_t n, const void* w, const void* x);
float dot_q4_1(int64_t n, const void* w, const void* x);
float dot_q5_0(int64_t n, const void* w, const void* x);
float dot_q5_1(int64_t n, const void* w, const void* x);
float dot_q8_0(int64_t n, const void* w, const void* x);
float dot_q4_k(int64_t n, const void* w, const void* x);
float dot_q5_k(int64_t n, const void* w, const void* x);
float dot_q6_k(int64_t n, const void* w, const void* x);

}  // namespace powerinfer::tensor::ref
