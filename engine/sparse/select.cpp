#include "sparse/select.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace powerinfer::sparse {

void add_to_cut_histogram(const float* v, int64_t n, uint32_t* hist) {
    for (int64_t i = 0; i < n; ++i) ++hist[order_key(v[i]) >> kCutShift];
}

float kth_largest_from_histogram(const uint32_t* hist, const float* v, int64_t n, int64_t k,
                                 std::vector<float>& bucket) {
    // The bucket that holds the k-th largest, from the top.
    int64_t above = 0;
    auto b = static_cast<uint32_t>(kCutBuckets);
    while (b > 0 && above + hist[b - 1] < k) above += hist[--b];
    const uint32_t want = b - 1;
    // Its values, branch-free (bucket keeps its size: no per-call clearing).
    if (static_cast<int64_t>(bucket.size()) < n) bucket.resize(static_cast<size_t>(n));
    int64_t in = 0;
    for (int64_t i = 0; i < n; ++i) {
        bucket[static_cast<size_t>(in)] = v[i];
        in += (order_key(v[i]) >> kCutShift) == want;
    }
    const auto r = static_cast<std::ptrdiff_t>(k - above - 1);
    std::nth_element(bucket.begin(), bucket.begin() + r, bucket.begin() + in, std::greater<>());
    return bucket[static_cast<size_t>(r)];
}

float kth_largest(const float* v, int64_t n, int64_t k, std::vector<uint32_t>& hist,
                  std::vector<float>& bucket) {
    hist.assign(kCutBuckets, 0);
    add_to_cut_histogram(v, n, hist.data());
    return kth_largest_from_histogram(hist.data(), v, n, k, bucket);
}

std::vector<float> values_at_ranks(std::span<const float> v, std::span<const size_t> ranks) {
    constexpr int kShift = 16;
    constexpr size_t kBuckets = size_t{1} << (32 - kShift);
    std::vector<uint32_t> hist(kBuckets, 0);
    for (float f : v) ++hist[order_key(f) >> kShift];
    // Each rank's bucket and its rank within it, in one walk over the
    // ranks in ascending order.
    std::vector<size_t> order(ranks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
    std::vector<uint32_t> bucket_of(ranks.size());
    std::vector<size_t> within(ranks.size());
    std::vector<int32_t> slot(kBuckets, -1);  // needed bucket -> its values
    std::vector<std::vector<float>> values;
    size_t b = 0, below = 0;
    for (size_t i : order) {
        if (ranks[i] >= v.size()) throw std::out_of_range("values_at_ranks: rank past the end");
        while (below + hist[b] <= ranks[i]) below += hist[b++];
        bucket_of[i] = static_cast<uint32_t>(b);
        within[i] = ranks[i] - below;
        if (slot[b] < 0) {
            slot[b] = static_cast<int32_t>(values.size());
            values.emplace_back().reserve(hist[b]);
        }
    }
    for (float f : v)
        if (const int32_t s = slot[order_key(f) >> kShift]; s >= 0)
            values[static_cast<size_t>(s)].push_back(f);
    std::vector<float> out(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) {
        std::vector<float>& in = values[static_cast<size_t>(slot[bucket_of[i]])];
        const auto nth = in.begin() + static_cast<std::ptrdiff_t>(within[i]);
        std::nth_element(in.begin(), nth, in.end());
        out[i] = *nth;
    }
    return out;
}

}  // namespace powerinfer::sparse
