#include "calibrate/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <span>
#include <sstream>

#include "backend/compute.h"
#include "calibrate/calibration_progress.h"
#include "calibrate/layer_fit.h"
#include "calibrate/sparsity_curve.h"
#include "common/error.h"
#include "gguf/gguf.h"
#include "model/expert_placement.h"
#include "model/model.h"
#include "powerinfer/fit_estimate.h"
#include "powerinfer/utf8_path.h"
#include "sparse/exact_ffn.h"
#include "sparse/hybrid_ffn.h"
#include "sparse/input_sparsity.h"
#include "sparse/sidecar.h"
#include "tensor/matmul.h"
#include "tensor/ops.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"
#include "tensor/u4_rows.h"
#include "tokenizer/tokenizer.h"

namespace powerinfer::calibrate {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Per layer: the kept samples (inputs and contributions) and the running
// activation mass over every token.
// The sparsity levels whose thresholds every sidecar records (the live knob
// interpolates between them).
// v3's input thresholds: the criterion's quantiles at these levels, from at
// most kInputSamples values per product.
constexpr float kInputLevels[] = {0.05f, 0.1f, 0.15f, 0.2f, 0.25f, 0.3f, 0.35f, 0.4f, 0.45f, 0.5f,
                                  0.55f, 0.6f, 0.65f, 0.7f, 0.75f, 0.8f, 0.85f, 0.9f, 0.95f};
constexpr int64_t kInputSamples = int64_t{1} << 20;
// Per corpus window, the rows whose logits are computed: the head's inputs
// (v3's thresholds, every row sampled; the head preview's basis wants at
// least kHeadSamplesPerRank times its rank in all).
constexpr int64_t kHeadRows = 512;
constexpr int64_t kHeadSamplesPerRank = 2;

// The values at ranks level * n of the n fp16 samples c[0], c[step], ...
// in ascending order (0 where there are none): what sorting them gives, from
// a count per fp16 bit pattern in value order (linear time; a sort of the
// 2M samples of each layer took seconds of a calibration).
std::vector<float> fp16_quantiles(const std::vector<uint16_t>& c, size_t step,
                                  std::span<const float> levels) {
    std::vector<uint32_t> count(size_t{1} << 16, 0);
    size_t n = 0;
    for (size_t i = 0; i < c.size(); i += step, ++n) ++count[fp16_key(c[i])];
    std::vector<float> out;
    for (float level : levels) {
        if (n == 0) {
            out.push_back(0.0f);
            continue;
        }
        const size_t rank = std::min(n - 1, static_cast<size_t>(level * double(n)));
        size_t below = 0, k = 0;
        while (below + count[k] <= rank) below += count[k++];
        out.push_back(tensor::fp16_to_fp32(fp16_unkey(k)));
    }
    return out;
}

constexpr float kExactLevels[] = {0.0f,  0.1f, 0.2f,  0.25f, 0.3f,  0.35f, 0.4f,  0.45f, 0.5f,
                                  0.55f, 0.6f, 0.65f, 0.7f,  0.75f, 0.8f,  0.85f, 0.9f,  0.95f};

// Histogram of |u_i| / (||W_up row i|| ||x||) in [0, 1] (Cauchy-Schwarz).
constexpr int kUpBins = 4096;

struct LayerRecord {
    std::vector<float> x;             // [samples][n_embd]
    std::vector<float> up_norm;       // ||W_up row j||
    std::vector<int64_t> up_hist;     // per pool worker, kUpBins bins over every token and neuron
    std::vector<double> r_sum, r_sq;  // per neuron: sums of |u_j| / ||x|| and its square
    int64_t r_n = 0;
    std::vector<uint16_t> c;       // [samples][n_ff], F16 contributions
    std::vector<double> mass;      // sum over all tokens of contribution
    std::vector<float> down_norm;  // ||down column j||
    int64_t samples = 0;
};

// The dense FFN (the backend's gated FFN op) with a tap that records, per
// neuron, what calibration fits: |up| relative to ||x||, the mass
// |h_j| ||W_down col j||, and sampled inputs and contributions.
class RecordingFfn final : public model::FfnExecutor, private backend::FfnTap {
public:
    RecordingFfn(tensor::ThreadPool& pool, const model::Model& m, int64_t stride,
                 int64_t max_samples)
        : pool_(pool),
          compute_(backend::make_cpu_compute(pool)),
          stride_(stride),
          max_samples_(max_samples) {
        const auto& cfg = m.config();
        n_embd_ = cfg.n_embd;
        n_ff_ = cfg.n_ff;
        records_.resize(static_cast<size_t>(cfg.n_layer));
        std::vector<float> row(static_cast<size_t>(n_ff_));
        for (int64_t l = 0; l < cfg.n_layer; ++l) {
            weights_.push_back(m.ffn_weights(static_cast<int>(l)));
            LayerRecord& r = records_[static_cast<size_t>(l)];
            r.mass.assign(static_cast<size_t>(n_ff_), 0.0);
            std::vector<double> sq(static_cast<size_t>(n_ff_), 0.0);
            const auto& down = weights_.back().down;
            for (int64_t i = 0; i < n_embd_; ++i) {
                tensor::dequantize_row(down.type, down.row(i), row.data(), n_ff_);
                for (int64_t j = 0; j < n_ff_; ++j)
                    sq[static_cast<size_t>(j)] +=
                        double(row[static_cast<size_t>(j)]) * row[static_cast<size_t>(j)];
            }
            r.down_norm.resize(static_cast<size_t>(n_ff_));
            for (int64_t j = 0; j < n_ff_; ++j)
                r.down_norm[static_cast<size_t>(j)] =
                    static_cast<float>(std::sqrt(sq[static_cast<size_t>(j)]));
            const auto& up = weights_.back().up;
            r.up_norm.resize(static_cast<size_t>(n_ff_));
            std::vector<float> urow(static_cast<size_t>(n_embd_));
            for (int64_t j = 0; j < n_ff_; ++j) {
                tensor::dequantize_row(up.type, up.row(j), urow.data(), n_embd_);
                double s2 = 0;
                for (float v : urow) s2 += double(v) * v;
                r.up_norm[static_cast<size_t>(j)] = static_cast<float>(std::sqrt(s2));
            }
            r.up_hist.assign(static_cast<size_t>(kUpBins) * static_cast<size_t>(pool.size()), 0);
            r.r_sum.assign(static_cast<size_t>(n_ff_), 0.0);
            r.r_sq.assign(static_cast<size_t>(n_ff_), 0.0);
            r.x.reserve(static_cast<size_t>(max_samples * n_embd_));
            r.c.reserve(static_cast<size_t>(max_samples * n_ff_));
        }
    }

    // Global index of the first token of the next forward() batch.
    void set_base(int64_t base) { base_ = base; }
    // Every product's input goes through `hook` too (v3's input thresholds).
    void set_hook(backend::MatvecHook* hook) {
        hook_ = hook;
        compute_->set_matvec_hook(hook);
    }
    backend::MatvecHook* matvec_hook() override { return hook_; }

    void run(int layer, const float* x, int64_t n, float* out) override {
        layer_ = layer;
        compute_->gated_ffn(weights_[static_cast<size_t>(layer)], x, n, out, this);
    }

    std::vector<LayerRecord>& records() { return records_; }

private:
    // Between the FFN's halves: u = up x and h = act(gate x) * u.
    void hidden(int64_t, const float* x, int64_t n, const float* u_all, const float* h) override {
        LayerRecord& r = records_[static_cast<size_t>(layer_)];
        inv_x_.resize(static_cast<size_t>(n));
        for (int64_t t = 0; t < n; ++t) {
            double xx = 0;
            for (int64_t k = 0; k < n_embd_; ++k)
                xx += double(x[t * n_embd_ + k]) * x[t * n_embd_ + k];
            inv_x_[static_cast<size_t>(t)] =
                xx > 0 ? static_cast<float>(1.0 / std::sqrt(xx)) : 0.0f;
        }
        r.r_n += n;
        // Per-neuron statistics, split by neurons over the pool (each worker
        // its own histogram: up_hist holds one per worker).
        pool_.parallel_for(
            n_ff_,
            [&](int64_t j0, int64_t j1, int wk) {
                int64_t* hist = r.up_hist.data() + static_cast<size_t>(wk) * kUpBins;
                for (int64_t t = 0; t < n; ++t) {
                    const float inv_x = inv_x_[static_cast<size_t>(t)];
                    const float* u = u_all + t * n_ff_;
                    for (int64_t j = j0; j < j1; ++j) {
                        const double ru = double(std::fabs(u[j])) * inv_x;
                        r.r_sum[static_cast<size_t>(j)] += ru;
                        r.r_sq[static_cast<size_t>(j)] += ru * ru;
                        const float un = r.up_norm[static_cast<size_t>(j)];
                        const float rho = un > 0 ? std::fabs(u[j]) * inv_x / un : 0.0f;
                        hist[std::min<int64_t>(kUpBins - 1, static_cast<int64_t>(rho * kUpBins))]++;
                    }
                }
            },
            16);
        // The kept samples: their slots first, then the contributions by neurons.
        kept_.clear();
        for (int64_t t = 0; t < n; ++t) {
            if ((base_ + t) % stride_ == 0 && r.samples < max_samples_) {
                kept_.push_back(static_cast<int32_t>(t));
                r.x.insert(r.x.end(), x + t * n_embd_, x + (t + 1) * n_embd_);
                ++r.samples;
            }
        }
        const size_t c0 = r.c.size();
        r.c.resize(c0 + kept_.size() * static_cast<size_t>(n_ff_));
        pool_.parallel_for(
            n_ff_,
            [&](int64_t j0, int64_t j1, int) {
                size_t k = 0;
                for (int64_t t = 0; t < n; ++t) {
                    const float* a = h + t * n_ff_;
                    const bool keep = k < kept_.size() && kept_[k] == t;
                    uint16_t* c = r.c.data() + c0 + k * static_cast<size_t>(n_ff_);
                    for (int64_t j = j0; j < j1; ++j) {
                        const float v = std::fabs(a[j]) * r.down_norm[static_cast<size_t>(j)];
                        r.mass[static_cast<size_t>(j)] += v;
                        if (keep) c[j] = tensor::fp32_to_fp16(v);
                    }
                    k += keep;
                }
            },
            16);
    }

    backend::MatvecHook* hook_ = nullptr;
    tensor::ThreadPool& pool_;
    std::unique_ptr<backend::Compute> compute_;
    int layer_ = 0;
    std::vector<model::FfnWeights> weights_;
    std::vector<LayerRecord> records_;
    int64_t n_embd_ = 0, n_ff_ = 0, stride_ = 1, max_samples_ = 0, base_ = 0;
    std::vector<float> inv_x_;
    std::vector<int32_t> kept_;
};

// Mixture-of-experts models: the router is exact, so what calibration
// records is how often each layer routes to each expert over the corpus
// (for expert placement), in an expert-routing sidecar.
CalibrationReport calibrate_expert_routing(const CalibrationOptions& opt,
                                           const gguf::GgufFile& file, model::Model& m,
                                           const std::vector<int32_t>& tokens, int32_t bos,
                                           int64_t window, ProgressReporter& progress) {
    const int64_t n_tok = static_cast<int64_t>(tokens.size());
    model::MoeFfn& moe = *m.moe_ffn();
    moe.reset_counts();
    progress.emit(progress.at(CalibrationPhase::Corpus, 0, n_tok));
    CalibrationReport report;
    report.tokens = n_tok;
    const auto t0 = Clock::now();
    std::vector<int32_t> win;
    for (int64_t s = 0; s < n_tok; s += window) {
        const int64_t n = std::min(window, n_tok - s);
        win.assign(tokens.begin() + s, tokens.begin() + s + n);
        if (bos >= 0) win[0] = bos;
        m.forward(win.data(), n, 0, 0, nullptr);
        const double el = seconds_since(t0), done = double(s + n);
        CalibrationProgress p = progress.at(CalibrationPhase::Corpus, s + n, n_tok);
        p.message = fmt("calibrate: %.0f/%.0f tokens, %.0f tok/s (expert routing)", done,
                        double(n_tok), done / el);
        progress.emit(p);
    }
    report.run_seconds = seconds_since(t0);
    progress.emit(progress.at(CalibrationPhase::Writing, 0, 1));
    const auto& cfg = m.config();
    model::ExpertRoutingStats st;
    st.model_hash = sparse::model_hash(file);
    st.model_bytes = file.file_size();
    st.n_layer = cfg.n_layer;
    st.n_expert = cfg.n_expert;
    st.n_expert_used = cfg.n_expert_used;
    st.calib_tokens = static_cast<uint64_t>(n_tok);
    st.counts = moe.expert_counts();
    CalibrationTargetReport tr;
    tr.sidecar_path =
        opt.output_path.empty() ? sparse::default_sidecar_path(opt.model_path) : opt.output_path;
    model::write_expert_sidecar(tr.sidecar_path, st);
    report.targets.push_back(tr);
    if (opt.log)
        opt.log("calibrate: mixture of experts (" + std::to_string(cfg.n_expert) + " experts, " +
                std::to_string(cfg.n_expert_used) + " per token): routing counts written to " +
                path_to_utf8(tr.sidecar_path));
    progress.emit(progress.at(CalibrationPhase::Done, 1, 1));
    return report;
}

}  // namespace
}  // namespace powerinfer::calibrate

namespace powerinfer {

CalibrationReport calibrate_model(const CalibrationOptions& opt) {
    using namespace calibrate;
    auto log = [&](const std::string& s) {
        if (opt.log) opt.log(s);
    };
    ProgressReporter progress(opt);
    progress.emit(progress.at(CalibrationPhase::Reading, 0, 1));
    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(opt.model_path);
    auto tok = Tokenizer::from_gguf(*file);
    std::ifstream in(opt.corpus_path, std::ios::binary);
    if (!in) throw EngineError("cannot read the corpus " + path_to_utf8(opt.corpus_path));
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<int32_t> tokens = tok->encode(ss.str(), false, false);
    if (static_cast<int64_t>(tokens.size()) < 64) {
        throw EngineError("the corpus " + path_to_utf8(opt.corpus_path) +
                          " is too short: give at least a few thousand tokens of text");
    }
    const int64_t window = std::max<int64_t>(16, opt.window);

    tensor::ThreadPool pool(opt.n_threads);
    model::Model m(file, pool, window, 256);
    const auto& cfg = m.config();
    if (cfg.moe()) {
        if (static_cast<int64_t>(tokens.size()) > opt.tokens)
            tokens.resize(static_cast<size_t>(opt.tokens));
        return calibrate_expert_routing(opt, *file, m, tokens, tok->add_bos() ? tok->bos() : -1,
                                        window, progress);
    }
    // Held-out tokens for the sparsity curve: the corpus past the calibration
    // part, or (a shorter corpus) its last part, at most a quarter of it,
    // which the calibration then does not read. Whole windows only.
    const int64_t curve_window = std::clamp<int64_t>(opt.curve_window, 8, window);
    std::vector<int32_t> held;
    std::string curve_note;
    if (opt.curve_tokens > 0) {  // (the corpus run below reads the rest)
        const int64_t all = static_cast<int64_t>(tokens.size());
        // At most a quarter as many as the calibration reads (a quick
        // calibration gets a quick curve).
        const int64_t want =
            std::min(opt.curve_tokens, opt.tokens / 4) / curve_window * curve_window;
        if (all >= opt.tokens + want) {
            held.assign(tokens.begin() + opt.tokens, tokens.begin() + opt.tokens + want);
        } else {
            const int64_t n = std::min(want, all / 4) / curve_window * curve_window;
            if (n > 0) {
                held.assign(tokens.end() - n, tokens.end());
                tokens.resize(static_cast<size_t>(all - n));
            }
        }
        if (want == 0)
            curve_note =
                "too few calibration tokens for a sparsity curve (it holds out at most "
                "a quarter as many, in windows of " +
                std::to_string(curve_window) + "): no curve, the default is the target";
        else if (held.empty())
            curve_note = "the corpus is too short to hold out a window of " +
                         std::to_string(curve_window) +
                         " tokens for the sparsity curve: no curve, the default is the target";
        else if (static_cast<int64_t>(held.size()) < want)
            curve_note = "the corpus is short: the sparsity curve scores " +
                         std::to_string(held.size()) + " held-out tokens instead of " +
                         std::to_string(want);
    }
    if (static_cast<int64_t>(tokens.size()) > opt.tokens)
        tokens.resize(static_cast<size_t>(opt.tokens));
    const int64_t n_tok = static_cast<int64_t>(tokens.size());

    const int64_t stride = std::max<int64_t>(1, n_tok / std::max<int64_t>(1, opt.max_samples));
    RecordingFfn rec(pool, m, stride, opt.max_samples);
    // v3: every product's criterion recorded over the corpus (at most
    // kInputSamples values per product; column norms only, no copies).
    sparse::InputSparsity inputs(pool, m.decode_products(), sparse::default_input_allocation(),
                                 false);
    inputs.start_recording(
        std::max<int64_t>(1, n_tok / std::max<int64_t>(1, kInputSamples / cfg.n_ff)),
        kInputSamples);
    // The head's inputs (every row of every window) into their second
    // moment: the head preview's basis.
    HeadRows head_inputs(m.output(), &inputs);
    head_inputs.skip_head = true;  // the corpus pass reads no logits
    sparse::HeadInputMoments head_moments(cfg.n_embd);
    rec.set_hook(&head_inputs);
    m.set_ffn_executor(&rec);
    std::vector<double> targets = opt.target_sparsities;
    if (targets.empty()) targets.push_back(opt.target_sparsity);
    // A target < 0 is the measured recommendation (known after the curve).
    const bool auto_target = targets.size() == 1 && targets[0] < 0;
    std::vector<double> curve_levels = opt.curve_levels;
    const bool default_grid = curve_levels.empty();
    if (default_grid) curve_levels = {0.0, 0.25, 0.4, 0.5, 0.6};
    std::sort(curve_levels.begin(), curve_levels.end());
    curve_levels.erase(std::unique(curve_levels.begin(), curve_levels.end()), curve_levels.end());
    for (double l : curve_levels)
        if (!(l >= 0 && l < 1)) throw EngineError("curve levels must be fractions in [0, 1)");
    const int64_t layer_steps = cfg.n_layer * static_cast<int64_t>(targets.size());
    const int64_t kept = std::min(opt.max_samples, (n_tok + stride - 1) / stride);
    progress.set_layer_phase_estimate(
        estimate_layer_phase_seconds(measure_rates(pool, cfg.n_embd), opt, cfg.n_layer, cfg.n_embd,
                                     cfg.n_ff, kept, static_cast<int64_t>(targets.size())));
    // Per window: its dense halves (context, scored) at about the corpus
    // run's rate, and per sparse level the scored half again, its FFN batched
    // but its down products token by token (about 1.4 corpus tokens' worth
    // each: SmolLM2 on the Zen 1). Level 0 reads the dense pass's head inputs
    // (no pass); the default grid adds a midpoint. Then the decode timing:
    // per level and round, a 32-token prompt and 16 decoded tokens (about 2
    // corpus tokens' worth each).
    const int64_t curve_windows = static_cast<int64_t>(held.size()) / curve_window;
    const auto sparse_levels =
        std::count_if(curve_levels.begin(), curve_levels.end(), [](double l) { return l > 0; }) +
        (default_grid ? 1 : 0);
    const double timing_work =
        opt.curve_speed ? 3.0 * double(sparse_levels + 1) * (32 + 2 * 16) : 0;
    progress.set_curve_work(
        double(curve_windows) *
            (double(curve_window) + 1.4 * double(curve_window / 2) * double(sparse_levels)) +
        timing_work);
    progress.emit(progress.at(CalibrationPhase::Corpus, 0, n_tok));

    CalibrateReport report;
    report.tokens = n_tok;
    auto t0 = Clock::now();
    const int32_t bos = tok->add_bos() ? tok->bos() : -1;
    std::vector<int32_t> win;
    std::vector<float> head_logits;
    for (int64_t s = 0; s < n_tok; s += window) {
        const int64_t n = std::min(window, n_tok - s);
        win.assign(tokens.begin() + s, tokens.begin() + s + n);
        if (bos >= 0) win[0] = bos;  // each window starts like a fresh prompt
        rec.set_base(s);
        // The head's product over the last rows: its inputs (v3's thresholds,
        // the preview's basis) are observed, its logits not computed.
        const int64_t head_rows = std::min<int64_t>(n, kHeadRows);
        head_logits.resize(static_cast<size_t>(head_rows * cfg.n_vocab));
        head_inputs.clear();
        m.forward(win.data(), n, 0, head_rows, head_logits.data());
        head_moments.add(head_inputs.row(0), head_inputs.count());
        const double el = seconds_since(t0), done = double(s + n);
        CalibrationProgress p = progress.at(CalibrationPhase::Corpus, s + n, n_tok);
        p.message = fmt("calibrate: %.0f/%.0f tokens, %.0f tok/s, ETA %.0f s", done, double(n_tok),
                        done / el, std::max(0.0, p.eta_seconds));
        progress.emit(p);
    }
    m.set_ffn_executor(nullptr);
    rec.set_hook(nullptr);
    report.run_seconds = seconds_since(t0);
    const std::vector<float> input_levels(std::begin(kInputLevels), std::end(kInputLevels));
    const auto input_thresholds = inputs.recorded_thresholds(input_levels);
    const int64_t head_rank = sparse::head_basis_rank(cfg.n_embd);
    const sparse::HeadBasis head_basis =
        head_moments.samples() >= kHeadSamplesPerRank * head_rank
            ? head_moments.basis(head_rank)
            : sparse::HeadBasis{};
    if (opt.log)
        opt.log(head_basis.empty()
                    ? "calibrate: no head preview (" + std::to_string(head_moments.samples()) +
                          " head inputs recorded, fewer than " +
                          std::to_string(kHeadSamplesPerRank * head_rank) +
                          "): calibrate on more tokens"
                    : "calibrate: head preview basis of rank " + std::to_string(head_basis.rank) +
                          " from " + std::to_string(head_moments.samples()) +
                          " head inputs");
    // The head's preview in it, built once here and stored in the sidecar
    // (a load then reads it instead of building it from the whole head).
    const tensor::U4Rows head_preview =
        head_basis.empty() ? tensor::U4Rows{}
                           : sparse::make_head_preview(pool, m.output(), head_basis);

    // Exact activity, per layer: quantiles of the contributions at every
    // level (a strided subsample of at most 2M values), the layer's up bound
    // (the 99.9th percentile of the |u| ratio; bins are upper edges) and the
    // per-neuron bound (mean + up_sigmas standard deviations of |u_j| /
    // ||x||, at most the layer's bound).
    const int64_t n_ff = cfg.n_ff, d = cfg.n_embd;
    sparse::Sidecar exact_sc;
    exact_sc.model_hash = sparse::model_hash(*file);
    exact_sc.model_bytes = file->file_size();
    exact_sc.n_layer = cfg.n_layer;
    exact_sc.n_embd = cfg.n_embd;
    exact_sc.n_ff = cfg.n_ff;
    exact_sc.activation = m.ffn_weights(0).activation;
    exact_sc.exact_levels.assign(std::begin(kExactLevels), std::end(kExactLevels));
    exact_sc.layers.resize(static_cast<size_t>(cfg.n_layer));
    for (int64_t l = 0; l < cfg.n_layer; ++l) {
        LayerRecord& r = rec.records()[static_cast<size_t>(l)];
        sparse::LayerStats& ls = exact_sc.layers[static_cast<size_t>(l)];
        ls.exact_thresholds =
            fp16_quantiles(r.c, std::max<size_t>(1, r.c.size() / (size_t{2} << 20)), kExactLevels);
        float up_bound = 1.0f;
        {
            int64_t total = 0, acc = 0;
            for (int64_t v : r.up_hist) total += v;
            const size_t workers = r.up_hist.size() / kUpBins;
            for (int b = 0; b < kUpBins; ++b) {
                for (size_t wk = 0; wk < workers; ++wk)
                    acc += r.up_hist[wk * kUpBins + static_cast<size_t>(b)];
                if (double(acc) >= 0.999 * double(total)) {
                    up_bound = float(b + 1) / float(kUpBins);
                    break;
                }
            }
        }
        ls.up_bound = up_bound;
        ls.up_scale.resize(static_cast<size_t>(n_ff));
        for (int64_t j = 0; j < n_ff; ++j) {
            const double n = double(std::max<int64_t>(1, r.r_n));
            const double mean = r.r_sum[static_cast<size_t>(j)] / n;
            const double var = std::max(0.0, r.r_sq[static_cast<size_t>(j)] / n - mean * mean);
            const double layer_bound = double(up_bound) * r.up_norm[static_cast<size_t>(j)];
            ls.up_scale[static_cast<size_t>(j)] =
                static_cast<float>(std::min(layer_bound, mean + opt.up_sigmas * std::sqrt(var)));
        }
        ls.threshold = ls.exact_thresholds.front();
    }

    // The sparsity curve and the recommendation.
    double recommended = -1, fastest = -1, input_default = -1;
    std::vector<std::vector<double>> speed_rounds;  // per timed level
    if (curve_windows > 0) {
        const auto tc = Clock::now();
        std::vector<model::FfnWeights> ffn;
        for (int64_t l = 0; l < cfg.n_layer; ++l) ffn.push_back(m.ffn_weights(static_cast<int>(l)));
        sparse::ExactSparseFfn exact(pool, ffn, exact_sc);
        // The curve is what the engine will run: the head from its preview.
        std::unique_ptr<sparse::SparseHead> head;
        if (!head_basis.empty())
            head = std::make_unique<sparse::SparseHead>(pool, m.output(), head_basis, head_preview);
        CurveMeter meter(pool, m, exact, head.get(), held, curve_window,
                         tok->add_bos() ? tok->bos() : -1, progress);
        int64_t step = 0, steps = curve_windows * static_cast<int64_t>(curve_levels.size() + 1);
        progress.emit(progress.at(CalibrationPhase::Curve, 0, steps));
        const double bound = opt.max_ppl_rise;
        std::vector<sparse::CurvePoint> curve =
            measure_curve(meter, curve_levels, default_grid, bound, step, steps);
        recommended = recommend(curve, bound);
        fastest = recommended;
        if (recommended >= 0 && opt.curve_speed) {
            // Which of the levels within the bound decodes fastest here.
            sparse::Sidecar probe = exact_sc;
            probe.head_basis = head_basis;
            probe.head_preview = head_preview;
            const int64_t n =
                std::min<int64_t>(static_cast<int64_t>(held.size()), kTimedPrompt + kTimedTokens);
            const auto ts = Clock::now();
            fastest = time_curve(m, pool, probe, curve, recommended, bound,
                                 std::span<const int32_t>(held.data(), n), speed_rounds,
                                 [&](int64_t done, int64_t total) {
                                     // (the curve's last step: the bar waits, the message moves)
                                     CalibrationProgress p =
                                         progress.at(CalibrationPhase::Curve, step, steps);
                                     p.message =
                                         fmt("calibrate: timing decode on this CPU, %.0f/%.0f",
                                             double(done + 1), double(total));
                                     progress.emit(p);
                                 });
            log(fmt("calibrate: decode timed within the bound, %.1f s, on ", seconds_since(ts)) +
                tensor::cpu_model() +
                fmt(": the default is %.2f, the fastest (a higher level only where it decodes "
                    "3 %% faster and reads 3 %% fewer bytes)",
                    fastest));
        }
        // v3's copies are built beside the dense layout for its timing:
        // about the weights once more, which must fit in the free RAM.
        const int64_t copies = m.decode_weight_bytes();
        const int64_t free_ram = host_memory().available_bytes;
        const bool copies_fit = free_ram <= 0 || copies + (int64_t{1} << 30) < free_ram;
        if (opt.curve_speed && !input_thresholds.empty() && !copies_fit)
            log(
                fmt("calibrate: sparse engine v3 not timed: its copies (about %.0f MiB) do not "
                    "fit in the free RAM (%.0f MiB); it runs its fixed default",
                    double(copies) / 1048576.0, double(free_ram) / 1048576.0));
        if (opt.curve_speed && !input_thresholds.empty() && copies_fit) {
            // Sparse engine v3's default the same way, at its candidate
            // levels (v3 is opt-in; its copies are built for the timing).
            sparse::Sidecar probe = exact_sc;
            probe.head_basis = head_basis;
            probe.head_preview = head_preview;
            probe.input_levels = input_levels;
            probe.input_thresholds = input_thresholds;
            const int64_t n =
                std::min<int64_t>(static_cast<int64_t>(held.size()), kTimedPrompt + kTimedTokens);
            const auto ts = Clock::now();
            std::vector<sparse::CurvePoint> timed;
            input_default = time_input_default(
                m, pool, probe, std::span<const int32_t>(held.data(), n), timed,
                report.input_speed_rounds, [&](int64_t done, int64_t total) {
                    CalibrationProgress p = progress.at(CalibrationPhase::Curve, step, steps);
                    p.message = fmt("calibrate: timing sparse engine v3 on this CPU, %.0f/%.0f",
                                    double(done + 1), double(total));
                    progress.emit(p);
                });
            report.input_default_level = input_default;
            std::string points;
            for (const auto& p : timed) {
                points += fmt(" %.2f: %.3fx", p.level, p.speed) +
                          (p.bytes > 0 ? fmt(" (%.3f of the bytes);", p.bytes) : std::string(";"));
                report.input_points.push_back(sparse::public_point(p));
            }
            log(fmt("calibrate: sparse engine v3 timed in %.1f s:", seconds_since(ts)) + points +
                fmt(" its default is %.2f", input_default));
        }
        exact_sc.curve = curve;
        exact_sc.curve_bound = static_cast<float>(bound);
        exact_sc.curve_dense_ppl = static_cast<float>(meter.dense_ppl());
        exact_sc.curve_tokens = static_cast<uint64_t>(meter.scored());
        exact_sc.recommended_sparsity = static_cast<float>(recommended);
        report.curve_seconds = seconds_since(tc);
        report.curve.bound = bound;
        report.curve.recommended = recommended;
        report.curve.dense_ppl = meter.dense_ppl();
        report.curve.tokens_scored = meter.scored();
        for (const auto& p : curve)
            report.curve.points.push_back(sparse::public_point(p));
        report.curve.speed_rounds = speed_rounds;
        log(
            fmt("calibrate: sparsity curve on %.0f held-out tokens (%.0f windows of %.0f), dense "
                "perplexity %.4f, %.1f s",
                double(meter.scored()), double(curve_windows), double(curve_window),
                meter.dense_ppl(), report.curve_seconds));
        for (const auto& p : curve)
            log(fmt("calibrate:   level %.2f: delivered %.3f, perplexity %+.2f %%, KL %.4f, "
                    "top-1 %.3f",
                    p.level, p.delivered, 100.0 * p.ppl_rise, p.mean_kl, p.top1) +
                (p.speed > 0 ? fmt(", decode %.3fx dense", p.speed) : std::string()) +
                (p.bytes > 0 ? fmt(", %.3f of dense's bytes", p.bytes) : std::string()));
        if (recommended < 0)
            curve_note =
                fmt("no level keeps the perplexity within +%.0f %%: sparse mode is not "
                    "recommended for this model",
                    100.0 * bound);
    }
    if (auto_target) targets[0] = recommended >= 0 ? recommended : (curve_windows > 0 ? 0.0 : 0.5);
    if (!curve_note.empty()) log("calibrate: " + curve_note);
    report.curve_note = curve_note;
    // The default: the fastest timed level within the bound (untimed: the
    // recommendation), unless the target was chosen.
    const double default_level =
        recommended >= 0 && (opt.default_to_recommended || auto_target) ? fastest : -1;
    report.curve.default_level = default_level >= 0 ? default_level : targets.front();

    const auto base_out =
        opt.output_path.empty() ? sparse::default_sidecar_path(opt.model_path) : opt.output_path;
    std::vector<sparse::Sidecar> sidecars(targets.size());
    for (size_t ti = 0; ti < targets.size(); ++ti) {
        sparse::Sidecar& sc = sidecars[ti];
        sc.model_hash = sparse::model_hash(*file);
        sc.model_bytes = file->file_size();
        sc.n_layer = cfg.n_layer;
        sc.n_embd = cfg.n_embd;
        sc.n_ff = cfg.n_ff;
        sc.activation = m.ffn_weights(0).activation;
        sc.target_sparsity = static_cast<float>(targets[ti]);
        sc.calib_tokens = static_cast<uint64_t>(n_tok);
        sc.layers.resize(static_cast<size_t>(cfg.n_layer));
        sc.exact_levels.assign(std::begin(kExactLevels), std::end(kExactLevels));
        sc.curve = exact_sc.curve;
        sc.curve_bound = exact_sc.curve_bound;
        sc.curve_dense_ppl = exact_sc.curve_dense_ppl;
        sc.curve_tokens = exact_sc.curve_tokens;
        sc.recommended_sparsity = exact_sc.recommended_sparsity;
        sc.default_sparsity = static_cast<float>(default_level);
        sc.input_levels = input_levels;
        sc.input_thresholds = input_thresholds;
        sc.input_default_sparsity = static_cast<float>(input_default);
        sc.head_basis = head_basis;
        sc.head_preview = head_preview;
        TargetReport tr;
        tr.target_sparsity = targets[ti];
        tr.sidecar_path = base_out;
        if (targets.size() > 1) {
            char suffix[32];
            std::snprintf(suffix, sizeof suffix, ".s%02d.gguf",
                          static_cast<int>(std::lround(targets[ti] * 100)));
            tr.sidecar_path.replace_extension(suffix);
        }
        report.targets.push_back(tr);
    }

    const LayerFit fit{pool, opt, progress, log, cfg.n_layer, d, n_ff, n_tok, targets};
    t0 = Clock::now();
    progress.emit(progress.at(CalibrationPhase::Layers, 0, layer_steps));
    for (int64_t l = 0; l < cfg.n_layer; ++l) {
        LayerRecord& r = rec.records()[static_cast<size_t>(l)];
        fit_layer(fit, l, {r.samples, r.x, r.c, r.mass}, exact_sc.layers[static_cast<size_t>(l)],
                  sidecars, report);
        // Free this layer's samples as soon as they are used.
        r.x = {};
        r.c = {};
    }
    report.train_seconds = seconds_since(t0);
    // The last chance to cancel: nothing has been written yet.
    progress.emit(progress.at(CalibrationPhase::Writing, 0, static_cast<int64_t>(targets.size())));
    for (size_t ti = 0; ti < targets.size(); ++ti) {
        sparse::write_sidecar(report.targets[ti].sidecar_path, sidecars[ti]);
    }
    progress.emit(progress.at(CalibrationPhase::Done, 1, 1));
    return report;
}

}  // namespace powerinfer
