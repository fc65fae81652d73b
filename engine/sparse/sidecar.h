// The calibration sidecar `<model>.powerinfer.gguf`: per-layer neuron
// statistics, activation thresholds, the hot-first permutation and the
// activation predictors, tied to one model file by a hash.
//
// Layout (GGUF v3, written with gguf::GgufWriter):
//   general.architecture = "powerinfer-sidecar"
//   powerinfer.format_version u32, powerinfer.tool_version str,
//   powerinfer.model_hash str (16 hex digits, see model_hash()),
//   powerinfer.model_bytes u64, powerinfer.activation "silu"|"relu",
//   powerinfer.n_layer/n_embd/n_ff u32, powerinfer.target_sparsity f32,
//   powerinfer.calib_tokens u64, powerinfer.synthetic bool (+ zipf_s f32),
//   powerinfer.threshold / .rank / .recall / .precision: f32/u32 arrays [n_layer]
//   optional: powerinfer.exact_levels f32[K], powerinfer.exact_thresholds
//   f32[n_layer * K], powerinfer.up_bound f32[n_layer] (exact CPU activity)
//   optional: the measured sparsity curve (held-out perplexity per level):
//   powerinfer.curve.level / .delivered / .ppl_rise / .mean_kl / .top1 f32[P],
//   powerinfer.curve.bound f32, .dense_ppl f32, .tokens u64, optional
//   .speed f32[P] (decode against dense on the calibrating CPU, 0: untimed),
//   .bytes f32[P] (weight bytes per decoded token against dense's, 0: not
//   measured),
//   powerinfer.recommended_sparsity f32 (the highest level within the bound),
//   powerinfer.default_sparsity f32 (what activation_sparsity -1 runs at on
//   the exact path: the fastest timed level within the bound; absent: the
//   target's threshold)
//   optional: powerinfer.input_levels f32[L], powerinfer.input_thresholds
//   f32[P * L] (sparse engine v3: per one-token product, its criterion's
//   quantiles; P products in Model::decode_products() order),
//   powerinfer.input_default_sparsity f32 (v3's default, timed)
//   optional: tensor powerinfer.head_basis F32[n_embd, rank] (the output
//   head's input subspace, orthonormal rows: sparse/sparse_head.h), and
//   with it the head's preview in that basis (make_head_preview, so that a
//   load need not build it): powerinfer.head_preview I8[padded rank / 2,
//   n_vocab] (the 4-bit rows' bytes, tensor/u4_rows.h),
//   powerinfer.head_preview_scale and powerinfer.head_preview_min F32[n_vocab]
//   tensors per layer l: blk.l.act_freq F32[n_ff], blk.l.act_mass F32[n_ff],
//   blk.l.perm I32[n_ff] (hot-first), blk.l.pred_w1 [n_embd, rank] F16|F32,
//   blk.l.pred_b1 F32[rank], blk.l.pred_w2 [rank, n_ff] F16|F32, blk.l.pred_b2 F32[n_ff]
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/device.h"
#include "common/error.h"
#include "common/ggml_types.h"
#include "sparse/sparse_head.h"

namespace powerinfer::gguf {
class GgufFile;
}

namespace powerinfer::sparse {

inline constexpr uint32_t kSidecarFormatVersion = 1;
inline constexpr const char* kSidecarToolVersion = "powerinfer-calibrate 0.1";

// Thrown for a missing, corrupt or mismatched sidecar; the message tells the
// user to recalibrate.
class SidecarError : public EngineError {
public:
    using EngineError::EngineError;
};

struct LayerPredictor {
    int64_t rank = 0;
    GgmlType type = GgmlType::F32;  // of w1/w2: F32 or F16
    std::vector<uint8_t> w1;        // rank rows of n_embd
    std::vector<float> b1;          // rank
    std::vector<uint8_t> w2;        // n_ff rows of rank
    std::vector<float> b2;          // n_ff

    backend::PredictorWeights view(int64_t n_embd, int64_t n_ff) const;
    // Host forward pass (tests, validation): logits[n_ff].
    void logits(const float* x, int64_t n_embd, int64_t n_ff, float* out) const;
};

struct LayerStats {
    std::vector<float> act_freq;  // fraction of calibration tokens where the neuron is active
    std::vector<float> act_mass;  // mean |contribution| (activation mass), >= 0
    std::vector<int32_t> perm;    // neuron ids, most active first
    float threshold = 0;          // |silu(g)*u| * ||down col|| above which a neuron counts active
    float recall = -1;            // predictor recall / precision on held-out tokens
    float precision = -1;
    LayerPredictor predictor;
    // Exact activity on the CPU (optional; older sidecars lack it):
    // exact_thresholds[k] is the quantile exact_levels[k] of |h| * ||down col||
    // over the calibration tokens, and up_bound the 99.9th percentile of
    // |u_i| / (||w_up row i|| * ||x||), which bounds h before up is computed.
    std::vector<float> exact_thresholds;
    float up_bound = 0;
    // Optional, per neuron: a calibrated bound on |u_j| / ||x|| (mean + 4
    // standard deviations, at most up_bound * ||W_up row j||); tensor
    // blk.l.up_scale F32[n_ff].
    std::vector<float> up_scale;
};

// One measured point of the sparsity curve: the exact path at `level` over
// held-out text (powerinfer-calibrate), against the dense model.
struct CurvePoint {
    float level = 0;      // the level asked for
    float delivered = 0;  // 1 - active / total over the scored tokens
    float ppl_rise = 0;   // perplexity / dense perplexity - 1
    float mean_kl = 0;    // mean KL(dense || sparse) per scored token
    float top1 = 0;       // argmax agreement with dense
    // Decode tok/s of the engine's CPU path at this level against dense
    // decode, on the CPU that calibrated (0: not timed; calibration times
    // the levels within the bound).
    float speed = 0;
    // Weight bytes per decoded token against dense's at this level, measured
    // with the speed (0: not measured).
    float bytes = 0;
};

struct Sidecar {
    std::string model_hash;
    uint64_t model_bytes = 0;
    std::string tool_version = kSidecarToolVersion;
    backend::GateActivation activation = backend::GateActivation::SiLU;
    int64_t n_layer = 0, n_embd = 0, n_ff = 0;
    float target_sparsity = 0;
    uint64_t calib_tokens = 0;
    bool synthetic = false;  // synthetic model: activity follows a power law
    float zipf_s = 0;
    std::vector<float> exact_levels;  // ascending sparsity levels of LayerStats::exact_thresholds
    std::vector<LayerStats> layers;
    // The measured curve (optional; older sidecars lack it), ascending levels.
    std::vector<CurvePoint> curve;
    float curve_bound = 0;            // the perplexity-rise bound of the recommendation
    float curve_dense_ppl = 0;        // dense perplexity on the held-out windows
    uint64_t curve_tokens = 0;        // tokens scored per level
    float recommended_sparsity = -1;  // -1: none measured
    // The exact path's level for activation_sparsity -1 (-1: the target's
    // calibrated threshold, as older sidecars).
    float default_sparsity = -1;
    // Sparse engine v3's input thresholds (optional; older sidecars lack
    // them): per one-token product of the model (Model::decode_products()
    // order), the quantiles input_levels of |x_j| * ||W[:, j]|| over the
    // calibration tokens. (The curve and the default level above are v2's:
    // calibration measures v2's path; v3's default is below.)
    std::vector<float> input_levels;
    std::vector<std::vector<float>> input_thresholds;
    // v3's level for activation_sparsity -1: the fastest of its timed
    // candidates on the CPU that calibrated (-1: not timed, the engine's
    // fixed default).
    float input_default_sparsity = -1;
    // The output head's preview basis (optional; older sidecars lack it).
    HeadBasis head_basis;
    // The head's preview in that basis (optional: rows 0 where the sidecar
    // has none, and the engine builds it at load).
    tensor::U4Rows head_preview;
};

// Fast 64-bit fingerprint of a model file, as 16 hex digits: FNV-1a/mixer
// over the file size, every tensor's name, type, shape and offset, and 4 KiB
// samples of tensor data every 1 MiB (plus each tensor's first and last
// 4 KiB). Reads a few MB even for a 7B model, yet any re-quantization,
// re-conversion or different model changes it. The samples are read from
// the file (GgufFile::path(); an in-memory image: from its bytes), not
// through the mapping, whose touched pages would stay resident.
std::string model_hash(const gguf::GgufFile& model);

// The default sidecar path: "dir/name.gguf" -> "dir/name.powerinfer.gguf".
std::filesystem::path default_sidecar_path(const std::filesystem::path& model);

void write_sidecar(const std::filesystem::path& path, const Sidecar& sidecar);
// Reads and validates (shapes, counts, permutation, finite values). If
// expected_hash is non-empty the sidecar must match it. Throws SidecarError
// whose message says to run `powerinfer-calibrate -m MODEL`. head_preview
// false: the head's preview (16 MB for Qwen2.5-Coder) is left in the file
// (a reader that only plans, as the placement preview).
Sidecar read_sidecar(const std::filesystem::path& path, const std::string& expected_hash = {},
                     bool head_preview = true);

// The device bytes the sidecar's predictors take (what Device::set_predictor
// accounts for all layers), read from the tensor headers only, so that a
// device plan can reserve them before the sidecar is loaded; -1 if the file
// cannot be read. A sidecar that read_sidecar() refuses may still answer.
int64_t sidecar_predictor_bytes(const std::filesystem::path& path);

// Predicted-active neurons for x, thresholded like Device::predict (host path).
std::vector<int32_t> predict_active(const LayerPredictor& p, const float* x, int64_t n_embd,
                                    int64_t n_ff, float threshold);

// Synthetic activity: p_k = min(1, c (k+1)^-s) for hot-first rank k, with c
// chosen (bisection) so that sum p_k = active_fraction * n.
std::vector<float> zipf_activity(int64_t n, double s, double active_fraction);

}  // namespace powerinfer::sparse
