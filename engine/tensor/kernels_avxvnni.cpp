// AVX2 + FMA + F16C + AVX-VNNI kernels (this file alone is compiled with
// those flags): the AVX2 kernels with vpdpbusd on 256-bit registers for the
// u8 x s8 integer dots. Most gaming CPUs without AVX-512 have it (Intel from
// Alder Lake on); AMD's Zen 5 has it beside AVX-512. MSVC has no AVX-VNNI
// macro; /arch:AVX2 plus the cpuid check suffice.
#include "tensor/kernels.h"

#if defined(__AVX2__) && \
    (defined(_MSC_VER) || (defined(__FMA__) && defined(__F16C__) && defined(__AVXVNNI__)))
#define PI_X86_AVXVNNI 1
#include "tensor/kernels_x86.inc"

namespace powerinfer::tensor::kernels {
const KernelTable* avxvnni_table() {
    static const KernelTable table = make_table("avxvnni");
    return &table;
}
}  // namespace powerinfer::tensor::kernels
#else
namespace powerinfer::tensor::kernels {
const KernelTable* avxvnni_table() { return nullptr; }
}  // namespace powerinfer::tensor::kernels
#endif
