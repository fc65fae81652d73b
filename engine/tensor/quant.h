// Quantized block formats, bit-compatible with GGUF/ggml: dequantize,
// quantize (reference), and quantized dot products. Every SIMD path has a
// scalar reference (the *_ref functions) it is tested against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/ggml_types.h"

namespace powerinfer::tensor {

// fp16 / bf16 <-> f32 (IEEE round-to-nearest-even).
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);

// n must be a multiple of the type's block size.
void dequantize_row_ref(GgmlType t, const void* src, float* dst, int64_t n);
void dequantize_row(GgmlType t, const void* src, float* dst, int64_t n);  // dispatched
// Reference quantizer (what ggml's quantize_row_*_ref does); used by the GGUF
// writer for synthetic models and by tests. Throws EngineError for a type it
// cannot produce.
void quantize_row_ref(GgmlType t, const float* src, void* dst, int64_t n);

// Activations are quantized once per vector into the format the weight
// type's dot product consumes (Q8_0-style for the 32-element formats, Q8_K
// for K-quants, F32 for float weights).
GgmlType vec_dot_type(GgmlType weight_type);
struct QuantizedVector {
    GgmlType type = GgmlType::F32;  // the activation format
    int64_t n = 0;
    std::vector<uint8_t> data;
};
void quantize_activations(GgmlType weight_type, const float* x, int64_t n, QuantizedVector& out);
// The scalar reference of quantize_activations (for tests).
void quantize_activations_ref(GgmlType weight_type, const float* x, int64_t n,
                              QuantizedVector& out);

// Dot product of one weight row with quantized activations (n elements).
float vec_dot_ref(GgmlType weight_type, int64_t n, const void* w_row, const QuantizedVector& x);
float vec_dot(GgmlType weight_type, int64_t n, const void* w_row, const QuantizedVector& x);

// Which SIMD level the dispatcher selected ("avx512", "avxvnni", "avx2",
// "scalar").
std::string simd_level();
// Force a level for tests/benchmarks ("scalar" disables SIMD); returns false
// if the CPU lacks it.
bool force_simd_level(const std::string& level);
// The levels this CPU can run, lowest first ("scalar" is always there).
std::vector<std::string> available_simd_levels();
// The CPU's name as cpuid (or the OS) reports it, for benchmark tables.
std::string cpu_model();

}  // namespace powerinfer::tensor
