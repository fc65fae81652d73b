// The active (kept) inputs of a column-sparse product, grouped and packed
// for the kernels: shared by the neuron-major down product (sparse_down.h)
// and the input-sparse product (input_major.h). Internal header.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace powerinfer::tensor {

// ids ascending; value(k) the input of ids[k]. Per group of `group` ids that
// has a nonzero value: its values quantized to int8 with one scale (amax /
// 127, rounded to nearest even), packed four to a quad (padding repeats the
// quad's first id with 0) into quad_ids / quad_q, then
// on_group(group index, first quad, scale, sum of its int8 values).
template <typename ValueOf, typename OnGroup>
void pack_quads(const int32_t* ids, int64_t count, int64_t group, ValueOf value,
                std::vector<int32_t>& quad_ids, std::vector<uint32_t>& quad_q, OnGroup on_group) {
    constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds
    const auto G = static_cast<int32_t>(group);
    // Groups of 16 and 32 (every format's): a shift, not a division per id
    // (the division was most of this function's time).
    const bool pow2 = G > 0 && (G & (G - 1)) == 0;
    const int shift = pow2 ? std::countr_zero(static_cast<uint32_t>(G)) : 0;
    const auto group_of = [&](int32_t id) { return pow2 ? id >> shift : id / G; };
    // Written by index into room for the most there can be (a quad per id),
    // trimmed at the end; quad_ids holds four ids per quad of quad_q.
    size_t nq = quad_q.size();
    quad_q.resize(nq + static_cast<size_t>(count));
    quad_ids.resize(4 * quad_q.size());
    int64_t k = 0;
    while (k < count) {
        const int32_t g = group_of(ids[k]);
        int64_t e = k;
        float amax = 0;
        while (e < count && group_of(ids[e]) == g) {
            amax = std::max(amax, std::fabs(value(e)));
            ++e;
        }
        if (amax > 0) {
            const float d = amax / 127.0f, inv = 127.0f / amax;
            const auto first = static_cast<int32_t>(nq);
            int32_t qsum = 0;
            for (int64_t s = k; s < e; s += 4) {
                uint32_t packed = 0;
                int32_t* qid = quad_ids.data() + 4 * nq;
                for (int64_t t = 0; t < 4; ++t) {
                    const bool real = s + t < e;
                    // Round to nearest even without a libm call (|v * inv| <= 127).
                    const int32_t qv =
                        real ? static_cast<int32_t>((value(s + t) * inv + kRound) - kRound) : 0;
                    qsum += qv;
                    qid[t] = real ? ids[s + t] : ids[s];
                    packed |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(qv)))
                              << (8 * t);
                }
                quad_q[nq++] = packed;
            }
            on_group(g, first, d, qsum);
        }
        k = e;
    }
    quad_q.resize(nq);
    quad_ids.resize(4 * nq);
}

}  // namespace powerinfer::tensor
