#include "sparse/exact_ffn.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "tensor/matmul.h"
#include "tensor/ops.h"

namespace powerinfer::sparse {

namespace {

// ||row r|| of a matrix for every row, in double.
std::vector<double> row_norms2(const tensor::WeightView& w) {
    std::vector<double> out(static_cast<size_t>(w.rows));
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        tensor::dequantize_row(w.type, w.row(r), row.data(), w.cols);
        double s = 0;
        for (float v : row) s += double(v) * v;
        out[static_cast<size_t>(r)] = s;
    }
    return out;
}

// ||column c||^2 of a matrix for every column.
std::vector<double> col_norms2(const tensor::WeightView& w) {
    std::vector<double> out(static_cast<size_t>(w.cols), 0.0);
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        tensor::dequantize_row(w.type, w.row(r), row.data(), w.cols);
        for (int64_t c = 0; c < w.cols; ++c)
            out[static_cast<size_t>(c)] +=
                double(row[static_cast<size_t>(c)]) * row[static_cast<size_t>(c)];
    }
    return out;
}

}  // namespace

ExactSparseFfn::ExactSparseFfn(tensor::ThreadPool& pool,
                               const std::vector<model::FfnWeights>& layers, const Sidecar& sc,
                               ReleaseRows release_rows)
    : pool_(pool),
      release_rows_(std::move(release_rows)),
      levels_(sc.exact_levels),
      act_(sc.activation) {
    if (static_cast<int64_t>(layers.size()) != sc.n_layer || layers.empty() ||
        layers[0].gate.rows != sc.n_ff || layers[0].gate.cols != sc.n_embd)
        throw SidecarError(
            "sidecar shape does not match the model; recalibrate with "
            "`powerinfer-calibrate -m MODEL`");
    for (size_t l = 0; l < layers.size(); ++l) {
        const LayerStats& ls = sc.layers[l];
        Layer L;
        L.w = layers[l];
        L.up_scale = ls.up_scale;
        L.up_bound = ls.up_bound;
        planned_bytes_ += static_cast<int64_t>(tensor::neuron_major_down_bytes(L.w.down)) +
                          2 * L.w.down.cols * static_cast<int64_t>(sizeof(float));
        L.thresholds = ls.exact_thresholds;
        L.calibrated = ls.threshold;
        L.t = ls.threshold;
        layers_.push_back(std::move(L));
    }
    target_ = sc.target_sparsity;
    if (!levels_.empty() && sc.default_sparsity >= 0) default_level_ = sc.default_sparsity;
    if (levels_.empty())
        note_ =
            "the sidecar has no exact-activity levels (made by an older powerinfer-calibrate): "
            "the sparsity level is fixed at its calibrated target; recalibrate to tune it";
}

// A layer's norms, up bounds and neuron-major down copy, built the first time
// the layer runs sparse: level 0 (the dense executor) never needs them, and
// neither their RAM nor the down rows they are read from stay resident then.
void ExactSparseFfn::prepare(Layer& L) {
    const auto dn = col_norms2(L.w.down);
    L.down_norm.resize(dn.size());
    for (size_t i = 0; i < dn.size(); ++i) L.down_norm[i] = static_cast<float>(std::sqrt(dn[i]));
    if (tensor::neuron_major_supported(L.w.down)) L.down = tensor::make_neuron_major_down(L.w.down);
    if (L.up_scale.size() == L.down_norm.size()) {
        L.up_factor.resize(L.up_scale.size());
        for (size_t i = 0; i < L.up_scale.size(); ++i)
            L.up_factor[i] = L.up_scale[i] * L.down_norm[i];
    } else if (L.up_bound > 0) {
        const auto un = row_norms2(L.w.up);
        L.up_factor.resize(un.size());
        for (size_t i = 0; i < un.size(); ++i)
            L.up_factor[i] = static_cast<float>(L.up_bound * std::sqrt(un[i])) * L.down_norm[i];
    }
    L.up_scale = {};
    if (release_rows_) {
        release_rows_(L.w.down);
        release_rows_(L.w.up);
    }
    built_bytes_ += static_cast<int64_t>(L.down.bytes() +
                                         (L.down_norm.size() + L.up_factor.size()) * sizeof(float));
    L.prepared = true;
}

double ExactSparseFfn::effective_level() const {
    if (level_ >= 0 && !levels_.empty()) return level_;
    return default_level();
}

void ExactSparseFfn::set_level(double level) {
    level_ = level;
    const double s = level < 0 ? default_level_ : level;
    for (Layer& L : layers_) {
        if (s < 0 || levels_.empty() || L.thresholds.size() != levels_.size()) {
            L.t = L.calibrated;
            continue;
        }
        const double x = std::min(s, 0.99);
        size_t k = 0;
        while (k + 1 < levels_.size() && levels_[k + 1] <= x) ++k;
        if (k + 1 >= levels_.size() || x <= levels_[k]) {
            L.t = L.thresholds[k];
            continue;
        }
        const double f = (x - levels_[k]) / (levels_[k + 1] - levels_[k]);
        L.t = static_cast<float>(L.thresholds[k] + f * (L.thresholds[k + 1] - L.thresholds[k]));
    }
}

namespace {

// v2's thresholds as the subset FFN's selection: an up row only where
// |a_i| * U_i * ||x|| can pass t (U_i: up_factor, the calibrated bound on
// |u_i| / ||x|| times ||W_down col i||; none: every row), and active where
// |h_i| * ||W_down col i|| passes t. Branch-free: about half the neurons
// pass, in no order a predictor could learn.
struct Thresholds final : backend::NeuronSelect {
    Thresholds(const std::vector<float>& up_factor_all, const std::vector<float>& norms,
               float x_norm, float threshold)
        : up_factor(up_factor_all.empty() ? nullptr : up_factor_all.data()),
          down_norm(norms.data()),
          xn(x_norm),
          t(threshold) {}
    const float* up_factor;  // null: every up row
    const float* down_norm;
    float xn, t;
    int64_t need_up(const int32_t* ids, const float* a, int64_t n, int32_t* keep) const override {
        if (!up_factor) {
            for (int64_t k = 0; k < n; ++k) keep[k] = static_cast<int32_t>(k);
            return n;
        }
        int64_t nc = 0;
        for (int64_t k = 0; k < n; ++k) {
            keep[nc] = static_cast<int32_t>(k);
            nc += std::fabs(a[k]) * up_factor[ids[k]] * xn >= t;
        }
        return nc;
    }
    int64_t active(const int32_t* ids, const float* h, int64_t n, int32_t* keep) const override {
        int64_t na = 0;
        for (int64_t k = 0; k < n; ++k) {
            keep[na] = static_cast<int32_t>(k);
            na += std::fabs(h[k]) * down_norm[ids[k]] >= t;
        }
        return na;
    }
};

}  // namespace

// One neuron block of a layer, start to end: the subset FFN's hidden half
// over the block with v2's thresholds, and the block's active set prepared
// for the down product. Blocks are fixed (not per thread) and end on
// 32-neuron groups, so what they produce does not depend on the thread count
// (the products nest in the pool's region: they run on this worker).
void ExactSparseFfn::run_block(Layer& L, Block& B, int64_t n0, int64_t n1, float xn) {
    const Thresholds sel(L.up_factor, L.down_norm, xn, L.t);
    B.ffn.hidden(pool_, {L.w.gate, L.w.up, {}, act_}, xq_, *xq_up_used_, nullptr, n0, n1 - n0,
                 &sel);
    const auto ids = B.ffn.active_ids();
    if (!L.down.empty())
        tensor::prepare_sparse_down(ids.data(), B.ffn.active_h().data(),
                                    static_cast<int64_t>(ids.size()), B.in);
}

ExactCounts ExactSparseFfn::run(int layer, const float* x, float* out) {
    Layer& L = layers_.at(static_cast<size_t>(layer));
    if (!L.prepared) prepare(L);
    const int64_t n_ff = L.w.gate.rows, n_embd = L.w.gate.cols;
    tensor::quantize_activations(L.w.gate.type, x, n_embd, xq_);
    xq_up_used_ = &xq_;
    if (tensor::vec_dot_type(L.w.up.type) != xq_.type) {
        tensor::quantize_activations(L.w.up.type, x, n_embd, xq_up_);
        xq_up_used_ = &xq_up_;
    }
    double xx = 0;
    for (int64_t k = 0; k < n_embd; ++k) xx += double(x[k]) * x[k];
    const float xn = static_cast<float>(std::sqrt(xx));
    // Block boundaries on 32-neuron groups (the down copy's scale groups).
    const int64_t groups = n_ff / 32, nb = std::min<int64_t>(kBlocks, std::max<int64_t>(1, groups));
    blocks_.resize(static_cast<size_t>(nb));
    auto bound = [&](int64_t b) { return b == nb ? n_ff : 32 * (groups * b / nb); };
    pool_.parallel_for(
        nb,
        [&](int64_t b0, int64_t b1, int) {
            for (int64_t b = b0; b < b1; ++b)
                run_block(L, blocks_[static_cast<size_t>(b)], bound(b), bound(b + 1), xn);
        },
        1);
    // The blocks' active sets, in neuron order, then one column-sparse down
    // product over all of them (parallel over outputs; each output sums the
    // groups in order, so the result does not depend on the thread count).
    ExactCounts c;
    for (const Block& B : blocks_) {
        c.up_rows += B.ffn.up_rows();
        c.active += static_cast<int64_t>(B.ffn.active_ids().size());
    }
    double down_read = double(L.w.down.bytes());
    if (!L.down.empty()) {
        // Blocks end on group boundaries: their prepared inputs concatenate.
        tensor::clear_sparse_down(down_in_);
        for (const Block& B : blocks_) tensor::append_sparse_down(B.in, down_in_);
        tensor::sparse_down(pool_, L.down, down_in_, out);
        // The used columns' 4-bit quants and the used groups' a and c.
        const double scale_bytes =
            L.down.a16.empty() ? 2.0 * sizeof(float) : 2.0 * sizeof(uint16_t);
        down_read = double(c.active) * double(L.down.n_out / 2) +
                    double(down_in_.group.size()) * double(L.down.n_out) * scale_bytes;
    } else {
        // No neuron-major copy for this type: dense down over the masked h.
        masked_.assign(static_cast<size_t>(n_ff), 0.0f);
        for (const Block& B : blocks_) {
            const auto ids = B.ffn.active_ids();
            const auto h = B.ffn.active_h();
            for (size_t k = 0; k < ids.size(); ++k) masked_[static_cast<size_t>(ids[k])] = h[k];
        }
        tensor::matvec(pool_, L.w.down, masked_.data(), out);
    }
    c.dense_bytes = double(L.w.gate.bytes() + L.w.up.bytes() + L.w.down.bytes());
    c.bytes = double(L.w.gate.bytes()) + double(c.up_rows) * double(L.w.up.row_bytes) + down_read;
    return c;
}

int64_t ExactSparseFfn::run_batch(int layer, const float* x, int64_t n, float* out) {
    Layer& L = layers_.at(static_cast<size_t>(layer));
    if (!L.prepared) prepare(L);
    const int64_t n_ff = L.w.gate.rows, n_embd = L.w.gate.cols;
    const auto nf = static_cast<size_t>(n_ff);
    gate_.resize(static_cast<size_t>(n) * nf);
    up_.resize(gate_.size());
    tensor::matmul(pool_, L.w.gate, x, n, gate_.data());
    tensor::matmul(pool_, L.w.up, x, n, up_.data());
    ones_.assign(nf, 1.0f);
    const bool dense_down = L.down.empty();
    if (dense_down) masked_.assign(gate_.size(), 0.0f);
    token_scratch_.resize(static_cast<size_t>(pool_.size()));
    for (TokenScratch& s : token_scratch_) {
        s.ids.resize(nf);
        s.h.resize(nf);
        s.keep.resize(nf);
        s.active = 0;
    }
    if (ids_.size() != nf) {  // the neurons' ids, for the selection's calls
        ids_.resize(nf);
        std::iota(ids_.begin(), ids_.end(), 0);
    }
    const int64_t groups = n_ff / 32, nb = std::min<int64_t>(kBlocks, std::max<int64_t>(1, groups));
    auto bound = [&](int64_t b) { return b == nb ? n_ff : 32 * (groups * b / nb); };
    // Whole tokens per thread: each one's down product runs inline there
    // (summing each output's groups in order, as split by outputs in run()).
    pool_.parallel_for(
        n,
        [&](int64_t t0, int64_t t1, int thread) {
            TokenScratch& s = token_scratch_[static_cast<size_t>(thread)];
            for (int64_t t = t0; t < t1; ++t) {
                const float* xt = x + t * n_embd;
                double xx = 0;
                for (int64_t k = 0; k < n_embd; ++k) xx += double(xt[k]) * xt[k];
                const float xn = static_cast<float>(std::sqrt(xx));
                float* a = gate_.data() + static_cast<size_t>(t) * nf;
                const float* u = up_.data() + static_cast<size_t>(t) * nf;
                const Thresholds sel(L.up_factor, L.down_norm, xn, L.t);
                int64_t na = 0;
                // Block by block as run_block's NeuronFfn::hidden decides: the
                // up rows the bound keeps, or all of a block's (up_rows_all);
                // then the active ones, compacted in place.
                for (int64_t b = 0; b < nb; ++b) {
                    const int64_t n0 = bound(b), count = bound(b + 1) - n0;
                    backend::gate_activation(act_, a + n0, ones_.data(), a + n0, count);
                    int32_t* keep = s.keep.data();
                    int64_t nc = sel.need_up(ids_.data() + n0, a + n0, count, keep);
                    if (backend::up_rows_all(nc, count)) {
                        std::iota(keep, keep + count, 0);
                        nc = count;
                    }
                    int32_t* ids = s.ids.data() + na;
                    float* h = s.h.data() + na;
                    for (int64_t k = 0; k < nc; ++k) {
                        ids[k] = static_cast<int32_t>(n0) + keep[k];
                        h[k] = a[ids[k]] * u[ids[k]];
                    }
                    const int64_t on = sel.active(ids, h, nc, keep);
                    for (int64_t k = 0; k < on; ++k) {
                        ids[k] = ids[keep[k]];
                        h[k] = h[keep[k]];
                    }
                    na += on;
                }
                s.active += na;
                if (dense_down) {
                    float* m = masked_.data() + static_cast<size_t>(t) * nf;
                    for (int64_t k = 0; k < na; ++k)
                        m[s.ids[static_cast<size_t>(k)]] = s.h[static_cast<size_t>(k)];
                } else {
                    tensor::prepare_sparse_down(s.ids.data(), s.h.data(), na, s.in);
                    tensor::sparse_down(pool_, L.down, s.in, out + t * n_embd);  // (inline here)
                }
            }
        },
        1);
    if (dense_down) tensor::matmul(pool_, L.w.down, masked_.data(), n, out);
    int64_t active = 0;
    for (const TokenScratch& s : token_scratch_) active += s.active;
    return active;
}

int64_t ExactSparseFfn::dense_down_layers() const {
    int64_t n = 0;
    for (const Layer& L : layers_) n += !tensor::neuron_major_supported(L.w.down);
    return n;
}

}  // namespace powerinfer::sparse
