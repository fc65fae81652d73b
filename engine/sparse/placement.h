// Hot-neuron placement: which neurons of each layer live on the device.
//
// Per layer, the wanted set is the smallest prefix of the hot-first order
// whose activation mass reaches hot_neuron_threshold of the layer's mass.
// If all wanted sets do not fit what the budget leaves after the fixed parts
// (dense weights, KV cache, predictors, scratch: counted first), neurons are
// taken greedily over all layers by activation mass per byte until the next
// one would not fit. Deterministic (ties break by layer, then rank), 64-bit
// sizes, O(N log N) in the number of neurons: cheap enough to re-run live.
#pragma once

#include <cstdint>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::sparse {

struct Sidecar;

struct PlacementLayer {
    // Activation mass of each neuron, in hot-first order (non-increasing).
    std::vector<float> mass_sorted;
    int64_t bytes_per_neuron = 0;
    bool dense = false;  // force_full_precision: no hot set
};

struct PlacementInput {
    std::vector<PlacementLayer> layers;
    double hot_neuron_threshold = 0.85;
    int64_t budget_bytes = 0;
    int64_t fixed_bytes = 0;  // dense weights + KV cache + predictors + scratch
};

struct Placement {
    std::vector<int64_t> hot_count;  // per layer: the first hot_count neurons of the order
    int64_t hot_bytes = 0;
    int64_t wanted_bytes = 0;     // what the threshold alone asked for
    bool budget_limited = false;  // the budget cut the wanted sets
    int64_t free_bytes = 0;       // budget left after fixed + hot (for the neuron cache)
};

Placement place_hot_neurons(const PlacementInput& in);

// The hybrid executor's placement input (HybridFfn and the facade's
// preview_placement build it here, so that a preview is the placement):
// per layer the sidecar's masses in hot-first order and the device bytes of
// one neuron (bytes_per_neuron[l]); a layer is dense when tuning.sparse is off
// or it is in force_full_precision_layers.
PlacementInput hot_neuron_input(const Sidecar& sidecar,
                                const std::vector<int64_t>& bytes_per_neuron, const Tuning& tuning,
                                int64_t budget_bytes, int64_t fixed_bytes);

// The executor's device budget for a tuning: vram_budget_mb >= 0 is that
// many MiB; -1 (auto) is, on a real device, what it has free plus what it
// already holds less a 512 MiB margin for the driver and other programs, and
// on a simulated device (device_free_bytes < 0) everything resident
// (all_resident_bytes: the fixed parts, predictors and every neuron).
int64_t hot_neuron_budget(int64_t vram_budget_mb, bool simulated, int64_t device_free_bytes,
                          int64_t device_used_bytes, int64_t all_resident_bytes);

}  // namespace powerinfer::sparse
