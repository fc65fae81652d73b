#include "tensor/fused_matvec.h"

#include "common/error.h"

namespace powerinfer::tensor {

void matvec_fused(ThreadPool& pool, std::span<const WeightView> ws, std::span<float* const> ys,
                  const QuantizedVector& xq) {
    for (const auto& w : ws)
        if (xq.type != vec_dot_type(w.type) || xq.n != w.cols)
            throw EngineError("activations do not match the weight matrix (type or length)");
    matmul_fused_q(pool, ws, xq.data.data(), 0, 1, ys);
}

}  // namespace powerinfer::tensor
