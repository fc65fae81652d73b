// The dispatch table: one set of kernel function pointers per SIMD level.
// The scalar table is complete; a SIMD table may leave entries null, and the
// dispatcher then falls back to the next lower level's kernel.
//
// Internal header: not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/ggml_types.h"

namespace powerinfer::tensor::kernels {

// dst[n] = dequantized src; n a multiple of the block size.
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);
// Dot of one weight row (n elements) with activations in the vec_dot format.
using DotFn = float (*)(int64_t n, const void* w, const void* x);
// The same over listed rows: out[k] = dot(w + idx[k] * row_bytes, x).
using DotGatherFn = void (*)(int64_t n, const void* w, size_t row_bytes, const int32_t* idx,
                             int64_t count, const void* x, float* out);
// Dots of `rows` weight rows (row_bytes apart) with `count` activation
// vectors (x_stride bytes apart), bit-identical to DotFn (matmul):
// out[k * out_stride + r] = dot(w + r * row_bytes, x + k * x_stride).
using DotTileFn = void (*)(int64_t n, const void* w, size_t row_bytes, int64_t rows, const void* x,
                           size_t x_stride, int64_t count, float* out, size_t out_stride);
// Dots of `rows` consecutive weight rows (row_bytes apart) with one activation
// vector: out[r] = dot(w + r * row_bytes, x), bit-identical to DotFn (matvec).
using DotRowsFn = void (*)(int64_t n, const void* w, size_t row_bytes, int64_t rows, const void* x,
                           float* out);
// Dots of the rows of `n_panels` consecutive row panels (tensor/panels.h:
// 16 rows each, interleaved block by block) with `count` activation vectors,
// bit-identical to DotFn on the rows:
// out[k * out_stride + 16 * p + r] = dot(row 16 * p + r, x + k * x_stride).
using DotPanelFn = void (*)(int64_t n, const void* panels, int64_t n_panels, const void* x,
                            size_t x_stride, int64_t count, float* out, size_t out_stride);
// The n elements of a 32-element format rewritten as Q8_0 blocks (the same
// int8 values and fp16 scales): dst holds n / 32 BlockQ8_0.
using ToQ8Fn = void (*)(const void* src, void* dst, int64_t n);
// y[n] += a * dequantized w (n elements starting at a block boundary).
using AxpyFn = void (*)(int64_t n, const void* w, float a, float* y);
// Quantize n floats into an activation format.
using QuantizeFn = void (*)(const float* x, void* dst, int64_t n);

enum TypeIndex : int {
    kF32,
    kF16,
    kBF16,
    kQ4_0,
    kQ4_1,
    kQ5_0,
    kQ5_1,
    kQ8_0,
    kQ4_K,
    kQ5_K,
    kQ6_K,
    kNumTypes
};

// -1 for a type the kernels do not implement.
int type_index(GgmlType t);

// No default member initializers here: they would give these structs an
// inline constructor, which the AVX-512 file could emit and the linker could
// then hand to baseline code. Value-initialize instead (`KernelTable t{};`).
struct TypeKernels {
    DequantizeFn dequantize;
    DotFn dot;
    AxpyFn axpy;
    // A table that sets `dot` sets the other forms too (built on its own dot where no
    // faster form exists): merging levels takes the three together.
    DotRowsFn dot_rows;
    DotGatherFn dot_gather;
    DotTileFn dot_tile;
    DotPanelFn dot_panel;  // null where the level has no panel form
    // Set where this level's Q8_0 dot forms give this type's dot bits on the
    // rewritten blocks (Q4_0, Q5_0 on the x86 levels; null elsewhere).
    ToQ8Fn to_q8_0;
    // The tile over those rewritten blocks where the level has one for
    // their narrower range (null: Q8_0's dot_tile).
    DotTileFn dot_tile_q8;
};

// Activation formats, indexed separately from the weight types.
enum ActIndex : int { kActQ8_0, kActQ8_1, kActQ8_K, kNumActs };

// Float math with ggml's exact rounding (ggml_math.inc); every level gives
// the same bits, the SIMD files just run it faster.
struct MathKernels {
    void (*swiglu)(const float* g, const float* u, float* out, int64_t n);
    void (*softmax)(float* x, int64_t n);
    void (*scores_f16)(const uint16_t* keys, int64_t n_keys, int64_t dim, const uint16_t* q,
                       float scale, bool batched, float* out);
    void (*mix_f16)(const float* w, const uint16_t* v, int64_t n, int64_t dim, int64_t v_stride,
                    bool batched, float* out, float* scratch);
    // IEEE conversions to F16 (round to nearest even) as F16C does them:
    // y[i] = f16(x[i]), and x[i] = f32(f16(x[i])) in place.
    void (*to_f16)(const float* x, uint16_t* y, int64_t n);
    void (*round_f16)(float* x, int64_t n);
    // ggml_vec_geglu_f32 with its F16 table: 0 for g <= -10, g * u for
    // g >= 10, else table[f16(g)] * u. `table` has 65537 entries (the last
    // one pads a 32-bit gather at index 0xFFFF).
    void (*geglu)(const float* g, const float* u, const uint16_t* table, float* out, int64_t n);
};

// One token's column-sparse down product (tensor/sparse_down.h): plain
// pointers into a NeuronMajorDown and a SparseDownInput.
struct SparseDownArgs {
    const uint8_t* q;
    size_t col_bytes;
    const float* a;  // float scales, or null when a16/c16 hold them in fp16
    const float* c;
    const uint16_t* a16;
    const uint16_t* c16;
    int64_t n_out;
    const int32_t* quad_ids;
    const uint32_t* quad_qh;
    const int32_t* group;
    const int32_t* quad_begin;
    const float* dh;
    const float* hsum;
    int64_t n_groups;
};
// Outputs [32 * chunk_begin, 32 * chunk_end) of y; every level gives the same
// bits (integer sums, then the same float operations per output).
using SparseDownFn = void (*)(const SparseDownArgs& args, int64_t chunk_begin, int64_t chunk_end,
                              float* y);

// One token's input-sparse product (tensor/input_major.h): plain pointers
// into an InputMajorMatrix and a SparseInput.
struct ColSparseArgs {
    const uint8_t* q;  // tiles of tensor::kInputTileChunks chunks of 32 outputs
    int64_t n_in;
    size_t chunk_bytes;
    int bits;    // 4, 5, 6, 8 (signed)
    int offset;  // integer offset of q
    int64_t n_out, super_groups;
    const uint16_t* a16;  // fp16 scales, or null (K formats: sc * d16)
    const uint16_t* c16;  // fp16 additive terms, or null
    const int8_t* sc;
    const int8_t* m8;  // Q4_K mins (c = -(m * dmin)), or null
    const uint16_t* d16;
    const uint16_t* dmin16;
    const int32_t* quad_ids;
    const uint32_t* quad_qx;
    const int32_t* groups;
    const int32_t* quad_begin;
    const float* dx;
    const int32_t* qsum;
    const float* hsum;
    int64_t n_groups;
};
// Outputs [32 * chunk_begin, 32 * chunk_end) of y, the same bits on every level.
using ColSparseFn = void (*)(const ColSparseArgs& args, int64_t chunk_begin, int64_t chunk_end,
                             float* y);
// The scalar reference (tensor/input_major.cpp).
void colsparse_scalar(const ColSparseArgs& args, int64_t chunk_begin, int64_t chunk_end, float* y);

// Rows of a U4Rows matrix (tensor/u4_rows.h) times its int8 input:
// out[i] = xscale * (d[i] * sum_k u[i][k] x[k] + m[i] * xsum), the integer sum
// exact, so every level gives the same bits.
struct U4RowsArgs {
    const uint8_t* q;  // the first row
    size_t row_bytes;
    const float* d;
    const float* m;
    int64_t cols;  // a multiple of 64
    const int8_t* x;
    float xsum, xscale;
};
using U4RowsFn = void (*)(const U4RowsArgs& args, int64_t rows, float* out);
void u4_rows_scalar(const U4RowsArgs& args, int64_t rows, float* out);

struct KernelTable {
    const char* name;
    TypeKernels types[kNumTypes];
    QuantizeFn quantize_act[kNumActs];
    MathKernels math;
    SparseDownFn sparse_down;
    ColSparseFn colsparse;
    U4RowsFn u4_rows;
};

const KernelTable& scalar_table();
// Null where the file was not compiled for this target. Call only after the
// CPU has been checked for the level's instructions.
const KernelTable* avx2_table();
const KernelTable* avxvnni_table();
const KernelTable* avx512_table();

// Which levels the CPU can run; implemented in cpu_features.cpp, the one
// file that talks to cpuid.
struct CpuFeatures {
    bool avx2 = false;     // AVX2 + FMA + F16C
    bool avxvnni = false;  // AVX2 and AVX-VNNI (vpdpbusd on 256-bit registers)
    bool avx512 = false;   // AVX-512 F/BW/VL/VNNI
};
CpuFeatures detect_cpu_features();
// The CPU's marketing name ("Intel(R) Xeon(R) Platinum 8480+"), for reports.
std::string cpu_model_name();

}  // namespace powerinfer::tensor::kernels

namespace powerinfer::tensor::kernels {

// The table for the level currently selected (best available unless
// force_simd_level changed it); entries are never null.
const KernelTable& active_table();
// The complete scalar table (for the *_ref functions).
const KernelTable& reference_table();

}  // namespace powerinfer::tensor::kernels
