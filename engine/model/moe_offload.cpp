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
    for (const MoeWeights& w : layers_) layer_bytes_.push_back(w.expert_bytes());
    buffers_.assign(layers_.size() * static_cast<size_t>(cfg_.n_expert), nullptr);
    max_rows_ = std::max<int64_t>(setup_.max_rows, cfg_.n_expert_used);
    scratch_bytes_ = plan_for(cfg_, layer_bytes_, setup_).scratch_bytes;
    scratch_ = device_.allocate(backend::MemCategory::Scratch, scratch_bytes_);
    plan(setup_.coverage, setup_.knobs);
}

ExpertOffload::~ExpertOffload() {
    try {
        device_.synchronize();
    } catch (const EngineError&) {
    }
    for (void* b : buffers_)
        if (b) device_.release(b);
    device_.release(scratch_);
}

ExpertOffload::Plan ExpertOffload::plan_for(const ModelConfig& cfg,
                                            const std::vector<int64_t>& layer_expert_bytes,
                                            const Setup& setup) {
    Plan p;
    p.scratch_bytes = 2 * std::max<int64_t>(setup.max_rows, cfg.n_expert_used) * cfg.n_embd *
                      static_cast<int64_t>(sizeof(float));
    const int64_t room = std::max<int64_t>(0, setup.budget_bytes - p.scratch_bytes);
    p.placement = plan_expert_placement(layer_expert_bytes, setup.stats, room, setup.coverage);
    p.cache_bytes = room - p.placement.placed_bytes;
    return p;
}

// Placement in what the budget leaves after the scratch; the cache gets the
// rest. Every device copy is made again.
void ExpertOffload::plan(double coverage, const ExpertCacheKnobs& knobs) {
    device_.synchronize();
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
        device_.synchronize();
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
    for (const ExpertStack* s : {&w.gate, &w.up, &w.down}) {
        device_.upload(buf + off, s->expert(expert).data, static_cast<int64_t>(s->expert_bytes));
        off += static_cast<int64_t>(s->expert_bytes);
    }
}

void ExpertOffload::drop(int layer, int32_t expert) {
    void*& b = buffers_[static_cast<size_t>(layer) * static_cast<size_t>(cfg_.n_expert) +
                        static_cast<size_t>(expert)];
    if (!b) return;
    device_.synchronize();  // no enqueued op may still read it
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
    float* X = static_cast<float*>(scratch_) + rows_used_ * E;
    float* Y = static_cast<float*>(scratch_) + (max_rows_ + rows_used_) * E;
    const int64_t bytes = m * E * static_cast<int64_t>(sizeof(float));
    device_.upload(X, x, bytes);
    device_.gated_ffn(d, X, m, Y);
    device_.download(y, Y, bytes);
    rows_used_ += m;
}

void ExpertOffload::synchronize() {
    device_.synchronize();
    rows_used_ = 0;
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
