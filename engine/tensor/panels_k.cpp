#include "tensor/panels_k.h"

#include <cstring>
#include <type_traits>

#include "tensor/panels.h"
#include "tensor/quant_blocks.h"

namespace powerinfer::tensor {

namespace {
constexpr int64_t kMaxSuperBlocks = 128;  // rows up to 32768 elements
}  // namespace

bool k_panels_shape(const WeightView& w) {
    return (w.type == GgmlType::Q4_K || w.type == GgmlType::Q5_K || w.type == GgmlType::Q6_K) &&
           w.cols % blocks::kQKK == 0 && w.cols / blocks::kQKK <= kMaxSuperBlocks;
}

namespace {

// Every 16-row super-block of w's panels, kPanelRows * sizeof(Block) bytes:
// place(block, dst, r) puts row r's block into it.
template <typename Block, typename Place>
void pack_super_blocks(const WeightView& w, uint8_t* dst, Place place) {
    const int64_t nb = w.cols / blocks::kQKK;
    for (int64_t p = 0; p < w.rows / kPanelRows; ++p)
        for (int64_t ib = 0; ib < nb; ++ib, dst += kPanelRows * sizeof(Block))
            for (int64_t r = 0; r < kPanelRows; ++r) {
                Block b;
                std::memcpy(&b, w.row(p * kPanelRows + r) + ib * sizeof(Block), sizeof(b));
                place(b, dst, r);
            }
}

// `groups` groups of 16 x 4 bytes at dst: row r's src[4k..4k+3] at 64k + 4r.
void spread(uint8_t* dst, const uint8_t* src, int groups, int64_t r) {
    for (int k = 0; k < groups; ++k) std::memcpy(dst + 64 * k + 4 * r, src + 4 * k, 4);
}

}  // namespace

// Q4_K, per 16-row super-block (2304 bytes): d[16], dmin[16], the scale
// bytes as three groups of 16 x 4 (row r's bytes 4g..4g+3 at 64 + 64g + 4r),
// then 32 groups of 16 x 4 nibble bytes (row r's qs[4k..4k+3] at 256 + 64k +
// 4r). Q5_K (2816 bytes): the same with the fifth bits between, as eight
// groups of 16 x 4 (row r's qh[4k..4k+3] at 256 + 64k + 4r), and the nibbles
// at 768.
template <typename Block>
void pack_panels_k4(const WeightView& w, uint8_t* dst) {
    pack_super_blocks<Block>(w, dst, [](const Block& b, uint8_t* d, int64_t r) {
        constexpr bool five = std::is_same_v<Block, blocks::BlockQ5_K>;
        std::memcpy(d + 2 * r, &b.d, 2);
        std::memcpy(d + 32 + 2 * r, &b.dmin, 2);
        spread(d + 64, b.scales, 3, r);
        if constexpr (five) spread(d + 256, b.qh, 8, r);
        spread(d + (five ? 768 : 256), b.qs, 32, r);
    });
}

void pack_panels_q4_k(const WeightView& w, uint8_t* dst) {
    pack_panels_k4<blocks::BlockQ4_K>(w, dst);
}

void pack_panels_q5_k(const WeightView& w, uint8_t* dst) {
    pack_panels_k4<blocks::BlockQ5_K>(w, dst);
}

// Per 16-row super-block (3360 bytes): ql (32 groups of 16 x 4 bytes, row
// r's ql[4k..4k+3] at 64k + 4r), qh (16 groups, at 2048 + 64k + 4r), scales
// (4 groups, at 3072 + 64k + 4r), then d[16] at 3328.
void pack_panels_q6_k(const WeightView& w, uint8_t* dst) {
    pack_super_blocks<blocks::BlockQ6_K>(
        w, dst, [](const blocks::BlockQ6_K& b, uint8_t* d, int64_t r) {
            spread(d, b.ql, 32, r);
            spread(d + 2048, b.qh, 16, r);
            spread(d + 3072, reinterpret_cast<const uint8_t*>(b.scales), 4, r);
            std::memcpy(d + 3328 + 2 * r, &b.d, 2);
        });
}

}  // namespace powerinfer::tensor
