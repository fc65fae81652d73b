#include "tensor/sparse_down.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/quad_pack.h"
#include "tensor/quant_blocks.h"

namespace powerinfer::tensor {

namespace {

using namespace blocks;

constexpr int64_t kGroup = 32;         // neurons per scale group (the block size along a row)

// The 32-element 4-bit formats: a = d, c from the block (`offset`).
template <typename Block, typename Offset>
void four_bit(const Block* b, int64_t n, uint8_t* q, float* a, float* c, Offset offset) {
    for (int64_t g = 0; g < n / kQK; ++g) {
        a[g] = fp16_to_fp32_portable(b[g].d);
        c[g] = offset(b[g], a[g]);
        for (int k = 0; k < kQK / 2; ++k) {
            q[g * kQK + k] = b[g].qs[k] & 0x0F;
            q[g * kQK + k + kQK / 2] = b[g].qs[k] >> 4;
        }
    }
}

// Decodes row `row` of the down matrix into q and per-block (a, c).
void decode_row(const WeightView& w, int64_t row, uint8_t* q, float* a, float* c) {
    const uint8_t* p = w.row(row);
    const int64_t n = w.cols;
    switch (w.type) {
        case GgmlType::Q4_0:
            // (q - 8) d == q d - 8 d exactly (both terms are exact).
            return four_bit(reinterpret_cast<const BlockQ4_0*>(p), n, q, a, c,
                            [](const BlockQ4_0&, float d) { return -8.0f * d; });
        case GgmlType::Q4_1:
            return four_bit(reinterpret_cast<const BlockQ4_1*>(p), n, q, a, c,
                            [](const BlockQ4_1& b, float) { return fp16_to_fp32_portable(b.m); });
        case GgmlType::Q4_K: {
            const auto* b = reinterpret_cast<const BlockQ4_K*>(p);
            for (int64_t s = 0; s < n / kQKK; ++s) {
                const float d = fp16_to_fp32_portable(b[s].d);
                const float dmin = fp16_to_fp32_portable(b[s].dmin);
                const uint8_t* qs = b[s].qs;
                for (int j = 0; j < kQKK / 64; ++j, qs += 32) {
                    uint8_t sc0, m0, sc1, m1;
                    scale_min_k4(2 * j, b[s].scales, &sc0, &m0);
                    scale_min_k4(2 * j + 1, b[s].scales, &sc1, &m1);
                    const int64_t g0 = s * 8 + 2 * j;
                    a[g0] = d * sc0;
                    c[g0] = -(dmin * m0);
                    a[g0 + 1] = d * sc1;
                    c[g0 + 1] = -(dmin * m1);
                    for (int l = 0; l < 32; ++l) {
                        q[g0 * kQK + l] = qs[l] & 0x0F;
                        q[(g0 + 1) * kQK + l] = qs[l] >> 4;
                    }
                }
            }
            return;
        }
        default:
            throw EngineError("neuron-major down: type " + std::string(ggml_type_name(w.type)) +
                              " is not supported");
    }
}

}  // namespace

bool neuron_major_supported(const WeightView& down) {
    const bool type_ok =
        down.type == GgmlType::Q4_0 || down.type == GgmlType::Q4_1 || down.type == GgmlType::Q4_K;
    return type_ok && down.rows > 0 && down.rows % 32 == 0 && down.rows <= kMaxNeuronMajorOut &&
           down.cols % kGroup == 0;
}

NeuronMajorDown make_neuron_major_down(const WeightView& down) {
    if (!neuron_major_supported(down))
        throw EngineError("neuron-major down: a " + std::string(ggml_type_name(down.type)) + " " +
                          std::to_string(down.rows) + " x " + std::to_string(down.cols) +
                          " matrix is not supported (Q4_0/Q4_1/Q4_K, rows a multiple of 32, "
                          "at most 16384)");
    NeuronMajorDown m;
    m.n_out = down.rows;
    m.n_ff = down.cols;
    const int64_t groups = m.n_ff / kGroup, col_bytes = m.n_out / 2;
    m.q.assign(static_cast<size_t>(m.n_ff * col_bytes), 0);
    m.a.resize(static_cast<size_t>(groups * m.n_out));
    m.c.resize(static_cast<size_t>(groups * m.n_out));
    std::vector<uint8_t> q(static_cast<size_t>(m.n_ff));
    std::vector<float> a(static_cast<size_t>(groups)), c(static_cast<size_t>(groups));
    for (int64_t j = 0; j < m.n_out; ++j) {
        decode_row(down, j, q.data(), a.data(), c.data());
        for (int64_t g = 0; g < groups; ++g) {
            m.a[static_cast<size_t>(g * m.n_out + scale_pos(j))] = a[static_cast<size_t>(g)];
            m.c[static_cast<size_t>(g * m.n_out + scale_pos(j))] = c[static_cast<size_t>(g)];
        }
        // Output j of a column: chunk j / 32, byte j % 16, high nibble when
        // j % 32 >= 16.
        const int64_t byte = (j / 32) * 16 + (j % 16);
        const int shift = (j % 32) >= 16 ? 4 : 0;
        for (int64_t i = 0; i < m.n_ff; ++i)
            m.q[static_cast<size_t>(i * col_bytes + byte)] |=
                static_cast<uint8_t>(q[static_cast<size_t>(i)] << shift);
    }
    // Half the scale bytes where fp16 holds every value exactly (lossless).
    auto exact_f16 = [](const WeightVector<float>& v, WeightVector<uint16_t>& out) {
        out.resize(v.size());
        for (size_t i = 0; i < v.size(); ++i) {
            out[i] = fp32_to_fp16_portable(v[i]);
            if (fp16_to_fp32_portable(out[i]) != v[i]) return false;
        }
        return true;
    };
    if (exact_f16(m.a, m.a16) && exact_f16(m.c, m.c16)) {
        m.a = {};
        m.c = {};
    } else {
        m.a16 = {};
        m.c16 = {};
    }
    return m;
}

size_t neuron_major_down_bytes(const WeightView& down) {
    if (!neuron_major_supported(down)) return 0;
    const int64_t n_out = down.rows, n_ff = down.cols;
    return static_cast<size_t>(n_ff * (n_out / 2) + 2 * (n_ff / kGroup) * n_out * 2);
}

void prepare_sparse_down(const int32_t* ids, const float* h, int64_t count, SparseDownInput& in) {
    in.quad_ids.clear();
    in.quad_qh.clear();
    in.group.clear();
    in.quad_begin.clear();
    in.dh.clear();
    in.hsum.clear();
    in.active = count;
    pack_quads(
        ids, count, kGroup, [&](int64_t k) { return h[k]; }, in.quad_ids, in.quad_qh,
        [&](int32_t g, int32_t first, float dh, int32_t qsum) {
            in.group.push_back(g);
            in.quad_begin.push_back(first);
            in.dh.push_back(dh);
            in.hsum.push_back(dh * static_cast<float>(qsum));
        });
    in.quad_begin.push_back(static_cast<int32_t>(in.quad_qh.size()));
}

void clear_sparse_down(SparseDownInput& in) {
    in.quad_ids.clear();
    in.quad_qh.clear();
    in.group.clear();
    in.quad_begin.assign(1, 0);
    in.dh.clear();
    in.hsum.clear();
    in.active = 0;
}

void append_sparse_down(const SparseDownInput& part, SparseDownInput& into) {
    if (into.quad_begin.empty()) clear_sparse_down(into);
    if (part.quad_begin.empty()) return;  // never prepared: nothing in it
    if (!into.group.empty() && !part.group.empty() && part.group.front() <= into.group.back())
        throw EngineError("sparse_down: appended groups must follow the ones already there");
    const auto offset = static_cast<int32_t>(into.quad_qh.size());
    into.quad_ids.insert(into.quad_ids.end(), part.quad_ids.begin(), part.quad_ids.end());
    into.quad_qh.insert(into.quad_qh.end(), part.quad_qh.begin(), part.quad_qh.end());
    into.group.insert(into.group.end(), part.group.begin(), part.group.end());
    into.dh.insert(into.dh.end(), part.dh.begin(), part.dh.end());
    into.hsum.insert(into.hsum.end(), part.hsum.begin(), part.hsum.end());
    into.quad_begin.pop_back();  // == offset
    for (int32_t b : part.quad_begin) into.quad_begin.push_back(offset + b);
    into.active += part.active;
}

namespace {

kernels::SparseDownArgs args_for(const NeuronMajorDown& w, const SparseDownInput& in) {
    kernels::SparseDownArgs a{};
    a.q = w.q.data();
    a.col_bytes = static_cast<size_t>(w.n_out / 2);
    a.a = w.a16.empty() ? w.a.data() : nullptr;
    a.c = w.a16.empty() ? w.c.data() : nullptr;
    a.a16 = w.a16.empty() ? nullptr : w.a16.data();
    a.c16 = w.a16.empty() ? nullptr : w.c16.data();
    a.n_out = w.n_out;
    a.quad_ids = in.quad_ids.data();
    a.quad_qh = in.quad_qh.data();
    a.group = in.group.data();
    a.quad_begin = in.quad_begin.data();
    a.dh = in.dh.data();
    a.hsum = in.hsum.data();
    a.n_groups = static_cast<int64_t>(in.group.size());
    return a;
}

void check(const NeuronMajorDown& w, const SparseDownInput& in) {
    for (int32_t id : in.quad_ids)
        if (id < 0 || id >= w.n_ff)
            throw EngineError("sparse_down: neuron " + std::to_string(id) + " is outside the " +
                              std::to_string(w.n_ff) + "-neuron layer");
}

}  // namespace

void sparse_down(ThreadPool& pool, const NeuronMajorDown& w, const SparseDownInput& in, float* y) {
    check(w, in);
    const kernels::SparseDownArgs a = args_for(w, in);
    const auto fn = kernels::active_table().sparse_down;
    const int64_t chunks = w.n_out / 32;
    // Work per chunk: 16 bytes per quad neuron plus the group epilogues.
    const size_t bytes = in.quad_ids.size() * static_cast<size_t>(w.n_out / 2);
    if (pool.size() <= 1 || bytes < 32 * 1024) {
        fn(a, 0, chunks, y);
        return;
    }
    pool.parallel_for(chunks, [&](int64_t begin, int64_t end, int) { fn(a, begin, end, y); });
}

void sparse_down_ref(const NeuronMajorDown& w, const SparseDownInput& in, float* y) {
    check(w, in);
    kernels::reference_table().sparse_down(args_for(w, in), 0, w.n_out / 32, y);
}

}  // namespace powerinfer::tensor
