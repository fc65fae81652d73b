#include "model/moe_offload.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"

namespace powerinfer::model {

// ---- ExpertCache ------------------------------------------------------------

ExpertCache::ExpertCache(int64_t n_expert, const std::vector<std::vector<int32_t>>& placed,
                         std::vector<int64_t> layer_expert_bytes, int64_t cache_bytes,
                         ExpertCacheKnobs knobs, ExpertCacheStats stats)
    : n_expert_(n_expert),
      layer_bytes_(std::move(layer_expert_bytes)),
      cache_bytes_(std::max<int64_t>(0, cache_bytes)),
      knobs_(knobs),
      stats_(stats) {
    const size_t n = layer_bytes_.size() * static_cast<size_t>(n_expert_);
    where_.assign(n, Where::Cpu);
    last_use_.assign(n, 0);
    staged_seq_.assign(n, 0);
    prefetched_.assign(n, 0);
    for (size_t l = 0; l < placed.size() && l < layer_bytes_.size(); ++l)
        for (int32_t e : placed[l])
            if (e >= 0 && e < n_expert_) where_[index(static_cast<int>(l), e)] = Where::Placed;
}

void ExpertCache::route(int layer, const int32_t* experts, int64_t count, int64_t n_tokens) {
    pending_.clear();
    for (int64_t j = 0; j < count; ++j) {
        const size_t i = index(layer, experts[j]);
        ++stats_.routed;
        switch (where_[i]) {
            case Where::Placed:
                ++stats_.placed_hits;
                break;
            case Where::Cached:
                ++stats_.cache_hits;
                if (prefetched_[i]) {
                    ++stats_.prefetch_useful;
                    prefetched_[i] = 0;
                }
                if (last_use_[i] != token_) {
                    lru_.erase(std::make_tuple(last_use_[i], staged_seq_[i], i));
                    last_use_[i] = token_;
                    lru_.insert(std::make_tuple(last_use_[i], staged_seq_[i], i));
                }
                break;
            case Where::Cpu:
                ++stats_.misses;
                if (n_tokens == 1) pending_.emplace_back(layer, experts[j]);
                break;
        }
    }
}

void ExpertCache::admit_misses(std::vector<Change>& changes) {
    if (knobs_.cache_window_size > 0)
        for (const auto& [layer, expert] : pending_)
            if (stage(layer, expert, false, changes)) ++stats_.staged;
    pending_.clear();
}

void ExpertCache::prefetch(int layer, const int32_t* experts, int64_t count,
                           std::vector<Change>& changes) {
    if (layer < 0 || layer >= static_cast<int>(n_layer())) return;
    for (int64_t j = 0; j < count; ++j)
        if (where_[index(layer, experts[j])] == Where::Cpu &&
            stage(layer, experts[j], true, changes))
            ++stats_.prefetched;
}

bool ExpertCache::stage(int layer, int32_t expert, bool prefetched, std::vector<Change>& changes) {
    const int64_t bytes = layer_bytes_[static_cast<size_t>(layer)];
    if (bytes > cache_bytes_) return false;
    while (cached_bytes_ + bytes > cache_bytes_) {
        // The least recently used entry, unless it serves the current token.
        if (lru_.empty() || std::get<0>(*lru_.begin()) >= token_) return false;
        evict(std::get<2>(*lru_.begin()), changes);
    }
    const size_t i = index(layer, expert);
    where_[i] = Where::Cached;
    last_use_[i] = token_;
    staged_seq_[i] = seq_++;
    prefetched_[i] = prefetched ? 1 : 0;
    lru_.insert(std::make_tuple(last_use_[i], staged_seq_[i], i));
    cached_bytes_ += bytes;
    changes.push_back({true, layer, expert});
    return true;
}

void ExpertCache::evict(size_t i, std::vector<Change>& changes) {
    const int layer = static_cast<int>(i / static_cast<size_t>(n_expert_));
    const auto expert = static_cast<int32_t>(i % static_cast<size_t>(n_expert_));
    lru_.erase(std::make_tuple(last_use_[i], staged_seq_[i], i));
    where_[i] = Where::Cpu;
    prefetched_[i] = 0;
    cached_bytes_ -= layer_bytes_[static_cast<size_t>(layer)];
    ++stats_.evicted;
    changes.push_back({false, layer, expert});
}

void ExpertCache::unstage(int layer, int32_t expert) {
    const size_t i = index(layer, expert);
    if (where_[i] != Where::Cached) return;
    lru_.erase(std::make_tuple(last_use_[i], staged_seq_[i], i));
    where_[i] = Where::Cpu;
    prefetched_[i] = 0;
    cached_bytes_ -= layer_bytes_[static_cast<size_t>(layer)];
}

// Entries last used W or more tokens before the one about to start (token_)
// minus one: used at u, they served tokens u + 1 .. u + W.
void ExpertCache::expire(std::vector<Change>& changes) {
    const int64_t w = std::max(0, knobs_.cache_window_size);
    while (!lru_.empty() && token_ - std::get<0>(*lru_.begin()) > w)
        evict(std::get<2>(*lru_.begin()), changes);
}

void ExpertCache::end_token(int64_t n_tokens, std::vector<Change>& changes) {
    token_ += std::max<int64_t>(1, n_tokens);
    pending_.clear();
    expire(changes);
}

void ExpertCache::set_knobs(const ExpertCacheKnobs& knobs, std::vector<Change>& changes) {
    knobs_ = knobs;
    expire(changes);
}

// ---- ExpertOffload ----------------------------------------------------------

ExpertOffload::ExpertOffload(backend::Compute& device, tensor::ThreadPool& pool,
                             const ModelConfig& cfg, const std::vector<MoeWeights>& layers,
                             Setup setup)
    : device_(device), pool_(pool), cfg_(cfg), layers_(layers), setup_(std::move(setup)) {
    if (!cfg_.moe()) throw EngineError("expert placement needs a mixture-of-experts model");
    // Every expert matrix needs the device's kernels: refused here, at load,
    // rather than at the first token routed to the device.
    for (size_t l = 0; l < layers_.size(); ++l)
        for (const ExpertStack* s : {&layers_[l].gate, &layers_[l].up, &layers_[l].down})
            if (const std::string why = device_.unsupported(s->first); !why.empty())
                throw EngineError("the experts of layer " + std::to_string(l) +
                                  " cannot run on " + device_.name() + ": " + why);
    int64_t largest = 0;
    for (const MoeWeights& w : layers_) {
        layer_bytes_.push_back(w.expert_bytes());
        largest = std::max(largest, w.expert_bytes());
    }
    buffers_.assign(layers_.size() * static_cast<size_t>(cfg_.n_expert), nullptr);
    max_rows_ = std::max<int64_t>(setup_.max_rows, cfg_.n_expert_used);
    rows_bytes_ = max_rows_ * cfg_.n_embd * static_cast<int64_t>(sizeof(float));
    host_x_ = HostBuffer(device_, rows_bytes_);
    host_y_ = HostBuffer(device_, rows_bytes_);
    const int64_t want = setup_.upload_staging_bytes;
    stage_bytes_ = want > 0    ? std::max(want, largest)
                   : want == 0 ? 0
                   : device_.host_memory() ? 0
                                           : std::max<int64_t>(int64_t{32} << 20, 2 * largest);
    if (stage_bytes_ > 0) stage_ = HostBuffer(device_, stage_bytes_);
    scratch_bytes_ = plan_for(cfg_, layer_bytes_, setup_).scratch_bytes;
    scratch_ = device_.allocate(backend::MemCategory::Scratch, scratch_bytes_);
    try {
        if (setup_.device_workspace) set_workspace();
        plan(setup_.coverage, setup_.knobs);
    } catch (...) {
        release_all();
        throw;
    }
}

ExpertOffload::~ExpertOffload() { release_all(); }

void ExpertOffload::release_all() {
    try {
        synchronize();
    } catch (const EngineError&) {
    }
    if (setup_.device_workspace) device_.set_workspace({});
    for (void*& b : buffers_)
        if (b) {
            device_.release(b);
            b = nullptr;
        }
    device_.release(scratch_);
    scratch_ = nullptr;
}

namespace {

int64_t align256(int64_t b) { return (b + 255) / 256 * 256; }

// Where gated_ffn's workspace lies in the scratch, after the x and output
// rows (offsets from the scratch's start).
struct WorkspaceLayout {
    int64_t gate = 0, up = 0, x16 = 0, w16 = 0, blas = 0, end = 0;
    int64_t ffn_floats = 0, x16_halves = 0, w16_halves = 0;
};
WorkspaceLayout workspace_layout(const ModelConfig& cfg, int64_t rows, int64_t start) {
    const int64_t E = cfg.n_embd, F = cfg.n_ff_exp;
    WorkspaceLayout w;
    w.ffn_floats = rows * F;
    // The batched products' F16 copy of their input (x, then the SwiGLU
    // rows) and the largest weight tile of gate/up (F x E) and down (E x F).
    w.x16_halves = rows * std::max(E, F);
    w.w16_halves = std::max(std::min(backend::gemm_tile_rows(E), F) * E,
                            std::min(backend::gemm_tile_rows(F), E) * F);
    w.gate = align256(start);
    w.up = w.gate + align256(w.ffn_floats * 4);
    w.x16 = w.up + align256(w.ffn_floats * 4);
    w.w16 = w.x16 + align256(w.x16_halves * 2);
    w.blas = w.w16 + align256(w.w16_halves * 2);
    w.end = w.blas + backend::kGemmWorkspaceBytes;
    return w;
}

}  // namespace

int64_t ExpertOffload::workspace_bytes(const ModelConfig& cfg, int64_t rows) {
    return workspace_layout(cfg, rows, 0).end;
}

void ExpertOffload::set_workspace() {
    const WorkspaceLayout l = workspace_layout(cfg_, max_rows_, 2 * rows_bytes_);
    auto* base = static_cast<uint8_t*>(scratch_);
    backend::Workspace ws;
    ws.ffn_gate = reinterpret_cast<float*>(base + l.gate);
    ws.ffn_up = reinterpret_cast<float*>(base + l.up);
    ws.ffn_floats = l.ffn_floats;
    ws.x16 = base + l.x16;
    ws.x16_halves = l.x16_halves;
    ws.w16 = base + l.w16;
    ws.w16_halves = l.w16_halves;
    ws.blas = base + l.blas;
    device_.set_workspace(ws);
}

ExpertOffload::Plan ExpertOffload::plan_for(const ModelConfig& cfg,
                                            const std::vector<int64_t>& layer_expert_bytes,
                                            const Setup& setup) {
    Plan p;
    const int64_t rows = std::max<int64_t>(setup.max_rows, cfg.n_expert_used);
    const int64_t rows_bytes = 2 * rows * cfg.n_embd * static_cast<int64_t>(sizeof(float));
    p.scratch_bytes = setup.device_workspace
                          ? workspace_layout(cfg, rows, rows_bytes).end
                          : rows_bytes;
    const int64_t room = std::max<int64_t>(0, setup.budget_bytes - p.scratch_bytes);
    p.placement = plan_expert_placement(layer_expert_bytes, setup.stats, room, setup.coverage);
    p.cache_bytes = room - p.placement.placed_bytes;
    return p;
}

// Placement in what the budget leaves after the scratch; the cache gets the
// rest. Every device copy is made again.
void ExpertOffload::plan(double coverage, const ExpertCacheKnobs& knobs) {
    synchronize();
    ExpertCacheStats stats;
    if (cache_) stats = cache_->stats();
    for (size_t i = 0; i < buffers_.size(); ++i)
        if (buffers_[i]) {
            device_.release(buffers_[i]);
            buffers_[i] = nullptr;
        }
    Setup want = setup_;
    want.coverage = coverage;
    const Plan p = plan_for(cfg_, layer_bytes_, want);
    const int64_t room = p.cache_bytes + p.placement.placed_bytes;
    placement_ = p.placement;
    int64_t placed_bytes = 0;
    bool full = false;
    for (size_t l = 0; l < placement_.on_device.size(); ++l) {
        auto& ids = placement_.on_device[l];
        size_t kept = 0;
        for (; kept < ids.size() && !full; ++kept) {
            try {
                upload(static_cast<int>(l), ids[kept], backend::MemCategory::HotNeurons);
                placed_bytes += layer_bytes_[l];
            } catch (const backend::DeviceOutOfMemory&) {
                full = true;  // a real device with less free than the budget said
                break;
            }
        }
        placement_.placed_experts -= static_cast<int64_t>(ids.size() - kept);
        ids.resize(kept);
    }
    placement_.placed_bytes = placed_bytes;
    const int64_t cache = full ? 0 : room - placed_bytes;
    cache_ = std::make_unique<ExpertCache>(cfg_.n_expert, placement_.on_device, layer_bytes_, cache,
                                           knobs, stats);
    setup_.coverage = coverage;
    setup_.knobs = knobs;
}

void ExpertOffload::retune(int64_t budget_bytes, double coverage, const ExpertCacheKnobs& knobs) {
    if (budget_bytes != setup_.budget_bytes) {
        synchronize();
        setup_.budget_bytes = budget_bytes;
        if (setup_.on_budget) setup_.on_budget(budget_bytes);
        plan(coverage, knobs);
        return;
    }
    if (coverage != setup_.coverage) {
        plan(coverage, knobs);
        return;
    }
    changes_.clear();
    cache_->set_knobs(knobs, changes_);
    setup_.knobs = knobs;
    apply(changes_);
}

void ExpertOffload::upload(int layer, int32_t expert, backend::MemCategory category) {
    const MoeWeights& w = layers_[static_cast<size_t>(layer)];
    auto* buf = static_cast<uint8_t*>(device_.allocate(category, w.expert_bytes()));
    buffers_[static_cast<size_t>(layer) * static_cast<size_t>(cfg_.n_expert) +
             static_cast<size_t>(expert)] = buf;
    int64_t off = 0;
    if (!stage_.data) {
        for (const ExpertStack* s : {&w.gate, &w.up, &w.down}) {
            device_.upload(buf + off, s->expert(expert).data,
                           static_cast<int64_t>(s->expert_bytes));
            off += static_cast<int64_t>(s->expert_bytes);
        }
        return;
    }
    // Through the arena: the copy from the mmap here, one asynchronous
    // upload (a full arena waits for the uploads it holds).
    const int64_t bytes = w.expert_bytes();
    if (stage_used_ + bytes > stage_bytes_) synchronize();
    uint8_t* h = stage_.data + stage_used_;
    for (const ExpertStack* s : {&w.gate, &w.up, &w.down}) {
        std::memcpy(h + off, s->expert(expert).data, s->expert_bytes);
        off += static_cast<int64_t>(s->expert_bytes);
    }
    device_.upload(buf, h, bytes);
    stage_used_ += (bytes + 63) / 64 * 64;
}

void ExpertOffload::drop(int layer, int32_t expert) {
    void*& b = buffers_[static_cast<size_t>(layer) * static_cast<size_t>(cfg_.n_expert) +
                        static_cast<size_t>(expert)];
    if (!b) return;
    synchronize();  // no enqueued op may still read it
    device_.release(b);
    b = nullptr;
}

void ExpertOffload::apply(const std::vector<ExpertCache::Change>& changes) {
    for (const auto& c : changes) {
        if (!c.stage) {
            drop(c.layer, c.expert);
            continue;
        }
        try {
            upload(c.layer, c.expert, backend::MemCategory::NeuronCache);
        } catch (const backend::DeviceOutOfMemory&) {
            cache_->unstage(c.layer, c.expert);
        }
    }
}

void ExpertOffload::request_retune(int64_t budget_bytes, double coverage,
                                   const ExpertCacheKnobs& knobs) {
    std::lock_guard lock(pending_mutex_);
    pending_ = true;
    pending_budget_ = budget_bytes;
    pending_coverage_ = coverage;
    pending_knobs_ = knobs;
}

void ExpertOffload::begin_token(int64_t n_tokens) {
    if (open_tokens_ > 0) {
        changes_.clear();
        cache_->end_token(open_tokens_, changes_);
        apply(changes_);
    }
    open_tokens_ = n_tokens;
    std::unique_lock lock(pending_mutex_);
    if (!pending_) return;
    pending_ = false;
    const int64_t budget = pending_budget_;
    const double coverage = pending_coverage_;
    const ExpertCacheKnobs knobs = pending_knobs_;
    lock.unlock();
    retune(budget, coverage, knobs);
}

void ExpertOffload::route(int layer, const Routing& routing, int64_t n_tokens) {
    cache_->route(layer, routing.experts.data(), static_cast<int64_t>(routing.experts.size()),
                  n_tokens);
}

void ExpertOffload::run(int layer, int32_t expert, const float* x, int64_t m, float* y) {
    if (m > rows_left()) throw EngineError("expert offload: more rows than its scratch holds");
    const int64_t E = cfg_.n_embd;
    const void* buf = buffers_[static_cast<size_t>(layer) * static_cast<size_t>(cfg_.n_expert) +
                               static_cast<size_t>(expert)];
    if (!buf) throw EngineError("expert offload: the expert is not on the device");
    const MoeWeights& w = layers_[static_cast<size_t>(layer)];
    backend::GatedFfnWeights d;
    d.gate = w.gate.expert(expert);
    d.up = w.up.expert(expert);
    d.down = w.down.expert(expert);
    const auto* p = static_cast<const uint8_t*>(buf);
    d.gate.data = p;
    d.up.data = p + w.gate.expert_bytes;
    d.down.data = p + w.gate.expert_bytes + w.up.expert_bytes;
    // The device copy is the file's rows: the host's row panels must not be
    // read in its place (a CPU stand-in would take them and never touch the
    // copy it is meant to test).
    d.gate.panels = d.up.panels = d.down.panels = nullptr;
    float* X = static_cast<float*>(scratch_) + rows_used_ * E;
    float* Y = static_cast<float*>(scratch_) + (max_rows_ + rows_used_) * E;
    const int64_t bytes = m * E * static_cast<int64_t>(sizeof(float));
    // Host staging on both sides, so that neither copy waits (x may change
    // and y is written only at synchronize()).
    float* hx = reinterpret_cast<float*>(host_x_.data) + rows_used_ * E;
    float* hy = reinterpret_cast<float*>(host_y_.data) + rows_used_ * E;
    std::memcpy(hx, x, static_cast<size_t>(bytes));
    device_.upload(X, hx, bytes);
    device_.gated_ffn(d, X, m, Y);
    device_.download(hy, Y, bytes);
    outputs_.push_back({y, rows_used_, m});
    rows_used_ += m;
}

void ExpertOffload::synchronize() {
    device_.synchronize();
    const int64_t E = cfg_.n_embd;
    for (const Output& o : outputs_)
        std::memcpy(o.y, reinterpret_cast<const float*>(host_y_.data) + o.row0 * E,
                    static_cast<size_t>(o.m * E) * sizeof(float));
    outputs_.clear();
    rows_used_ = 0;
    stage_used_ = 0;
}

void ExpertOffload::after_layer(int layer, const float* x, int64_t n_tokens) {
    if (n_tokens != 1) return;
    changes_.clear();
    cache_->admit_misses(changes_);
    const int depth = cache_->knobs().prefetch_depth;
    if (cache_->cache_bytes() > 0)
        for (int d = 1; d <= depth && layer + d < static_cast<int>(layers_.size()); ++d) {
            route_tokens(pool_, cfg_, layers_[static_cast<size_t>(layer + d)], x, 1, logits_,
                         ahead_);
            cache_->prefetch(layer + d, ahead_.experts.data(),
                             static_cast<int64_t>(ahead_.experts.size()), changes_);
        }
    apply(changes_);
}

}  // namespace powerinfer::model
