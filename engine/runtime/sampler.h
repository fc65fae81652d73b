// Token sampling with llama.cpp's default chain order: repetition penalty,
// top-k, top-p, min-p, temperature, then a draw (or argmax when temperature
// is 0). Deterministic for a fixed nonzero seed on every platform (our own
// uniform draw, not std::uniform_real_distribution).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::runtime {

struct Candidate {
    int32_t id;
    float logit;
    float p;
};

class Sampler {
public:
    explicit Sampler(const SamplingParams& params = {});
    // New parameters; reseeds (seed 0: from the system's entropy source).
    void reset(const SamplingParams& params);

    // Picks the next token from logits[n_vocab]; `history` are the recent
    // tokens the repetition penalty looks at (the last repeat_last_n count).
    int32_t sample(const float* logits, int64_t n_vocab, std::span<const int32_t> history);
    // The same chain over the tokens `allowed` accepts (constrained output):
    // as if every other token had logit -inf. Tokens are tried in
    // descending logit order, only as many as the chain can keep (one when
    // greedy, top_k otherwise). Returns -1 when no token is allowed.
    int32_t sample(const float* logits, int64_t n_vocab, std::span<const int32_t> history,
                   const std::function<bool(int32_t)>& allowed);

    // The steps, exposed for tests. Each keeps at least one candidate, sets
    // p to the softmax over what remains, and sorts by descending logit when
    // it removes candidates (a step that is off leaves the order alone).
    static void apply_repeat_penalty(float* logits, int64_t n_vocab,
                                     std::span<const int32_t> history, float penalty);
    static void softmax(std::vector<Candidate>& c);
    static void top_k(std::vector<Candidate>& c, int k);
    static void top_p(std::vector<Candidate>& c, float p);
    static void min_p(std::vector<Candidate>& c, float p);

    double uniform();  // [0, 1)

private:
    const float* penalized(const float* logits, int64_t n_vocab, std::span<const int32_t> history);
    // top-p, min-p, temperature and the draw over cand_ (top-k applied).
    int32_t draw();
    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<float> work_;
    std::vector<Candidate> cand_;
};

}  // namespace powerinfer::runtime
