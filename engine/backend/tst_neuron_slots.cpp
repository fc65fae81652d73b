// The slot growth rule of the CUDA device's neuron arrays (pure arithmetic:
// runs without a GPU).
#include <cstdint>

#include "backend/neuron_slots.h"
#include "common/plain_test.h"

using namespace powerinfer;
using backend::plan_slot_growth;

int main() {
    plaintest::Counter c;
    const int64_t per = 3000, n_ff = 8192;
    const int64_t big = int64_t{1} << 40;

    // First allocation: exactly what is asked (the accounting equals the plan).
    auto g = plan_slot_growth(0, 1234, n_ff, per, big);
    c.check(g.capacity == 1234 && !g.rebuild, "first allocation is exact");
    g = plan_slot_growth(0, 20000, n_ff, per, big);
    c.check(g.capacity == n_ff, "never more slots than neurons");
    g = plan_slot_growth(0, 100, n_ff, per, 40 * per + per / 2);
    c.check(g.capacity == 40 && !g.rebuild, "first allocation capped by the budget (40 slots)");
    g = plan_slot_growth(0, 100, n_ff, per, per - 1);
    c.check(g.capacity == 0, "no room: no allocation");
    g = plan_slot_growth(0, 100, n_ff, 0, big);
    c.check(g.capacity == 0, "a zero-byte neuron format never allocates");

    // Enough slots: nothing to do.
    g = plan_slot_growth(500, 400, n_ff, per, 0);
    c.check(g.capacity == 500 && !g.rebuild, "enough slots: unchanged");

    // Growth by a quarter (at least kMinSlotGrowth), copied on the device.
    g = plan_slot_growth(4000, 4001, n_ff, per, big);
    c.check(g.capacity == 5000 && !g.rebuild, "growth adds a quarter of the capacity");
    g = plan_slot_growth(100, 101, n_ff, per, big);
    c.check(g.capacity == 100 + backend::kMinSlotGrowth, "small arrays grow by kMinSlotGrowth");
    g = plan_slot_growth(4000, 7000, n_ff, per, big);
    c.check(g.capacity == 7000, "a large request grows to the request");
    g = plan_slot_growth(8000, 8100, n_ff, per, big);
    c.check(g.capacity == n_ff, "growth stops at n_ff");

    // The old and the new arrays do not fit together: rebuild in place.
    g = plan_slot_growth(4000, 4100, n_ff, per, 1000 * per);
    c.check(g.capacity == 5000 && g.rebuild,
            "no room for old + new: rebuild (old freed first), full step");
    g = plan_slot_growth(4000, 4100, n_ff, per, 150 * per);
    c.check(g.capacity == 4150 && g.rebuild, "rebuild capped by the budget");
    // Some room, not for every needed slot: as far as it goes.
    g = plan_slot_growth(4000, 4500, n_ff, per, 200 * per + 5);
    c.check(g.capacity == 4200 && g.rebuild, "partial growth: 200 more slots");
    g = plan_slot_growth(4000, 4500, n_ff, per, 0);
    c.check(g.capacity == 4000 && !g.rebuild, "full budget: no growth");
    // Copy growth is preferred while it fits the budget.
    g = plan_slot_growth(1000, 1100, n_ff, per, 1300 * per);
    c.check(g.capacity == 1256 && !g.rebuild, "room for both: device-to-device copy");
    // 64-bit sizes: a 40 GiB budget of 1 MiB neurons.
    g = plan_slot_growth(0, 30000, 40000, int64_t{1} << 20, int64_t{40} << 30);
    c.check(g.capacity == 30000, "64-bit sizes");
    return c.finish();
}
