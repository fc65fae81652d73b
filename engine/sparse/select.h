// Exact selection by radix histograms of the floats' order-preserving bits:
// the values a sort or std::nth_element would put at given ranks, in one or
// two passes over the data plus a selection within the few buckets that hold
// them. The sparse head's per-token cut and calibration's threshold
// quantiles (about a hundred products of a million samples each) use it.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace powerinfer::sparse {

// Unsigned keys in the floats' order: negatives flipped whole, positives
// with the sign bit set. Branch-free (logits' signs are a coin toss).
inline uint32_t order_key(float f) {
    const auto u = std::bit_cast<uint32_t>(f);
    return u ^ (static_cast<uint32_t>(static_cast<int32_t>(u) >> 31) | 0x80000000u);
}

// The head's cut: the k-th largest (1-based) of v[0..n), the value
// std::nth_element with std::greater<> leaves at k - 1, from a 12-bit radix
// histogram and a selection within the one bucket that holds it (tens of
// microseconds where a selection over the whole sample took hundreds). In
// two steps so that parallel ranges can add to their own histograms
// (kCutBuckets counters each, summed before the second step). `bucket` is
// scratch, reused across calls.
constexpr int kCutShift = 20;  // the buckets: sign, exponent, 3 mantissa bits
constexpr size_t kCutBuckets = size_t{1} << (32 - kCutShift);
void add_to_cut_histogram(const float* v, int64_t n, uint32_t* hist);
float kth_largest_from_histogram(const uint32_t* hist, const float* v, int64_t n, int64_t k,
                                 std::vector<float>& bucket);
// Both steps (1 <= k <= n).
float kth_largest(const float* v, int64_t n, int64_t k, std::vector<uint32_t>& hist,
                  std::vector<float>& bucket);

// The values std::sort would put at `ranks` (each < v.size(), any order;
// std::out_of_range otherwise) of v: a 16-bit histogram, then per needed bucket its values and one
// nth_element. About 20x faster than the sort on a million samples.
std::vector<float> values_at_ranks(std::span<const float> v, std::span<const size_t> ranks);

}  // namespace powerinfer::sparse
