// Comparing two next-token distributions given as logits, in double: the
// log-softmax normaliser and KL(p || q), llama.cpp's --kl-divergence
// convention (p the reference, e.g. dense; q the one under test).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace powerinfer {

// log(sum_i exp(l_i)), computed around the maximum.
inline double log_sum_exp(const float* l, int64_t n) {
    double mx = l[0];
    for (int64_t i = 1; i < n; ++i) mx = std::max(mx, double(l[i]));
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(double(l[i]) - mx);
    return std::log(sum) + mx;
}

// KL(softmax(p) || softmax(q)); p_lse, q_lse are log_sum_exp of each row.
inline double kl_divergence(const float* p, double p_lse, const float* q, double q_lse,
                            int64_t n) {
    double k = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double lp = double(p[i]) - p_lse;
        k += std::exp(lp) * (lp - (double(q[i]) - q_lse));
    }
    return k;
}

}  // namespace powerinfer
