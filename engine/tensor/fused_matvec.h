// Several matrix-vector products that share one quantized input (q/k/v,
// gate/up) in a single pool dispatch: one synchronisation instead of one per
// matrix, which matters when the products are small (a 135M model's are
// 0.1-0.9 MB each) or the machine is oversubscribed.
#pragma once

#include <span>

#include "tensor/matmul.h"

namespace powerinfer::tensor {

// ys[k][0..ws[k].rows) = ws[k] x. Every matrix must take xq as it is (same
// activation format and length); results are bit-identical to matvec_q.
void matvec_fused(ThreadPool& pool, std::span<const WeightView> ws,
                  std::span<float* const> ys, const QuantizedVector& xq);

// (can_fuse, in tensor/matmul.h, says whether matrices share the input.)

}  // namespace powerinfer::tensor
