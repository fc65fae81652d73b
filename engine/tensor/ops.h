// Elementwise and normalisation ops the model graph needs, in float32.
#pragma once

#include <cstdint>

namespace powerinfer::tensor {

// y = x / sqrt(mean(x^2) + eps) * weight
void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps);
// Rotary embedding in place over one head of `head_dim` values at position pos.
// NeoX style rotates pairs (i, i + n_rot/2); normal style rotates (2i, 2i+1).
// freq_scale multiplies the position (linear scaling).
void rope(float* head, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
          float freq_scale, bool neox);
void silu(float* x, int64_t n);
void gelu(float* x, int64_t n);

// The next four round exactly as llama.cpp's CPU backend does (x86,
// AVX-512 build; see ggml_math.inc), on every SIMD level.
// out[i] = silu(gate[i]) * up[i], for one row of n (16-lane blocks: call it
// per row when rows are not a multiple of 16 long).
void swiglu(const float* gate, const float* up, float* out, int64_t n);
// out = gelu(gate) * up as ggml's geglu computes it: the tanh GELU looked up
// in a table over every F16 value (GGML_GELU_FP16), exact beyond +-10.
void geglu(const float* gate, const float* up, float* out, int64_t n);
// In-place softmax of one attention row.
void softmax(float* x, int64_t n);
// Attention scores out[t] = (keys row t . q) * scale, t < n_keys, over F16
// rows of `dim` (at most 512) values; `batched` selects the order ggml uses
// inside a product of 2+ tokens (tinyBLAS) instead of its vector dot.
void scores_f16(const uint16_t* keys, int64_t n_keys, int64_t dim, const uint16_t* q, float scale,
                bool batched, float* out);
// out[d] = sum_p w[p] * v[p * v_stride + d] for d < dim, p < n, in the order
// ggml's (transposed-V) product uses; w must hold F16-representable values.
void mix_f16(const float* w, const uint16_t* v, int64_t n, int64_t dim, int64_t v_stride,
             bool batched, float* out, float* scratch);
inline int64_t mix_f16_scratch_floats(int64_t dim) { return 64 * dim; }
// y[i] = F16(x[i]) (round to nearest even), and x[i] = F16(x[i]) as a float:
// fp32_to_fp16 over a row, at the active SIMD level.
void to_f16(const float* x, uint16_t* y, int64_t n);
void round_to_f16(float* x, int64_t n);
void add(float* y, const float* x, int64_t n);  // y += x

}  // namespace powerinfer::tensor
