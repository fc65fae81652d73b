// Test support: logits of one computation against a reference (relative RMS,
// greedy agreement where the reference's top-2 gap is clear), for backends
// that round differently from the CPU (a GPU keeps activations in F32/F16
// where the CPU quantizes them to Q8).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace powerinfer::gputest {

struct Compare {
    double rel_rms = 0, max_abs = 0;
};

inline Compare compare_logits(const float* got, const float* want, int64_t n) {
    double num = 0, den = 0, worst = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = double(got[i]) - want[i];
        num += d * d;
        den += double(want[i]) * want[i];
        worst = std::max(worst, std::fabs(d));
    }
    return {std::sqrt(num / std::max(den, 1e-30)), worst};
}

inline int64_t argmax(const float* v, int64_t n) { return std::max_element(v, v + n) - v; }

// Top-1 minus top-2 logit.
inline double top_gap(const float* v, int64_t n) {
    float a = -INFINITY, b = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
        if (v[i] > a) {
            b = a;
            a = v[i];
        } else if (v[i] > b) {
            b = v[i];
        }
    }
    return double(a) - b;
}

inline std::vector<int32_t> random_prompt(int64_t n, int64_t n_vocab) {
    std::mt19937 rng(99);
    std::vector<int32_t> prompt(static_cast<size_t>(n));
    for (auto& t : prompt) t = int32_t(3 + rng() % uint32_t(n_vocab - 3));
    return prompt;
}

// Logits rows of `got` against `want` (n rows of V): the worst relative RMS,
// and greedy agreement wherever want's top-2 gap is clear (> 3x the largest
// difference in that row).
struct RowsCompare {
    double worst_rms = 0;
    int agree = 0, ties = 0, disagree = 0;
};
inline RowsCompare compare_rows(const float* got, const float* want, int64_t n, int64_t V) {
    RowsCompare r;
    for (int64_t i = 0; i < n; ++i) {
        const auto cmp = compare_logits(got + i * V, want + i * V, V);
        r.worst_rms = std::max(r.worst_rms, cmp.rel_rms);
        if (top_gap(want + i * V, V) > 3 * cmp.max_abs) {
            (argmax(got + i * V, V) == argmax(want + i * V, V) ? r.agree : r.disagree)++;
        } else {
            ++r.ties;
        }
    }
    return r;
}

}  // namespace powerinfer::gputest
