// Expert placement at run time (moe_offload.h): the expert cache's rules on
// scripted routing sequences whose counts are worked out by hand below, and
// the hybrid plans (experts split between the budgeted CPU stand-in for a
// GPU and the CPU, with cache and prefetch, retuned mid-run) against the CPU
// plan, bit for bit, on tiny random-weight qwen3moe, qwen2moe, qwen35moe and
// Mixtral-style models (one case with the GPU's upload path through a host
// arena); what a GPU needs of the offload (outputs at synchronize(), experts
// without the device's kernels refused at load).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/compute.h"
#include "backend/device.h"
#include "calibrate/synth_model.h"
#include "common/plain_test.h"
#include "gguf/gguf.h"
#include "model/expert_placement.h"
#include "model/model.h"
#include "model/moe_offload.h"
#include "model/plan_test_support.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
using model::ExpertCache;
namespace fs = std::filesystem;

namespace {

using Changes = std::vector<ExpertCache::Change>;

std::string describe(const model::ExpertCacheStats& s) {
    return "routed " + std::to_string(s.routed) + ", placed " + std::to_string(s.placed_hits) +
           ", cached " + std::to_string(s.cache_hits) + ", misses " + std::to_string(s.misses) +
           ", staged " + std::to_string(s.staged) + ", prefetched " + std::to_string(s.prefetched) +
           ", useful " + std::to_string(s.prefetch_useful) + ", evicted " +
           std::to_string(s.evicted);
}

bool same_stats(const model::ExpertCacheStats& a, const model::ExpertCacheStats& b) {
    return a.routed == b.routed && a.placed_hits == b.placed_hits && a.cache_hits == b.cache_hits &&
           a.misses == b.misses && a.staged == b.staged && a.prefetched == b.prefetched &&
           a.prefetch_useful == b.prefetch_useful && a.evicted == b.evicted;
}

// 2 layers of 4 experts of 10 bytes, expert 0 of layer 0 placed, room for 2
// cached experts, a window of 2 tokens, no prefetch:
//   t0: L0 [0 1]: 0 placed hit, 1 miss -> staged (0,1)@0.
//       L1 [2 3]: two misses; (1,2) staged, the cache is full, (1,3) would
//       evict (0,1), used this token: given up.
//   t1: L0 [1 2]: (0,1) cache hit (@1); (0,2) miss: evicts the LRU (1,2)@0.
//       L1 [2 0]: two misses; the cache holds (0,1)@1 and (0,2)@1, both of
//       this token: nothing staged.
//   t2: L0 [3 0]: (0,3) miss: evicts (0,1) (last use 1 like (0,2), staged
//       earlier); 0 placed hit.
//   t3: nothing routed. After t3, (0,2)@1 is 3 tokens old > window: evicted.
// Routed 10 = placed 2 + cached 1 + misses 7; staged 4, evicted 3.
void test_cache_window(plaintest::Counter& c) {
    ExpertCache cache(4, {{0}, {}}, {10, 10}, 20, {2, 0});
    Changes ch;
    auto route = [&](int layer, std::vector<int32_t> e) {
        cache.route(layer, e.data(), static_cast<int64_t>(e.size()), 1);
        cache.admit_misses(ch);
    };
    route(0, {0, 1});
    route(1, {2, 3});
    c.check(ch.size() == 2 && ch[0].stage && ch[0].layer == 0 && ch[0].expert == 1 && ch[1].stage &&
                ch[1].layer == 1 && ch[1].expert == 2,
            "t0: (0,1) and (1,2) staged, (1,3) given up");
    c.check(cache.where(0, 0) == ExpertCache::Where::Placed &&
                cache.where(0, 1) == ExpertCache::Where::Cached &&
                cache.where(1, 3) == ExpertCache::Where::Cpu,
            "t0: residency");
    cache.end_token(1, ch);
    ch.clear();
    route(0, {1, 2});
    c.check(ch.size() == 2 && !ch[0].stage && ch[0].layer == 1 && ch[0].expert == 2 &&
                ch[1].stage && ch[1].layer == 0 && ch[1].expert == 2,
            "t1: (1,2) evicted for (0,2)");
    ch.clear();
    route(1, {2, 0});
    c.check(ch.empty(), "t1: a cache of this token's experts evicts nothing");
    cache.end_token(1, ch);
    route(0, {3, 0});
    c.check(ch.size() == 2 && !ch[0].stage && ch[0].layer == 0 && ch[0].expert == 1 &&
                ch[1].stage && ch[1].expert == 3,
            "t2: the LRU (0,1) (staged before (0,2)) makes room for (0,3)");
    ch.clear();
    cache.end_token(1, ch);
    c.check(ch.empty(), "after t2: nothing is 3 tokens old yet");
    cache.end_token(1, ch);
    c.check(ch.size() == 1 && !ch[0].stage && ch[0].layer == 0 && ch[0].expert == 2 &&
                cache.where(0, 3) == ExpertCache::Where::Cached,
            "after t3: (0,2), last used at t1, leaves the window; (0,3) stays");
    model::ExpertCacheStats want;
    want.routed = 10;
    want.placed_hits = 2;
    want.cache_hits = 1;
    want.misses = 7;
    want.staged = 4;
    want.evicted = 3;
    c.check(same_stats(cache.stats(), want), "window script: " + describe(cache.stats()));
    c.check(cache.stats().hit_rate() == 0.3, "window script: hit rate 3/10");
    c.check(cache.cached_bytes() == 10, "window script: one expert cached");
}

// Prefetch, window 1, room for 2, nothing placed:
//   t0: after L0, layer 1's router says [2 3]: both staged (prefetched).
//       L1 [2 1]: (1,2) cache hit, a useful prefetch; (1,1) miss, the cache
//       holds only this token's entries: not staged.
//   t1: L1 [3 1]: (1,3) cache hit, useful; (1,1) miss: evicts (1,2)@0.
//   after t1: (1,3)@1 and (1,1)@1 are 1 token old: stay; after an empty t2
//   they leave. Batches (prefill) count but stage nothing.
void test_cache_prefetch(plaintest::Counter& c) {
    ExpertCache cache(4, {{}, {}}, {10, 10}, 20, {1, 1});
    Changes ch;
    const int32_t ahead[] = {2, 3};
    cache.prefetch(1, ahead, 2, ch);
    c.check(ch.size() == 2 && cache.where(1, 2) == ExpertCache::Where::Cached &&
                cache.where(1, 3) == ExpertCache::Where::Cached,
            "t0: the next layer's experts prefetched");
    const int32_t r0[] = {2, 1};
    cache.route(1, r0, 2, 1);
    ch.clear();
    cache.admit_misses(ch);
    c.check(ch.empty(), "t0: the miss finds only this token's entries: not staged");
    cache.end_token(1, ch);
    c.check(ch.empty(), "after t0: the window of 1 keeps t0's entries for t1");
    const int32_t r1[] = {3, 1};
    cache.route(1, r1, 2, 1);
    cache.admit_misses(ch);
    c.check(ch.size() == 2 && !ch[0].stage && ch[0].expert == 2 && ch[1].stage && ch[1].expert == 1,
            "t1: (1,2) evicted for the miss (1,1)");
    ch.clear();
    cache.end_token(1, ch);
    c.check(ch.empty(), "after t1: entries used at t1 stay for t2");
    cache.end_token(1, ch);
    c.check(ch.size() == 2 && cache.cached_bytes() == 0, "after an empty t2: both leave");
    model::ExpertCacheStats want;
    want.routed = 4;
    want.cache_hits = 2;
    want.misses = 2;
    want.staged = 1;
    want.prefetched = 2;
    want.prefetch_useful = 2;
    want.evicted = 3;
    c.check(same_stats(cache.stats(), want), "prefetch script: " + describe(cache.stats()));

    // A batch of 3 tokens: counted, nothing staged; window 0: prefetched
    // entries live for the current token only.
    ExpertCache batch(4, {{1}, {}}, {10, 10}, 20, {0, 1});
    const int32_t b[] = {1, 2, 1, 3, 0, 1};
    batch.route(0, b, 6, 3);
    ch.clear();
    batch.admit_misses(ch);
    c.check(ch.empty() && batch.stats().placed_hits == 3 && batch.stats().misses == 3,
            "a batch: 3 placed hits, 3 misses, nothing staged");
    batch.prefetch(1, ahead, 2, ch);
    batch.end_token(3, ch);
    c.check(batch.token() == 3 && batch.cached_bytes() == 0 && ch.size() == 4,
            "window 0: prefetched entries leave at the end of the step");
    // A smaller window applies at once.
    ExpertCache retuned(4, {{}, {}}, {10, 10}, 20, {4, 0});
    const int32_t r[] = {0};
    retuned.route(0, r, 1, 1);
    ch.clear();
    retuned.admit_misses(ch);
    retuned.end_token(1, ch);
    retuned.end_token(1, ch);
    c.check(retuned.cached_bytes() == 10, "window 4: still cached 2 tokens later");
    retuned.set_knobs({1, 0}, ch);
    c.check(retuned.cached_bytes() == 0, "window lowered to 1: expired at once");
}

// The placement's coverage (hot_neuron_threshold): routings 6 5 3 3 1 1 1 0
// of 20; 0.5 stops once 6 + 5 >= 10, 0.3 at 6 >= 6; 1.0 fills the budget.
void test_coverage(plaintest::Counter& c) {
    model::ExpertRoutingStats st;
    st.n_layer = 2;
    st.n_expert = 4;
    st.n_expert_used = 2;
    st.calib_tokens = 5;
    st.counts = {{6, 3, 1, 0}, {5, 3, 1, 1}};
    const std::vector<int64_t> bytes = {10, 10};
    const auto half = model::plan_expert_placement(bytes, st, 1000, 0.5);
    c.check(half.placed_experts == 2 && half.on_device[0] == std::vector<int32_t>{0} &&
                half.on_device[1] == std::vector<int32_t>{0} && half.routed_share == 11.0 / 20,
            "coverage 0.5: the two most routed experts");
    c.check(model::plan_expert_placement(bytes, st, 1000, 0.3).placed_experts == 1,
            "coverage 0.3: one expert");
    const auto full = model::plan_expert_placement(bytes, st, 35, 1.0);
    c.check(full.placed_experts == 3 && full.placed_bytes == 30,
            "coverage 1: what the budget holds");
    c.check(model::plan_expert_placement(bytes, st, 1000, 0.0).placed_experts == 0,
            "coverage 0: nothing pinned");
}

using model::testing::run_plan;

bool same_logits(const std::vector<std::vector<float>>& a,
                 const std::vector<std::vector<float>>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].size() != b[i].size() ||
            std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
            return false;
    return true;
}

void test_hybrid_plans(plaintest::Counter& c, const fs::path& dir, const std::string& preset) {
    const fs::path path = dir / (preset + ".gguf");
    calibrate::write_synthetic_moe_model(path, calibrate::synth_moe_preset(preset));
    const auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    tensor::ThreadPool pool(2);
    model::Model m(file, pool, 64);
    const model::ModelConfig& cfg = m.config();
    const int steps = 10;
    const auto want = run_plan(m, steps);

    // The routing of that run stands in for a calibration's.
    const model::ExpertRoutingStats stats = model::testing::routing_stats(m, 6 + steps);
    const int64_t B = m.layer(0).moe.expert_bytes();
    const int64_t all = cfg.n_layer * cfg.n_expert;
    const int64_t routed = cfg.n_layer * cfg.n_expert_used * (6 + steps);

    auto device = backend::make_cpu_device({});
    auto stand_in = backend::make_budgeted_cpu_compute(pool, *device);
    struct Case {
        std::string what;
        int64_t experts;  // budget beyond the scratch, in experts
        double coverage;
        model::ExpertCacheKnobs knobs;
        int64_t max_rows;
        bool retune;           // new knobs halfway
        int64_t staging = -1;  // Setup::upload_staging_bytes (-1: none on the stand-in)
    };
    const Case cases[] = {
        {"3 placed, no cache", 3, 1.0, {0, 0}, 256, false},
        {"placed + cache + prefetch", 12, 0.3, {2, 2}, 256, false},
        {"cache only, scratch of 4 rows", 6, 0.0, {4, 1}, 4, false},
        {"every expert placed", all, 1.0, {8, 2}, 256, false},
        {"retuned halfway", 10, 0.5, {8, 2}, 256, true},
        // The GPU's upload path: every staged expert through a host arena
        // of one expert, so that each upload waits for the previous one.
        {"uploads through a one-expert arena", 12, 0.3, {2, 2}, 256, false, 1},
    };
    for (const Case& k : cases) {
        const std::string name = preset + ", " + k.what;
        model::ExpertOffload::Setup setup;
        setup.stats = stats;
        setup.coverage = k.coverage;
        setup.knobs = k.knobs;
        setup.max_rows = k.max_rows;
        setup.upload_staging_bytes = k.staging;
        const int64_t scratch = 2 * std::max<int64_t>(k.max_rows, cfg.n_expert_used) * cfg.n_embd *
                                static_cast<int64_t>(sizeof(float));
        setup.budget_bytes = scratch + k.experts * B;
        std::vector<model::MoeWeights> layers;
        for (int il = 0; il < cfg.n_layer; ++il) layers.push_back(m.layer(il).moe);
        auto offload = std::make_unique<model::ExpertOffload>(*stand_in, pool, cfg, layers, setup);
        if (k.coverage == 1.0)
            c.check(offload->placement().placed_experts == std::min(k.experts, all),
                    name + ": the budget's experts placed");
        if (k.staging > 0)
            c.check(offload->host_staging_bytes() ==
                        scratch + B,  // host twins of the x and output rows, one expert
                    name + ": host staging of the rows and one expert (" +
                        std::to_string(offload->host_staging_bytes()) + " bytes)");
        m.moe_ffn()->set_offload(offload.get());
        const auto got = run_plan(m, steps, [&](int step) {
            if (k.retune && step == steps / 2) offload->retune(scratch + 5 * B, 0.0, {1, 3});
        });
        c.check(same_logits(got, want), name + ": the same logits as the CPU plan, bit for bit");
        const model::ExpertCacheStats& s = offload->cache().stats();
        c.check(s.routed == routed && s.placed_hits + s.cache_hits + s.misses == s.routed,
                name + ": every routing counted once (" + describe(s) + ")");
        if (k.experts == all) c.check(s.misses == 0 && s.hit_rate() == 1.0, name + ": no misses");
        if (k.knobs.cache_window_size == 0 && k.knobs.prefetch_depth == 0)
            c.check(s.cache_hits == 0 && s.staged == 0 && s.prefetched == 0,
                    name + ": no cache: no cache hits");
        if (k.coverage == 0.0)
            c.check(s.placed_hits == 0 && s.cache_hits > 0, name + ": cache hits only");
        const backend::DeviceMemoryInfo mem = device->memory();
        c.check(
            mem.used_by(backend::MemCategory::HotNeurons) == offload->placed_bytes() &&
                mem.used_by(backend::MemCategory::NeuronCache) == offload->cached_bytes() &&
                mem.used_by(backend::MemCategory::Scratch) == scratch &&
                offload->placed_bytes() + offload->cached_bytes() + scratch <= setup.budget_bytes,
            name +
                ": the device holds the placed and cached experts and the scratch, "
                "within the budget (" +
                std::to_string(mem.used_total()) + " of " + std::to_string(setup.budget_bytes) +
                " bytes)");
        std::printf("%s: hit rate %.3f (%s)\n", name.c_str(), s.hit_rate(), describe(s).c_str());
        m.moe_ffn()->set_offload(nullptr);
        offload.reset();
        c.check(device->memory().used_total() == 0, name + ": all released");
    }
}

// The stand-in with the kernels of a GPU that lacks one quant type: every
// op is the stand-in's, unsupported() refuses `missing`.
class WithoutType final : public backend::Compute {
public:
    WithoutType(backend::Compute& base, GgmlType missing) : b_(base), missing_(missing) {}
    std::string name() const override {
        return "a GPU without " + std::string(ggml_type_name(missing_));
    }
    bool host_memory() const override { return b_.host_memory(); }
    bool supports(backend::Capability c) const override { return b_.supports(c); }
    void* allocate(backend::MemCategory c, int64_t n) override { return b_.allocate(c, n); }
    void release(void* p) override { b_.release(p); }
    backend::MemoryUse memory_use() const override { return b_.memory_use(); }
    void upload(void* d, const void* s, int64_t n) override { b_.upload(d, s, n); }
    void download(void* d, const void* s, int64_t n) override { b_.download(d, s, n); }
    void fill_zero(void* d, int64_t n) override { b_.fill_zero(d, n); }
    void synchronize() override { b_.synchronize(); }
    std::string unsupported(const tensor::WeightView& w) const override {
        return w.type == missing_ ? "no kernel for " + std::string(ggml_type_name(w.type)) : "";
    }
    using Compute::matmul;
    void matmul(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                std::span<float* const> ys) override {
        b_.matmul(ws, x, rows, ys);
    }
    void rms_norm(const float* x, const float* w, float* y, int64_t rows, int64_t n,
                  float eps) override {
        b_.rms_norm(x, w, y, rows, n, eps);
    }
    void add(float* y, const float* x, int64_t n) override { b_.add(y, x, n); }
    void scale(float* v, int64_t n, float s) override { b_.scale(v, n, s); }
    void add_bias(float* v, const float* bias, int64_t rows, int64_t n) override {
        b_.add_bias(v, bias, rows, n);
    }
    void rope(float* v, int64_t rows, int64_t n_head, int64_t head_dim, const backend::RopeTable& t,
              int64_t pos0) override {
        b_.rope(v, rows, n_head, head_dim, t, pos0);
    }
    void store_kv(const float* src, void* cache, int64_t rows, int64_t n_head, int64_t n_ctx,
                  int64_t dim, int64_t pos0) override {
        b_.store_kv(src, cache, rows, n_head, n_ctx, dim, pos0);
    }
    void attention(const backend::AttentionShape& a, const float* q, const void* k, const void* v,
                   int64_t rows, int64_t pos0, float* out) override {
        b_.attention(a, q, k, v, rows, pos0, out);
    }
    FfnBuffers ffn_buffers(int64_t floats) override { return b_.ffn_buffers(floats); }
    void gated_products(std::span<const backend::GatedFfnWeights> ffns, const float* x,
                        int64_t rows, std::span<float* const> hs,
                        std::span<float* const> us) override {
        b_.gated_products(ffns, x, rows, hs, us);
    }

private:
    backend::Compute& b_;
    GgmlType missing_;
};

// What a GPU needs of the offload, on the stand-in: run() writes the
// caller's rows only at synchronize() (the device's output lands in host
// staging first), and experts of a type the device has no kernel for are
// refused when the offload is made, with nothing left allocated.
void test_device_contract(plaintest::Counter& c, const fs::path& dir) {
    const fs::path path = dir / "contract.gguf";
    calibrate::write_synthetic_moe_model(path, calibrate::synth_moe_preset("tiny-qwen3moe"));
    const auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
    tensor::ThreadPool pool(2);
    model::Model m(file, pool, 64);
    const model::ModelConfig& cfg = m.config();
    model::testing::run_plan(m, 2);
    model::ExpertOffload::Setup setup;
    setup.stats = model::testing::routing_stats(m, 8);
    setup.budget_bytes = int64_t{64} << 20;  // every expert placed
    std::vector<model::MoeWeights> layers;
    for (int il = 0; il < cfg.n_layer; ++il) layers.push_back(m.layer(il).moe);
    auto device = backend::make_cpu_device({});
    auto stand_in = backend::make_budgeted_cpu_compute(pool, *device);
    {
        model::ExpertOffload offload(*stand_in, pool, cfg, layers, setup);
        const size_t E = static_cast<size_t>(cfg.n_embd);
        std::vector<float> x(E), y(E, -7.0f), again(E, -7.0f);
        for (size_t i = 0; i < E; ++i) x[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
        offload.run(0, 0, x.data(), 1, y.data());
        x.assign(E, 0.0f);  // the offload copied x when run() was called
        c.check(std::all_of(y.begin(), y.end(), [](float v) { return v == -7.0f; }),
                "run(): the caller's output rows are untouched until synchronize()");
        offload.synchronize();
        c.check(std::any_of(y.begin(), y.end(), [](float v) { return v != -7.0f; }),
                "synchronize(): the expert's outputs are in the rows");
        for (size_t i = 0; i < E; ++i) x[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
        offload.run(0, 0, x.data(), 1, again.data());
        offload.synchronize();
        c.check(again == y, "the same input gives the same outputs");
    }
    c.check(device->memory().used_total() == 0, "contract: all released");
    const GgmlType down = m.layer(0).moe.down.first.type;
    WithoutType gpu(*stand_in, down);
    std::string why;
    try {
        model::ExpertOffload offload(gpu, pool, cfg, layers, setup);
    } catch (const EngineError& e) {
        why = e.what();
    }
    c.check(why.find("cannot run on a GPU without " + std::string(ggml_type_name(down))) !=
                    std::string::npos &&
                why.find("no kernel for") != std::string::npos,
            "experts without the device's kernels are refused at load (" + why + ")");
    c.check(device->memory().used_total() == 0, "refused: nothing allocated");
}

}  // namespace

int main() {
    plaintest::Counter c;
    test_cache_window(c);
    test_cache_prefetch(c);
    test_coverage(c);
    const fs::path dir = fs::temp_directory_path() / "pi_tst_moe_offload";
    fs::create_directories(dir);
    for (const char* preset : {"tiny-qwen3moe", "tiny-qwen2moe", "tiny-mixtral", "tiny-qwen35moe"})
        test_hybrid_plans(c, dir, preset);
    test_device_contract(c, dir);
    fs::remove_all(dir);
    return c.finish();
}
