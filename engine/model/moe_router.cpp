#include "model/moe_router.h"

#include <cmath>
#include <string>

#include "tensor/quant.h"

namespace powerinfer::model {
namespace {
#include "model/moe_router_dot.inc"

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
constexpr bool kHaveX86 = true;
#else
constexpr bool kHaveX86 = false;
#endif

}  // namespace

void router_rows_f32(const float* w, int64_t n, int64_t r0, int64_t r1, const float* x,
                     bool batched, float* logits) {
    // The level can be forced by tests and benchmarks: ask each time (cheap
    // next to a router product).
    if (kHaveX86 && tensor::simd_level() != "scalar")
        return detail::router_rows_f32_avx2(w, n, r0, r1, x, batched, logits);
    router_rows(w, n, r0, r1, x, batched, logits);
}

}  // namespace powerinfer::model
