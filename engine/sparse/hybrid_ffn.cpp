#include "sparse/hybrid_ffn.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "gguf/gguf.h"
#include "powerinfer/utf8_path.h"
#include "tensor/matmul.h"
#include "tensor/ops.h"

namespace powerinfer::sparse {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The sparse copies are built from mapped rows that the dense path,
// reading a matrix's panels, had released: once read they are released
// again (prefill and level 0 run the panels).
void release_rows_behind_panels(const gguf::GgufFile* file, const tensor::WeightView& w) {
    if (file && w.panels) file->release_pages(w.data, w.bytes());
}

// Hands the heap's free pages back to the system where the C library keeps
// them: building the copies frees temporaries (stacked rows, per-column
// sums) between long-lived blocks, and glibc holds such holes resident
// until trimmed (v3 on Qwen2.5-Coder-0.5B, Intel Xeon VM: 774 MB resident
// after the build, 571 MB trimmed, dense 548; docs/benchmarks.md).
void release_free_heap() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

}  // namespace

struct HybridFfn::LayerState {
    backend::NeuronSource src;
    WeightVector<uint8_t> down_t;      // neuron-major down copy (n_ff rows of n_embd)
    std::vector<float> down_norm;      // ||down column j|| (for validation's activity test)
    std::vector<int32_t> last_active;  // token index a neuron was last active/staged; -1 never
    std::vector<int32_t> cached;       // ids resident as NeuronCache
    std::vector<float> zipf_p;         // synthetic activity, by hot-first rank
    int64_t hot_count = 0;
    // Per-token counters (ran: the layer took the sparse path this token).
    bool ran = false;
    int64_t active = 0, hot_hits = 0, cache_hits = 0, cold_misses = 0, up_rows = 0;
    double ffn_bytes = 0, ffn_dense_bytes = 0;
};

HybridFfn::HybridFfn(tensor::ThreadPool& pool, std::vector<model::FfnWeights> layers,
                     Sidecar sidecar, std::unique_ptr<backend::Device> device,
                     model::FfnExecutor& dense, const Tuning& tuning, const HybridOptions& options)
    : pool_(pool),
      weights_(std::move(layers)),
      sidecar_(std::move(sidecar)),
      device_(std::move(device)),
      dense_(dense),
      host_(backend::make_cpu_compute(pool)),
      opt_(options),
      rng_(options.seed),
      tuning_(tuning) {
    const int64_t nl = static_cast<int64_t>(weights_.size());
    if (nl != sidecar_.n_layer || nl == 0 || weights_[0].gate.cols != sidecar_.n_embd ||
        weights_[0].gate.rows != sidecar_.n_ff) {
        throw SidecarError("sidecar shape (" + std::to_string(sidecar_.n_layer) + " layers, " +
                           std::to_string(sidecar_.n_embd) + "x" + std::to_string(sidecar_.n_ff) +
                           ") does not match the model; recalibrate with "
                           "`powerinfer-calibrate -m MODEL`");
    }
    const int64_t n_embd = sidecar_.n_embd, n_ff = sidecar_.n_ff;
    if (opt_.cpu_exact && device_->memory().simulated && !opt_.synthetic_activity) {
        // No GPU: no device emulation, no copies of hot neurons, no predictors.
        // The head's basis and preview are checked before anything is
        // built or released, so that a refusal leaves the dense model whole.
        if (opt_.head.data && !sidecar_.head_basis.empty())
            if (std::string why =
                    head_mismatch(opt_.head, sidecar_.head_basis, sidecar_.head_preview);
                !why.empty())
                throw SidecarError(why);
        const auto release = [file = opt_.file](const tensor::WeightView& w) {
            release_rows_behind_panels(file, w);
        };
        if (!opt_.input_products.empty()) {
            // With drop_panels the copies replace the matrices' dense layouts:
            // their rows and panels both go once the copy is built (views
            // this executor holds forget the panels too).
            const bool replace = static_cast<bool>(opt_.drop_panels);
            const auto drop = [this](const tensor::WeightView& w) {
                if (opt_.file) opt_.file->release_pages(w.data, w.bytes());
                opt_.drop_panels(w);
                // Slices of a matrix whose panels went come from the pool's
                // threads: nothing to forget, nothing written.
                const auto forget = [&](tensor::WeightView& v) {
                    if (v.data == w.data && v.panels) v.panels = nullptr;
                };
                for (auto& f : weights_) {
                    forget(f.gate);
                    forget(f.up);
                    forget(f.down);
                }
                forget(opt_.head);
            };
            // A head with a preview reads its likeliest rows from the file's
            // rows: a copy beside them would hold the head twice, so where the
            // copies replace the dense layouts the head keeps only its rows
            // (the preview takes its products; with head_candidates 0 they
            // run dense over the rows).
            std::vector<SiteMatrices> products = opt_.input_products;
            std::vector<std::vector<float>> thresholds = sidecar_.input_thresholds;
            const bool fit = thresholds.size() == products.size();
            if (replace && opt_.head.data && !sidecar_.head_basis.empty()) {
                for (size_t k = products.size(); k-- > 0;)
                    if (products[k].site == InputSite::Head) {
                        products.erase(products.begin() + static_cast<std::ptrdiff_t>(k));
                        if (fit)
                            thresholds.erase(thresholds.begin() + static_cast<std::ptrdiff_t>(k));
                    }
                drop(opt_.head);
            }
            input_ = std::make_unique<InputSparsity>(
                pool_, products, default_input_allocation(), true,
                replace ? InputSparsity::ReleaseRows(drop) : InputSparsity::ReleaseRows(release),
                replace);
            if (fit) input_->set_thresholds(sidecar_.input_levels, thresholds);
        } else {
            exact_ = std::make_unique<ExactSparseFfn>(pool_, weights_, sidecar_, release);
        }
        if (opt_.head.data && !sidecar_.head_basis.empty()) {
            // Its likeliest rows are read from the file's rows: panels beside
            // them would hold the head twice (v3's replacing copies dropped
            // them above already).
            if (opt_.drop_panels && opt_.head.panels) {
                opt_.drop_panels(opt_.head);
                opt_.head.panels = nullptr;
            }
            // The sidecar's preview where it has one (its RAM moves to the
            // head), else built from every row of the head.
            head_preview_built_ = sidecar_.head_preview.rows == 0;
            head_ = std::make_unique<SparseHead>(pool_, opt_.head, sidecar_.head_basis,
                                                 std::move(sidecar_.head_preview));
            // A preview built here read every row of the head: with the
            // copies in place of the dense layouts they leave the resident
            // set again (the likeliest rows come back as they are read).
            if (head_preview_built_ && input_ && input_->replaces_rows() && opt_.file)
                opt_.file->release_pages(opt_.head.data, opt_.head.bytes());
        }
        sidecar_.head_preview = {};  // the head's now, or unused
        for (int64_t l = 0; l < nl; ++l) layers_.push_back(std::make_unique<LayerState>());
        summary_.resize(static_cast<size_t>(nl));
        apply_tuning_locked();
        release_free_heap();
        snapshot_memory_locked();
        return;
    }
    sidecar_.head_preview = {};  // a GPU split has no head preview: its RAM goes back
    for (const auto& ls : sidecar_.layers)
        if (ls.predictor.rank == 0)
            throw SidecarError(
                "the sidecar has no predictors (calibrated with --no-predictors), "
                "and a GPU split needs them: recalibrate without --no-predictors");
    const auto down_row = ggml_row_bytes(opt_.down_type, static_cast<uint64_t>(n_embd));
    if (!down_row) throw EngineError("n_embd does not fit the neuron-major down type");
    std::vector<backend::NeuronFormat> formats;
    std::vector<float> col(static_cast<size_t>(n_embd)), row(static_cast<size_t>(n_ff));
    for (int64_t l = 0; l < nl; ++l) {
        const model::FfnWeights& w = weights_[static_cast<size_t>(l)];
        auto st = std::make_unique<LayerState>();
        // Neuron-major down: dequantize each row of ffn_down (one output
        // dimension over all neurons) and scatter it into the columns.
        std::vector<float> t(static_cast<size_t>(n_ff * n_embd));
        for (int64_t i = 0; i < n_embd; ++i) {
            tensor::dequantize_row(w.down.type, w.down.row(i), row.data(), n_ff);
            for (int64_t j = 0; j < n_ff; ++j)
                t[static_cast<size_t>(j * n_embd + i)] = row[static_cast<size_t>(j)];
        }
        st->down_norm.resize(static_cast<size_t>(n_ff));
        st->down_t.resize(static_cast<size_t>(n_ff) * *down_row);
        for (int64_t j = 0; j < n_ff; ++j) {
            const float* c = t.data() + j * n_embd;
            double s = 0;
            for (int64_t i = 0; i < n_embd; ++i) s += double(c[i]) * c[i];
            st->down_norm[static_cast<size_t>(j)] = static_cast<float>(std::sqrt(s));
            uint8_t* dst = st->down_t.data() + static_cast<size_t>(j) * *down_row;
            if (opt_.down_type == GgmlType::F32) {
                std::memcpy(dst, c, static_cast<size_t>(n_embd) * 4);
            } else {
                tensor::quantize_row_ref(opt_.down_type, c, dst, n_embd);
            }
        }
        st->src.gate = w.gate;
        st->src.up = w.up;
        st->src.down_t = {opt_.down_type, st->down_t.data(), n_ff, n_embd, *down_row};
        st->last_active.assign(static_cast<size_t>(n_ff), -1);
        formats.push_back(backend::make_neuron_format(n_embd, n_ff, w.gate.type, w.up.type,
                                                      opt_.down_type, sidecar_.activation));
        layers_.push_back(std::move(st));
    }
    if (opt_.synthetic_activity) {
        const auto p = zipf_activity(n_ff, sidecar_.zipf_s, 1.0 - sidecar_.target_sparsity);
        for (auto& st : layers_) st->zipf_p = p;
    }
    device_->configure_layers(formats);
    // Fixed parts first: they are accounted on the device whatever fits.
    fixed_bytes_ = opt_.dense_device_bytes + opt_.kv_cache_bytes + opt_.reserved_device_bytes;
    if (opt_.dense_device_bytes > 0 && opt_.dense_device_bytes <= device_->memory().available()) {
        device_->allocate(backend::MemCategory::DenseWeights, opt_.dense_device_bytes);
    }
    if (opt_.kv_cache_bytes > 0 && opt_.kv_cache_bytes <= device_->memory().available()) {
        device_->allocate(backend::MemCategory::KvCache, opt_.kv_cache_bytes);
    }
    summary_.resize(static_cast<size_t>(nl));
    apply_tuning_locked();
    snapshot_memory_locked();
}

HybridFfn::~HybridFfn() { device_->synchronize(); }

void HybridFfn::set_reserved_device_bytes(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    fixed_bytes_ += std::max<int64_t>(0, bytes) - opt_.reserved_device_bytes;
    opt_.reserved_device_bytes = std::max<int64_t>(0, bytes);
    place();
    snapshot_memory_locked();
}

bool HybridFfn::layer_dense(int layer) const {
    if (!tuning_.sparse) return true;
    const auto& f = tuning_.force_full_precision_layers;
    return std::find(f.begin(), f.end(), layer) != f.end();
}

void HybridFfn::set_tuning(const Tuning& tuning) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = tuning;
    pending_set_ = true;
}

Tuning HybridFfn::tuning() const {
    std::lock_guard<std::mutex> lock(mu_);
    return pending_set_ ? pending_ : tuning_;
}

void HybridFfn::apply_tuning_locked() {
    const int64_t nl = static_cast<int64_t>(layers_.size());
    if (input_) {
        const double s = tuning_.activation_sparsity;
        input_->set_level(!tuning_.sparse ? 0.0 : s < 0 ? input_default_level() : s);
        input_->set_dense_layers(tuning_.force_full_precision_layers);
        return;
    }
    if (exact_) {
        exact_->set_level(tuning_.activation_sparsity);
        return;
    }
    // Predictors are uploaded for every sparse layer that fits.
    for (int64_t l = 0; l < nl; ++l) {
        if (!device_->has_predictor(static_cast<int>(l))) {
            const auto& p = sidecar_.layers[static_cast<size_t>(l)].predictor;
            device_->set_predictor(static_cast<int>(l), p.view(sidecar_.n_embd, sidecar_.n_ff));
        }
    }
    const int64_t per_neuron = device_->layer_format(0).bytes_per_neuron();
    const auto mem = device_->memory();
    device_->set_budget(hot_neuron_budget(
        tuning_.vram_budget_mb, mem.simulated, mem.device_free_bytes, mem.used_total(),
        fixed_bytes_ + mem.used_by(backend::MemCategory::Predictors) +
            nl * sidecar_.n_ff * per_neuron));
    place();
}

void HybridFfn::place() {
    const int64_t nl = static_cast<int64_t>(layers_.size());
    // The device's own staging and work buffers count like the fixed parts.
    const auto mem = device_->memory();
    std::vector<int64_t> per_neuron;
    for (int64_t l = 0; l < nl; ++l)
        per_neuron.push_back(device_->layer_format(static_cast<int>(l)).bytes_per_neuron());
    placement_ = place_hot_neurons(
        hot_neuron_input(sidecar_, per_neuron, tuning_, device_->budget(),
                         fixed_bytes_ + mem.used_by(backend::MemCategory::Predictors) +
                             mem.used_by(backend::MemCategory::Staging)));
    // Drop the cache and the old hot sets beyond the new counts first, so
    // that the uploads below have room.
    for (int64_t l = 0; l < nl; ++l) {
        LayerState& st = *layers_[static_cast<size_t>(l)];
        device_->evict_neurons(static_cast<int>(l), st.cached.data(),
                               static_cast<int64_t>(st.cached.size()));
        st.cached.clear();
        const auto& perm = sidecar_.layers[static_cast<size_t>(l)].perm;
        // A smaller hot set empties the layer (a device then frees its
        // arrays and allocates exactly the new set); a larger one keeps it.
        const int64_t keep = placement_.hot_count[static_cast<size_t>(l)] < st.hot_count
                                 ? 0
                                 : placement_.hot_count[static_cast<size_t>(l)];
        device_->evict_neurons(static_cast<int>(l), perm.data() + keep,
                               static_cast<int64_t>(perm.size()) - keep);
    }
    for (int64_t l = 0; l < nl; ++l) {
        LayerState& st = *layers_[static_cast<size_t>(l)];
        const auto& perm = sidecar_.layers[static_cast<size_t>(l)].perm;
        const int64_t want = placement_.hot_count[static_cast<size_t>(l)];
        st.hot_count = device_->upload_neurons(
            static_cast<int>(l), backend::MemCategory::HotNeurons, perm.data(), want, st.src);
        summary_[static_cast<size_t>(l)].hot_count = st.hot_count;
    }
}

void HybridFfn::run(int layer, const float* x, int64_t n_tokens, float* out) {
    if (layer == 0) {
        std::lock_guard<std::mutex> lock(mu_);
        if (pending_set_) {
            const Tuning old = tuning_;
            tuning_ = pending_;
            pending_set_ = false;
            if (old.hot_neuron_threshold != tuning_.hot_neuron_threshold ||
                old.vram_budget_mb != tuning_.vram_budget_mb || old.sparse != tuning_.sparse ||
                old.force_full_precision_layers != tuning_.force_full_precision_layers ||
                old.activation_sparsity != tuning_.activation_sparsity) {
                apply_tuning_locked();
                snapshot_memory_locked();
            }
        }
    }
    if (layer_dense(layer) || (n_tokens != 1 && !opt_.sparse_prefill)) {
        dense_.run(layer, x, n_tokens, out);
        return;
    }
    const int64_t n_embd = sidecar_.n_embd;
    if (exact_ && exact_->effective_level() <= 0) {
        // Level 0 on the exact path skips nothing: the dense executor, its
        // bits and its speed, every neuron counted active.
        LayerState& st = *layers_[static_cast<size_t>(layer)];
        const auto t0 = Clock::now();
        for (int64_t t = 0; t < n_tokens; ++t) dense_.run(layer, x + t * n_embd, 1, out + t * n_embd);
        st.active += n_tokens * sidecar_.n_ff;
        st.cold_misses += n_tokens * sidecar_.n_ff;
        st.up_rows += n_tokens * sidecar_.n_ff;
        st.ran = true;
        current_.cpu_ms += ms_since(t0);
        return;
    }
    if (input_) {
        // The products go through the host backend's hook (input_): the
        // dense executor's ops, reading only the kept inputs' columns.
        const auto t0 = Clock::now();
        for (int64_t t = 0; t < n_tokens; ++t)
            dense_.run(layer, x + t * n_embd, 1, out + t * n_embd);
        layers_[static_cast<size_t>(layer)]->ran = true;
        current_.cpu_ms += ms_since(t0);
        return;
    }
    if (exact_) {
        LayerState& st = *layers_[static_cast<size_t>(layer)];
        const auto t0 = Clock::now();
        for (int64_t t = 0; t < n_tokens; ++t) {
            const ExactCounts c = exact_->run(layer, x + t * n_embd, out + t * n_embd);
            st.ffn_bytes += c.bytes;
            st.ffn_dense_bytes += c.dense_bytes;
            st.active += c.active;
            st.cold_misses += c.active;
            st.up_rows += c.up_rows;
            st.ran = true;
        }
        current_.cpu_ms += ms_since(t0);
        return;
    }
    for (int64_t t = 0; t < n_tokens; ++t) run_sparse(layer, x + t * n_embd, out + t * n_embd);
}

void HybridFfn::run_sparse(int layer, const float* x, float* out) {
    LayerState& st = *layers_[static_cast<size_t>(layer)];
    const int64_t n_embd = sidecar_.n_embd;
    const float thr = static_cast<float>(tuning_.predictor_threshold);

    auto t0 = Clock::now();
    device_->predict(layer, x, thr, active_);
    if (opt_.synthetic_activity) sample_synthetic(layer, active_);
    current_.predictor_ms += ms_since(t0);

    dev_ids_.clear();
    cold_ids_.clear();
    int64_t hot = 0, cached = 0;
    const int32_t tok = static_cast<int32_t>(token_);
    for (int32_t j : active_) {
        st.last_active[static_cast<size_t>(j)] = tok;
        switch (device_->residency(layer, j)) {
            case backend::MemCategory::HotNeurons:
                ++hot;
                dev_ids_.push_back(j);
                break;
            case backend::MemCategory::NeuronCache:
                ++cached;
                dev_ids_.push_back(j);
                break;
            default:
                cold_ids_.push_back(j);
        }
    }
    st.ran = true;
    st.active += static_cast<int64_t>(active_.size());
    st.hot_hits += hot;
    st.cache_hits += cached;
    st.cold_misses += static_cast<int64_t>(cold_ids_.size());

    y_dev_.resize(static_cast<size_t>(n_embd));
    y_cpu_.resize(static_cast<size_t>(n_embd));
    device_->run_hot(layer, x, dev_ids_.data(), static_cast<int64_t>(dev_ids_.size()),
                     y_dev_.data());
    t0 = Clock::now();
    cold_part(layer, x, cold_ids_, y_cpu_.data());
    current_.cpu_ms += ms_since(t0);
    current_.device_ms += device_->synchronize();
    for (int64_t i = 0; i < n_embd; ++i)
        out[i] = y_dev_[static_cast<size_t>(i)] + y_cpu_[static_cast<size_t>(i)];

    if (validating_) validate(layer, x, active_, out);
    // This token's cold neurons stay on the device for the cache window.
    if (tuning_.cache_window_size > 0 && !cold_ids_.empty()) cache_insert(layer, cold_ids_);
    if (tuning_.prefetch_depth > 0) prefetch(layer, x);
}

void HybridFfn::cold_part(int layer, const float* x, const std::vector<int32_t>& ids, float* y) {
    const model::FfnWeights& w = weights_[static_cast<size_t>(layer)];
    const LayerState& st = *layers_[static_cast<size_t>(layer)];
    cold_.run(pool_, {w.gate, w.up, st.src.down_t, sidecar_.activation}, x, ids.data(),
              static_cast<int64_t>(ids.size()), y);
}

void HybridFfn::cache_insert(int layer, const std::vector<int32_t>& ids) {
    LayerState& st = *layers_[static_cast<size_t>(layer)];
    int64_t done = device_->upload_neurons(layer, backend::MemCategory::NeuronCache, ids.data(),
                                           static_cast<int64_t>(ids.size()), st.src);
    if (done < static_cast<int64_t>(ids.size()) && !st.cached.empty()) {
        // Full: evict this layer's least recently active cache entries that
        // were not used for this token, then retry once.
        const int32_t tok = static_cast<int32_t>(token_);
        std::vector<int32_t> victims;
        for (int32_t id : st.cached) {
            if (st.last_active[static_cast<size_t>(id)] < tok) victims.push_back(id);
        }
        std::sort(victims.begin(), victims.end(), [&](int32_t a, int32_t b) {
            const int32_t la = st.last_active[static_cast<size_t>(a)],
                          lb = st.last_active[static_cast<size_t>(b)];
            return la != lb ? la < lb : a < b;
        });
        const size_t need = ids.size() - static_cast<size_t>(done);
        if (victims.size() > need) victims.resize(need);
        device_->evict_neurons(layer, victims.data(), static_cast<int64_t>(victims.size()));
        std::vector<int32_t> gone(victims.begin(), victims.end());
        std::sort(gone.begin(), gone.end());
        st.cached.erase(std::remove_if(st.cached.begin(), st.cached.end(),
                                       [&](int32_t id) {
                                           return std::binary_search(gone.begin(), gone.end(), id);
                                       }),
                        st.cached.end());
        done += device_->upload_neurons(layer, backend::MemCategory::NeuronCache, ids.data() + done,
                                        static_cast<int64_t>(ids.size()) - done, st.src);
    }
    st.cached.insert(st.cached.end(), ids.begin(), ids.begin() + done);
}

void HybridFfn::prefetch(int layer, const float* x) {
    const int nl = static_cast<int>(layers_.size());
    const float thr = static_cast<float>(tuning_.predictor_threshold);
    for (int k = 1; k <= tuning_.prefetch_depth && layer + k < nl; ++k) {
        const int m = layer + k;
        if (layer_dense(m)) continue;
        const auto t0 = Clock::now();
        device_->predict(m, x, thr, pred_);
        current_.predictor_ms += ms_since(t0);
        LayerState& st = *layers_[static_cast<size_t>(m)];
        std::vector<int32_t> stage;
        for (int32_t j : pred_) {
            if (!device_->is_resident(m, j)) stage.push_back(j);
        }
        if (stage.empty()) continue;
        // Staged neurons count as used now so that the window keeps them.
        for (int32_t j : stage) {
            st.last_active[static_cast<size_t>(j)] =
                std::max(st.last_active[static_cast<size_t>(j)], static_cast<int32_t>(token_));
        }
        cache_insert(m, stage);
    }
}

void HybridFfn::sample_synthetic(int layer, std::vector<int32_t>& active) {
    const LayerState& st = *layers_[static_cast<size_t>(layer)];
    const auto& perm = sidecar_.layers[static_cast<size_t>(layer)].perm;
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    active.clear();
    for (size_t k = 0; k < perm.size(); ++k) {
        if (u(rng_) < st.zipf_p[k]) active.push_back(perm[k]);
    }
    std::sort(active.begin(), active.end());
}

void HybridFfn::validate(int layer, const float* x, const std::vector<int32_t>& active,
                         const float* out) {
    const model::FfnWeights& w = weights_[static_cast<size_t>(layer)];
    const LayerState& st = *layers_[static_cast<size_t>(layer)];
    const int64_t n_ff = sidecar_.n_ff, n_embd = sidecar_.n_embd;
    // The dense FFN (the backend's op, on the host), its hidden layer copied
    // on the way.
    struct KeepHidden final : backend::FfnTap {
        std::vector<float>& h;
        explicit KeepHidden(std::vector<float>& v) : h(v) {}
        void hidden(int64_t, const float*, int64_t, const float*, const float* hv) override {
            std::copy(hv, hv + h.size(), h.begin());  // one row
        }
    };
    a_.resize(static_cast<size_t>(n_ff));
    dense_out_.resize(static_cast<size_t>(n_embd));
    KeepHidden keep(a_);
    host_->gated_ffn(w, x, 1, dense_out_.data(), &keep);
    const float thr = sidecar_.layers[static_cast<size_t>(layer)].threshold;
    int64_t truly = 0, caught = 0;
    size_t ai = 0;
    for (int64_t j = 0; j < n_ff; ++j) {
        const float a = a_[static_cast<size_t>(j)];
        while (ai < active.size() && active[ai] < j) ++ai;
        if (std::fabs(a) * st.down_norm[static_cast<size_t>(j)] > thr) {
            ++truly;
            if (ai < active.size() && active[ai] == j) ++caught;
        }
    }
    double num = 0, den = 0;
    for (int64_t i = 0; i < n_embd; ++i) {
        const double d = double(out[i]) - dense_out_[static_cast<size_t>(i)];
        num += d * d;
        den += double(dense_out_[static_cast<size_t>(i)]) * dense_out_[static_cast<size_t>(i)];
    }
    std::lock_guard<std::mutex> lock(mu_);
    LayerSummary& s = summary_[static_cast<size_t>(layer)];
    s.recall_sum += truly ? double(caught) / double(truly) : 1.0;
    s.recall_samples += 1;
    s.rel_err_sum += den > 0 ? std::sqrt(num / den) : 0.0;
    current_.recall = (current_.recall < 0 ? 0 : current_.recall) +
                      (truly ? double(caught) / double(truly) : 1.0) / double(layers_.size());
}

backend::MatvecHook* HybridFfn::matvec_hook() {
    return input_ || head_ ? &products_ : nullptr;
}

// Runs on the model's thread, like run(): tuning_ is applied there.
bool HybridFfn::Products::matvec(std::span<const tensor::WeightView> ws, const float* x,
                                 std::span<float* const> ys) {
    HybridFfn& o = owner_;
    if (o.head_ && is_head_product(ws, o.head_->head()) && o.tuning_.sparse &&
        o.tuning_.head_candidates != 0) {
        o.head_->logits(x, o.tuning_.head_candidates, ys[0]);
        return true;
    }
    return o.input_ && o.input_->matvec(ws, x, ys);
}

bool HybridFfn::Products::matmul(std::span<const tensor::WeightView> ws, const float* x,
                                 int64_t rows, std::span<float* const> ys) {
    return owner_.input_ && owner_.input_->matmul(ws, x, rows, ys);
}

void HybridFfn::Products::observe(std::span<const tensor::WeightView> ws, const float* x,
                                  int64_t rows) {
    if (owner_.input_) owner_.input_->observe(ws, x, rows);
}

HeadCounts HybridFfn::head_counts() const {
    return head_ ? head_->counts() : HeadCounts{};
}

// The sidecar's curve and default level are v2's (powerinfer-calibrate
// measures the v2 path): v3 has its own default.
double HybridFfn::input_default_level() const {
    return sidecar_.input_default_sparsity >= 0 ? sidecar_.input_default_sparsity
                                                : kInputDefaultLevel;
}

void HybridFfn::end_token() {
    const int64_t nl = static_cast<int64_t>(layers_.size());
    TokenMetrics m = std::move(current_);
    current_ = TokenMetrics{};
    if (input_) {
        // What the token's products read: down's kept inputs are the FFN's
        // active neurons.
        const InputCounts c = input_->take_counts();
        std::lock_guard<std::mutex> lock(mu_);
        bool ran = false;
        for (int64_t l = 0; l < nl; ++l) {
            ran = ran || layers_[static_cast<size_t>(l)]->ran;
            layers_[static_cast<size_t>(l)]->ran = false;
        }
        if (!ran || c.products == 0) return;  // a prefill token
        const int mid = static_cast<int>(InputSite::FfnMid);
        m.ffn_neurons_total = c.inputs[mid];
        m.active = c.kept[mid];
        m.cold_misses = c.kept[mid];
        m.input_sparsity = c.delivered();
        m.weight_bytes = c.bytes;
        m.dense_weight_bytes = c.dense_bytes;
        const double per_layer = nl ? double(c.inputs[mid]) / double(nl) : 0.0;
        m.layer_active_fraction.assign(
            static_cast<size_t>(nl),
            per_layer > 0 ? float(1.0 - c.delivered(InputSite::FfnMid)) : 1.0f);
        total_inputs_.add(c);
        ++input_tokens_;
        m.token_index = token_;
        last_ = std::move(m);
        ++token_;
        return;
    }
    bool sparse_token = false;
    double ffn_saved = 0;  // the exact path's FFN bytes not read this token
    m.layer_hit_rate.assign(static_cast<size_t>(nl), 0.0f);
    m.layer_active_fraction.assign(static_cast<size_t>(nl), 0.0f);
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (int64_t l = 0; l < nl; ++l) {
            LayerState& st = *layers_[static_cast<size_t>(l)];
            LayerSummary& s = summary_[static_cast<size_t>(l)];
            s.n_ff = sidecar_.n_ff;
            s.dense = layer_dense(static_cast<int>(l));
            m.ffn_neurons_total += sidecar_.n_ff;
            if (s.dense) {
                m.active += sidecar_.n_ff;  // dense layers compute everything
                m.layer_active_fraction[static_cast<size_t>(l)] = 1.0f;
                continue;
            }
            if (!st.ran) continue;  // prefill (dense) token
            sparse_token = true;
            st.ran = false;
            m.active += st.active;
            m.hot_hits += st.hot_hits;
            m.cache_hits += st.cache_hits;
            m.cold_misses += st.cold_misses;
            m.layer_active_fraction[static_cast<size_t>(l)] =
                float(st.active) / float(sidecar_.n_ff);
            m.layer_hit_rate[static_cast<size_t>(l)] =
                st.active ? float(st.hot_hits + st.cache_hits) / float(st.active) : 1.0f;
            s.tokens += 1;
            s.active += st.active;
            s.hot_hits += st.hot_hits;
            s.cache_hits += st.cache_hits;
            s.cold_misses += st.cold_misses;
            s.up_rows += st.up_rows;
            s.ffn_bytes += st.ffn_bytes;
            s.ffn_dense_bytes += st.ffn_dense_bytes;
            ffn_saved += st.ffn_dense_bytes - st.ffn_bytes;
            st.active = st.hot_hits = st.cache_hits = st.cold_misses = st.up_rows = 0;
            st.ffn_bytes = st.ffn_dense_bytes = 0;
        }
        if (exact_ && sparse_token && opt_.token_weight_bytes > 0) {
            // The head runs after end_token: its saving per token so far.
            const double head_saved = head_ ? head_->counts().saved_per_token() : 0.0;
            m.dense_weight_bytes = opt_.token_weight_bytes;
            m.weight_bytes = opt_.token_weight_bytes - ffn_saved - head_saved;
        }
        snapshot_memory_locked();
        if (sparse_token || !tuning_.sparse) {
            m.token_index = token_;
            last_ = std::move(m);
        }
    }
    // Expire cache entries older than the window.
    const int32_t oldest =
        static_cast<int32_t>(token_ - std::max(0, tuning_.cache_window_size) + 1);
    std::vector<int32_t> expired;
    for (int64_t l = 0; l < nl; ++l) {
        LayerState& st = *layers_[static_cast<size_t>(l)];
        expired.clear();
        auto keep_end = std::partition(st.cached.begin(), st.cached.end(), [&](int32_t id) {
            return st.last_active[static_cast<size_t>(id)] >= oldest;
        });
        expired.assign(keep_end, st.cached.end());
        st.cached.erase(keep_end, st.cached.end());
        if (!expired.empty()) {
            device_->evict_neurons(static_cast<int>(l), expired.data(),
                                   static_cast<int64_t>(expired.size()));
        }
    }
    ++token_;
    validating_ = opt_.validate_every > 0 && token_ % opt_.validate_every == 0;
}

TokenMetrics HybridFfn::last_metrics() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
}

std::vector<LayerSummary> HybridFfn::layer_summary() const {
    std::lock_guard<std::mutex> lock(mu_);
    return summary_;
}

InputCounts HybridFfn::input_counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return total_inputs_;
}

int64_t HybridFfn::input_tokens() const {
    std::lock_guard<std::mutex> lock(mu_);
    return input_tokens_;
}

void HybridFfn::reset_summary() {
    std::lock_guard<std::mutex> lock(mu_);
    total_inputs_ = InputCounts{};
    input_tokens_ = 0;
    if (head_) head_->reset_counts();
    for (auto& s : summary_) {
        const int64_t hot = s.hot_count;
        s = LayerSummary{};
        s.hot_count = hot;
    }
}

MemoryReport HybridFfn::memory() const {
    std::lock_guard<std::mutex> lock(mu_);
    return memory_;
}

void HybridFfn::snapshot_memory_locked() {
    const auto m = device_->memory();
    memory_.device_name = m.name;
    memory_.simulated = m.simulated;
    memory_.budget_bytes = m.budget_bytes;
    memory_.dense_weights = m.used_by(backend::MemCategory::DenseWeights);
    memory_.hot_neurons = m.used_by(backend::MemCategory::HotNeurons);
    memory_.neuron_cache = m.used_by(backend::MemCategory::NeuronCache);
    memory_.kv_cache = m.used_by(backend::MemCategory::KvCache);
    memory_.predictors = m.used_by(backend::MemCategory::Predictors);
    memory_.scratch =
        m.used_by(backend::MemCategory::Scratch) + m.used_by(backend::MemCategory::Staging);
    memory_.note = m.note;
}

SparsityCurve HybridFfn::sparsity_curve() const {
    SparsityCurve c;
    if (input_) {
        // The sidecar's curve measured v2; v3's is not measured yet.
        c.default_level = input_default_level();
        return c;
    }
    for (const CurvePoint& p : sidecar_.curve)
        c.points.push_back(public_point(p));
    c.bound = sidecar_.curve_bound;
    c.recommended = sidecar_.recommended_sparsity;
    // The default follows the sidecar only on the exact path (a GPU split
    // runs its predictors' target).
    c.default_level = exact_ ? exact_->default_level() : sidecar_.target_sparsity;
    c.dense_ppl = sidecar_.curve_dense_ppl;
    c.tokens_scored = static_cast<int64_t>(sidecar_.curve_tokens);
    return c;
}

std::string HybridFfn::status() const {
    std::string out = status_without_head();
    if (head_) {
        const int64_t n = tuning_.head_candidates;
        out += "; output head from a rank-" + std::to_string(head_->rank()) + " preview (+" +
               std::to_string((head_->preview_bytes() + 500000) / 1000000) + " MB RAM), " +
               (n == 0  ? std::string("off (head_candidates 0: dense)")
                : n < 0 ? std::string("the likeliest rows exact")
                        : std::to_string(n) + " rows exact");
        if (head_preview_built_)
            out += " (its preview built at load: the sidecar, from an older calibration, has "
                   "none; recalibrate to store it and load faster)";
    } else if (opt_.head.data && (input_ || exact_)) {
        out += "; output head dense (the sidecar has no head basis: recalibrate for its preview)";
    }
    return out;
}

std::string HybridFfn::status_without_head() const {
    if (input_) {
        char buf[320];
        const double level = input_->level();
        const bool replaced = input_->replaces_rows();
        std::snprintf(
            buf, sizeof buf,
            "sparse: CPU, input sparsity on every matrix at %.0f%% (v3%s), %s+%.0f MB RAM",
            100.0 * level, tuning_.activation_sparsity < 0 ? ", the default level" : "",
            replaced ? "the input-major copies in place of the dense layout (prompts "
                       "and level 0 from them, the dense bits), "
                     : "",
            double(input_->extra_bytes() - (replaced ? input_->copied_bytes() : 0)) / 1e6);
        std::string out = buf;
        if (!input_->calibrated()) {
            out +=
                "; the sidecar has no input thresholds (made by an older powerinfer-calibrate): "
                "each token's inputs are ranked instead, which is slower; recalibrate";
        }
        if (!input_->dense_products().empty())
            out += "; " + std::to_string(input_->dense_products().size()) +
                   " products stay dense (e.g. " + input_->dense_products().front() + ")";
        return out;
    }
    if (exact_) {
        char buf[256];
        const double level = exact_->effective_level();
        const int64_t built = exact_->extra_bytes();
        std::snprintf(buf, sizeof buf,
                      "sparse: CPU, exact activity at %.0f%% target sparsity (calibrated %.0f%%), "
                      "+%.0f MB RAM",
                      100.0 * level, 100.0 * sidecar_.target_sparsity, double(built) / 1e6);
        std::string out = buf;
        if (built == 0) {
            std::snprintf(
                buf, sizeof buf, " (its down copies, about %.0f MB, are built %s)",
                double(exact_->planned_bytes()) / 1e6,
                level > 0 ? "as the first token runs" : "when a level above 0 first runs");
            out += buf;
        }
        if (sidecar_.recommended_sparsity >= 0) {
            // The measured curve's verdict, and whether the default follows it.
            std::snprintf(
                buf, sizeof buf,
                "; recommended %.0f%% (measured: perplexity within +%.0f%% on "
                "held-out text)%s",
                100.0 * sidecar_.recommended_sparsity, 100.0 * sidecar_.curve_bound,
                exact_->level() < 0 && sidecar_.default_sparsity == sidecar_.recommended_sparsity
                    ? ", the default"
                    : "");
            out += buf;
            const CurvePoint* fast = nullptr;
            const CurvePoint* rec = nullptr;
            for (const CurvePoint& p : sidecar_.curve) {
                if (p.level == sidecar_.default_sparsity) fast = &p;
                if (p.level == sidecar_.recommended_sparsity) rec = &p;
            }
            if (exact_->level() < 0 && fast && rec && fast != rec && fast->speed > 0) {
                // The timed default: a lower level decodes faster here.
                std::snprintf(buf, sizeof buf,
                              "; the default %.0f%% decodes fastest within it on the CPU that "
                              "calibrated (%.2fx dense, %.2fx at %.0f%%)",
                              100.0 * fast->level, fast->speed, rec->speed, 100.0 * rec->level);
                out += buf;
            }
        }
        if (exact_->dense_down_layers() > 0)
            out += "; " + std::to_string(exact_->dense_down_layers()) +
                   " layers keep a dense down product (their type has no neuron-major form)";
        if (!exact_->level_note().empty()) out += "; " + exact_->level_note();
        return out;
    }
    int64_t hot = 0;
    for (int64_t c : placement_.hot_count) hot += c;
    const int64_t total = sidecar_.n_ff * sidecar_.n_layer;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "sparse: %s, %lld/%lld neurons hot (%.0f%%)%s, calibrated at %.0f%% sparsity%s",
                  device_->name().c_str(), static_cast<long long>(hot),
                  static_cast<long long>(total), total ? 100.0 * double(hot) / double(total) : 0.0,
                  placement_.budget_limited ? " (budget-limited)" : "",
                  100.0 * sidecar_.target_sparsity,
                  opt_.synthetic_activity ? ", synthetic activity" : "");
    const std::string note = device_->memory().note;
    return note.empty() ? std::string(buf) : std::string(buf) + "; " + note;
}

std::string format_layer_table(const std::vector<LayerSummary>& layers) {
    std::string out =
        "layer  tokens  active%  hit%   hot%  cache%  cold%  hot_set  recall  ffn_err    up%\n";
    char buf[160];
    LayerSummary total;
    for (size_t l = 0; l < layers.size(); ++l) {
        const LayerSummary& s = layers[l];
        const double a = s.active ? double(s.active) : 1.0;
        if (s.dense) {
            std::snprintf(buf, sizeof buf, "%5zu  dense (force_full_precision_layers)\n", l);
        } else {
            std::snprintf(
                buf, sizeof buf,
                "%5zu  %6lld  %7.1f  %5.1f  %5.1f  %6.1f  %5.1f  %7lld  %6s  %7s  %5.1f\n", l,
                static_cast<long long>(s.tokens),
                s.tokens && s.n_ff ? 100.0 * double(s.active) / double(s.tokens * s.n_ff) : 0.0,
                100.0 * double(s.hot_hits + s.cache_hits) / a, 100.0 * double(s.hot_hits) / a,
                100.0 * double(s.cache_hits) / a, 100.0 * double(s.cold_misses) / a,
                static_cast<long long>(s.hot_count),
                s.recall_samples
                    ? std::to_string(s.recall_sum / double(s.recall_samples)).substr(0, 5).c_str()
                    : "-",
                s.recall_samples
                    ? std::to_string(s.rel_err_sum / double(s.recall_samples)).substr(0, 6).c_str()
                    : "-",
                s.tokens && s.n_ff ? 100.0 * double(s.up_rows) / double(s.tokens * s.n_ff) : 0.0);
        }
        out += buf;
        total.tokens = std::max(total.tokens, s.tokens);
        total.active += s.active;
        total.hot_hits += s.hot_hits;
        total.cache_hits += s.cache_hits;
        total.cold_misses += s.cold_misses;
        total.hot_count += s.hot_count;
        if (!s.dense) total.n_ff += s.n_ff;
    }
    const double a = total.active ? double(total.active) : 1.0;
    std::snprintf(buf, sizeof buf, "  all  %6lld  %7.1f  %5.1f  %5.1f  %6.1f  %5.1f  %7lld\n",
                  static_cast<long long>(total.tokens),
                  total.tokens && total.n_ff
                      ? 100.0 * double(total.active) / double(total.tokens * total.n_ff)
                      : 0.0,
                  100.0 * double(total.hot_hits + total.cache_hits) / a,
                  100.0 * double(total.hot_hits) / a, 100.0 * double(total.cache_hits) / a,
                  100.0 * double(total.cold_misses) / a, static_cast<long long>(total.hot_count));
    return out + buf;
}

std::unique_ptr<HybridFfn> make_hybrid_ffn(tensor::ThreadPool& pool,
                                           std::vector<model::FfnWeights> layers,
                                           model::FfnExecutor& dense, SparseSetup setup,
                                           std::string& status) {
    if (!setup.tuning.sparse) {
        status = "dense: sparse inference is off (tuning.sparse = false)";
        return nullptr;
    }
    const auto path =
        setup.sidecar_path.empty() ? default_sidecar_path(setup.model_path) : setup.sidecar_path;
    if (!std::filesystem::exists(path)) {
        status = "dense: no sidecar " + path_to_utf8(path) +
                 "; run `powerinfer-calibrate -m MODEL` to enable sparse inference";
        return nullptr;
    }
    try {
        Sidecar sc = read_sidecar(path, setup.model_hash);
        if (sc.synthetic) setup.options.synthetic_activity = true;
        std::string note;
        if (sc.activation == backend::GateActivation::GeluTanh && setup.device) {
            // The GPU backends compute SwiGLU/ReGLU neurons only.
            setup.device.reset();
            note = "; GeGLU: every neuron on the CPU (the GPU backend has no GeGLU neurons yet)";
        }
        auto device = setup.device
                          ? std::move(setup.device)
                          : backend::make_cpu_device(
                                {int64_t{1} << 40,
                                 setup.device_threads > 0 ? setup.device_threads : pool.size(),
                                 setup.low_priority});
        auto ffn =
            std::make_unique<HybridFfn>(pool, std::move(layers), std::move(sc), std::move(device),
                                        dense, setup.tuning, setup.options);
        status = ffn->status() + note;
        return ffn;
    } catch (const EngineError& e) {
        status = std::string("dense: ") + e.what();
        return nullptr;
    }
}

}  // namespace powerinfer::sparse
