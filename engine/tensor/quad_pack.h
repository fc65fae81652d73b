// The active (kept) inputs of a column-sparse product, grouped and packed
// for the kernels: shared by the neuron-major down product (sparse_down.h)
// and the input-sparse product (input_major.h). Internal header.
#pragma once

#include <algorithm>
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
    int64_t k = 0;
    while (k < count) {
        const int32_t g = ids[k] / G;
        int64_t e = k;
        float amax = 0;
        while (e < count && ids[e] / G == g) {
            amax = std::max(amax, std::fabs(value(e)));
            ++e;
        }
        if (amax > 0) {
            const float d = amax / 127.0f, inv = 127.0f / amax;
            const auto first = static_cast<int32_t>(quad_q.size());
            int32_t qsum = 0;
            for (int64_t s = k; s < e; s += 4) {
                uint32_t packed = 0;
                for (int64_t t = 0; t < 4; ++t) {
                    const bool real = s + t < e;
                    // Round to nearest even without a libm call (|v * inv| <= 127).
                    const int32_t qv =
                        real ? static_cast<int32_t>((value(s + t) * inv + kRound) - kRound) : 0;
                    qsum += qv;
                    quad_ids.push_back(real ? ids[s + t] : ids[s]);
                    packed |= static_cast<uint32_t>(static_cast<uint8_t>(static_cast<int8_t>(qv)))
                              << (8 * t);
                }
                quad_q.push_back(packed);
            }
            on_group(g, first, d, qsum);
        }
        k = e;
    }
}

}  // namespace powerinfer::tensor
