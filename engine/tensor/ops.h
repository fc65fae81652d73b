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
// out[i] = silu(gate[i]) * up[i]
void swiglu(const float* gate, const float* up, float* out, int64_t n);
// In-place numerically stable softmax.
void softmax(float* x, int64_t n);
void add(float* y, const float* x, int64_t n);  // y += x

}  // namespace powerinfer::tensor
