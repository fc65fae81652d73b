#include "backend/neuron_slots.h"

#include <algorithm>

namespace powerinfer::backend {

SlotGrowth plan_slot_growth(int64_t capacity, int64_t needed, int64_t n_ff, int64_t bytes_per_slot,
                            int64_t available_bytes) {
    capacity = std::max<int64_t>(0, capacity);
    SlotGrowth g{capacity, false};
    needed = std::min(needed, n_ff);
    if (needed <= capacity || bytes_per_slot <= 0) return g;
    const int64_t want =
        capacity == 0
            ? needed
            : std::min(n_ff, std::max(needed, capacity + std::max(kMinSlotGrowth, capacity / 4)));
    const int64_t avail = std::max<int64_t>(0, available_bytes);
    // New arrays beside the old ones, or in their place.
    const int64_t fit_copy = avail / bytes_per_slot;
    const int64_t fit_rebuild = capacity + fit_copy;
    if (fit_copy >= needed) return {std::min(want, fit_copy), false};
    if (capacity > 0 && fit_rebuild >= needed) return {std::min(want, fit_rebuild), true};
    // Not every needed slot fits: as many as can be had.
    if (capacity > 0 && fit_rebuild > std::max(capacity, fit_copy)) return {fit_rebuild, true};
    if (fit_copy > capacity) return {fit_copy, false};
    return g;
}

}  // namespace powerinfer::backend
