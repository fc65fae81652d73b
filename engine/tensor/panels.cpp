#include "tensor/panels.h"

#include <atomic>
#include <cstring>

#include "tensor/kernels.h"
#include "tensor/panels_k.h"
#include "tensor/quant_blocks.h"

namespace powerinfer::tensor {

namespace {
// Rows up to 32768 elements (the kernels keep the tokens' scales on the stack).
constexpr int64_t kMaxPanelBlocks = 1024;
std::atomic<bool> g_enabled{true};
}  // namespace

void set_panels_enabled(bool on) { g_enabled.store(on); }

bool panels_enabled() {
    return g_enabled.load() && kernels::active_table().types[kernels::kQ4_1].dot_panel != nullptr;
}

bool panels_available(const WeightView& w) {
    if (!g_enabled.load() || !w.data || w.rows <= 0 || w.rows % kPanelRows != 0 ||
        w.cols % blocks::kQK != 0 || w.cols / blocks::kQK > kMaxPanelBlocks)
        return false;
    const int i = kernels::type_index(w.type);
    return (w.type == GgmlType::Q4_0 || w.type == GgmlType::Q4_1 || w.type == GgmlType::Q8_0 ||
            w.type == GgmlType::Q5_0 || k_panels_shape(w)) &&
           i >= 0 && kernels::active_table().types[i].dot_panel != nullptr;
}

WeightVector<uint8_t> pack_panels(const WeightView& w) {
    if (!panels_available(w)) return {};
    WeightVector<uint8_t> out(static_cast<size_t>(w.rows) * w.row_bytes);
    pack_panels_into(w, out.data());
    return out;
}

void pack_panels_into(const WeightView& w, uint8_t* dst) {
    if (w.type == GgmlType::Q4_K || w.type == GgmlType::Q5_K || w.type == GgmlType::Q6_K) {
        (w.type == GgmlType::Q4_K   ? pack_panels_q4_k
         : w.type == GgmlType::Q5_K ? pack_panels_q5_k
                                    : pack_panels_q6_k)(w, dst);
        return;
    }
    const int64_t nb = w.cols / blocks::kQK;
    const bool q8 = w.type == GgmlType::Q8_0;
    const bool q5 = w.type == GgmlType::Q5_0;
    const bool q4 = w.type == GgmlType::Q4_0;
    const size_t block = q8   ? sizeof(blocks::BlockQ8_0)
                         : q5 ? sizeof(blocks::BlockQ5_0)
                         : q4 ? sizeof(blocks::BlockQ4_0)
                              : sizeof(blocks::BlockQ4_1);
    const size_t panel_block = kPanelRows * block;
    for (int64_t p = 0; p < w.rows / kPanelRows; ++p)
        for (int64_t ib = 0; ib < nb; ++ib, dst += panel_block)
            for (int64_t r = 0; r < kPanelRows; ++r) {
                const uint8_t* src = w.row(p * kPanelRows + r) + ib * block;
                if (q5) {
                    blocks::BlockQ5_0 b;
                    std::memcpy(&b, src, sizeof(b));
                    std::memcpy(dst + 2 * r, &b.d, 2);
                    uint32_t qh, fifth = 0;
                    std::memcpy(&qh, b.qh, 4);
                    // Bit g of byte j: element 4g + j's (panels.h). The
                    // multiply moves bit j of a group's four to bit 8j
                    // (shifted copies 7 bits apart: no carries).
                    for (uint32_t g = 0; g < 8; ++g)
                        fifth |= ((((qh >> (4 * g)) & 0xFu) * 0x00204081u) & 0x01010101u) << g;
                    std::memcpy(dst + 32 + 4 * r, &fifth, 4);
                    for (int k = 0; k < 4; ++k)
                        std::memcpy(dst + 96 + 64 * k + 4 * r, b.qs + 4 * k, 4);
                } else if (q4) {
                    blocks::BlockQ4_0 b;
                    std::memcpy(&b, src, sizeof(b));
                    std::memcpy(dst + 2 * r, &b.d, 2);
                    for (int k = 0; k < 4; ++k)
                        std::memcpy(dst + 32 + 64 * k + 4 * r, b.qs + 4 * k, 4);
                } else if (q8) {
                    blocks::BlockQ8_0 b;
                    std::memcpy(&b, src, sizeof(b));
                    std::memcpy(dst + 2 * r, &b.d, 2);
                    for (int k = 0; k < 8; ++k)
                        for (int j = 0; j < 4; ++j)
                            dst[32 + 64 * k + 4 * r + j] =
                                static_cast<uint8_t>(static_cast<uint8_t>(b.qs[4 * k + j]) ^ 0x80);
                } else {
                    blocks::BlockQ4_1 b;
                    std::memcpy(&b, src, sizeof(b));
                    std::memcpy(dst + 2 * r, &b.d, 2);
                    std::memcpy(dst + 32 + 2 * r, &b.m, 2);
                    for (int k = 0; k < 4; ++k)
                        std::memcpy(dst + 64 + 64 * k + 4 * r, b.qs + 4 * k, 4);
                }
            }
}

}  // namespace powerinfer::tensor
