// Helpers shared by the tensor tests (not part of the library).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/ggml_types.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/quant_blocks.h"

namespace powerinfer::tensor::testing {

inline const std::vector<GgmlType>& weight_types() {
    static const std::vector<GgmlType> t = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16,
                                            GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                                            GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q4_K,
                                            GgmlType::Q5_K, GgmlType::Q6_K};
    return t;
}

// The SIMD levels this CPU runs, "scalar" first.
inline std::vector<std::string> simd_levels() {
    const std::string current = simd_level();
    std::vector<std::string> out;
    for (const char* l : {"scalar", "avx2", "avxvnni", "avx512"})
        if (force_simd_level(l)) out.push_back(l);
    force_simd_level(current);
    return out;
}

// Restores the dispatcher's level when a test ends.
class LevelGuard {
public:
    LevelGuard() : saved_(simd_level()) {}
    ~LevelGuard() { force_simd_level(saved_); }
    LevelGuard(const LevelGuard&) = delete;
    LevelGuard& operator=(const LevelGuard&) = delete;

private:
    std::string saved_;
};

inline size_t row_bytes(GgmlType t, int64_t n) {
    return static_cast<size_t>(*ggml_row_bytes(t, static_cast<uint64_t>(n)));
}

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float scale = 1.0f) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    return v;
}

// A row of weights: either the reference quantization of random floats or,
// for block types, random bytes with sane fp16 scales (bit patterns a
// quantizer would rarely produce).
inline std::vector<uint8_t> random_row(std::mt19937& rng, GgmlType t, int64_t n, bool raw_bytes) {
    std::vector<uint8_t> out(row_bytes(t, n));
    const auto tr = ggml_traits(t);
    if (!raw_bytes || tr.block_elems == 1) {
        const auto x = random_floats(rng, n, 0.05f);
        quantize_row_ref(t, x.data(), out.data(), n);
        return out;
    }
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : out) b = static_cast<uint8_t>(byte(rng));
    std::uniform_real_distribution<float> scale(0.001f, 0.02f);
    std::vector<int> fp16_offsets;
    switch (t) {
        case GgmlType::Q4_1:
        case GgmlType::Q5_1:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
            fp16_offsets = {0, 2};
            break;
        case GgmlType::Q6_K:
            fp16_offsets = {208};
            break;
        default:
            fp16_offsets = {0};
            break;
    }
    for (size_t blk = 0; blk < out.size() / tr.block_bytes; ++blk)
        for (int off : fp16_offsets) {
            const uint16_t h = fp32_to_fp16(scale(rng) * (byte(rng) & 1 ? 1.0f : -1.0f));
            std::memcpy(out.data() + blk * tr.block_bytes + off, &h, 2);
        }
    return out;
}

// The float values that quantized activations stand for.
inline std::vector<double> dequantize_activations(const QuantizedVector& q) {
    using namespace blocks;
    std::vector<double> out(static_cast<size_t>(q.n));
    const uint8_t* p = q.data.data();
    switch (q.type) {
        case GgmlType::F32:
            for (int64_t i = 0; i < q.n; ++i) {
                float f;
                std::memcpy(&f, p + 4 * i, 4);
                out[i] = f;
            }
            break;
        case GgmlType::Q8_0:
            for (int64_t b = 0; b < q.n / kQK; ++b) {
                const auto* blk = reinterpret_cast<const BlockQ8_0*>(p) + b;
                for (int j = 0; j < kQK; ++j)
                    out[b * kQK + j] = double(fp16_to_fp32(blk->d)) * blk->qs[j];
            }
            break;
        case GgmlType::Q8_1:
            for (int64_t b = 0; b < q.n / kQK; ++b) {
                const auto* blk = reinterpret_cast<const BlockQ8_1*>(p) + b;
                for (int j = 0; j < kQK; ++j)
                    out[b * kQK + j] = double(fp16_to_fp32(blk->d)) * blk->qs[j];
            }
            break;
        case GgmlType::Q8_K:
            for (int64_t b = 0; b < q.n / kQKK; ++b) {
                const auto* blk = reinterpret_cast<const BlockQ8_K*>(p) + b;
                for (int j = 0; j < kQKK; ++j) out[b * kQKK + j] = double(blk->d) * blk->qs[j];
            }
            break;
        default:
            break;
    }
    return out;
}

inline bool same_bits(const float* a, const float* b, size_t n) {
    return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// A random matrix (odd rows: raw block bytes, see random_row), its
// reference dequantization and a view over it.
struct Matrix {
    std::vector<uint8_t> bytes;
    std::vector<float> deq;  // dequantize_row_ref of every row
    WeightView view;
};

inline Matrix make_matrix(GgmlType t, int64_t rows, int64_t cols, unsigned seed) {
    std::mt19937 rng(seed);
    Matrix m;
    const size_t rb = row_bytes(t, cols);
    m.bytes.resize(rb * static_cast<size_t>(rows));
    m.deq.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
        const auto row = random_row(rng, t, cols, r % 2 == 1);
        std::copy(row.begin(), row.end(), m.bytes.begin() + static_cast<std::ptrdiff_t>(r * rb));
        dequantize_row_ref(t, row.data(), m.deq.data() + r * cols, cols);
    }
    m.view = {t, m.bytes.data(), rows, cols, rb};
    return m;
}

}  // namespace powerinfer::tensor::testing
