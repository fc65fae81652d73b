// Scalar reference kernels of the K-quant formats (Q4_K, Q5_K, Q6_K and the
// Q8_K activations): dequantize, quantize and dot, following ggml's
// reference C code (ggml-quants.c, ggml-cpu/quants.c, MIT licence) so that
// results are bit-compatible. The 32-element formats are in quant_ref.cpp.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quant_ref.h"

namespace powerinfer::tensor::ref {

using namespace blocks;

namespace {

// Round to nearest, ties to even, via the float mantissa (ggml's nearest_int).
inline int nearest_int(float fval) {
    float val = fval + 12582912.f;
    int i;
    std::memcpy(&i, &val, sizeof(int));
    return (i & 0x007fffff) - 0x00400000;
}

constexpr float kGroupMaxEps = 1e-15f;

// Unpacks the 6-bit scales and mins of a Q4_K/Q5_K block (ggml's utmp trick).
void unpack_scales_k4(const uint8_t* packed, uint8_t* scales, uint8_t* mins) {
    for (int j = 0; j < 8; ++j) scale_min_k4(j, packed, &scales[j], &mins[j]);
}

float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type) {
    float max = 0;
    float amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = -nmax / max;
    if (rmse_type == 0) {
        for (int i = 0; i < n; ++i) {
            const int l = nearest_int(iscale * x[i]);
            L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
        }
        return 1 / iscale;
    }
    // Only rmse_type 1 (weights x^2) is used by the Q6_K reference quantizer.
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = static_cast<int8_t>(l + nmax);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * x[i]);
            l = std::max(-nmax, std::min(nmax - 1, l));
            const float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = nearest_int(iscale * x[i]);
                L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        float diff = scale * L[i] + min - x[i];
        diff = diff * diff;
        best_error += weights[i] * diff;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * (x[i] - min));
            l = std::max(0, std::min(nmax, l));
            Laux[i] = static_cast<uint8_t>(l);
            const float w = weights[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                diff = diff * diff;
                cur_error += weights[i] * diff;
            }
            if (cur_error < best_error) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// Shared by Q4_K and Q5_K: per-sub-block scales/mins, packed into 6 bits,
// then the final levels L (0..nmax) recomputed with the packed values.
void quantize_k4_scales(const float* x, int nmax, float rmin, int nstep, uint16_t* d_out,
                        uint16_t* dmin_out, uint8_t* packed, uint8_t* L) {
    uint8_t Laux[32];
    float weights[32];
    float mins[kQKK / 32];
    float scales[kQKK / 32];
    float max_scale = 0;
    float max_min = 0;
    for (int j = 0; j < kQKK / 32; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
        scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux,
                                     rmin, 0.1f, nstep);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    std::memset(packed, 0, kScaleBytesK);
    for (int j = 0; j < kQKK / 32; ++j) {
        uint8_t ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
        uint8_t lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
        ls = std::min<uint8_t>(63, ls);
        lm = std::min<uint8_t>(63, lm);
        if (j < 4) {
            packed[j] = ls;
            packed[j + 4] = lm;
        } else {
            packed[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
            packed[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
            packed[j - 0] |= static_cast<uint8_t>((lm >> 4) << 6);
        }
    }
    *d_out = fp32_to_fp16_portable(max_scale / 63.f);
    *dmin_out = fp32_to_fp16_portable(max_min / 63.f);
    for (int j = 0; j < kQKK / 32; ++j) {
        uint8_t sc, m;
        scale_min_k4(j, packed, &sc, &m);
        const float d = fp16_to_fp32_portable(*d_out) * sc;
        if (!d) continue;
        const float dm = fp16_to_fp32_portable(*dmin_out) * m;
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearest_int((x[32 * j + ii] + dm) / d);
            L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        }
    }
}

}  // namespace

// ---------------------------------------------------------------- K-quants

void dequantize_q4_k(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ4_K*>(src);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const uint8_t* q = x[i].qs;
        const float d = fp16_to_fp32_portable(x[i].d);
        const float min = fp16_to_fp32_portable(x[i].dmin);
        int is = 0;
        uint8_t sc, m;
        for (int j = 0; j < kQKK; j += 64) {
            scale_min_k4(is + 0, x[i].scales, &sc, &m);
            const float d1 = d * sc;
            const float m1 = min * m;
            scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc;
            const float m2 = min * m;
            for (int l = 0; l < 32; ++l) *dst++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *dst++ = d2 * (q[l] >> 4) - m2;
            q += 32;
            is += 2;
        }
    }
}
void dequantize_q5_k(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ5_K*>(src);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const uint8_t* ql = x[i].qs;
        const uint8_t* qh = x[i].qh;
        const float d = fp16_to_fp32_portable(x[i].d);
        const float min = fp16_to_fp32_portable(x[i].dmin);
        int is = 0;
        uint8_t sc, m;
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0; j < kQKK; j += 64) {
            scale_min_k4(is + 0, x[i].scales, &sc, &m);
            const float d1 = d * sc;
            const float m1 = min * m;
            scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc;
            const float m2 = min * m;
            for (int l = 0; l < 32; ++l) *dst++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *dst++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
            ql += 32;
            is += 2;
            u1 = static_cast<uint8_t>(u1 << 2);
            u2 = static_cast<uint8_t>(u2 << 2);
        }
    }
}
void dequantize_q6_k(const void* src, float* dst, int64_t n) {
    const auto* x = static_cast<const BlockQ6_K*>(src);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_fp32_portable(x[i].d);
        const uint8_t* ql = x[i].ql;
        const uint8_t* qh = x[i].qh;
        const int8_t* sc = x[i].scales;
        for (int j = 0; j < kQKK; j += 128) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                dst[l + 0] = d * sc[is + 0] * q1;
                dst[l + 32] = d * sc[is + 2] * q2;
                dst[l + 64] = d * sc[is + 4] * q3;
                dst[l + 96] = d * sc[is + 6] * q4;
            }
            dst += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

void quantize_q4_k(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ4_K*>(dst);
    uint8_t L[kQKK];
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        quantize_k4_scales(x, 15, -1.f, 20, &y[i].d, &y[i].dmin, y[i].scales, L);
        uint8_t* q = y[i].qs;
        for (int j = 0; j < kQKK; j += 64) {
            for (int l = 0; l < 32; ++l)
                q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
            q += 32;
        }
    }
}
void quantize_q5_k(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ5_K*>(dst);
    uint8_t L[kQKK];
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        quantize_k4_scales(x, 31, -0.5f, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
        uint8_t* qh = y[i].qh;
        uint8_t* ql = y[i].qs;
        std::memset(qh, 0, kQKK / 8);
        uint8_t m1 = 1, m2 = 2;
        for (int nn = 0; nn < kQKK; nn += 64) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[nn + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] |= m1;
                }
                int l2 = L[nn + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] |= m2;
                }
                ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
            }
            m1 = static_cast<uint8_t>(m1 << 2);
            m2 = static_cast<uint8_t>(m2 << 2);
            ql += 32;
        }
    }
}
void quantize_q6_k(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ6_K*>(dst);
    int8_t L[kQKK];
    float scales[kQKK / 16];
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float max_scale = 0;
        float max_abs_scale = 0;
        for (int ib = 0; ib < kQKK / 16; ++ib) {
            const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1);
            scales[ib] = scale;
            const float abs_scale = std::fabs(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if (max_abs_scale < kGroupMaxEps) {
            std::memset(&y[i], 0, sizeof(BlockQ6_K));
            continue;
        }
        const float iscale = -128.f / max_scale;
        y[i].d = fp32_to_fp16_portable(1 / iscale);
        for (int ib = 0; ib < kQKK / 16; ++ib)
            y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
        for (int j = 0; j < kQKK / 16; ++j) {
            const float d = fp16_to_fp32_portable(y[i].d) * y[i].scales[j];
            if (!d) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearest_int(x[16 * j + ii] / d);
                l = std::max(-32, std::min(31, l));
                L[16 * j + ii] = static_cast<int8_t>(l + 32);
            }
        }
        uint8_t* ql = y[i].ql;
        uint8_t* qh = y[i].qh;
        for (int j = 0; j < kQKK; j += 128) {
            for (int l = 0; l < 32; ++l) {
                const uint8_t q1 = L[j + l + 0] & 0xF;
                const uint8_t q2 = L[j + l + 32] & 0xF;
                const uint8_t q3 = L[j + l + 64] & 0xF;
                const uint8_t q4 = L[j + l + 96] & 0xF;
                ql[l + 0] = static_cast<uint8_t>(q1 | (q3 << 4));
                ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
                qh[l] =
                    static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                         ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
            }
            ql += 64;
            qh += 32;
        }
    }
}
void quantize_q8_k(const float* x, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ8_K*>(dst);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        float max = 0;
        float amax = 0;
        for (int j = 0; j < kQKK; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (!amax) {
            std::memset(&y[i], 0, sizeof(BlockQ8_K));
            continue;
        }
        // -127 (not -128) keeps every q in [-127, 127], which the SIMD
        // kernels' sign tricks rely on.
        const float iscale = -127.f / max;
        for (int j = 0; j < kQKK; ++j)
            y[i].qs[j] = static_cast<int8_t>(std::min(127, nearest_int(iscale * x[j])));
        for (int j = 0; j < kQKK / 16; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
            y[i].bsums[j] = static_cast<int16_t>(sum);
        }
        y[i].d = 1 / iscale;
    }
}

// Q4_K and Q5_K share scales, mins and layout; Q5_K adds a fifth bit per
// weight from qh.
template <typename Block, bool kFifthBit>
float dot_k4(int64_t n, const void* w, const void* xv) {
    const auto* x = static_cast<const Block*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(xv);
    float sums[8] = {};
    float sumf = 0;
    for (int64_t i = 0; i < n / kQKK; ++i) {
        uint8_t scales[8], mins[8];
        unpack_scales_k4(x[i].scales, scales, mins);
        int32_t aux32[8] = {};
        const uint8_t* q4 = x[i].qs;
        const int8_t* q8 = y[i].qs;
        uint8_t m = 1;
        for (int j = 0; j < kQKK / 64; ++j) {
            for (int half = 0; half < 2; ++half) {
                const int32_t scale = scales[2 * j + half];
                for (int l = 0; l < 32; ++l) {
                    int a = half ? (q4[l] >> 4) : (q4[l] & 0xF);
                    if constexpr (kFifthBit) a += (x[i].qh[l] & m) ? 16 : 0;
                    aux32[l % 8] += scale * (a * q8[l]);
                }
                q8 += 32;
                m = static_cast<uint8_t>(m << 1);
            }
            q4 += 32;
        }
        int sumi = 0;
        for (int j = 0; j < kQKK / 16; ++j) sumi += y[i].bsums[j] * mins[j / 2];
        const float d = fp16_to_fp32_portable(x[i].d) * y[i].d;
        for (int l = 0; l < 8; ++l) sums[l] += d * aux32[l];
        const float dmin = fp16_to_fp32_portable(x[i].dmin) * y[i].d;
        sumf -= dmin * sumi;
    }
    for (float s : sums) sumf += s;
    return sumf;
}
float dot_q4_k(int64_t n, const void* w, const void* xv) {
    return dot_k4<BlockQ4_K, false>(n, w, xv);
}
float dot_q5_k(int64_t n, const void* w, const void* xv) {
    return dot_k4<BlockQ5_K, true>(n, w, xv);
}
float dot_q6_k(int64_t n, const void* w, const void* xv) {
    const auto* x = static_cast<const BlockQ6_K*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(xv);
    float sums[8] = {};
    for (int64_t i = 0; i < n / kQKK; ++i) {
        int8_t a[kQKK];
        const uint8_t* q4 = x[i].ql;
        const uint8_t* qh = x[i].qh;
        for (int j = 0; j < kQKK; j += 128) {
            for (int l = 0; l < 32; ++l) {
                a[j + l + 0] =
                    static_cast<int8_t>(((q4[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
                a[j + l + 32] =
                    static_cast<int8_t>(((q4[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
                a[j + l + 64] =
                    static_cast<int8_t>(((q4[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                a[j + l + 96] =
                    static_cast<int8_t>(((q4[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
            q4 += 64;
            qh += 32;
        }
        int32_t aux32[8] = {};
        for (int j = 0; j < kQKK / 16; ++j) {
            const int scale = x[i].scales[j];
            for (int l = 0; l < 16; ++l)
                aux32[l % 8] += scale * (a[16 * j + l] * y[i].qs[16 * j + l]);
        }
        const float d = fp16_to_fp32_portable(x[i].d) * y[i].d;
        for (int l = 0; l < 8; ++l) sums[l] += d * aux32[l];
    }
    float sumf = 0;
    for (float s : sums) sumf += s;
    return sumf;
}

}  // namespace powerinfer::tensor::ref
