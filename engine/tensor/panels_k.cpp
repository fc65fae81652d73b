#include "tensor/panels_k.h"

#include <cstring>

#include "tensor/panels.h"
#include "tensor/quant_blocks.h"

namespace powerinfer::tensor {

namespace {
constexpr int64_t kMaxSuperBlocks = 128;  // rows up to 32768 elements
}  // namespace

bool k_panels_shape(const WeightView& w) {
    return (w.type == GgmlType::Q4_K || w.type == GgmlType::Q6_K) && w.cols % blocks::kQKK == 0 &&
           w.cols / blocks::kQKK <= kMaxSuperBlocks;
}

// Per 16-row super-block (2304 bytes): d[16], dmin[16], the scale bytes as
// three groups of 16 x 4 (row r's bytes 4g..4g+3 at 64 + 64g + 4r), then 32
// groups of 16 x 4 nibble bytes (row r's qs[4k..4k+3] at 256 + 64k + 4r).
void pack_panels_q4_k(const WeightView& w, uint8_t* dst) {
    using blocks::BlockQ4_K;
    const int64_t nb = w.cols / blocks::kQKK;
    constexpr size_t kBlock = kPanelRows * sizeof(BlockQ4_K);
    for (int64_t p = 0; p < w.rows / kPanelRows; ++p)
        for (int64_t ib = 0; ib < nb; ++ib, dst += kBlock)
            for (int64_t r = 0; r < kPanelRows; ++r) {
                BlockQ4_K b;
                std::memcpy(&b, w.row(p * kPanelRows + r) + ib * sizeof(BlockQ4_K), sizeof(b));
                std::memcpy(dst + 2 * r, &b.d, 2);
                std::memcpy(dst + 32 + 2 * r, &b.dmin, 2);
                for (int g = 0; g < 3; ++g)
                    std::memcpy(dst + 64 + 64 * g + 4 * r, b.scales + 4 * g, 4);
                for (int k = 0; k < 32; ++k)
                    std::memcpy(dst + 256 + 64 * k + 4 * r, b.qs + 4 * k, 4);
            }
}

// Per 16-row super-block (3360 bytes): ql (32 groups of 16 x 4 bytes, row
// r's ql[4k..4k+3] at 64k + 4r), qh (16 groups, at 2048 + 64k + 4r), scales
// (4 groups, at 3072 + 64k + 4r), then d[16] at 3328.
void pack_panels_q6_k(const WeightView& w, uint8_t* dst) {
    using blocks::BlockQ6_K;
    const int64_t nb = w.cols / blocks::kQKK;
    constexpr size_t kBlock = kPanelRows * sizeof(BlockQ6_K);
    for (int64_t p = 0; p < w.rows / kPanelRows; ++p)
        for (int64_t ib = 0; ib < nb; ++ib, dst += kBlock)
            for (int64_t r = 0; r < kPanelRows; ++r) {
                BlockQ6_K b;
                std::memcpy(&b, w.row(p * kPanelRows + r) + ib * sizeof(BlockQ6_K), sizeof(b));
                for (int k = 0; k < 32; ++k) std::memcpy(dst + 64 * k + 4 * r, b.ql + 4 * k, 4);
                for (int k = 0; k < 16; ++k)
                    std::memcpy(dst + 2048 + 64 * k + 4 * r, b.qh + 4 * k, 4);
                for (int k = 0; k < 4; ++k)
                    std::memcpy(dst + 3072 + 64 * k + 4 * r, b.scales + 4 * k, 4);
                std::memcpy(dst + 3328 + 2 * r, &b.d, 2);
            }
}

}  // namespace powerinfer::tensor
