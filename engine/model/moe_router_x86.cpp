// moe_router_dot.inc compiled with AVX2/FMA on x86 (see engine/model/CMakeLists.txt;
// elsewhere without flags, and never called).
#include <cmath>
#include <cstdint>

#include "model/moe_router.h"

namespace powerinfer::model::detail {
namespace {
#include "model/moe_router_dot.inc"
}  // namespace

void router_rows_f32_avx2(const float* w, int64_t n, int64_t r0, int64_t r1, const float* x,
                          bool batched, float* logits) {
    router_rows(w, n, r0, r1, x, batched, logits);
}

}  // namespace powerinfer::model::detail
