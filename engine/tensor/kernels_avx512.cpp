// AVX-512 (F/BW/VL/VNNI) kernels (this file alone is compiled with those
// flags): the AVX2 kernels with VNNI integer dots and mask-register bit
// expansion. MSVC has no VNNI macro; /arch:AVX512 plus the cpuid check suffice.
#include "tensor/kernels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    (defined(__AVX512VNNI__) || defined(_MSC_VER))
#define PI_X86_AVX512 1
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own 512-bit cast/broadcast intrinsics (an undefined
// upper half by design) as "may be used uninitialized" (GCC PR 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "tensor/kernels_x86.inc"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace powerinfer::tensor::kernels {
const KernelTable* avx512_table() {
    static const KernelTable table = make_table("avx512");
    return &table;
}
}  // namespace powerinfer::tensor::kernels
#else
namespace powerinfer::tensor::kernels {
const KernelTable* avx512_table() { return nullptr; }
}  // namespace powerinfer::tensor::kernels
#endif
