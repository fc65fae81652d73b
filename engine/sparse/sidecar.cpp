#include "sparse/sidecar.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>

#include "gguf/gguf.h"
#include "powerinfer/utf8_path.h"
#include "tensor/quant.h"

namespace powerinfer::sparse {
namespace {

using gguf::Value;
using gguf::ValueType;

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

// FNV-1a over 8-byte words with a final avalanche: simple, portable, fast
// enough for the few MB the fingerprint reads.
struct Hasher {
    uint64_t h = kFnvOffset;
    void bytes(const uint8_t* p, size_t n) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t w;
            std::memcpy(&w, p + i, 8);
            h = (h ^ w) * kFnvPrime;
        }
        for (; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
    }
    void u64(uint64_t x) { bytes(reinterpret_cast<const uint8_t*>(&x), 8); }
    void str(const std::string& s) {
        u64(s.size());
        bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    }
    uint64_t finish() const {
        uint64_t x = h;
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ull;
        x ^= x >> 33;
        return x;
    }
};

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& problem) {
    throw SidecarError("sidecar " + path_to_utf8(path) + ": " + problem +
                       "; recalibrate with `powerinfer-calibrate -m MODEL` (the engine runs dense "
                       "until then)");
}

constexpr const char* kHeadBasisTensor = "powerinfer.head_basis";
constexpr const char* kHeadPreviewTensor = "powerinfer.head_preview";
constexpr const char* kHeadPreviewScaleTensor = "powerinfer.head_preview_scale";
constexpr const char* kHeadPreviewMinTensor = "powerinfer.head_preview_min";

std::string layer_key(int64_t l, const char* what) {
    return "blk." + std::to_string(l) + "." + what;
}

template <typename T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
    std::vector<uint8_t> out(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

Value f32_array(const std::vector<float>& v) {
    std::vector<Value> items;
    items.reserve(v.size());
    for (float x : v) items.push_back(Value::f32(x));
    return Value::array(ValueType::FLOAT32, std::move(items));
}

size_t elem_size(GgmlType t) { return t == GgmlType::F16 ? 2 : 4; }

// Matrix-vector product over an F32/F16 row-major matrix (host path).
void small_matvec(GgmlType t, const uint8_t* w, int64_t rows, int64_t cols, const float* x,
                  float* y) {
    std::vector<float> row(static_cast<size_t>(cols));
    const size_t rb = static_cast<size_t>(cols) * elem_size(t);
    for (int64_t r = 0; r < rows; ++r) {
        tensor::dequantize_row_ref(t, w + static_cast<size_t>(r) * rb, row.data(), cols);
        float acc = 0;
        for (int64_t c = 0; c < cols; ++c) acc += row[static_cast<size_t>(c)] * x[c];
        y[r] = acc;
    }
}

}  // namespace

backend::PredictorWeights LayerPredictor::view(int64_t n_embd, int64_t n_ff) const {
    return {n_embd, rank, n_ff, type, w1.data(), b1.data(), w2.data(), b2.data()};
}

void LayerPredictor::logits(const float* x, int64_t n_embd, int64_t n_ff, float* out) const {
    std::vector<float> h(static_cast<size_t>(rank));
    small_matvec(type, w1.data(), rank, n_embd, x, h.data());
    for (int64_t i = 0; i < rank; ++i) h[i] = std::max(0.0f, h[i] + b1[i]);
    small_matvec(type, w2.data(), n_ff, rank, h.data(), out);
    for (int64_t j = 0; j < n_ff; ++j) out[j] += b2[j];
}

std::vector<int32_t> predict_active(const LayerPredictor& p, const float* x, int64_t n_embd,
                                    int64_t n_ff, float threshold) {
    std::vector<float> z(static_cast<size_t>(n_ff));
    p.logits(x, n_embd, n_ff, z.data());
    const float t = std::clamp(threshold, 1e-6f, 1.0f - 1e-6f);
    const float cut = std::log(t / (1.0f - t));
    std::vector<int32_t> out;
    for (int64_t j = 0; j < n_ff; ++j) {
        if (z[j] > cut) out.push_back(static_cast<int32_t>(j));
    }
    return out;
}

std::vector<float> zipf_activity(int64_t n, double s, double active_fraction) {
    std::vector<float> p(static_cast<size_t>(n));
    const double want = std::clamp(active_fraction, 0.0, 1.0) * static_cast<double>(n);
    double lo = 0, hi = 1;
    auto total = [&](double c) {
        double t = 0;
        for (int64_t k = 0; k < n; ++k) t += std::min(1.0, c * std::pow(double(k + 1), -s));
        return t;
    };
    while (total(hi) < want && hi < 1e30) hi *= 2;
    for (int it = 0; it < 60; ++it) {
        const double mid = 0.5 * (lo + hi);
        (total(mid) < want ? lo : hi) = mid;
    }
    for (int64_t k = 0; k < n; ++k) {
        p[static_cast<size_t>(k)] =
            static_cast<float>(std::min(1.0, hi * std::pow(double(k + 1), -s)));
    }
    return p;
}

std::string model_hash(const gguf::GgufFile& model) {
    constexpr uint64_t kSample = 4096, kStride = uint64_t{1} << 20;
    // The samples come from the file by reads, not through the mapping: a
    // touched page of the mapping stays resident with the kernel's fault-around
    // neighbours (about 64 KB per sample, 30 MB on a 0.5B model), pages the
    // dense path released after packing its panels. Same bytes either way.
    std::ifstream in;
    if (!model.path().empty()) in.open(model.path(), std::ios::binary);
    std::vector<char> buf(kSample);
    Hasher h;
    auto sample = [&](const gguf::TensorInfo& t, uint64_t off, uint64_t len) {
        if (in.is_open()) {
            in.seekg(static_cast<std::streamoff>(model.data_offset() + t.offset + off));
            if (in.read(buf.data(), static_cast<std::streamsize>(len))) {
                h.bytes(reinterpret_cast<const uint8_t*>(buf.data()), static_cast<size_t>(len));
                return;
            }
            in.close();  // unreadable now: the mapping from here on
        }
        h.bytes(t.data + off, static_cast<size_t>(len));
    };
    h.u64(model.file_size());
    for (const auto& t : model.tensors()) {
        h.str(t.name);
        h.u64(static_cast<uint64_t>(t.type));
        for (uint64_t d : t.shape) h.u64(d);
        h.u64(t.offset);
        const uint64_t n = t.n_bytes;
        for (uint64_t off = 0; off < n; off += kStride) sample(t, off, std::min(kSample, n - off));
        if (n > kSample) sample(t, n - kSample, kSample);
    }
    static const char* digits = "0123456789abcdef";
    const uint64_t x = h.finish();
    std::string s(16, '0');
    for (int i = 0; i < 16; ++i) s[static_cast<size_t>(15 - i)] = digits[(x >> (4 * i)) & 15];
    return s;
}

std::filesystem::path default_sidecar_path(const std::filesystem::path& model) {
    std::filesystem::path p = model;
    p.replace_extension(".powerinfer.gguf");
    return p;
}

void write_sidecar(const std::filesystem::path& path, const Sidecar& s) {
    gguf::GgufWriter w;
    w.set("general.architecture", Value::str("powerinfer-sidecar"));
    w.set("powerinfer.format_version", Value::u32(kSidecarFormatVersion));
    w.set("powerinfer.tool_version", Value::str(s.tool_version));
    w.set("powerinfer.model_hash", Value::str(s.model_hash));
    w.set("powerinfer.model_bytes", Value::u64(s.model_bytes));
    w.set("powerinfer.activation", Value::str(backend::gate_activation_name(s.activation)));
    w.set("powerinfer.n_layer", Value::u32(static_cast<uint32_t>(s.n_layer)));
    w.set("powerinfer.n_embd", Value::u32(static_cast<uint32_t>(s.n_embd)));
    w.set("powerinfer.n_ff", Value::u32(static_cast<uint32_t>(s.n_ff)));
    w.set("powerinfer.target_sparsity", Value::f32(s.target_sparsity));
    w.set("powerinfer.calib_tokens", Value::u64(s.calib_tokens));
    w.set("powerinfer.synthetic", Value::boolean(s.synthetic));
    w.set("powerinfer.zipf_s", Value::f32(s.zipf_s));
    std::vector<float> thr, rec, prec;
    std::vector<Value> ranks;
    for (const auto& l : s.layers) {
        thr.push_back(l.threshold);
        rec.push_back(l.recall);
        prec.push_back(l.precision);
        ranks.push_back(Value::u32(static_cast<uint32_t>(l.predictor.rank)));
    }
    w.set("powerinfer.threshold", f32_array(thr));
    w.set("powerinfer.recall", f32_array(rec));
    w.set("powerinfer.precision", f32_array(prec));
    w.set("powerinfer.rank", Value::array(ValueType::UINT32, std::move(ranks)));
    if (!s.exact_levels.empty()) {
        std::vector<float> all, bounds;
        for (const auto& l : s.layers) {
            all.insert(all.end(), l.exact_thresholds.begin(), l.exact_thresholds.end());
            bounds.push_back(l.up_bound);
        }
        w.set("powerinfer.exact_levels", f32_array(s.exact_levels));
        w.set("powerinfer.exact_thresholds", f32_array(all));
        w.set("powerinfer.up_bound", f32_array(bounds));
    }
    if (!s.input_levels.empty()) {
        std::vector<float> all;
        for (const auto& t : s.input_thresholds) all.insert(all.end(), t.begin(), t.end());
        w.set("powerinfer.input_levels", f32_array(s.input_levels));
        w.set("powerinfer.input_thresholds", f32_array(all));
    }
    if (!s.curve.empty()) {
        std::vector<float> lv, dl, pr, kl, t1, sp, by;
        bool timed = false, counted = false;
        for (const CurvePoint& p : s.curve) {
            lv.push_back(p.level);
            dl.push_back(p.delivered);
            pr.push_back(p.ppl_rise);
            kl.push_back(p.mean_kl);
            t1.push_back(p.top1);
            sp.push_back(p.speed);
            timed = timed || p.speed > 0;
            by.push_back(p.bytes);
            counted = counted || p.bytes > 0;
        }
        if (timed) w.set("powerinfer.curve.speed", f32_array(sp));
        if (counted) w.set("powerinfer.curve.bytes", f32_array(by));
        w.set("powerinfer.curve.level", f32_array(lv));
        w.set("powerinfer.curve.delivered", f32_array(dl));
        w.set("powerinfer.curve.ppl_rise", f32_array(pr));
        w.set("powerinfer.curve.mean_kl", f32_array(kl));
        w.set("powerinfer.curve.top1", f32_array(t1));
        w.set("powerinfer.curve.bound", Value::f32(s.curve_bound));
        w.set("powerinfer.curve.dense_ppl", Value::f32(s.curve_dense_ppl));
        w.set("powerinfer.curve.tokens", Value::u64(s.curve_tokens));
    }
    if (s.recommended_sparsity >= 0)
        w.set("powerinfer.recommended_sparsity", Value::f32(s.recommended_sparsity));
    if (s.default_sparsity >= 0)
        w.set("powerinfer.default_sparsity", Value::f32(s.default_sparsity));
    if (s.input_default_sparsity >= 0)
        w.set("powerinfer.input_default_sparsity", Value::f32(s.input_default_sparsity));
    const uint64_t n_embd = static_cast<uint64_t>(s.n_embd), n_ff = static_cast<uint64_t>(s.n_ff);
    for (size_t i = 0; i < s.layers.size(); ++i) {
        const LayerStats& l = s.layers[i];
        const int64_t li = static_cast<int64_t>(i);
        const uint64_t r = static_cast<uint64_t>(l.predictor.rank);
        w.add_tensor(layer_key(li, "act_freq"), GgmlType::F32, {n_ff}, as_bytes(l.act_freq));
        w.add_tensor(layer_key(li, "act_mass"), GgmlType::F32, {n_ff}, as_bytes(l.act_mass));
        w.add_tensor(layer_key(li, "perm"), GgmlType::I32, {n_ff}, as_bytes(l.perm));
        if (!l.up_scale.empty())
            w.add_tensor(layer_key(li, "up_scale"), GgmlType::F32, {n_ff}, as_bytes(l.up_scale));
        if (r == 0) continue;  // no predictor
        w.add_tensor(layer_key(li, "pred_w1"), l.predictor.type, {n_embd, r}, l.predictor.w1);
        w.add_tensor(layer_key(li, "pred_b1"), GgmlType::F32, {r}, as_bytes(l.predictor.b1));
        w.add_tensor(layer_key(li, "pred_w2"), l.predictor.type, {r, n_ff}, l.predictor.w2);
        w.add_tensor(layer_key(li, "pred_b2"), GgmlType::F32, {n_ff}, as_bytes(l.predictor.b2));
    }
    if (!s.head_basis.empty())
        w.add_tensor(kHeadBasisTensor, GgmlType::F32,
                     {static_cast<uint64_t>(s.head_basis.n_embd),
                      static_cast<uint64_t>(s.head_basis.rank)},
                     as_bytes(s.head_basis.rows));
    if (!s.head_basis.empty() && s.head_preview.rows > 0) {
        const tensor::U4Rows& p = s.head_preview;
        const auto rows = static_cast<uint64_t>(p.rows);
        w.add_tensor(kHeadPreviewTensor, GgmlType::I8, {p.row_bytes(), rows},
                     std::vector<uint8_t>(p.q.begin(), p.q.end()));
        w.add_tensor(kHeadPreviewScaleTensor, GgmlType::F32, {rows}, as_bytes(p.d));
        w.add_tensor(kHeadPreviewMinTensor, GgmlType::F32, {rows}, as_bytes(p.m));
    }
    w.write(path);
}

Sidecar read_sidecar(const std::filesystem::path& path, const std::string& expected_hash,
                     bool head_preview) {
    if (!std::filesystem::exists(path)) refuse(path, "not found");
    std::unique_ptr<gguf::GgufFile> f;
    try {
        f = gguf::GgufFile::open(path);
    } catch (const EngineError& e) {
        refuse(path, std::string("unreadable (") + e.what() + ")");
    }
    if (f->get_string("general.architecture").value_or("") != "powerinfer-sidecar") {
        refuse(path, "not a PowerInfer sidecar");
    }
    if (f->get_int("powerinfer.format_version").value_or(0) != kSidecarFormatVersion) {
        refuse(path, "written by an incompatible version of powerinfer-calibrate");
    }
    Sidecar s;
    s.model_hash = f->get_string("powerinfer.model_hash").value_or("");
    if (!expected_hash.empty() && s.model_hash != expected_hash) {
        refuse(path, "made for another model file (hash " + s.model_hash + ", model " +
                         expected_hash + ")");
    }
    s.model_bytes = static_cast<uint64_t>(f->get_int("powerinfer.model_bytes").value_or(0));
    s.tool_version = f->get_string("powerinfer.tool_version").value_or("");
    const std::string act = f->get_string("powerinfer.activation").value_or("");
    bool known = false;
    for (auto a : {backend::GateActivation::SiLU, backend::GateActivation::GeluTanh,
                   backend::GateActivation::ReLU})
        if (act == backend::gate_activation_name(a)) {
            s.activation = a;
            known = true;
        }
    if (!known) refuse(path, "unknown activation '" + act + "'");
    s.n_layer = f->get_int("powerinfer.n_layer").value_or(0);
    s.n_embd = f->get_int("powerinfer.n_embd").value_or(0);
    s.n_ff = f->get_int("powerinfer.n_ff").value_or(0);
    s.target_sparsity = static_cast<float>(f->get_float("powerinfer.target_sparsity").value_or(0));
    s.calib_tokens = static_cast<uint64_t>(f->get_int("powerinfer.calib_tokens").value_or(0));
    s.synthetic = f->get_bool("powerinfer.synthetic").value_or(false);
    s.zipf_s = static_cast<float>(f->get_float("powerinfer.zipf_s").value_or(0));
    if (s.n_layer <= 0 || s.n_layer > 4096 || s.n_embd <= 0 || s.n_ff <= 0) {
        refuse(path, "invalid layer dimensions");
    }
    const auto thr = f->get_float_array("powerinfer.threshold");
    const auto rec = f->get_float_array("powerinfer.recall");
    const auto prec = f->get_float_array("powerinfer.precision");
    const auto ranks = f->get_int_array("powerinfer.rank");
    const size_t nl = static_cast<size_t>(s.n_layer);
    if (thr.size() != nl || rec.size() != nl || prec.size() != nl || ranks.size() != nl) {
        refuse(path, "per-layer arrays do not match n_layer");
    }
    const auto in_levels = f->get_float_array("powerinfer.input_levels");
    if (!in_levels.empty()) {
        const auto all = f->get_float_array("powerinfer.input_thresholds");
        const size_t L = in_levels.size();
        if (all.empty() || all.size() % L != 0)
            refuse(path, "input thresholds do not match their levels");
        for (size_t k = 0; k < L; ++k)
            if (!std::isfinite(in_levels[k]) || in_levels[k] < 0 || in_levels[k] > 1 ||
                (k > 0 && in_levels[k] <= in_levels[k - 1]))
                refuse(path, "input levels are not ascending fractions");
        for (size_t p = 0; p < all.size() / L; ++p) {
            std::vector<float> t(all.begin() + static_cast<std::ptrdiff_t>(p * L),
                                 all.begin() + static_cast<std::ptrdiff_t>((p + 1) * L));
            for (size_t k = 0; k < L; ++k)
                if (!std::isfinite(t[k]) || t[k] < 0 || (k > 0 && t[k] < t[k - 1]))
                    refuse(path, "input thresholds are invalid");
            s.input_thresholds.push_back(std::move(t));
        }
        s.input_levels.assign(in_levels.begin(), in_levels.end());
    }
    const auto levels = f->get_float_array("powerinfer.exact_levels");
    if (!levels.empty()) {
        const auto all = f->get_float_array("powerinfer.exact_thresholds");
        const auto bounds = f->get_float_array("powerinfer.up_bound");
        if (all.size() != nl * levels.size() || bounds.size() != nl)
            refuse(path, "exact-activity arrays do not match n_layer");
        for (size_t k = 0; k < levels.size(); ++k)
            if (!std::isfinite(levels[k]) || levels[k] < 0 || levels[k] > 1 ||
                (k > 0 && levels[k] <= levels[k - 1]))
                refuse(path, "exact-activity levels are not ascending fractions");
        for (float v : all)
            if (!std::isfinite(v) || v < 0) refuse(path, "exact-activity thresholds are invalid");
        for (float v : bounds)
            if (!std::isfinite(v) || v < 0) refuse(path, "up bounds are invalid");
        s.exact_levels.assign(levels.begin(), levels.end());
        s.layers.resize(nl);
        for (size_t i = 0; i < nl; ++i) {
            s.layers[i].exact_thresholds.assign(
                all.begin() + static_cast<std::ptrdiff_t>(i * levels.size()),
                all.begin() + static_cast<std::ptrdiff_t>((i + 1) * levels.size()));
            s.layers[i].up_bound = bounds[i];
        }
    }
    {
        // The measured curve: five arrays of one length, levels ascending
        // (and the decode speeds, where timed, and the bytes read, where
        // counted: a sixth and a seventh).
        const auto lv = f->get_float_array("powerinfer.curve.level");
        const auto sp = f->get_float_array("powerinfer.curve.speed");
        const auto by = f->get_float_array("powerinfer.curve.bytes");
        const auto dl = f->get_float_array("powerinfer.curve.delivered");
        const auto pr = f->get_float_array("powerinfer.curve.ppl_rise");
        const auto kl = f->get_float_array("powerinfer.curve.mean_kl");
        const auto t1 = f->get_float_array("powerinfer.curve.top1");
        if (dl.size() != lv.size() || pr.size() != lv.size() || kl.size() != lv.size() ||
            t1.size() != lv.size() || (!sp.empty() && sp.size() != lv.size()) ||
            (!by.empty() && by.size() != lv.size()))
            refuse(path, "sparsity-curve arrays differ in length");
        for (size_t k = 0; k < lv.size(); ++k) {
            const bool ok = std::isfinite(lv[k]) && lv[k] >= 0 && lv[k] < 1 &&
                            (k == 0 || lv[k] > lv[k - 1]) && std::isfinite(dl[k]) &&
                            std::isfinite(pr[k]) && pr[k] > -1 && std::isfinite(kl[k]) &&
                            std::isfinite(t1[k]) && t1[k] >= 0 && t1[k] <= 1 &&
                            (sp.empty() || (std::isfinite(sp[k]) && sp[k] >= 0)) &&
                            (by.empty() || (std::isfinite(by[k]) && by[k] >= 0));
            if (!ok) refuse(path, "the sparsity curve is invalid");
            s.curve.push_back({lv[k], dl[k], pr[k], kl[k], t1[k], sp.empty() ? 0.0f : sp[k],
                               by.empty() ? 0.0f : by[k]});
        }
        s.curve_bound = static_cast<float>(f->get_float("powerinfer.curve.bound").value_or(0));
        s.curve_dense_ppl =
            static_cast<float>(f->get_float("powerinfer.curve.dense_ppl").value_or(0));
        s.curve_tokens = static_cast<uint64_t>(f->get_int("powerinfer.curve.tokens").value_or(0));
        for (auto [key, dst] :
             {std::pair{"powerinfer.recommended_sparsity", &s.recommended_sparsity},
              std::pair{"powerinfer.default_sparsity", &s.default_sparsity},
              std::pair{"powerinfer.input_default_sparsity", &s.input_default_sparsity}}) {
            const auto v = f->get_float(key);
            if (!v) continue;
            if (!std::isfinite(*v) || *v < 0 || *v >= 1)
                refuse(path, std::string(key) + " is not a fraction in [0, 1)");
            *dst = static_cast<float>(*v);
        }
    }
    auto tensor = [&](int64_t l, const char* what, std::vector<uint64_t> shape,
                      bool float_weights) -> const gguf::TensorInfo& {
        const auto* t = f->tensor(layer_key(l, what));
        if (!t) refuse(path, "missing tensor " + layer_key(l, what));
        if (t->shape != shape) refuse(path, "tensor " + layer_key(l, what) + " has a wrong shape");
        if (float_weights
                ? (t->type != GgmlType::F32 && t->type != GgmlType::F16)
                : (t->type != (std::string(what) == "perm" ? GgmlType::I32 : GgmlType::F32))) {
            refuse(path, "tensor " + layer_key(l, what) + " has a wrong type");
        }
        return *t;
    };
    auto floats = [&](const gguf::TensorInfo& t) {
        std::vector<float> v(static_cast<size_t>(t.n_elements));
        std::memcpy(v.data(), t.data, v.size() * 4);
        for (float x : v) {
            if (!std::isfinite(x)) refuse(path, "tensor " + t.name + " holds non-finite values");
        }
        return v;
    };
    const uint64_t n_embd = static_cast<uint64_t>(s.n_embd), n_ff = static_cast<uint64_t>(s.n_ff);
    s.layers.resize(nl);
    for (size_t i = 0; i < nl; ++i) {
        const int64_t l = static_cast<int64_t>(i);
        LayerStats& ls = s.layers[i];
        ls.threshold = thr[i];
        ls.recall = rec[i];
        ls.precision = prec[i];
        ls.act_freq = floats(tensor(l, "act_freq", {n_ff}, false));
        ls.act_mass = floats(tensor(l, "act_mass", {n_ff}, false));
        const auto& tp = tensor(l, "perm", {n_ff}, false);
        ls.perm.resize(static_cast<size_t>(n_ff));
        std::memcpy(ls.perm.data(), tp.data, ls.perm.size() * 4);
        std::vector<char> seen(static_cast<size_t>(n_ff), 0);
        for (int32_t p : ls.perm) {
            if (p < 0 || static_cast<uint64_t>(p) >= n_ff || seen[static_cast<size_t>(p)]) {
                refuse(path, "layer " + std::to_string(l) + " permutation is invalid");
            }
            seen[static_cast<size_t>(p)] = 1;
        }
        if (f->tensor(layer_key(l, "up_scale"))) {
            ls.up_scale = floats(tensor(l, "up_scale", {n_ff}, false));
            for (float v : ls.up_scale)
                if (v < 0) refuse(path, "tensor " + layer_key(l, "up_scale") + " is negative");
        }
        const int64_t r = ranks[i];
        if (r < 0 || r > s.n_embd * 4) refuse(path, "invalid predictor rank");
        if (r == 0) continue;  // calibrated without predictors (CPU exact activity only)
        LayerPredictor& p = ls.predictor;
        p.rank = r;
        const auto& w1 = tensor(l, "pred_w1", {n_embd, static_cast<uint64_t>(r)}, true);
        const auto& w2 = tensor(l, "pred_w2", {static_cast<uint64_t>(r), n_ff}, true);
        if (w1.type != w2.type) refuse(path, "predictor weight types differ");
        p.type = w1.type;
        p.w1.assign(w1.data, w1.data + w1.n_bytes);
        p.w2.assign(w2.data, w2.data + w2.n_bytes);
        p.b1 = floats(tensor(l, "pred_b1", {static_cast<uint64_t>(r)}, false));
        p.b2 = floats(tensor(l, "pred_b2", {n_ff}, false));
    }
    if (const auto* t = f->tensor(kHeadBasisTensor)) {
        // rank orthonormal rows of n_embd, whole Q8_0 blocks.
        if (t->type != GgmlType::F32 || t->shape.size() != 2 || t->shape[0] != n_embd ||
            t->shape[1] == 0 || t->shape[1] > n_embd || t->shape[1] % 32 != 0)
            refuse(path, std::string("tensor ") + kHeadBasisTensor + " has a wrong shape or type");
        s.head_basis.n_embd = s.n_embd;
        s.head_basis.rank = static_cast<int64_t>(t->shape[1]);
        s.head_basis.rows = floats(*t);
    }
    if (const auto* t = head_preview ? f->tensor(kHeadPreviewTensor) : nullptr) {
        // n_vocab 4-bit rows of the basis's rank, with a scale and a
        // minimum each (whether n_vocab is the head's, the engine checks).
        const auto* d = f->tensor(kHeadPreviewScaleTensor);
        const auto* m = f->tensor(kHeadPreviewMinTensor);
        const int64_t cols = tensor::u4_padded_cols(s.head_basis.rank);
        if (s.head_basis.empty() || t->type != GgmlType::I8 || t->shape.size() != 2 ||
            t->shape[0] != static_cast<uint64_t>(cols / 2) || t->shape[1] == 0 || !d || !m ||
            d->type != GgmlType::F32 || m->type != GgmlType::F32 ||
            d->shape != std::vector<uint64_t>{t->shape[1]} || m->shape != d->shape)
            refuse(path, std::string("tensor ") + kHeadPreviewTensor +
                             " has a wrong shape or type, or lacks its basis, scales or minima");
        tensor::U4Rows& p = s.head_preview;
        p.rows = static_cast<int64_t>(t->shape[1]);
        p.cols = cols;
        p.q.assign(t->data, t->data + t->n_bytes);
        p.d = floats(*d);
        p.m = floats(*m);
    }
    return s;
}

int64_t sidecar_predictor_bytes(const std::filesystem::path& path) {
    try {
        const auto f = gguf::GgufFile::open(path);
        int64_t bytes = 0;
        for (const auto& t : f->tensors()) {
            const std::string_view name = t.name;
            const size_t dot = name.rfind('.');
            const std::string_view leaf =
                dot == std::string_view::npos ? name : name.substr(dot + 1);
            if (name.rfind("blk.", 0) == 0 &&
                (leaf == "pred_w1" || leaf == "pred_b1" || leaf == "pred_w2" || leaf == "pred_b2"))
                bytes += static_cast<int64_t>(t.n_bytes);
        }
        return bytes;
    } catch (const std::exception&) {
        return -1;
    }
}

}  // namespace powerinfer::sparse
