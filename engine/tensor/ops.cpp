#include "tensor/ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "tensor/kernels.h"
#include "tensor/quant.h"

namespace powerinfer::tensor {

// As ggml: the sum of squares in double, the scale in float.
void rms_norm(const float* x, const float* weight, float* y, int64_t n, float eps) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float sq = x[i] * x[i];  // squared in float, as ggml
        sum += sq;
    }
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * weight[i];
}

void rope(float* head, int64_t head_dim, int64_t n_rot, int64_t pos, float freq_base,
          float freq_scale, bool neox) {
    if (n_rot <= 0 || n_rot % 2 != 0 || n_rot > head_dim)
        throw EngineError("rope: rotary dimension " + std::to_string(n_rot) +
                          " must be even and at most the head size " + std::to_string(head_dim) +
                          "; check the model's rope metadata");
    const int64_t half = n_rot / 2;
    // theta_i = pos * freq_scale * base^(-2i/n_rot), in double: at positions
    // in the thousands a float product would lose the angle's low bits.
    const double p = static_cast<double>(pos) * freq_scale;
    const double log_base = std::log(static_cast<double>(freq_base));
    for (int64_t i = 0; i < half; ++i) {
        const double theta = p * std::exp(-2.0 * static_cast<double>(i) / n_rot * log_base);
        const float c = static_cast<float>(std::cos(theta));
        const float s = static_cast<float>(std::sin(theta));
        const int64_t a = neox ? i : 2 * i;
        const int64_t b = neox ? i + half : 2 * i + 1;
        const float x0 = head[a];
        const float x1 = head[b];
        head[a] = x0 * c - x1 * s;
        head[b] = x0 * s + x1 * c;
    }
}

void silu(float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

// The tanh approximation, as ggml's gelu.
void gelu(float* x, int64_t n) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoefA = 0.044715f;
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        x[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * v * (1.0f + kCoefA * v * v)));
    }
}

void geglu(const float* gate, const float* up, float* out, int64_t n) {
    static const std::vector<uint16_t> table = [] {
        std::vector<uint16_t> t((size_t{1} << 16) + 1, 0);  // + 1: the kernels' gather padding
        // ggml_gelu_f32 as ggml's x86 builds compile it (FMA contraction
        // of 1 + a*x*x), rounded to F16.
        constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
        constexpr float kCoefA = 0.044715f;
        for (size_t i = 0; i < (size_t{1} << 16); ++i) {
            const float v = fp16_to_fp32(static_cast<uint16_t>(i));
            const float inner = kSqrt2OverPi * v * std::fma(kCoefA * v, v, 1.0f);
            t[i] = fp32_to_fp16(0.5f * v * (1.0f + std::tanh(inner)));
        }
        return t;
    }();
    kernels::active_table().math.geglu(gate, up, table.data(), out, n);
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
    kernels::active_table().math.swiglu(gate, up, out, n);
}

void softmax(float* x, int64_t n) { kernels::active_table().math.softmax(x, n); }

void scores_f16(const uint16_t* keys, int64_t n_keys, int64_t dim, const uint16_t* q, float scale,
                bool batched, float* out) {
    if (dim > 512)
        throw EngineError("attention head size " + std::to_string(dim) +
                          " is larger than the supported 512");
    kernels::active_table().math.scores_f16(keys, n_keys, dim, q, scale, batched, out);
}

void mix_f16(const float* w, const uint16_t* v, int64_t n, int64_t dim, int64_t v_stride,
             bool batched, float* out, float* scratch) {
    if (dim > 512)
        throw EngineError("attention value size " + std::to_string(dim) +
                          " is larger than the supported 512");
    kernels::active_table().math.mix_f16(w, v, n, dim, v_stride, batched, out, scratch);
}

void to_f16(const float* x, uint16_t* y, int64_t n) { kernels::active_table().math.to_f16(x, y, n); }

void round_to_f16(float* x, int64_t n) { kernels::active_table().math.round_f16(x, n); }

void add(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace powerinfer::tensor
