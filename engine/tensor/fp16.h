// Portable fp16/bf16 <-> fp32 conversions (IEEE, round to nearest even),
// bit-exact with ggml's. Internal header.
//
// The functions are static: a header compiled into both the baseline and the
// AVX-512 kernel files must not produce one shared out-of-line copy that the
// linker could pick from the AVX-512 object.
#pragma once

#include <cstdint>
#include <cstring>

namespace powerinfer::tensor {

static inline float fp32_from_bits(uint32_t w) {
    float f;
    std::memcpy(&f, &w, sizeof(f));
    return f;
}
static inline uint32_t fp32_to_bits(float f) {
    uint32_t w;
    std::memcpy(&w, &f, sizeof(w));
    return w;
}

// From Maratyszcza's FP16 library, as used by ggml.
static inline float fp16_to_fp32_portable(uint16_t h) {
    const uint32_t w = static_cast<uint32_t>(h) << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = 0xE0u << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized = fp32_from_bits((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = 126u << 23;
    const float magic_bias = 0.5f;
    const float denormalized = fp32_from_bits((two_w >> 17) | magic_mask) - magic_bias;
    const uint32_t denormalized_cutoff = 1u << 27;
    const uint32_t result = sign | (two_w < denormalized_cutoff ? fp32_to_bits(denormalized)
                                                                : fp32_to_bits(normalized));
    return fp32_from_bits(result);
}

static inline uint16_t fp32_to_fp16_portable(float f) {
    const float scale_to_inf = 0x1.0p+112f;
    const float scale_to_zero = 0x1.0p-110f;
    const uint32_t w = fp32_to_bits(f);
    float base = (fp32_from_bits(w & 0x7FFFFFFFu) * scale_to_inf) * scale_to_zero;
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = fp32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = fp32_to_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

static inline float bf16_to_fp32_portable(uint16_t h) {
    return fp32_from_bits(static_cast<uint32_t>(h) << 16);
}

// As ggml_compute_fp32_to_bf16: NaNs become quiet, otherwise round to nearest even.
static inline uint16_t fp32_to_bf16_portable(float f) {
    const uint32_t u = fp32_to_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64);
    return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1))) >> 16);
}

}  // namespace powerinfer::tensor
