// How a device's compact neuron slot arrays grow (CudaDevice keeps each
// layer's resident neurons in one gate, one up and one down array of
// `capacity` slots). Pure, so that the rule is tested on the CPU.
//
// Every allocated slot counts against the budget, used or not. A first
// allocation is exactly the slots asked for (the placement's hot set: after
// placement the accounting equals the plan). A later growth (the neuron
// cache) adds at least a quarter of the capacity (kMinSlotGrowth at least),
// so that a token's few new neurons do not copy the arrays each time, and
// never more than the budget leaves: the old arrays are kept while the new
// ones are filled by a device-to-device copy when both fit, else the old ones
// are freed first and the resident neurons are copied again from the host
// ("rebuild"). When not even that holds every needed slot, the arrays grow
// as far as they can and the caller places fewer neurons.
#pragma once

#include <cstdint>

namespace powerinfer::backend {

inline constexpr int64_t kMinSlotGrowth = 256;

struct SlotGrowth {
    int64_t capacity = 0;  // slots after growing; == the old capacity: cannot grow
    bool rebuild = false;  // free the old arrays first, then upload the residents again
};

// capacity: slots allocated now; needed: slots wanted; n_ff: the most a
// layer can use; bytes_per_slot: gate + up + down bytes of one neuron;
// available_bytes: budget minus everything the device holds (including the
// current slots).
SlotGrowth plan_slot_growth(int64_t capacity, int64_t needed, int64_t n_ff, int64_t bytes_per_slot,
                            int64_t available_bytes);

}  // namespace powerinfer::backend
