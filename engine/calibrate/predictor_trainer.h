// The calibration's activation predictors: a low-rank MLP per layer,
// trained on the recorded FFN inputs and which neurons fired (calibrate.cpp
// records them and picks the rank), and the fp16/f32 packing the sidecar
// stores them in.
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/calibrate.h"
#include "tensor/thread_pool.h"

namespace powerinfer::calibrate {

struct Trained {
    int64_t rank = 0;
    std::vector<float> w1, b1, w2, b2;
    double recall = 0, precision = 0, active = 0;
};

// Low-rank MLP x -> relu(W1 x + b1) -> W2 . + b2 -> sigmoid, weighted BCE
// (positives weighted for recall), Adam, mini-batches through tensor::matmul.
// X: [samples][d] inputs, Y: [samples][n_ff] 0/1 fired; train and hold are
// sample indices (the caller keeps all of them alive).
class PredictorTrainer {
public:
    PredictorTrainer(tensor::ThreadPool& pool, int64_t d, int64_t n_ff, const std::vector<float>& X,
                     const std::vector<uint8_t>& Y, const std::vector<int64_t>& train,
                     const std::vector<int64_t>& hold, const CalibrateOptions& opt)
        : pool_(pool), d_(d), n_(n_ff), X_(X), Y_(Y), train_(train), hold_(hold), opt_(opt) {}

    // Rank r from seed; held-out recall/precision at shift 0 filled in.
    Trained train(int64_t r, uint64_t seed);
    // Held-out recall/precision with logits shifted by `shift`.
    void evaluate(Trained& t, float shift);
    // The smallest uniform logit shift that brings held-out recall to target.
    float recall_shift(Trained& t, double target);

private:
    // Mild: recall is then set exactly by recall_shift(); a heavy weight
    // makes "everything active" the optimum at high base rates.
    static constexpr float kPositiveWeight = 1.5f;

    void forward(const Trained& t, const float* X, int64_t B, float* H, float* Z);

    tensor::ThreadPool& pool_;
    int64_t d_, n_;
    const std::vector<float>& X_;
    const std::vector<uint8_t>& Y_;
    const std::vector<int64_t>& train_;
    const std::vector<int64_t>& hold_;
    const CalibrateOptions& opt_;
};

// v as fp16 (f16) or f32 bytes, little-endian, for the sidecar.
std::vector<uint8_t> pack(const std::vector<float>& v, bool f16);

}  // namespace powerinfer::calibrate
