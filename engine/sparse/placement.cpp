#include "sparse/placement.h"

#include <algorithm>
#include <numeric>

#include "sparse/sidecar.h"

namespace powerinfer::sparse {

Placement place_hot_neurons(const PlacementInput& in) {
    Placement out;
    const size_t nl = in.layers.size();
    out.hot_count.assign(nl, 0);
    std::vector<int64_t> wanted(nl, 0);
    for (size_t l = 0; l < nl; ++l) {
        const PlacementLayer& L = in.layers[l];
        if (L.dense || L.mass_sorted.empty() || in.hot_neuron_threshold <= 0) continue;
        double total = 0;
        for (float m : L.mass_sorted) total += m;
        const double goal = std::min(1.0, in.hot_neuron_threshold) * total;
        double acc = 0;
        int64_t k = 0;
        const int64_t n = static_cast<int64_t>(L.mass_sorted.size());
        // Threshold >= 1 takes every neuron (including never-active ones).
        if (in.hot_neuron_threshold >= 1.0 || total <= 0) {
            k = in.hot_neuron_threshold >= 1.0 ? n : 0;
        } else {
            while (k < n && acc < goal) acc += L.mass_sorted[static_cast<size_t>(k++)];
        }
        wanted[l] = k;
        out.wanted_bytes += k * L.bytes_per_neuron;
    }
    const int64_t room = std::max<int64_t>(0, in.budget_bytes - in.fixed_bytes);
    if (out.wanted_bytes <= room) {
        out.hot_count = wanted;
        out.hot_bytes = out.wanted_bytes;
    } else {
        out.budget_limited = true;
        // Merge the layers' prefixes by mass per byte (each layer's prefix is
        // already in non-increasing order, so a k-way merge keeps prefixes).
        struct Cand {
            double density;
            size_t layer;
            int64_t rank;
        };
        std::vector<Cand> cands;
        cands.reserve(
            static_cast<size_t>(std::accumulate(wanted.begin(), wanted.end(), int64_t{0})));
        for (size_t l = 0; l < nl; ++l) {
            const double bpn =
                static_cast<double>(std::max<int64_t>(1, in.layers[l].bytes_per_neuron));
            for (int64_t k = 0; k < wanted[l]; ++k) {
                cands.push_back({in.layers[l].mass_sorted[static_cast<size_t>(k)] / bpn, l, k});
            }
        }
        std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
            if (a.density != b.density) return a.density > b.density;
            if (a.layer != b.layer) return a.layer < b.layer;
            return a.rank < b.rank;
        });
        int64_t used = 0;
        for (const Cand& c : cands) {
            const int64_t b = in.layers[c.layer].bytes_per_neuron;
            if (used + b > room) break;
            // Equal densities inside a layer may be visited out of rank order
            // only if masses tie; the prefix count stays exact either way.
            ++out.hot_count[c.layer];
            used += b;
        }
        out.hot_bytes = used;
    }
    out.free_bytes = std::max<int64_t>(0, room - out.hot_bytes);
    return out;
}

PlacementInput hot_neuron_input(const Sidecar& sidecar,
                                const std::vector<int64_t>& bytes_per_neuron, const Tuning& tuning,
                                int64_t budget_bytes, int64_t fixed_bytes) {
    PlacementInput in;
    in.hot_neuron_threshold = tuning.hot_neuron_threshold;
    in.budget_bytes = budget_bytes;
    in.fixed_bytes = fixed_bytes;
    const auto& forced = tuning.force_full_precision_layers;
    for (size_t l = 0; l < sidecar.layers.size(); ++l) {
        const auto& ls = sidecar.layers[l];
        PlacementLayer pl;
        pl.bytes_per_neuron = l < bytes_per_neuron.size() ? bytes_per_neuron[l] : 0;
        pl.dense = !tuning.sparse ||
                   std::find(forced.begin(), forced.end(), static_cast<int>(l)) != forced.end();
        pl.mass_sorted.reserve(ls.perm.size());
        for (int32_t id : ls.perm) pl.mass_sorted.push_back(ls.act_mass[static_cast<size_t>(id)]);
        in.layers.push_back(std::move(pl));
    }
    return in;
}

int64_t hot_neuron_budget(int64_t vram_budget_mb, bool simulated, int64_t device_free_bytes,
                          int64_t device_used_bytes, int64_t all_resident_bytes) {
    if (vram_budget_mb >= 0) return vram_budget_mb * (int64_t{1} << 20);
    if (!simulated && device_free_bytes >= 0)
        return device_used_bytes + device_free_bytes - (int64_t{512} << 20);
    return all_resident_bytes;
}

}  // namespace powerinfer::sparse
