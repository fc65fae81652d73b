// AVX2 + FMA + F16C kernels (this file alone is compiled with those flags).
#include "tensor/kernels.h"

#if defined(__AVX2__) && (defined(_MSC_VER) || (defined(__FMA__) && defined(__F16C__)))
#include "tensor/kernels_x86.inc"

namespace powerinfer::tensor::kernels {
const KernelTable* avx2_table() {
    static const KernelTable table = make_table("avx2");
    return &table;
}
}  // namespace powerinfer::tensor::kernels
#else
namespace powerinfer::tensor::kernels {
const KernelTable* avx2_table() { return nullptr; }
}  // namespace powerinfer::tensor::kernels
#endif
