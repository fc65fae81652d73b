// Row panels: a second layout of a Q4_1 weight matrix in which 16 rows are
// interleaved block by block, so that one AVX-512 instruction works on the
// same 4 elements of 16 rows (one row per lane). Per 32-element block of a
// panel, 320 bytes (the same bytes as the 16 rows' blocks, reordered):
//   d[16]  (fp16, one per row)
//   m[16]  (fp16)
//   for k = 0..3: 16 x qs[4k..4k+3] (row r's four bytes at 4r)
// Byte qs[j] holds element j (low nibble) and element j + 16 (high nibble),
// so the low nibbles of group k are elements 4k..4k+3 and the high ones
// 16+4k..16+4k+3: exactly the eight 4-element partial sums that the row
// kernels (and llama.cpp's) convert and accumulate, one lane each. The panel
// kernel keeps those eight accumulators apart and adds them up in the row
// kernel's order, so both layouts give the same bits.
//
// Internal header: not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/matmul.h"

namespace powerinfer::tensor {

constexpr int64_t kPanelRows = 16;
constexpr size_t kPanelBlockBytes = 320;  // 16 rows x 20 bytes

// Whether the active kernels have a panel form for this matrix (type, shape)
// and panels are enabled.
bool panels_available(const WeightView& w);
// Panels on (the default) or off for matrices packed from now on: the
// benchmarks compare both layouts in one process.
void set_panels_enabled(bool on);
// Whether Q4_1 matrices are packed into panels now (enabled, and the active
// kernels have the panel form).
bool panels_enabled();
// The matrix in panel layout (w.rows * w.row_bytes bytes); empty where
// panels_available is false.
std::vector<uint8_t> pack_panels(const WeightView& w);

}  // namespace powerinfer::tensor
