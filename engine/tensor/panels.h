// Row panels: a second layout of a Q4_0, Q4_1, Q5_0, Q8_0, Q4_K, Q5_K or Q6_K weight matrix in
// which 16 rows are interleaved block by block, so that one AVX-512 instruction
// (or one AVX2 instruction per half of 8 rows) works on the same 4 elements of
// 16 rows (one row per lane). Per 32-element block of a panel, the 16 rows'
// block bytes reordered:
//   Q4_0 (288 bytes): d[16], then the nibbles as Q4_1's (at 32). A quant is
//     the nibble, the signed quant + 8, taken back out as for Q5_0's 16.
//     AVX2 and AVX-VNNI only: the AVX-512 level keeps Q4_0 in rows.
//   Q4_1 (320 bytes): d[16], m[16] (fp16, one per row), then for k = 0..3:
//     16 x qs[4k..4k+3] (row r's four bytes at 4r). Byte qs[j] holds element
//     j (low nibble) and element j + 16 (high nibble), so the low nibbles of
//     group k are elements 4k..4k+3 and the high ones 16+4k..16+4k+3.
//   Q8_0 (544 bytes): d[16], then for k = 0..7: 16 x (qs[4k..4k+3] + 128)
//     (unsigned, as the u8 x s8 dot instruction takes them; the kernel takes
//     the offset back out of each integer sum exactly).
//   Q5_0 (352 bytes): d[16], then 16 x 4 bytes of fifth bits (row r's at
//     32 + 4r, regrouped: bit g of byte j is the fifth bit of element
//     4g + j, so one shift puts group g's four at bit 4 of their bytes),
//     then the nibbles as Q4_1's (at 96). A quant is nibble | fifth << 4,
//     the signed quant + 16; the kernel takes 16 times the activations'
//     group sums back out, as for Q8_0's 128.
// In each layout a lane's eight 4-element groups are exactly the eight partial
// sums that the row kernels (and llama.cpp's) convert and accumulate. The
// panel kernel keeps those eight accumulators apart and adds them up in the
// row kernel's order, so both layouts give the same bits.
// Q4_K, Q5_K and Q6_K panels (Q6_K not on AVX2; on AVX2 and AVX-VNNI as two halves of eight rows)
// interleave 16 rows per 256-element super-block (the
// same bytes per super-block as 16 rows; layouts in tensor/panels_k.cpp and
// kernels_panels_k.inc): their kernels form the row kernels' eight exact
// int32 lane sums per super-block and row, then the same float operations.
//
// Internal header: not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/weight_memory.h"
#include "tensor/matmul.h"

namespace powerinfer::tensor {

constexpr int64_t kPanelRows = 16;

// Whether the active kernels have a panel form for this matrix (type, shape)
// and panels are enabled.
bool panels_available(const WeightView& w);
// Panels on (the default) or off for matrices packed from now on: the
// benchmarks compare both layouts in one process.
void set_panels_enabled(bool on);
// Whether Q4_1 matrices are packed into panels now (enabled, and the active
// kernels have the panel form; Q8_0's comes with it).
bool panels_enabled();
// The matrix in panel layout (w.rows * w.row_bytes bytes, in the memory the
// model's panels get: common/weight_memory.h); empty where panels_available
// is false.
WeightVector<uint8_t> pack_panels(const WeightView& w);
// The same into dst (w.rows * w.row_bytes bytes) for a matrix that
// panels_available accepts. Panels are whole rows of 16 laid out one after
// the other, so rows [r0, r1) of a matrix (multiples of kPanelRows) pack into
// dst + r0 * row_bytes from w.slice(r0, r1): slices can be packed in parallel.
void pack_panels_into(const WeightView& w, uint8_t* dst);

}  // namespace powerinfer::tensor
