#include "tensor/quant.h"

#include <atomic>
#include <string>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/quant_ref.h"

namespace powerinfer::tensor {

using kernels::KernelTable;

namespace kernels {

int type_index(GgmlType t) {
    switch (t) {
        case GgmlType::F32:
            return kF32;
        case GgmlType::F16:
            return kF16;
        case GgmlType::BF16:
            return kBF16;
        case GgmlType::Q4_0:
            return kQ4_0;
        case GgmlType::Q4_1:
            return kQ4_1;
        case GgmlType::Q5_0:
            return kQ5_0;
        case GgmlType::Q5_1:
            return kQ5_1;
        case GgmlType::Q8_0:
            return kQ8_0;
        case GgmlType::Q4_K:
            return kQ4_K;
        case GgmlType::Q5_K:
            return kQ5_K;
        case GgmlType::Q6_K:
            return kQ6_K;
        default:
            return -1;
    }
}

namespace {

// A level's table with its null entries filled from the level below.
KernelTable merge(const KernelTable& base, const KernelTable* over) {
    KernelTable t = base;
    if (!over) return t;
    t.name = over->name;
    for (int i = 0; i < kNumTypes; ++i) {
        const TypeKernels& o = over->types[i];
        if (o.dequantize) t.types[i].dequantize = o.dequantize;
        // The dot forms come as a set (bit-identical to each other),
        // never mixed across levels.
        if (o.dot) {
            t.types[i].dot = o.dot;
            t.types[i].dot_rows = o.dot_rows;
            t.types[i].dot_gather = o.dot_gather;
            t.types[i].dot_tile = o.dot_tile;
            t.types[i].dot_panel = o.dot_panel;
            t.types[i].to_q8_0 = o.to_q8_0;
            t.types[i].dot_tile_q8 = o.dot_tile_q8;
        }
        if (o.axpy) t.types[i].axpy = o.axpy;
    }
    for (int i = 0; i < kNumActs; ++i)
        if (over->quantize_act[i]) t.quantize_act[i] = over->quantize_act[i];
    if (over->math.swiglu) t.math = over->math;
    if (over->sparse_down) t.sparse_down = over->sparse_down;
    if (over->colsparse) t.colsparse = over->colsparse;
    if (over->u4_rows) t.u4_rows = over->u4_rows;
    return t;
}

struct Levels {
    CpuFeatures cpu;
    KernelTable scalar;
    KernelTable avx2;
    KernelTable avxvnni;
    KernelTable avx512;
    bool have_avx2 = false;
    bool have_avxvnni = false;
    bool have_avx512 = false;
};

const Levels& levels() {
    static const Levels l = [] {
        Levels r;
        r.cpu = detect_cpu_features();
        r.scalar = scalar_table();
        r.avx2 = r.scalar;
        r.avxvnni = r.scalar;
        r.avx512 = r.scalar;
        // Only touch a SIMD file's table once the CPU is known to run it.
        if (r.cpu.avx2 && avx2_table()) {
            r.avx2 = merge(r.scalar, avx2_table());
            r.have_avx2 = true;
            if (r.cpu.avxvnni && avxvnni_table()) {
                r.avxvnni = merge(r.avx2, avxvnni_table());
                r.have_avxvnni = true;
            }
            if (r.cpu.avx512 && avx512_table()) {
                r.avx512 = merge(r.avx2, avx512_table());
                r.have_avx512 = true;
            }
        }
        return r;
    }();
    return l;
}

const KernelTable* best_table() {
    const Levels& l = levels();
    if (l.have_avx512) return &l.avx512;
    if (l.have_avxvnni) return &l.avxvnni;
    if (l.have_avx2) return &l.avx2;
    return &l.scalar;
}

std::atomic<const KernelTable*>& active_ptr() {
    static std::atomic<const KernelTable*> p{best_table()};
    return p;
}

}  // namespace

const KernelTable& active_table() { return *active_ptr().load(std::memory_order_acquire); }
const KernelTable& reference_table() { return levels().scalar; }

}  // namespace kernels

namespace {

int checked_index(GgmlType t) {
    const int i = kernels::type_index(t);
    if (i < 0)
        throw EngineError("tensor type " + std::string(ggml_type_name(t)) +
                          " is not supported by the CPU kernels; use a model quantized as F32, "
                          "F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K or Q6_K");
    return i;
}

void check_length(GgmlType t, int64_t n) {
    const uint32_t block = ggml_traits(t).block_elems;
    if (n < 0 || n % block != 0)
        throw EngineError("row length " + std::to_string(n) + " is not a multiple of the " +
                          std::string(ggml_type_name(t)) + " block size " + std::to_string(block) +
                          "; the model file is malformed");
}

int act_index(GgmlType act) {
    switch (act) {
        case GgmlType::Q8_0:
            return kernels::kActQ8_0;
        case GgmlType::Q8_1:
            return kernels::kActQ8_1;
        case GgmlType::Q8_K:
            return kernels::kActQ8_K;
        default:
            return -1;
    }
}

void check_activations(GgmlType weight_type, int64_t n, const QuantizedVector& x) {
    if (x.type != vec_dot_type(weight_type) || x.n != n)
        throw EngineError("activations were quantized for another weight type or length (" +
                          std::string(ggml_type_name(x.type)) + ", " + std::to_string(x.n) +
                          " elements; need " +
                          std::string(ggml_type_name(vec_dot_type(weight_type))) + ", " +
                          std::to_string(n) + ")");
}

}  // namespace

float fp16_to_fp32(uint16_t h) { return fp16_to_fp32_portable(h); }
uint16_t fp32_to_fp16(float f) { return fp32_to_fp16_portable(f); }
float bf16_to_fp32(uint16_t h) { return bf16_to_fp32_portable(h); }
uint16_t fp32_to_bf16(float f) { return fp32_to_bf16_portable(f); }

void dequantize_row_ref(GgmlType t, const void* src, float* dst, int64_t n) {
    const int i = checked_index(t);
    check_length(t, n);
    kernels::reference_table().types[i].dequantize(src, dst, n);
}

void dequantize_row(GgmlType t, const void* src, float* dst, int64_t n) {
    const int i = checked_index(t);
    check_length(t, n);
    kernels::active_table().types[i].dequantize(src, dst, n);
}

void quantize_row_ref(GgmlType t, const float* src, void* dst, int64_t n) {
    check_length(t, n);
    switch (t) {
        case GgmlType::F32:
            return ref::quantize_f32(src, dst, n);
        case GgmlType::F16:
            return ref::quantize_f16(src, dst, n);
        case GgmlType::BF16:
            return ref::quantize_bf16(src, dst, n);
        case GgmlType::Q4_0:
            return ref::quantize_q4_0(src, dst, n);
        case GgmlType::Q4_1:
            return ref::quantize_q4_1(src, dst, n);
        case GgmlType::Q5_0:
            return ref::quantize_q5_0(src, dst, n);
        case GgmlType::Q5_1:
            return ref::quantize_q5_1(src, dst, n);
        case GgmlType::Q8_0:
            return ref::quantize_q8_0(src, dst, n);
        case GgmlType::Q8_1:
            return ref::quantize_q8_1(src, dst, n);
        case GgmlType::Q4_K:
            return ref::quantize_q4_k(src, dst, n);
        case GgmlType::Q5_K:
            return ref::quantize_q5_k(src, dst, n);
        case GgmlType::Q6_K:
            return ref::quantize_q6_k(src, dst, n);
        case GgmlType::Q8_K:
            return ref::quantize_q8_k(src, dst, n);
        default:
            throw EngineError("cannot quantize to " + std::string(ggml_type_name(t)) +
                              ": no reference quantizer for this type");
    }
}

GgmlType vec_dot_type(GgmlType weight_type) {
    switch (weight_type) {
        case GgmlType::F32:
        case GgmlType::F16:
        case GgmlType::BF16:
            return GgmlType::F32;
        case GgmlType::Q4_0:
        case GgmlType::Q5_0:
        case GgmlType::Q8_0:
            return GgmlType::Q8_0;
        case GgmlType::Q4_1:
        case GgmlType::Q5_1:
            return GgmlType::Q8_1;
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
            return GgmlType::Q8_K;
        default:
            checked_index(weight_type);
            return GgmlType::F32;
    }
}

namespace {
void quantize_activations_with(const kernels::KernelTable& table, GgmlType weight_type,
                               const float* x, int64_t n, QuantizedVector& out) {
    const GgmlType act = vec_dot_type(weight_type);
    check_length(weight_type, n);
    out.type = act;
    out.n = n;
    out.data.resize(*ggml_row_bytes(act, static_cast<uint64_t>(n)));
    if (act == GgmlType::F32) {
        ref::quantize_f32(x, out.data.data(), n);
        return;
    }
    table.quantize_act[act_index(act)](x, out.data.data(), n);
}
}  // namespace

void quantize_activations(GgmlType weight_type, const float* x, int64_t n, QuantizedVector& out) {
    quantize_activations_with(kernels::active_table(), weight_type, x, n, out);
}

void quantize_activations_ref(GgmlType weight_type, const float* x, int64_t n,
                              QuantizedVector& out) {
    quantize_activations_with(kernels::reference_table(), weight_type, x, n, out);
}

float vec_dot_ref(GgmlType weight_type, int64_t n, const void* w_row, const QuantizedVector& x) {
    const int i = checked_index(weight_type);
    check_activations(weight_type, n, x);
    return kernels::reference_table().types[i].dot(n, w_row, x.data.data());
}

float vec_dot(GgmlType weight_type, int64_t n, const void* w_row, const QuantizedVector& x) {
    const int i = checked_index(weight_type);
    check_activations(weight_type, n, x);
    return kernels::active_table().types[i].dot(n, w_row, x.data.data());
}

std::string simd_level() { return kernels::active_table().name; }

bool force_simd_level(const std::string& level) {
    const auto& l = kernels::levels();
    const KernelTable* t = nullptr;
    if (level == "scalar") t = &l.scalar;
    if (level == "avx2" && l.have_avx2) t = &l.avx2;
    if (level == "avxvnni" && l.have_avxvnni) t = &l.avxvnni;
    if (level == "avx512" && l.have_avx512) t = &l.avx512;
    if (!t) return false;
    kernels::active_ptr().store(t, std::memory_order_release);
    return true;
}

std::vector<std::string> available_simd_levels() {
    const auto& l = kernels::levels();
    std::vector<std::string> out{"scalar"};
    if (l.have_avx2) out.emplace_back("avx2");
    if (l.have_avxvnni) out.emplace_back("avxvnni");
    if (l.have_avx512) out.emplace_back("avx512");
    return out;
}

std::string cpu_model() { return kernels::cpu_model_name(); }

}  // namespace powerinfer::tensor
