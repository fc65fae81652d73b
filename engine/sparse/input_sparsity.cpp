#include "sparse/input_sparsity.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "sparse/select.h"
#include "tensor/matmul.h"
#include "tensor/panels.h"
#include "tensor/quant.h"

namespace powerinfer::sparse {

namespace {

// Matrix k of a stacked copy is rows [row0, row0 + rows) of its product:
// its outputs for each of `tokens` tokens (the product's rows n_out apart).
void copy_stacked_rows(const float* stacked, int64_t n_out, int64_t tokens, int64_t row0,
                       int64_t rows, float* y) {
    for (int64_t t = 0; t < tokens; ++t)
        std::memcpy(y + t * rows, stacked + t * n_out + row0,
                    static_cast<size_t>(rows) * sizeof(float));
}

}  // namespace

const char* input_site_name(InputSite site) {
    switch (site) {
        case InputSite::AttnIn:
            return "q/k/v";
        case InputSite::AttnOut:
            return "attn out";
        case InputSite::FfnIn:
            return "gate/up";
        case InputSite::FfnMid:
            return "down";
        case InputSite::Head:
            return "head";
    }
    return "?";
}

InputAllocation default_input_allocation() {
    // Measured on Qwen2.5-Coder-0.5B (docs/benchmarks.md, "Sparse engine
    // v3"): per byte saved, down's input (h) and the head cost the least KL,
    // gate/up more, the attention products the most per byte (they are few
    // bytes); at 30% each alone: KL 0.016 (down at 45%), 0.020 (head), 0.029
    // (gate/up), 0.006 (q/k/v), 0.005 (attention output).
    InputAllocation a;
    a.share[static_cast<int>(InputSite::AttnIn)] = 0.6;
    a.share[static_cast<int>(InputSite::AttnOut)] = 0.6;
    a.share[static_cast<int>(InputSite::FfnIn)] = 0.6;
    a.share[static_cast<int>(InputSite::FfnMid)] = 1.6;
    a.share[static_cast<int>(InputSite::Head)] = 1.2;
    return a;
}

void InputCounts::add(const InputCounts& o) {
    for (int k = 0; k < kInputSites; ++k) {
        kept[k] += o.kept[k];
        inputs[k] += o.inputs[k];
        weights[k] += o.weights[k];
        weights_kept[k] += o.weights_kept[k];
    }
    bytes += o.bytes;
    dense_bytes += o.dense_bytes;
    products += o.products;
}

double InputCounts::delivered() const {
    int64_t k = 0, n = 0;
    for (int s = 0; s < kInputSites; ++s) {
        k += kept[s];
        n += inputs[s];
    }
    return n ? 1.0 - double(k) / double(n) : 0.0;
}

double InputCounts::delivered_weights() const {
    double k = 0, n = 0;
    for (int s = 0; s < kInputSites; ++s)
        if (s != static_cast<int>(InputSite::Head)) {
            k += weights_kept[s];
            n += weights[s];
        }
    return n > 0 ? 1.0 - k / n : 0.0;
}

double InputCounts::delivered(InputSite s) const {
    const int i = static_cast<int>(s);
    return inputs[i] ? 1.0 - double(kept[i]) / double(inputs[i]) : 0.0;
}

InputSparsity::InputSparsity(tensor::ThreadPool& pool, const std::vector<SiteMatrices>& products,
                             InputAllocation allocation, bool copies, ReleaseRows release_rows,
                             bool replace_rows)
    : pool_(pool),
      alloc_(allocation),
      replace_rows_(copies && replace_rows),
      n_products_(products.size()) {
    for (size_t index = 0; index < products.size(); ++index) {
        const SiteMatrices& p = products[index];
        if (p.ws.empty()) continue;
        std::string why;
        for (const auto& w : p.ws) {
            if (w.cols != p.ws[0].cols) why = "inputs of different lengths";
            if (why.empty()) why = tensor::input_major_refusal(w);
            if (!why.empty()) break;
        }
        if (!why.empty()) {
            dense_.push_back(std::string(input_site_name(p.site)) +
                             (p.layer >= 0 ? " of layer " + std::to_string(p.layer) : "") + ": " +
                             why);
            continue;
        }
        Product prod;
        prod.site = p.site;
        prod.layer = p.layer;
        prod.n_in = p.ws[0].cols;
        prod.index = index;
        std::vector<double> n2(static_cast<size_t>(p.ws[0].cols), 0.0);
        // Matrices of one type that fit one tile of outputs together (q/k/v
        // of most models) get one stacked copy.
        int64_t stacked_rows = 0;
        bool fuse = copies && p.ws.size() > 1;
        for (const auto& w : p.ws) {
            stacked_rows += w.rows;
            fuse = fuse && w.type == p.ws[0].type && w.row_bytes == p.ws[0].row_bytes;
        }
        fuse = fuse && stacked_rows <= tensor::kInputTileChunks * 32;
        if (fuse) {
            const size_t rb = p.ws[0].row_bytes;
            std::vector<uint8_t> stacked(static_cast<size_t>(stacked_rows) * rb);
            int64_t r0 = 0;
            for (const auto& w : p.ws) {
                std::memcpy(stacked.data() + static_cast<size_t>(r0) * rb, w.data, w.bytes());
                prod.row0.push_back(r0);
                r0 += w.rows;
                copied_bytes_ += static_cast<int64_t>(w.bytes());
                if (release_rows) release_rows(w);
            }
            tensor::WeightView all = p.ws[0];
            all.data = stacked.data();
            all.rows = stacked_rows;
            all.panels = nullptr;
            prod.m.push_back(tensor::make_input_major(all, &pool_, &n2));
        }
        for (const auto& w : p.ws) {
            prod.members.push_back(w.data);
            prod.dense_bytes += double(w.row_bytes) * double(w.rows);
            prod.weights += double(w.rows) * double(w.cols);
            if (fuse) continue;
            if (copies) {
                // Replacing: the dense layout goes before the copy is built,
                // and the rows it reads go block by block (the peak RSS is
                // the model's once, not one matrix more).
                std::function<void(int64_t, int64_t)> read;
                if (replace_rows_ && release_rows) {
                    release_rows(w);
                    read = [&](int64_t r0, int64_t r1) { release_rows(w.slice(r0, r1)); };
                }
                prod.m.push_back(tensor::make_input_major(w, &pool_, &n2, read));
                copied_bytes_ += static_cast<int64_t>(w.bytes());
                if (release_rows) release_rows(w);
            } else {
                std::vector<float> row(static_cast<size_t>(w.cols));
                for (int64_t r = 0; r < w.rows; ++r) {
                    tensor::dequantize_row(w.type, w.row(r), row.data(), w.cols);
                    for (int64_t c = 0; c < w.cols; ++c)
                        n2[static_cast<size_t>(c)] +=
                            double(row[static_cast<size_t>(c)]) * row[static_cast<size_t>(c)];
                }
            }
        }
        prod.norm.resize(n2.size());
        for (size_t j = 0; j < n2.size(); ++j) prod.norm[j] = static_cast<float>(std::sqrt(n2[j]));
        const auto at = products_.emplace(p.ws[0].data, std::move(prod)).first;
        const Product& in = at->second;
        const size_t n_refs = fuse ? p.ws.size() : in.m.size();
        for (size_t k = 0; k < n_refs; ++k)
            copy_of_[p.ws[k].data] =
                fuse ? CopyRef{&in.m[0], in.row0[k], true} : CopyRef{&in.m[k], 0, false};
    }
}

const tensor::WeightView& InputSparsity::dense_layout(const tensor::WeightView& w,
                                                      const CopyRef& c) {
    const tensor::InputMajorMatrix& m = *c.m;
    if (const auto it = dense_layouts_.find(w.data); it != dense_layouts_.end())
        return it->second.view;
    DenseLayout d;
    d.view = w;
    d.view.panels = nullptr;
    const size_t rb = tensor::input_major_row_bytes(m);
    // Row panels where the kernels have them, packed from rows rebuilt a
    // slice at a time (the rows are never whole: freed, a matrix-sized block
    // would stay in the allocator's heap). The view's rows are then the
    // file's, read only at a level without the panel kernels (the same bits).
    const bool panels = tensor::panels_available(w);
    (panels ? d.panels : d.rows).resize(static_cast<size_t>(w.rows) * rb);
    pool_.parallel_for(w.rows / 32, [&](int64_t b, int64_t e, int) {
        uint8_t* dst = (panels ? d.panels : d.rows).data() + static_cast<size_t>(32 * b) * rb;
        if (!panels) return tensor::input_major_rows(m, c.row0 + 32 * b, c.row0 + 32 * e, dst);
        thread_local std::vector<uint8_t> slice;
        slice.resize(32 * rb);
        for (int64_t k = b; k < e; ++k, dst += 32 * rb) {
            tensor::input_major_rows(m, c.row0 + 32 * k, c.row0 + 32 * k + 32, slice.data());
            tensor::WeightView v = w;
            v.data = slice.data();
            v.rows = 32;
            v.panels = nullptr;
            tensor::pack_panels_into(v, dst);
        }
    });
    if (panels)
        d.view.panels = d.panels.data();
    else
        d.view.data = d.rows.data();
    return dense_layouts_.emplace(w.data, std::move(d)).first->second.view;
}

void InputSparsity::dense_from_copies(std::span<const tensor::WeightView> ws, const float* x,
                                      int64_t rows, std::span<float* const> ys) {
    const tensor::InputMajorMatrix* ms[kMaxShared];
    float* out[kMaxShared];
    size_t n = 0;
    const tensor::InputMajorMatrix* fused = nullptr;  // whose product fused_y_ holds
    for (size_t k = 0; k < ws.size(); ++k) {
        const auto it = copy_of_.find(ws[k].data);
        if (it == copy_of_.end()) {
            tensor::matmul(pool_, ws[k], x, rows, ys[k]);
            continue;
        }
        if (rows == 1 || dense_layouts_.count(ws[k].data)) {
            tensor::matmul(pool_, dense_layout(ws[k], it->second), x, rows, ys[k]);
            continue;
        }
        if (it->second.fused) {
            // The stacked product once per call, each matrix its rows of it.
            const tensor::InputMajorMatrix* fm = it->second.m;
            if (fused != fm) {
                fused = fm;
                fused_y_.resize(static_cast<size_t>(rows * fm->n_out));
                float* fy = fused_y_.data();
                tensor::input_major_matmul(pool_, std::span(&fm, 1), x, rows, std::span(&fy, 1));
            }
            copy_stacked_rows(fused_y_.data(), fm->n_out, rows, it->second.row0, ws[k].rows, ys[k]);
            continue;
        }
        ms[n] = it->second.m;
        out[n++] = ys[k];
        if (n == kMaxShared) {
            tensor::input_major_matmul(pool_, std::span(ms, n), x, rows, std::span(out, n));
            n = 0;
        }
    }
    if (n > 0) tensor::input_major_matmul(pool_, std::span(ms, n), x, rows, std::span(out, n));
}

bool InputSparsity::matmul(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                           std::span<float* const> ys) {
    if (!replace_rows_ || ws.empty()) return false;
    bool any = false;
    for (const auto& w : ws) any = any || copy_of_.count(w.data) > 0;
    if (!any) return false;
    // A few rows (a decode step of several sequences, a prompt's last few
    // tokens) run as decoded tokens, each as it would alone: rebuilding the
    // rows for them would cost several dense products per step.
    if (rows > 1 && rows < kTokenRows && ws.size() <= kMaxShared) {
        float* row_ys[kMaxShared];
        for (int64_t r = 0; r < rows; ++r) {
            for (size_t k = 0; k < ws.size(); ++k) row_ys[k] = ys[k] + r * ws[k].rows;
            matvec(ws, x + r * ws[0].cols, std::span(row_ys, ws.size()));
        }
        return true;
    }
    dense_from_copies(ws, x, rows, ys);
    return true;
}

namespace {

// The threshold at level s in a table over ascending levels (linear between
// them; clamped at the ends).
float threshold_at(const std::vector<float>& levels, const std::vector<float>& t, double s) {
    if (s <= levels.front()) return t.front();
    for (size_t k = 0; k + 1 < levels.size(); ++k)
        if (s <= levels[k + 1]) {
            const double f = (s - levels[k]) / (levels[k + 1] - levels[k]);
            return static_cast<float>(t[k] + f * (t[k + 1] - t[k]));
        }
    return t.back();
}

}  // namespace

void InputSparsity::set_level(double s) {
    // The dense layouts rebuilt for level 0 or dense layers go when the
    // level moves (a tuning change that keeps it keeps them).
    const double level = std::clamp(s, 0.0, 0.95);
    if (level != level_) dense_layouts_.clear();
    level_ = level;
    // The shares scaled so that the sites' levels, weighted by their inputs,
    // average to the level: the delivered sparsity is the level asked for.
    int64_t inputs[kInputSites] = {}, all = 0;
    for (const auto& [key, p] : products_) inputs[static_cast<int>(p.site)] += p.n_in;
    for (int64_t n : inputs) all += n;
    auto mean = [&](double c) {
        double m = 0;
        for (int k = 0; k < kInputSites; ++k)
            m += double(inputs[k]) * std::clamp(c * alloc_.share[k], 0.0, 0.95);
        return all ? m / double(all) : 0.0;
    };
    double lo = 0, hi = 1;
    while (mean(hi) < level_ && hi < 1e3) hi *= 2;
    for (int it = 0; it < 50; ++it) (mean((lo + hi) / 2) < level_ ? lo : hi) = (lo + hi) / 2;
    for (int k = 0; k < kInputSites; ++k)
        site_level_[k] = std::clamp(hi * alloc_.share[k], 0.0, 0.95);
    for (auto& [key, p] : products_)
        if (!p.thresholds.empty())
            p.t = threshold_at(levels_, p.thresholds, site_level_[static_cast<int>(p.site)]);
}

void InputSparsity::set_thresholds(const std::vector<float>& levels,
                                   const std::vector<std::vector<float>>& thresholds) {
    if (levels.empty() || thresholds.size() != n_products_ ||
        !std::is_sorted(levels.begin(), levels.end()))
        throw EngineError("input thresholds: " + std::to_string(thresholds.size()) +
                          " products for a model with " + std::to_string(n_products_) +
                          "; recalibrate with `powerinfer-calibrate -m MODEL`");
    for (const auto& t : thresholds)
        if (t.size() != levels.size())
            throw EngineError("input thresholds: a product has " + std::to_string(t.size()) +
                              " levels instead of " + std::to_string(levels.size()));
    levels_ = levels;
    for (auto& [key, p] : products_) p.thresholds = thresholds[p.index];
    set_level(level_);
}

void InputSparsity::start_recording(int64_t stride, int64_t cap) {
    recording_ = true;
    rec_stride_ = std::max<int64_t>(1, stride);
    rec_cap_ = cap;
    for (auto& [key, p] : products_) {
        p.samples.clear();
        p.rows_seen = 0;
    }
}

std::vector<std::vector<float>> InputSparsity::recorded_thresholds(
    const std::vector<float>& levels) {
    recording_ = false;
    std::vector<std::vector<float>> out(n_products_, std::vector<float>(levels.size(), 0.0f));
    for (auto& [key, p] : products_) {
        std::vector<float>& v = p.samples;
        if (v.empty()) continue;
        std::vector<size_t> ranks(levels.size());
        for (size_t k = 0; k < levels.size(); ++k)
            ranks[k] =
                std::min(v.size() - 1, static_cast<size_t>(double(levels[k]) * double(v.size())));
        out[p.index] = values_at_ranks(v, ranks);
        v = {};
    }
    return out;
}

void InputSparsity::set_dense_layers(const std::vector<int>& layers) {
    const std::vector<bool> before = dense_layer_;
    dense_layer_.clear();
    for (int l : layers) {
        if (l < 0) continue;
        if (static_cast<size_t>(l) >= dense_layer_.size())
            dense_layer_.resize(size_t(l) + 1, false);
        dense_layer_[static_cast<size_t>(l)] = true;
    }
    if (dense_layer_ != before) dense_layouts_.clear();
}

void InputSparsity::observe(std::span<const tensor::WeightView> ws, const float* x, int64_t rows) {
    if (!recording_ || ws.empty()) return;
    const auto it = products_.find(ws[0].data);
    if (it == products_.end()) return;
    Product& p = it->second;
    const int64_t n = p.n_in;
    // Every rec_stride_-th row's criterion (the head: every row, it sees
    // few), up to the cap.
    const int64_t stride = p.site == InputSite::Head ? 1 : rec_stride_;
    for (int64_t r = 0; r < rows; ++r, ++p.rows_seen) {
        if (p.rows_seen % stride != 0 || static_cast<int64_t>(p.samples.size()) >= rec_cap_)
            continue;
        const float* xr = x + r * n;
        for (int64_t j = 0; j < n; ++j)
            p.samples.push_back(std::fabs(xr[j]) * p.norm[static_cast<size_t>(j)]);
    }
}

bool InputSparsity::matvec(std::span<const tensor::WeightView> ws, const float* x,
                           std::span<float* const> ys) {
    if (ws.empty() || ws.size() > kMaxShared) return false;
    const auto it = products_.find(ws[0].data);
    bool same =
        it != products_.end() && !it->second.m.empty() && it->second.members.size() == ws.size();
    for (size_t k = 0; same && k < ws.size(); ++k) same = it->second.members[k] == ws[k].data;
    if (!same) {
        // A product without an input-major form: dense, counted as read.
        double b = 0;
        for (const auto& w : ws) b += double(w.row_bytes) * double(w.rows);
        counts_.bytes += b;
        counts_.dense_bytes += b;
        return matmul(ws, x, 1, ys);
    }
    Product& p = it->second;
    // Dense from here on: the dense kernels, over the copies where they
    // replaced the rows.
    const auto dense = [&] {
        if (!replace_rows_) return false;
        dense_from_copies(ws, x, 1, ys);
        return true;
    };
    if (p.layer >= 0 && static_cast<size_t>(p.layer) < dense_layer_.size() &&
        dense_layer_[static_cast<size_t>(p.layer)]) {
        counts_.bytes += p.dense_bytes;
        counts_.dense_bytes += p.dense_bytes;
        return dense();
    }
    const int site = static_cast<int>(p.site);
    const int64_t n = p.m[0].n_in;
    if (recording_) return dense();
    const auto keep = static_cast<int64_t>(std::llround((1.0 - site_level_[site]) * double(n)));
    if (keep >= n) {  // level 0: the dense kernels, bit for bit
        counts_.kept[site] += n;
        counts_.inputs[site] += n;
        counts_.weights[site] += p.weights;
        counts_.weights_kept[site] += p.weights;
        counts_.bytes += p.dense_bytes;
        counts_.dense_bytes += p.dense_bytes;
        ++counts_.products;
        return dense();
    }
    // The keep largest |x_j| * ||W[:, j]||, in input order.
    ids_.clear();
    if (!p.thresholds.empty()) {
        // The calibrated threshold: one comparison per input, without a
        // branch (every id is written, the count moves past the kept ones).
        const float t = std::max(p.t, std::numeric_limits<float>::min());
        ids_.resize(static_cast<size_t>(n));
        int32_t* out = ids_.data();
        const float* norm = p.norm.data();
        int64_t k = 0;
        for (int64_t j = 0; j < n; ++j) {
            out[k] = static_cast<int32_t>(j);
            k += !(std::fabs(x[j]) * norm[j] < t);
        }
        ids_.resize(static_cast<size_t>(k));
    } else if (keep > 0) {
        crit_.resize(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j)
            crit_[static_cast<size_t>(j)] = std::fabs(x[j]) * p.norm[static_cast<size_t>(j)];
        sel_.assign(crit_.begin(), crit_.end());
        const auto nth = sel_.begin() + (n - keep);
        std::nth_element(sel_.begin(), nth, sel_.end());
        const float thr = *nth;
        for (int64_t j = 0; j < n && static_cast<int64_t>(ids_.size()) < keep; ++j)
            if (crit_[static_cast<size_t>(j)] >= thr && crit_[static_cast<size_t>(j)] > 0)
                ids_.push_back(static_cast<int32_t>(j));
    }
    const auto kept = static_cast<int64_t>(ids_.size());
    bool prepared32 = false, prepared16 = false;
    const tensor::InputMajorMatrix* ms[kMaxShared];
    const tensor::SparseInput* ins[kMaxShared];
    const size_t n_copies = p.m.size();
    for (size_t k = 0; k < n_copies; ++k) {
        const tensor::InputMajorMatrix& m = p.m[k];
        tensor::SparseInput& in = m.group == 16 ? in16_ : in32_;
        bool& prepared = m.group == 16 ? prepared16 : prepared32;
        if (!prepared) {
            tensor::prepare_sparse_input(ids_.data(), kept, x, m.group, in);
            prepared = true;
        }
        ms[k] = &m;
        ins[k] = &in;
        const double scale_bytes = double(m.bytes() - m.q.size());
        const double groups = double(m.n_in / m.group);
        counts_.bytes +=
            double(kept) * double(m.col_bytes()) + scale_bytes * double(in.groups.size()) / groups;
    }
    if (p.row0.empty()) {
        tensor::colsparse_matvec_many(pool_, std::span(ms, n_copies), std::span(ins, n_copies), ys);
    } else {
        fused_y_.resize(static_cast<size_t>(p.m[0].n_out));
        float* fy = fused_y_.data();
        tensor::colsparse_matvec_many(pool_, std::span(ms, 1), std::span(ins, 1),
                                      std::span(&fy, 1));
        for (size_t k = 0; k < ws.size(); ++k)
            copy_stacked_rows(fy, p.m[0].n_out, 1, p.row0[k], ws[k].rows, ys[k]);
    }
    counts_.kept[site] += kept;
    counts_.inputs[site] += n;
    counts_.weights[site] += p.weights;
    counts_.weights_kept[site] += p.weights * double(kept) / double(n);
    counts_.dense_bytes += p.dense_bytes;
    ++counts_.products;
    return true;
}

InputCounts InputSparsity::take_counts() {
    InputCounts c = counts_;
    counts_ = InputCounts{};
    return c;
}

int64_t InputSparsity::extra_bytes() const {
    int64_t b = 0;
    for (const auto& [key, p] : products_) {
        for (const auto& m : p.m) b += static_cast<int64_t>(m.bytes());
        b += static_cast<int64_t>(p.norm.size() * sizeof(float));
    }
    for (const auto& [key, d] : dense_layouts_)
        b += static_cast<int64_t>(d.rows.size() + d.panels.size());
    return b;
}

}  // namespace powerinfer::sparse
