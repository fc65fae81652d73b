// Expert-level hot/cold placement of a mixture-of-experts model at run time:
// the experts plan_expert_placement chose live in a device backend's memory
// (backend::Compute: a GPU's, or the budgeted CPU stand-in of the tests) and
// run there, the others run on the CPU (MoeFfn), and an expert cache on the
// device keeps cold experts that were routed recently or are likely next.
//
// ExpertCache decides, without touching memory, where each expert is: placed
// (pinned for the whole run), cached, or on the CPU. Its rules, per token t
// (tokens count from 0) and layer l:
//   - route(l, experts): each routed expert is a placed hit, a cache hit (its
//     last use becomes t) or a miss (it runs on the CPU this token); with
//     cache_window_size > 0 a miss is then staged into the cache for the
//     following tokens (last use t).
//   - prefetch(l + d, experts) for d = 1..prefetch_depth: the experts the
//     router of layer l + d picks for the current hidden state are staged if
//     they are not on the device (last use t, marked prefetched; a later hit
//     on one counts as a useful prefetch).
//   - staging into a full cache evicts the least recently used entry (oldest
//     last use, then the earliest staged); an entry used or staged in the
//     current token is never evicted, so staging gives up instead.
//   - end_token(): an entry whose last use is cache_window_size or more
//     tokens ago leaves the cache (it stays for the cache_window_size tokens
//     after its last use).
// A batch of several tokens (prefill, several sequences) is routed as one
// step: residency at its start decides, nothing is staged or prefetched.
//
// ExpertOffload holds the device copies (gate, up and down slices of one
// expert in one buffer: HotNeurons for placed experts, NeuronCache for cached
// ones), applies the cache's changes (a staging is an upload from the mmap,
// a copy on the stand-in) and runs an expert there with the backend's
// gated_ffn op, which computes what MoeFfn computes on the CPU: on the
// stand-in the hybrid plan equals the CPU plan bit for bit.
//
// Nothing in run() waits for the device: the x rows are copied into host
// staging of the backend's (Compute::allocate_host: pinned on a GPU), the
// upload, gated_ffn and the download into host staging are enqueued, and the
// outputs reach the caller's rows at synchronize(). Expert uploads go
// through a host staging arena as well (one copy from the mmap, one
// asynchronous upload), recycled whenever the device is synchronised. On a
// GPU the scratch also holds gated_ffn's workspace (Setup::device_workspace).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/compute.h"
#include "model/expert_placement.h"
#include "model/moe_ffn.h"

namespace powerinfer::model {

struct ExpertCacheStats {
    int64_t routed = 0;           // (token, slot) routings seen
    int64_t placed_hits = 0;      // served by a placed expert
    int64_t cache_hits = 0;       // served by a cached one
    int64_t misses = 0;           // ran on the CPU
    int64_t staged = 0;           // copied into the cache after a miss
    int64_t prefetched = 0;       // copied into the cache by prefetch
    int64_t prefetch_useful = 0;  // prefetched entries routed before they left
    int64_t evicted = 0;
    double hit_rate() const {
        return routed ? static_cast<double>(placed_hits + cache_hits) / static_cast<double>(routed)
                      : 0.0;
    }
};

struct ExpertCacheKnobs {
    int cache_window_size = 8;  // tokens a cached expert stays after its last use; 0 = no cache
    int prefetch_depth = 2;     // layers ahead whose routers stage experts; 0 = off
};

class ExpertCache {
public:
    enum class Where : uint8_t { Cpu, Placed, Cached };
    // What the device must do: copy an expert in, or drop it.
    struct Change {
        bool stage = true;
        int32_t layer = 0, expert = 0;
    };

    // placed: per layer, the pinned experts. cache_bytes: room for cached
    // experts; layer_expert_bytes: one expert's bytes per layer.
    ExpertCache(int64_t n_expert, const std::vector<std::vector<int32_t>>& placed,
                std::vector<int64_t> layer_expert_bytes, int64_t cache_bytes,
                ExpertCacheKnobs knobs, ExpertCacheStats stats = {});

    Where where(int layer, int32_t expert) const { return where_[index(layer, expert)]; }
    int64_t n_layer() const { return static_cast<int64_t>(layer_bytes_.size()); }
    int64_t n_expert() const { return n_expert_; }
    int64_t token() const { return token_; }
    const ExpertCacheKnobs& knobs() const { return knobs_; }
    int64_t cache_bytes() const { return cache_bytes_; }
    int64_t cached_bytes() const { return cached_bytes_; }
    const ExpertCacheStats& stats() const { return stats_; }

    // One token's (or, with n_tokens > 1, one batch's) routing at `layer`:
    // experts[count] as route_tokens gives them. Counts; residency does not
    // change until admit_misses().
    void route(int layer, const int32_t* experts, int64_t count, int64_t n_tokens);
    // After the layer ran: a decoded token's misses are staged (window > 0);
    // appends the stagings and the evictions they need.
    void admit_misses(std::vector<Change>& changes);
    void prefetch(int layer, const int32_t* experts, int64_t count, std::vector<Change>& changes);
    // The step (n_tokens tokens) is done: entries out of the window leave.
    void end_token(int64_t n_tokens, std::vector<Change>& changes);
    // The device could not take a staged expert after all: back to the CPU.
    void unstage(int layer, int32_t expert);
    // New knobs, applied from the next token on (a smaller window expires
    // entries at once).
    void set_knobs(const ExpertCacheKnobs& knobs, std::vector<Change>& changes);

private:
    size_t index(int layer, int32_t expert) const {
        return static_cast<size_t>(layer) * static_cast<size_t>(n_expert_) +
               static_cast<size_t>(expert);
    }
    // Stages (layer, expert) into the cache if room can be made.
    bool stage(int layer, int32_t expert, bool prefetched, std::vector<Change>& changes);
    void evict(size_t i, std::vector<Change>& changes);
    void expire(std::vector<Change>& changes);

    int64_t n_expert_;
    std::vector<int64_t> layer_bytes_;
    int64_t cache_bytes_;
    ExpertCacheKnobs knobs_;
    std::vector<Where> where_;
    std::vector<int64_t> last_use_, staged_seq_;
    std::vector<uint8_t> prefetched_;
    // Cached entries by (last use, staging order, index): the LRU first.
    std::set<std::tuple<int64_t, int64_t, size_t>> lru_;
    std::vector<std::pair<int, int32_t>> pending_;  // misses of the last decoded route()
    int64_t token_ = 0, seq_ = 0, cached_bytes_ = 0;
    ExpertCacheStats stats_;
};

// The device's share of a MoE model's experts (see the top of this file).
class ExpertOffload {
public:
    struct Setup {
        ExpertRoutingStats stats;  // from the expert sidecar
        int64_t budget_bytes = 0;  // device bytes for experts, the cache and this scratch
        double coverage = 1.0;     // hot_neuron_threshold: routed share the placed set aims at
        ExpertCacheKnobs knobs;
        int64_t max_rows = 256;  // tokens of the largest batch (chunk_size)
        // Called with a new budget before the placement is planned again
        // (the owner sets its device's budget); may be empty.
        std::function<void(int64_t)> on_budget;
        // The backend computes in its own memory (a GPU): the scratch also
        // holds gated_ffn's workspace for max_rows rows (gate and up
        // activations, F16 tiles and a BLAS workspace for batches).
        bool device_workspace = false;
        // Host staging for expert uploads, recycled at each synchronisation:
        // -1 = none on a host-memory backend (its upload is a plain copy),
        // else the larger of 32 MiB and two experts; 0 = none; > 0 that
        // many bytes (at least one expert).
        int64_t upload_staging_bytes = -1;
    };
    // What a Setup gives on a device that has the whole budget: the scratch
    // (x and output rows), the placement in the rest, the cache's room.
    struct Plan {
        int64_t scratch_bytes = 0, cache_bytes = 0;
        ExpertPlacement placement;
    };
    static Plan plan_for(const ModelConfig& cfg, const std::vector<int64_t>& layer_expert_bytes,
                         const Setup& setup);
    // The gated_ffn workspace of Setup::device_workspace for `rows` rows.
    static int64_t workspace_bytes(const ModelConfig& cfg, int64_t rows);
    // `device` and `pool` must outlive this; `layers` are views of the host
    // (mmap'd) weights, which must too. Throws DeviceOutOfMemory when not
    // even the scratch fits, EngineError when the device has no kernel for
    // the experts' matrices (their quant type or row length).
    ExpertOffload(backend::Compute& device, tensor::ThreadPool& pool, const ModelConfig& cfg,
                  const std::vector<MoeWeights>& layers, Setup setup);
    ~ExpertOffload();
    ExpertOffload(const ExpertOffload&) = delete;
    ExpertOffload& operator=(const ExpertOffload&) = delete;

    // New knobs now (between tokens): with another coverage the placement is
    // planned again and the device copies follow. Cumulative counts stay.
    void retune(double coverage, const ExpertCacheKnobs& knobs) {
        retune(setup_.budget_bytes, coverage, knobs);
    }
    // With a new budget too (vram_budget_mb): planned again.
    void retune(int64_t budget_bytes, double coverage, const ExpertCacheKnobs& knobs);
    // The same from any thread: applied at the start of the next token.
    void request_retune(int64_t budget_bytes, double coverage, const ExpertCacheKnobs& knobs);

    const ExpertPlacement& placement() const { return placement_; }
    const ExpertCache& cache() const { return *cache_; }
    backend::Compute& device() { return device_; }
    // Bytes held on the device: placed experts, cached experts, scratch.
    int64_t placed_bytes() const { return placement_.placed_bytes; }
    int64_t cached_bytes() const { return cache_->cached_bytes(); }
    int64_t scratch_bytes() const { return scratch_bytes_; }
    // Host staging held (x and output rows, the upload arena).
    int64_t host_staging_bytes() const { return 2 * rows_bytes_ + stage_bytes_; }

    // ---- called by MoeFfn ----------------------------------------------
    // Layer 0 of a forward pass over n_tokens: the previous step ended.
    void begin_token(int64_t n_tokens);
    void route(int layer, const Routing& routing, int64_t n_tokens);
    bool on_device(int layer, int32_t expert) const {
        return cache_->where(layer, expert) != ExpertCache::Where::Cpu;
    }
    // Enqueues expert e of `layer` over rows x[m][n_embd] (host memory) and
    // the download of its outputs into y[m][n_embd] (host memory, valid at
    // synchronize()). At most max_rows rows between synchronizations.
    void run(int layer, int32_t expert, const float* x, int64_t m, float* y);
    int64_t rows_left() const { return max_rows_ - rows_used_; }
    // Waits for the device; the outputs of run() are then in their rows.
    void synchronize();
    // After a decoded token's layer: stagings of its misses, and prefetch
    // for the next prefetch_depth layers from x (the layer's FFN input).
    void after_layer(int layer, const float* x, int64_t n_tokens);

private:
    void apply(const std::vector<ExpertCache::Change>& changes);
    void upload(int layer, int32_t expert, backend::MemCategory category);
    void drop(int layer, int32_t expert);
    void plan(double coverage, const ExpertCacheKnobs& knobs);
    void release_all();
    void set_workspace();  // gated_ffn's, in the scratch after the rows

    // Host memory of the backend's (Compute::allocate_host).
    struct HostBuffer {
        backend::Compute* owner = nullptr;
        uint8_t* data = nullptr;
        HostBuffer() = default;
        HostBuffer(backend::Compute& c, int64_t bytes)
            : owner(&c), data(static_cast<uint8_t*>(c.allocate_host(bytes))) {}
        HostBuffer(HostBuffer&& o) noexcept : owner(o.owner), data(o.data) { o.data = nullptr; }
        HostBuffer& operator=(HostBuffer&& o) noexcept {
            std::swap(owner, o.owner);
            std::swap(data, o.data);
            return *this;
        }
        ~HostBuffer() {
            if (data) owner->release_host(data);
        }
    };
    // An enqueued download: rows [row0, row0 + m) of host_y_ go to y.
    struct Output {
        float* y;
        int64_t row0, m;
    };

    backend::Compute& device_;
    tensor::ThreadPool& pool_;
    ModelConfig cfg_;
    std::vector<MoeWeights> layers_;  // views of the host weights
    Setup setup_;
    std::vector<int64_t> layer_bytes_;
    ExpertPlacement placement_;
    std::unique_ptr<ExpertCache> cache_;
    std::vector<void*> buffers_;  // [layer][expert] device copy or null
    void* scratch_ = nullptr;     // x rows, output rows, [gated_ffn's workspace]
    int64_t scratch_bytes_ = 0, max_rows_ = 0, rows_used_ = 0, rows_bytes_ = 0;
    HostBuffer host_x_, host_y_;  // the rows of run(), as the device reads and writes them
    std::vector<Output> outputs_;
    HostBuffer stage_;  // expert uploads (empty: straight from the mmap)
    int64_t stage_bytes_ = 0, stage_used_ = 0;
    int64_t open_tokens_ = 0;  // tokens of the step in progress
    std::mutex pending_mutex_;
    bool pending_ = false;
    int64_t pending_budget_ = 0;
    double pending_coverage_ = 1.0;
    ExpertCacheKnobs pending_knobs_;
    std::vector<ExpertCache::Change> changes_;
    std::vector<float> logits_;
    Routing ahead_;
};

}  // namespace powerinfer::model
