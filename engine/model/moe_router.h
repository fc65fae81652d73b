// The router product of a mixture-of-experts layer with F32 weights (as
// llama.cpp's converters store ffn_gate_inp) in the summation order ggml
// uses: its vector dot for one token, llamafile's tinyBLAS for 2+ tokens.
// The AVX2/FMA build of the same code is chosen at run time.
#pragma once

#include <cstdint>

namespace powerinfer::model {

// logits[r] = w[r][0..n) . x for r in [r0, r1); batched: the product is
// part of a batch of 2+ tokens.
void router_rows_f32(const float* w, int64_t n, int64_t r0, int64_t r1, const float* x,
                     bool batched, float* logits);

namespace detail {
// moe_router_x86.cpp: the same code compiled for AVX2/FMA (x86 only).
void router_rows_f32_avx2(const float* w, int64_t n, int64_t r0, int64_t r1, const float* x,
                          bool batched, float* logits);
}  // namespace detail

}  // namespace powerinfer::model
