#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>

namespace powerinfer::runtime {
namespace {

bool by_logit(const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

}  // namespace

Sampler::Sampler(const SamplingParams& params) { reset(params); }

void Sampler::reset(const SamplingParams& params) {
    params_ = params;
    uint64_t seed = params.seed;
    if (seed == 0) {
        std::random_device rd;
        seed = (uint64_t(rd()) << 32) ^ rd();
    }
    rng_.seed(seed);
}

double Sampler::uniform() { return double(rng_() >> 11) * (1.0 / 9007199254740992.0); }

void Sampler::apply_repeat_penalty(float* logits, int64_t n_vocab, std::span<const int32_t> history,
                                   float penalty) {
    if (penalty == 1.0f || penalty <= 0.0f) return;
    // Each distinct token is penalised once, however often it occurred.
    std::vector<int32_t> seen(history.begin(), history.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (int32_t t : seen) {
        if (t < 0 || t >= n_vocab) continue;
        float& l = logits[t];
        l = l > 0 ? l / penalty : l * penalty;
    }
}

void Sampler::softmax(std::vector<Candidate>& c) {
    if (c.empty()) return;
    float mx = c[0].logit;
    for (const auto& x : c) mx = std::max(mx, x.logit);
    double sum = 0;
    for (auto& x : c) {
        x.p = std::exp(x.logit - mx);
        sum += x.p;
    }
    for (auto& x : c) x.p = static_cast<float>(x.p / sum);
}

void Sampler::top_k(std::vector<Candidate>& c, int k) {
    if (k > 0 && static_cast<size_t>(k) < c.size()) {
        std::partial_sort(c.begin(), c.begin() + k, c.end(), by_logit);
        c.resize(static_cast<size_t>(k));
    }
    softmax(c);
}

void Sampler::top_p(std::vector<Candidate>& c, float p) {
    if (p >= 1.0f || c.empty()) return;
    softmax(c);
    // Sort only as far as needed: the mass is usually in the first few dozen
    // candidates, and a full sort of a 150k vocabulary costs milliseconds.
    for (size_t k = std::min<size_t>(64, c.size());; k = std::min(c.size(), k * 4)) {
        std::partial_sort(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(k), c.end(), by_logit);
        double cum = 0;
        for (size_t i = 0; i < k; ++i) {
            cum += c[i].p;
            if (cum >= p) {
                c.resize(i + 1);
                softmax(c);
                return;
            }
        }
        if (k == c.size()) return;  // rounding: the whole list is needed
    }
}

void Sampler::min_p(std::vector<Candidate>& c, float p) {
    if (p <= 0.0f || c.empty()) return;
    // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p).
    float max_logit = c[0].logit;
    for (const auto& x : c) max_logit = std::max(max_logit, x.logit);
    const float threshold = max_logit + std::log(p);
    c.erase(
        std::remove_if(c.begin(), c.end(), [&](const Candidate& x) { return x.logit < threshold; }),
        c.end());
    std::sort(c.begin(), c.end(), by_logit);
    softmax(c);
}

const float* Sampler::penalized(const float* logits, int64_t n_vocab,
                                std::span<const int32_t> history) {
    if (params_.repeat_penalty == 1.0f || history.empty()) return logits;
    work_.assign(logits, logits + n_vocab);
    const size_t last =
        std::min(history.size(), static_cast<size_t>(std::max(0, params_.repeat_last_n)));
    apply_repeat_penalty(work_.data(), n_vocab, history.subspan(history.size() - last),
                         params_.repeat_penalty);
    return work_.data();
}

int32_t Sampler::draw() {
    top_p(cand_, params_.top_p);
    min_p(cand_, params_.min_p);
    for (auto& c : cand_) c.logit /= params_.temperature;
    softmax(cand_);
    const double r = uniform();
    double cum = 0;
    for (const auto& c : cand_) {
        cum += c.p;
        if (r < cum) return c.id;
    }
    return cand_.back().id;
}

int32_t Sampler::sample(const float* logits, int64_t n_vocab, std::span<const int32_t> history) {
    const float* l = penalized(logits, n_vocab, history);
    if (params_.temperature <= 0.0f) {
        int64_t best = 0;
        for (int64_t i = 1; i < n_vocab; ++i)
            if (l[i] > l[best]) best = i;
        return static_cast<int32_t>(best);
    }
    cand_.resize(static_cast<size_t>(n_vocab));
    for (int64_t i = 0; i < n_vocab; ++i)
        cand_[static_cast<size_t>(i)] = {static_cast<int32_t>(i), l[i], 0.0f};
    top_k(cand_, params_.top_k);
    return draw();
}

int32_t Sampler::sample(const float* logits, int64_t n_vocab, std::span<const int32_t> history,
                        const std::function<bool(int32_t)>& allowed) {
    const float* l = penalized(logits, n_vocab, history);
    std::vector<Candidate> all(static_cast<size_t>(n_vocab));
    for (int64_t i = 0; i < n_vocab; ++i)
        all[static_cast<size_t>(i)] = {static_cast<int32_t>(i), l[i], 0.0f};
    const bool greedy = params_.temperature <= 0.0f;
    const size_t want = greedy              ? 1
                        : params_.top_k > 0 ? static_cast<size_t>(params_.top_k)
                                            : all.size();
    // The allowed tokens are usually among the first few hundred by logit:
    // those are sorted and tried first; if too few of them are allowed (a
    // digit or a quote must come next), the rest is filtered in one pass
    // and only the survivors are sorted.
    cand_.clear();
    const size_t head = std::min<size_t>(256, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(head), all.end(),
                      by_logit);
    for (size_t i = 0; i < head && cand_.size() < want; ++i)
        if (allowed(all[i].id)) cand_.push_back(all[i]);
    if (cand_.size() < want) {
        std::vector<Candidate> rest;
        for (size_t i = head; i < all.size(); ++i)
            if (allowed(all[i].id)) rest.push_back(all[i]);
        const size_t take = std::min(rest.size(), want - cand_.size());
        std::partial_sort(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(take),
                          rest.end(), by_logit);
        cand_.insert(cand_.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(take));
    }
    if (cand_.empty()) return -1;
    if (greedy) return cand_.front().id;
    softmax(cand_);
    return draw();
}

}  // namespace powerinfer::runtime
