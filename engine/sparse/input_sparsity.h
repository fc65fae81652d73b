// Sparse engine v3 on the CPU: input sparsity on every matrix of a decoded
// token. Each one-token product y = W x keeps only the inputs with the
// largest |x_j| * ||W[:, j]|| (WINA's criterion; one norm over the matrices
// that share the input, q/k/v and gate/up) and reads only their columns, from
// input-major copies in the model's own quant formats (tensor/input_major.h):
// a skipped input is skipped bytes. The kept count per product is fixed by
// the level: with calibrated thresholds (the sidecar's input thresholds,
// TEAL's way: per product, quantiles of the criterion over calibration
// tokens, interpolated at the level) it is one comparison per input and the
// delivered sparsity varies a little from token to token; without them it is
// the top-K per token (as LaRoSa does), exact but slower to select.
//
// It runs as the host backend's matvec hook (backend/compute.h), so the one
// model graph stays as it is: the attention's q/k/v and output products, the
// FFN's gate/up and down (whose input is the activation h: the exact
// activity criterion of v2 is this one, applied to down's input) and the
// output head. Prefill stays dense. At level 0 it hands every product back
// to the dense kernels: the same bits as dense. Where the copies replace the
// dense layouts (replace_rows), those dense products run from the copies
// with the dense kernels' bits, and the model's weights are held once.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/compute.h"
#include "model/input_sites.h"
#include "tensor/input_major.h"
#include "tensor/thread_pool.h"

namespace powerinfer::sparse {

using model::InputSite;
using model::kInputSites;
using model::SiteMatrices;
const char* input_site_name(InputSite site);

// How a model-wide level s spreads over the sites: site k skips
// min(0.95, c * s * share[k]) of its inputs, c such that the share of all
// inputs skipped is s (the default shares: measured on held-out text,
// docs/benchmarks.md "Sparse engine v3").
struct InputAllocation {
    double share[kInputSites] = {1.0, 1.0, 1.0, 1.0, 1.0};
};
InputAllocation default_input_allocation();

// What the products of one or more tokens read.
struct InputCounts {
    int64_t kept[kInputSites] = {}, inputs[kInputSites] = {};
    // Weights (rows x columns) of the products, and of their kept columns.
    double weights[kInputSites] = {}, weights_kept[kInputSites] = {};
    double bytes = 0, dense_bytes = 0;  // weight bytes read / the dense products' bytes
    int64_t products = 0;
    void add(const InputCounts& o);
    double delivered() const;  // 1 - kept / inputs over every site
    double delivered(InputSite s) const;
    // 1 - kept weights / weights over the layers' products, the head left
    // out: TEAL's "model-wide sparsity" (each matrix weighted by its size),
    // the count the field's speed-ups are quoted at.
    double delivered_weights() const;
};

class InputSparsity final : public backend::MatvecHook {
public:
    // Copies every matrix of `products` that has an input-major form (a
    // product with one that has not stays dense; see dense_products()).
    // copies = false: norms only, for recording (every product then runs
    // dense). release_rows, when given, is called with each matrix once its
    // copy is built (the owner drops the file's rows that nothing reads any
    // more, so that the copies do not stack on them: peak RSS).
    // replace_rows: the copies replace the matrices' dense layouts. Every
    // product of a copied matrix then runs from its copy, prompts (matmul),
    // level 0 and dense layers included, with the dense kernels' bits
    // (tensor::input_major_matmul), so that release_rows may drop the row
    // panels too and the model is held once. release_rows is then also
    // called before the copy is built, and with slices of the matrix
    // (w.slice) as the build has read them, from the pool's threads.
    using ReleaseRows = std::function<void(const tensor::WeightView&)>;
    InputSparsity(tensor::ThreadPool& pool, const std::vector<SiteMatrices>& products,
                  InputAllocation allocation = default_input_allocation(), bool copies = true,
                  ReleaseRows release_rows = {}, bool replace_rows = false);

    // s in [0, 0.95]: the model-wide level, the share of all products'
    // inputs skipped (0: dense, bit for bit).
    void set_level(double s);
    double level() const { return level_; }
    double site_level(InputSite s) const { return site_level_[static_cast<int>(s)]; }
    // Layers whose products stay dense (force_full_precision_layers).
    void set_dense_layers(const std::vector<int>& layers);

    bool matvec(std::span<const tensor::WeightView> ws, const float* x,
                std::span<float* const> ys) override;
    // With replace_rows: a batch's products of copied matrices from their
    // copies (the dense bits); the others dense. Fewer than kTokenRows rows
    // run one at a time through matvec, as decoded tokens.
    static constexpr int64_t kTokenRows = 8;
    bool matmul(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                std::span<float* const> ys) override;
    bool replaces_rows() const { return replace_rows_; }
    // Records the inputs while recording (below); otherwise nothing.
    void observe(std::span<const tensor::WeightView> ws, const float* x, int64_t rows) override;

    // The calibrated thresholds: per product in the order of the
    // constructor's `products`, one per level of `levels` (ascending).
    // Throws EngineError when the table does not fit the products.
    void set_thresholds(const std::vector<float>& levels,
                        const std::vector<std::vector<float>>& thresholds);
    bool calibrated() const { return !levels_.empty(); }

    // Recording (calibration): while on, every product (batches included)
    // only samples its inputs' criterion (every `stride`-th row, at most
    // `cap` values per product) and runs dense.
    void start_recording(int64_t stride, int64_t cap);
    // The recorded quantiles at `levels`, per product in the constructor's
    // order (a product with nothing recorded or no copy: zeros); stops
    // recording.
    std::vector<std::vector<float>> recorded_thresholds(const std::vector<float>& levels);

    // Counters since the last take (the caller reads them per token).
    InputCounts take_counts();
    // RAM the input-major copies and norms take.
    int64_t extra_bytes() const;
    // The file's bytes of the matrices copied: with replace_rows, what the
    // copies took the place of.
    int64_t copied_bytes() const { return copied_bytes_; }
    // Products that stay dense, and why (a type without an input-major form).
    const std::vector<std::string>& dense_products() const { return dense_; }

private:
    static constexpr size_t kMaxShared = 4;  // matrices one product takes together
    struct Product {
        InputSite site;
        int layer = -1;
        int64_t n_in = 0;
        size_t index = 0;               // in the constructor's order
        std::vector<float> thresholds;  // per calibrated level; empty: top-K
        float t = 0;                    // at the current level
        std::vector<float> samples;     // recording
        int64_t rows_seen = 0;
        // One copy per matrix, or (fused, row0 not empty) one copy of all
        // the product's matrices stacked along the outputs, matrix k's rows
        // from row0[k]: a kept input is then one contiguous run over all
        // of them (docs/benchmarks.md, twelfth session).
        std::vector<tensor::InputMajorMatrix> m;
        std::vector<int64_t> row0;
        std::vector<const uint8_t*> members;  // the matrices' data, in order
        std::vector<float> norm;  // ||W[:, j]|| over the product's matrices
        double dense_bytes = 0;
        double weights = 0;  // rows x columns over the product's matrices
    };
    tensor::ThreadPool& pool_;
    InputAllocation alloc_;
    // The dense bits from the copies (replace_rows).
    void dense_from_copies(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                           std::span<float* const> ys);
    // One-token products that run dense (level 0, dense layers) under
    // replace_rows: the matrix's dense layout rebuilt from its copy on first
    // use (rebuilding it per token would cost several dense products), in
    // row panels where the kernels have them; dropped when the level or the
    // dense layers change.
    struct DenseLayout {
        std::vector<uint8_t> rows, panels;
        tensor::WeightView view;
    };
    // Where a matrix's copy is: its rows from row0 of m (0 unless fused).
    struct CopyRef {
        const tensor::InputMajorMatrix* m = nullptr;
        int64_t row0 = 0;
        bool fused = false;
    };
    const tensor::WeightView& dense_layout(const tensor::WeightView& w, const CopyRef& c);
    std::unordered_map<const uint8_t*, DenseLayout> dense_layouts_;
    std::unordered_map<const uint8_t*, Product> products_;  // by ws[0].data
    // Every copy by its matrix's data (replace_rows: any grouping of them).
    std::unordered_map<const uint8_t*, CopyRef> copy_of_;
    bool replace_rows_ = false;
    int64_t copied_bytes_ = 0;
    std::vector<std::string> dense_;
    std::vector<bool> dense_layer_;
    std::vector<float> levels_;  // calibrated levels (ascending); empty: top-K
    bool recording_ = false;
    int64_t rec_stride_ = 1, rec_cap_ = 0;
    size_t n_products_ = 0;
    double level_ = 0;
    double site_level_[kInputSites] = {};
    InputCounts counts_;
    // Scratch.
    std::vector<float> crit_, sel_;
    std::vector<int32_t> ids_;
    std::vector<float> fused_y_;  // a fused copy's stacked outputs
    tensor::SparseInput in32_, in16_;
};

}  // namespace powerinfer::sparse
