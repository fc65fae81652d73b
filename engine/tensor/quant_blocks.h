// The ggml block layouts, written once. Every kernel (reference and SIMD)
// reads blocks through these structs; the static_asserts tie them to the
// shared type table's byte sizes (common/ggml_types.cpp).
//
// Internal header: not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>

namespace powerinfer::tensor::blocks {

constexpr int kQK = 32;    // elements per block of the 32-element formats
constexpr int kQKK = 256;  // elements per K-quant super-block
constexpr int kScaleBytesK = 12;

// Weights: 4-bit, symmetric: x = d * (q - 8).
struct BlockQ4_0 {
    uint16_t d;           // fp16
    uint8_t qs[kQK / 2];  // element j in the low nibble of qs[j], j+16 in the high one
};
// 4-bit, asymmetric: x = d * q + m.
struct BlockQ4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[kQK / 2];
};
// 5-bit, symmetric: x = d * (q - 16); bit 4 of element j is bit j of qh.
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
// 5-bit, asymmetric: x = d * q + m.
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
// 8-bit, symmetric: x = d * q. Also the activation format for Q4_0/Q5_0/Q8_0.
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[kQK];
};
// Activation format for Q4_1/Q5_1: s = d * sum(qs) carries the zero-point term.
struct BlockQ8_1 {
    uint16_t d;
    uint16_t s;
    int8_t qs[kQK];
};
// 4-bit K-quant: 8 sub-blocks of 32 with 6-bit scales and mins.
// x = d * sc[j] * q - dmin * m[j].
struct BlockQ4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[kScaleBytesK];
    uint8_t qs[kQKK / 2];
};
// 5-bit K-quant: as Q4_K plus one high bit per element in qh.
struct BlockQ5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[kScaleBytesK];
    uint8_t qh[kQKK / 8];
    uint8_t qs[kQKK / 2];
};
// 6-bit K-quant: 16 sub-blocks of 16 with int8 scales: x = d * sc[j] * (q - 32).
struct BlockQ6_K {
    uint8_t ql[kQKK / 2];
    uint8_t qh[kQKK / 4];
    int8_t scales[kQKK / 16];
    uint16_t d;
};
// Activation format for the K-quants: float scale, sums of 16-element groups.
struct BlockQ8_K {
    float d;
    int8_t qs[kQKK];
    int16_t bsums[kQKK / 16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
// Q5_K begins as Q4_K (d, dmin, scales): code that reads both takes Q4_K's offsets.
static_assert(offsetof(BlockQ5_K, dmin) == offsetof(BlockQ4_K, dmin) &&
              offsetof(BlockQ5_K, scales) == offsetof(BlockQ4_K, scales));

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block.
// static: kernels compiled with different ISA flags must not share one
// out-of-line copy of a helper (the linker could pick the AVX-512 one).
static inline void scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4);
    }
}

}  // namespace powerinfer::tensor::blocks
