// Row panels of the K-quants (tensor/panels.h): the packing side. The
// layout is described with its kernel (kernels_panels_k.inc).
//
// Internal header: not part of the public API.
#pragma once

#include <cstdint>

#include "tensor/matmul.h"

namespace powerinfer::tensor {

// Whether this K-quant matrix's shape has a panel form (Q4_K, Q5_K or Q6_K: cols
// a multiple of 256, at most 32768).
bool k_panels_shape(const WeightView& w);
// Packs w (Q4_K, rows a multiple of kPanelRows) into dst (w.rows *
// w.row_bytes bytes): 16 rows interleaved super-block by super-block.
void pack_panels_q4_k(const WeightView& w, uint8_t* dst);
// The same for Q5_K and Q6_K.
void pack_panels_q5_k(const WeightView& w, uint8_t* dst);
void pack_panels_q6_k(const WeightView& w, uint8_t* dst);

}  // namespace powerinfer::tensor
