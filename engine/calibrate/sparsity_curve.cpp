#include "calibrate/sparsity_curve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "sparse/hybrid_ffn.h"

namespace powerinfer::calibrate {
namespace {

// log(sum(exp(z))) of one row, in double.
double log_sum_exp(const float* z, int64_t n) {
    float mx = z[0];
    for (int64_t i = 1; i < n; ++i) mx = std::max(mx, z[i]);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(std::exp(z[i] - mx));
    return double(mx) + std::log(s);
}

int64_t argmax(const float* z, int64_t n) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (z[i] > z[best]) best = i;
    return best;
}

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

}  // namespace

void CurveFfn::run(int layer, const float* x, int64_t n, float* out) {
    if (!sparse) {
        dense_.run(layer, x, n, out);
        return;
    }
    active += exact_.run_batch(layer, x, n, out);
    total += n * n_ff_;
}

std::vector<sparse::CurvePoint> CurveMeter::measure(const std::vector<double>& levels,
                                                    int64_t& step, int64_t& steps) {
    const int64_t nv = m_.config().n_vocab, h = W_ / 2, ns = W_ - h;
    std::vector<CurveAcc> acc(levels.size());
    const bool first = dense_.scored == 0;
    std::vector<float> dl(static_cast<size_t>(ns * nv)), sl(dl.size());
    std::vector<double> lse_d(static_cast<size_t>(ns)), nll_d(lse_d.size()), nll_s(lse_d.size()),
        kl_s(lse_d.size());
    std::vector<int> agree_s(lse_d.size());
    std::vector<int64_t> top_d(static_cast<size_t>(ns));
    std::vector<int32_t> win;
    m_.set_ffn_executor(&ffn_);
    for (int64_t w = 0; w < windows(); ++w) {
        win.assign(held_.begin() + w * W_, held_.begin() + (w + 1) * W_);
        if (bos_ >= 0) win[0] = bos_;
        ffn_.sparse = false;
        m_.forward(win.data(), h, 0, 0, nullptr);
        head_rows_.clear();
        m_.forward(win.data() + h, ns, h, ns, dl.data());
        // Level 0 is the dense FFN with the head's preview (what the engine
        // runs there): the dense pass's head inputs serve it, no pass of its own.
        dense_rows_.swap(head_rows_);
        // Row i predicts token h + i + 1: ns - 1 rows are scored. The
        // dense rows become probabilities p, with sum p log p kept:
        // KL(p || q) = sum p log p - sum p z_q + lse(z_q).
        // (Rows in parallel, each into its own slot; the sums below add
        // them in row order, as one thread would.)
        pool_.parallel_for(ns - 1, [&](int64_t i0, int64_t i1, int) {
            for (int64_t i = i0; i < i1; ++i) {
                float* z = dl.data() + i * nv;
                const double lse = log_sum_exp(z, nv);
                top_d[static_cast<size_t>(i)] = argmax(z, nv);
                nll_d[static_cast<size_t>(i)] = lse - z[win[static_cast<size_t>(h + i + 1)]];
                double plogp = 0;
                for (int64_t v = 0; v < nv; ++v) {
                    const double lp = double(z[v]) - lse;
                    const float p = static_cast<float>(std::exp(lp));
                    plogp += double(p) * lp;
                    z[v] = p;
                }
                lse_d[static_cast<size_t>(i)] = plogp;
            }
        });
        if (first)
            for (int64_t i = 0; i + 1 < ns; ++i) {
                dense_.nll += nll_d[static_cast<size_t>(i)];
                ++dense_.scored;
            }
        for (size_t k = 0; k < levels.size(); ++k) {
            ffn_.active = ffn_.total = 0;
            const HeadRows* rows = &dense_rows_;
            if (levels[k] > 0 || !head_) {
                exact_.set_level(levels[k]);
                ffn_.sparse = true;
                head_rows_.clear();
                // With the preview, the logits come from the head's inputs
                // below: the head's own product is only observed.
                head_rows_.skip_head = true;
                m_.forward(win.data() + h, ns, h, ns, sl.data());
                head_rows_.skip_head = false;
                rows = &head_rows_;
            }
            if (head_)
                for (int64_t i = 0; i < ns; ++i)
                    head_->logits(rows->row(i), -1, sl.data() + i * nv);
            CurveAcc& a = acc[k];
            a.active += ffn_.active;
            a.total += ffn_.total;
            pool_.parallel_for(ns - 1, [&](int64_t i0, int64_t i1, int) {
                for (int64_t i = i0; i < i1; ++i) {
                    const float* pd = dl.data() + i * nv;
                    const float* zs = sl.data() + i * nv;
                    const double ls = log_sum_exp(zs, nv);
                    nll_s[static_cast<size_t>(i)] = ls - zs[win[static_cast<size_t>(h + i + 1)]];
                    double pz = 0;
                    for (int64_t v = 0; v < nv; ++v) pz += double(pd[v]) * zs[v];
                    kl_s[static_cast<size_t>(i)] =
                        std::max(0.0, lse_d[static_cast<size_t>(i)] - pz + ls);
                    agree_s[static_cast<size_t>(i)] =
                        argmax(zs, nv) == top_d[static_cast<size_t>(i)];
                }
            });
            for (int64_t i = 0; i + 1 < ns; ++i) {
                a.nll += nll_s[static_cast<size_t>(i)];
                a.kl += kl_s[static_cast<size_t>(i)];
                a.agree += agree_s[static_cast<size_t>(i)];
                ++a.scored;
            }
            ++step;
            CalibrationProgress p = progress_.at(CalibrationPhase::Curve, step, steps);
            char msg[96];
            std::snprintf(msg, sizeof msg, "calibrate: curve window %lld/%lld level %.2f",
                          static_cast<long long>(w + 1), static_cast<long long>(windows()),
                          levels[k]);
            p.message = msg;
            progress_.emit(p);
        }
    }
    ffn_.sparse = false;
    m_.set_ffn_executor(nullptr);
    std::vector<sparse::CurvePoint> out;
    const double dense_nll = dense_.nll / double(std::max<int64_t>(1, dense_.scored));
    for (size_t k = 0; k < levels.size(); ++k) {
        const CurveAcc& a = acc[k];
        const double n = double(std::max<int64_t>(1, a.scored));
        sparse::CurvePoint pt;
        pt.level = static_cast<float>(levels[k]);
        pt.delivered =
            a.total ? static_cast<float>(1.0 - double(a.active) / double(a.total)) : 0.0f;
        pt.ppl_rise = static_cast<float>(std::exp(a.nll / n - dense_nll) - 1.0);
        pt.mean_kl = static_cast<float>(a.kl / n);
        pt.top1 = static_cast<float>(a.agree / n);
        out.push_back(pt);
    }
    return out;
}

std::vector<sparse::CurvePoint> measure_curve(CurveMeter& meter, const std::vector<double>& levels,
                                              bool refine, double bound, int64_t& step,
                                              int64_t& steps) {
    std::vector<sparse::CurvePoint> curve = meter.measure(levels, step, steps);
    if (!refine || curve.empty()) return curve;
    // Higher while the top level is still within the bound, then the
    // midpoint past the highest level within it.
    while (curve.back().ppl_rise <= bound && curve.back().level < 0.85f) {
        // (each extra level is one more pass over the windows)
        steps += meter.windows();
        const double next = std::round((curve.back().level + 0.1) * 100) / 100;
        curve.push_back(meter.measure({next}, step, steps).front());
    }
    const double best = recommend(curve, bound);
    double above = -1;
    for (const auto& p : curve)
        if (p.level > best) {
            above = p.level;
            break;
        }
    if (best >= 0 && above > best + 0.06) {
        const double mid = std::round((best + above) * 50) / 100;
        steps = step + meter.windows();
        curve.push_back(meter.measure({mid}, step, steps).front());
        std::sort(curve.begin(), curve.end(),
                  [](const auto& a, const auto& b) { return a.level < b.level; });
    }
    return curve;
}

// The highest level within the bound below the first level beyond it
// (ascending; noise above the first failure is not trusted); -1 if even the
// lowest is beyond it.
double recommend(const std::vector<sparse::CurvePoint>& curve, double bound) {
    double best = -1;
    for (const auto& p : curve) {
        if (p.ppl_rise > bound) break;
        best = p.level;
    }
    return best;
}

std::vector<std::vector<double>> decode_speed(model::Model& m, tensor::ThreadPool& pool,
                                              const sparse::Sidecar& sidecar,
                                              const std::vector<double>& levels,
                                              std::span<const int32_t> tokens, int64_t n_decode,
                                              int rounds,
                                              const std::function<void(int64_t, int64_t)>& step,
                                              std::vector<double>* bytes, bool v3) {
    const int64_t n_prompt = static_cast<int64_t>(tokens.size()) - n_decode;
    std::vector<std::vector<double>> out(levels.size());
    if (bytes) bytes->assign(levels.size(), 0.0);
    if (levels.empty() || n_prompt < 1 || n_decode < 1 || rounds < 1) return out;
    std::vector<model::FfnWeights> ffn;
    for (int64_t l = 0; l < m.config().n_layer; ++l)
        ffn.push_back(m.ffn_weights(static_cast<int>(l)));
    sparse::HybridOptions options;
    options.head = m.output();
    options.file = &m.file();
    options.token_weight_bytes = double(m.decode_weight_bytes());
    if (v3) options.input_products = m.decode_products();
    Tuning tuning;
    sparse::HybridFfn sparse(pool, std::move(ffn), sidecar,
                             backend::make_cpu_device({int64_t{1} << 40, pool.size(), false}),
                             m.dense_ffn(), tuning, options);
    // The model never keeps this executor past the call, thrown out or not.
    struct DenseAgain {
        model::Model& m;
        ~DenseAgain() { m.set_ffn_executor(nullptr); }
    } dense_again{m};
    std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
    // Seconds for n decoded tokens (teacher-forced) after the prompt;
    // `each` runs after every token (the untimed pass reads its metrics).
    auto decode = [&](model::FfnExecutor* ffn_exec, int64_t n, auto&& each) {
        m.set_ffn_executor(ffn_exec);
        m.forward(tokens.data(), n_prompt, 0, 1, logits.data());
        const auto t0 = std::chrono::steady_clock::now();
        for (int64_t i = 0; i < n; ++i) {
            m.forward(tokens.data() + n_prompt + i, 1, n_prompt + i, 1, logits.data());
            each();
        }
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    auto timed = [&](model::FfnExecutor* ffn_exec, int64_t n) { return decode(ffn_exec, n, [] {}); };
    auto at = [&](double level) {
        tuning.activation_sparsity = level;
        sparse.set_tuning(tuning);
    };
    // A warm-up pass, untimed: each level's copies are built the first time
    // it runs, and its weight bytes per token (against dense's) are read
    // token by token.
    timed(nullptr, 2);
    for (size_t k = 0; k < levels.size(); ++k) {
        at(levels[k]);
        double read = 0, dense = 0;
        decode(&sparse, n_decode, [&] {
            const TokenMetrics t = sparse.last_metrics();
            read += t.weight_bytes;
            dense += t.dense_weight_bytes;
        });
        if (bytes && dense > 0) (*bytes)[k] = read / dense;
    }
    // Odd rounds run the levels in reverse and dense last, so that a machine
    // slowing down or speeding up over the rounds favours no level.
    const auto total = static_cast<int64_t>(rounds * levels.size());
    const size_t n = levels.size();
    for (int r = 0; r < rounds; ++r) {
        const bool reverse = r % 2 == 1;
        std::vector<double> seconds(n);
        const double dense_first = reverse ? 0.0 : timed(nullptr, n_decode);
        for (size_t i = 0; i < n; ++i) {
            const size_t k = reverse ? n - 1 - i : i;
            if (step) step(static_cast<int64_t>(r * n + i), total);
            at(levels[k]);
            seconds[k] = timed(&sparse, n_decode);
        }
        const double dense = reverse ? timed(nullptr, n_decode) : dense_first;
        for (size_t k = 0; k < n; ++k) out[k].push_back(dense / seconds[k]);
    }
    return out;
}

double time_curve(model::Model& m, tensor::ThreadPool& pool, const sparse::Sidecar& sidecar,
                  std::vector<sparse::CurvePoint>& curve, double recommended, double bound,
                  std::span<const int32_t> tokens, std::vector<std::vector<double>>& rounds,
                  const std::function<void(int64_t, int64_t)>& step) {
    std::vector<double> levels;
    for (const auto& p : curve)
        if (p.level <= recommended) levels.push_back(p.level);
    std::vector<double> bytes;
    rounds =
        decode_speed(m, pool, sidecar, levels, tokens, kTimedTokens, kTimedRounds, step, &bytes);
    for (size_t k = 0; k < rounds.size(); ++k) {
        curve[k].speed = static_cast<float>(median_of(rounds[k]));
        curve[k].bytes = static_cast<float>(bytes[k]);
    }
    return fastest_within(curve, bound, 0.03, &rounds);
}

double time_input_default(model::Model& m, tensor::ThreadPool& pool, const sparse::Sidecar& sidecar,
                          std::span<const int32_t> tokens, std::vector<sparse::CurvePoint>& timed,
                          std::vector<std::vector<double>>& rounds,
                          const std::function<void(int64_t, int64_t)>& step) {
    const std::vector<double> levels(std::begin(sparse::HybridFfn::kInputDefaultCandidates),
                                     std::end(sparse::HybridFfn::kInputDefaultCandidates));
    std::vector<double> bytes;
    rounds = decode_speed(m, pool, sidecar, levels, tokens, kTimedTokens, kTimedRounds, step,
                          &bytes, true);
    timed.clear();
    for (size_t k = 0; k < levels.size(); ++k) {
        sparse::CurvePoint p;
        p.level = static_cast<float>(levels[k]);  // (delivered, rise, KL, top-1: not measured)
        p.speed = static_cast<float>(median_of(rounds[k]));
        p.bytes = static_cast<float>(bytes[k]);
        timed.push_back(p);
    }
    // Every candidate counts as within the bound (none's rise is measured).
    return fastest_within(timed, 1.0, 0.03, &rounds);
}

double fastest_within(const std::vector<sparse::CurvePoint>& curve, double bound, double margin,
                      const std::vector<std::vector<double>>* rounds) {
    const double best_quality = recommend(curve, bound);
    // In how many of the rounds point a decoded faster than point b by the margin.
    auto rounds_faster = [&](size_t a, size_t b) {
        const auto& ra = (*rounds)[a];
        const auto& rb = (*rounds)[b];
        size_t wins = 0;
        for (size_t r = 0; r < std::min(ra.size(), rb.size()); ++r)
            if (ra[r] > rb[r] * (1 + margin)) ++wins;
        return std::pair{wins, std::min(ra.size(), rb.size())};
    };
    size_t best = curve.size();
    for (size_t k = 0; k < curve.size(); ++k) {
        const auto& p = curve[k];
        if (p.level > best_quality) break;
        if (p.speed <= 0) continue;
        if (best == curve.size()) {
            best = k;
            continue;
        }
        if (p.speed <= curve[best].speed * (1 + margin)) continue;
        // The time a level saves is the weights it skips: reading about as
        // many bytes as the chosen one, it cannot be materially faster, and
        // its lead is the machine's noise.
        if (p.bytes > 0 && curve[best].bytes > 0 && p.bytes > curve[best].bytes * (1 - margin))
            continue;
        if (rounds && k < rounds->size() && best < rounds->size()) {
            const auto [wins, paired] = rounds_faster(k, best);
            if (2 * wins <= paired) continue;
        }
        best = k;
    }
    return best < curve.size() ? curve[best].level : best_quality;
}

}  // namespace powerinfer::calibrate
