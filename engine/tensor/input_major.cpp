#include "tensor/input_major.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/input_major_layout.h"
#include "tensor/kernels.h"
#include "tensor/quad_pack.h"
#include "tensor/quant.h"
#include "tensor/quant_blocks.h"
#include "tensor/sparse_down.h"

namespace powerinfer::tensor {

namespace {

using namespace blocks;
using namespace layout;

// The 32 rows of codes of chunk ch (codes[rr * n_in + i]) into the copy's
// column segments of that chunk.
void store_chunk(InputMajorMatrix& m, int64_t ch, const uint8_t* codes);

// One source row decoded: q per input and the row's scales per group (and
// per super-block for the K formats).
struct RowCodes {
    std::vector<uint8_t> q;             // n_in (8-bit: the int8 bits)
    std::vector<uint16_t> a16, c16;     // per group
    std::vector<int8_t> sc, m8;         // per group
    std::vector<uint16_t> d16, dmin16;  // per super-block
};

void decode_row(const WeightView& w, int64_t row, RowCodes& r) {
    const uint8_t* p = w.row(row);
    const int64_t n = w.cols;
    switch (w.type) {
        case GgmlType::Q4_0:
        case GgmlType::Q4_1: {
            const bool q41 = w.type == GgmlType::Q4_1;
            const size_t bs = q41 ? sizeof(BlockQ4_1) : sizeof(BlockQ4_0);
            for (int64_t g = 0; g < n / kQK; ++g) {
                const uint8_t* b = p + g * bs;
                uint16_t d, m = 0;
                std::memcpy(&d, b, 2);
                if (q41) std::memcpy(&m, b + 2, 2);
                const uint8_t* qs = b + (q41 ? 4 : 2);
                r.a16[static_cast<size_t>(g)] = d;
                if (q41) r.c16[static_cast<size_t>(g)] = m;
                for (int k = 0; k < kQK / 2; ++k) {
                    r.q[static_cast<size_t>(g * kQK + k)] = qs[k] & 0x0F;
                    r.q[static_cast<size_t>(g * kQK + k + kQK / 2)] = qs[k] >> 4;
                }
            }
            return;
        }
        case GgmlType::Q5_0: {
            const auto* b = reinterpret_cast<const BlockQ5_0*>(p);
            for (int64_t g = 0; g < n / kQK; ++g) {
                uint32_t qh;
                std::memcpy(&qh, b[g].qh, 4);
                r.a16[static_cast<size_t>(g)] = b[g].d;
                for (int k = 0; k < kQK / 2; ++k) {
                    const uint8_t lo = b[g].qs[k] & 0x0F, hi = b[g].qs[k] >> 4;
                    r.q[static_cast<size_t>(g * kQK + k)] =
                        static_cast<uint8_t>(lo | (((qh >> k) & 1u) << 4));
                    r.q[static_cast<size_t>(g * kQK + k + 16)] =
                        static_cast<uint8_t>(hi | (((qh >> (k + 16)) & 1u) << 4));
                }
            }
            return;
        }
        case GgmlType::Q8_0: {
            const auto* b = reinterpret_cast<const BlockQ8_0*>(p);
            for (int64_t g = 0; g < n / kQK; ++g) {
                r.a16[static_cast<size_t>(g)] = b[g].d;
                std::memcpy(&r.q[static_cast<size_t>(g * kQK)], b[g].qs, kQK);
            }
            return;
        }
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            // As ggml's dequantize_row_q4_K / q5_K: group 2j's codes are the
            // low nibbles of qs[32j..], 2j + 1's the high ones; Q5_K's fifth
            // bits are bit g of qh[l] for group g's element l.
            const bool five = w.type == GgmlType::Q5_K;
            const size_t bs = five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
            for (int64_t s = 0; s < n / kQKK; ++s) {
                const uint8_t* b = p + static_cast<size_t>(s) * bs;
                const uint8_t* scales = b + offsetof(BlockQ4_K, scales);
                const uint8_t* qh = five ? b + offsetof(BlockQ5_K, qh) : nullptr;
                const uint8_t* qs = b + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
                std::memcpy(&r.d16[static_cast<size_t>(s)], b + offsetof(BlockQ4_K, d), 2);
                std::memcpy(&r.dmin16[static_cast<size_t>(s)], b + offsetof(BlockQ4_K, dmin), 2);
                for (int j = 0; j < kQKK / 64; ++j, qs += 32) {
                    uint8_t sc0, m0, sc1, m1;
                    scale_min_k4(2 * j, scales, &sc0, &m0);
                    scale_min_k4(2 * j + 1, scales, &sc1, &m1);
                    const int64_t g0 = s * 8 + 2 * j;
                    r.sc[static_cast<size_t>(g0)] = static_cast<int8_t>(sc0);
                    r.m8[static_cast<size_t>(g0)] = static_cast<int8_t>(m0);
                    r.sc[static_cast<size_t>(g0 + 1)] = static_cast<int8_t>(sc1);
                    r.m8[static_cast<size_t>(g0 + 1)] = static_cast<int8_t>(m1);
                    for (int l = 0; l < 32; ++l) {
                        const int h0 = five ? ((qh[l] >> (2 * j)) & 1) << 4 : 0;
                        const int h1 = five ? ((qh[l] >> (2 * j + 1)) & 1) << 4 : 0;
                        r.q[static_cast<size_t>(g0 * kQK + l)] =
                            static_cast<uint8_t>((qs[l] & 0x0F) | h0);
                        r.q[static_cast<size_t>((g0 + 1) * kQK + l)] =
                            static_cast<uint8_t>((qs[l] >> 4) | h1);
                    }
                }
            }
            return;
        }
        case GgmlType::Q6_K: {
            // As ggml's dequantize_row_q6_K: 16 groups of 16 per super-block.
            const auto* b = reinterpret_cast<const BlockQ6_K*>(p);
            for (int64_t s = 0; s < n / kQKK; ++s) {
                r.d16[static_cast<size_t>(s)] = b[s].d;
                for (int g = 0; g < kQKK / 16; ++g)
                    r.sc[static_cast<size_t>(s * 16 + g)] = b[s].scales[g];
                const uint8_t* ql = b[s].ql;
                const uint8_t* qh = b[s].qh;
                uint8_t* q = &r.q[static_cast<size_t>(s * kQKK)];
                for (int h = 0; h < kQKK; h += 128, ql += 64, qh += 32, q += 128)
                    for (int l = 0; l < 32; ++l) {
                        q[l] = static_cast<uint8_t>((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4));
                        q[l + 32] =
                            static_cast<uint8_t>((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
                        q[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
                        q[l + 96] =
                            static_cast<uint8_t>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
                    }
            }
            return;
        }
        default:
            throw EngineError("input-major copy: type " + std::string(ggml_type_name(w.type)) +
                              " is not supported");
    }
}

kernels::ColSparseArgs args_for(const InputMajorMatrix& w, const SparseInput& in) {
    kernels::ColSparseArgs a{};
    a.q = w.q.data();
    a.n_in = w.n_in;
    a.chunk_bytes = w.chunk_bytes;
    a.bits = w.bits;
    a.offset = w.offset;
    a.n_out = w.n_out;
    a.super_groups = w.super_groups;
    a.a16 = w.a16.empty() ? nullptr : w.a16.data();
    a.c16 = w.c16.empty() ? nullptr : w.c16.data();
    a.sc = w.sc.empty() ? nullptr : w.sc.data();
    a.m8 = w.m8.empty() ? nullptr : w.m8.data();
    a.d16 = w.d16.empty() ? nullptr : w.d16.data();
    a.dmin16 = w.dmin16.empty() ? nullptr : w.dmin16.data();
    a.quad_ids = in.quad_ids.data();
    a.quad_qx = in.quad_qx.data();
    a.groups = in.groups.data();
    a.quad_begin = in.quad_begin.data();
    a.dx = in.dx.data();
    a.qsum = in.qsum.data();
    a.hsum = in.hsum.data();
    a.n_groups = static_cast<int64_t>(in.groups.size());
    return a;
}

void check(const InputMajorMatrix& w, const SparseInput& in) {
    if (in.group != w.group)
        throw EngineError("colsparse_matvec: the input was prepared for groups of " +
                          std::to_string(in.group) + ", the matrix has " + std::to_string(w.group));
    for (int32_t id : in.quad_ids)
        if (id < 0 || id >= w.n_in)
            throw EngineError("colsparse_matvec: input " + std::to_string(id) + " is outside the " +
                              std::to_string(w.n_in) + "-input matrix");
}

}  // namespace

std::string input_major_refusal(const WeightView& w) {
    switch (w.type) {
        case GgmlType::Q4_0:
        case GgmlType::Q4_1:
        case GgmlType::Q5_0:
        case GgmlType::Q8_0:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
            break;
        default:
            return "no input-major form for " + std::string(ggml_type_name(w.type));
    }
    if (w.rows <= 0 || w.rows % 32 != 0)
        return std::to_string(w.rows) + " outputs (not a multiple of 32)";
    return {};
}

bool input_major_supported(const WeightView& w) { return input_major_refusal(w).empty(); }

InputMajorMatrix make_input_major(const WeightView& w, ThreadPool* pool,
                                  std::vector<double>* col_norms2,
                                  const std::function<void(int64_t, int64_t)>& rows_read) {
    if (const std::string why = input_major_refusal(w); !why.empty())
        throw EngineError("input-major copy of a " + std::to_string(w.rows) + " x " +
                          std::to_string(w.cols) + " matrix: " + why);
    InputMajorMatrix m;
    m.source = w.type;
    m.n_out = w.rows;
    m.n_in = w.cols;
    const bool min_format = w.type == GgmlType::Q4_K || w.type == GgmlType::Q5_K;
    const bool k_format = min_format || w.type == GgmlType::Q6_K;
    m.group = w.type == GgmlType::Q6_K ? 16 : 32;
    m.super_groups = k_format ? kQKK / m.group : 0;
    switch (w.type) {
        case GgmlType::Q4_0:
            m.bits = 4, m.offset = 8;
            break;
        case GgmlType::Q4_1:
            m.bits = 4, m.offset = 0;
            break;
        case GgmlType::Q5_0:
            m.bits = 5, m.offset = 16;
            break;
        case GgmlType::Q8_0:
            m.bits = 8, m.offset = 0;
            break;
        case GgmlType::Q4_K:
            m.bits = 4, m.offset = 0;
            break;
        case GgmlType::Q5_K:
            m.bits = 5, m.offset = 0;
            break;
        default:
            m.bits = 6, m.offset = 32;
            break;  // Q6_K
    }
    m.chunk_bytes = m.bits == 4 ? 16 : m.bits == 5 ? 20 : m.bits == 6 ? 24 : 32;
    const int64_t groups = m.n_in / m.group, supers = k_format ? m.n_in / kQKK : 0;
    const size_t gs = static_cast<size_t>(groups * m.n_out),
                 ss = static_cast<size_t>(supers * m.n_out);
    m.q.assign(static_cast<size_t>(m.n_in) * m.col_bytes(), 0);
    if (!k_format) m.a16.resize(gs);
    if (w.type == GgmlType::Q4_1) m.c16.resize(gs);
    if (k_format) {
        m.sc.resize(gs);
        m.d16.resize(ss);
    }
    if (min_format) {
        m.m8.resize(gs);
        m.dmin16.resize(ss);
    }
    // Blocks of 64 chunks (2048 rows): disjoint bytes of the copy, so they
    // build in parallel; the column norms sum per block, then in block order.
    constexpr int64_t kBlockChunks = 64;
    const int64_t n_chunks = m.n_out / 32;
    const int64_t blocks = (n_chunks + kBlockChunks - 1) / kBlockChunks;
    std::vector<double> partial(col_norms2 ? static_cast<size_t>(blocks * m.n_in) : 0, 0.0);
    auto build = [&](int64_t b) {
        RowCodes r;
        r.q.resize(static_cast<size_t>(m.n_in));
        r.a16.resize(static_cast<size_t>(groups));
        r.c16.resize(static_cast<size_t>(groups));
        r.sc.resize(static_cast<size_t>(groups));
        r.m8.resize(static_cast<size_t>(groups));
        r.d16.resize(static_cast<size_t>(std::max<int64_t>(supers, 1)));
        r.dmin16.resize(r.d16.size());
        std::vector<float> row(col_norms2 ? static_cast<size_t>(m.n_in) : 0);
        std::vector<uint8_t> chunk_rows(static_cast<size_t>(32 * m.n_in));
        double* norm = col_norms2 ? partial.data() + b * m.n_in : nullptr;
        const int64_t j1 = std::min(m.n_out, (b + 1) * kBlockChunks * 32);
        for (int64_t j = b * kBlockChunks * 32; j < j1; ++j) {
            decode_row(w, j, r);
            if (norm) {
                dequantize_row(w.type, w.row(j), row.data(), m.n_in);
                for (int64_t i = 0; i < m.n_in; ++i)
                    norm[i] += double(row[static_cast<size_t>(i)]) * row[static_cast<size_t>(i)];
            }
            const size_t pos = static_cast<size_t>(scale_pos(j));
            for (int64_t g = 0; g < groups; ++g) {
                const size_t at = static_cast<size_t>(g * m.n_out) + pos;
                if (!m.a16.empty()) m.a16[at] = r.a16[static_cast<size_t>(g)];
                if (!m.c16.empty()) m.c16[at] = r.c16[static_cast<size_t>(g)];
                if (!m.sc.empty()) m.sc[at] = r.sc[static_cast<size_t>(g)];
                if (!m.m8.empty()) m.m8[at] = r.m8[static_cast<size_t>(g)];
            }
            for (int64_t s = 0; s < supers; ++s) {
                const size_t at = static_cast<size_t>(s * m.n_out) + pos;
                m.d16[at] = r.d16[static_cast<size_t>(s)];
                if (!m.dmin16.empty()) m.dmin16[at] = r.dmin16[static_cast<size_t>(s)];
            }
            // A chunk's 32 rows of codes, then its column segments at once
            // (a byte at a time into every segment was a cache miss per
            // weight: the build took 10 s per GB).
            std::memcpy(chunk_rows.data() + (j % 32) * m.n_in, r.q.data(),
                        static_cast<size_t>(m.n_in));
            if (j % 32 == 31) store_chunk(m, j / 32, chunk_rows.data());
        }
        if (rows_read) rows_read(b * kBlockChunks * 32, j1);
    };
    if (pool && pool->size() > 1)
        pool->parallel_for(blocks, [&](int64_t b0, int64_t b1, int) {
            for (int64_t b = b0; b < b1; ++b) build(b);
        });
    else
        for (int64_t b = 0; b < blocks; ++b) build(b);
    if (col_norms2) {
        col_norms2->resize(static_cast<size_t>(m.n_in), 0.0);
        for (int64_t b = 0; b < blocks; ++b)
            for (int64_t i = 0; i < m.n_in; ++i)
                (*col_norms2)[static_cast<size_t>(i)] +=
                    partial[static_cast<size_t>(b * m.n_in + i)];
    }
    return m;
}

namespace {

// The scales of group g at kernel position pos, as the kernels compute them.
float scale_a(const kernels::ColSparseArgs& A, int64_t g, int64_t pos) {
    const size_t at = static_cast<size_t>(g * A.n_out + pos);
    if (A.a16) return fp16_to_fp32_portable(A.a16[at]);
    const size_t st = static_cast<size_t>((g / A.super_groups) * A.n_out + pos);
    return static_cast<float>(A.sc[at]) * fp16_to_fp32_portable(A.d16[st]);
}
// The additive term, and whether there is one.
bool scale_c(const kernels::ColSparseArgs& A, int64_t g, int64_t pos, float& c) {
    const size_t at = static_cast<size_t>(g * A.n_out + pos);
    if (A.c16) {
        c = fp16_to_fp32_portable(A.c16[at]);
        return true;
    }
    if (A.m8) {
        const size_t st = static_cast<size_t>((g / A.super_groups) * A.n_out + pos);
        c = -(static_cast<float>(A.m8[at]) * fp16_to_fp32_portable(A.dmin16[st]));
        return true;
    }
    return false;
}

}  // namespace

float input_major_weight(const InputMajorMatrix& m, int64_t j, int64_t i) {
    SparseInput none;
    none.group = m.group;
    const kernels::ColSparseArgs A = args_for(m, none);
    const int64_t g = i / m.group, pos = scale_pos(j);
    const int q = column_q(m.q.data(), m.n_in, m.n_out, m.chunk_bytes, m.bits, j, i) - m.offset;
    float c = 0;
    const bool has_c = scale_c(A, g, pos, c);
    // As the file's dequantization: d * q (+ m), or for the K formats
    // (d * sc) * q - dmin * m.
    const float v = scale_a(A, g, pos) * static_cast<float>(q);
    return has_c ? v + c : v;
}

namespace {

void store_chunk(InputMajorMatrix& m, int64_t ch, const uint8_t* codes) {
    const int64_t n_in = m.n_in, n_chunks = m.n_out / 32;
    const size_t cb = m.chunk_bytes;
    uint8_t* seg = m.q.data() + code_offset(n_in, n_chunks, cb, ch, 0);
    // Consecutive inputs' segments of a chunk lie one tile row apart.
    const size_t step = segment_step(n_chunks, cb, ch);
#if defined(__SSE2__)
    const __m128i low4 = _mm_set1_epi8(0x0F);
    for (int64_t i0 = 0; i0 < n_in; i0 += 16) {
        __m128i a[16], b[16];  // outputs 0-15 and 16-31 of inputs i0.., then transposed
        for (int k = 0; k < 16; ++k) {
            a[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + k * n_in + i0));
            b[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + (16 + k) * n_in + i0));
        }
        transpose16(a);
        transpose16(b);
        for (int k = 0; k < 16; ++k) {
            uint8_t* p = seg + static_cast<size_t>(i0 + k) * step;
            if (m.bits == 8) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(p), a[k]);
                _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16), b[k]);
                continue;
            }
            _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                             _mm_or_si128(_mm_and_si128(a[k], low4),
                                          _mm_slli_epi16(_mm_and_si128(b[k], low4), 4)));
            // Bit 4 (and 5) of each code to the top of its byte: one mask per plane.
            uint32_t hi[2] = {};
            for (int plane = 0; plane < m.bits - 4; ++plane) {
                const __m128i s = _mm_cvtsi32_si128(3 - plane);
                hi[plane] = static_cast<uint32_t>(_mm_movemask_epi8(_mm_sll_epi16(a[k], s))) |
                            static_cast<uint32_t>(_mm_movemask_epi8(_mm_sll_epi16(b[k], s))) << 16;
            }
            if (m.bits > 4) pack_high_bits(m.bits, hi, p + 16);
        }
    }
#else
    for (int64_t i = 0; i < n_in; ++i) {
        uint8_t* c = seg + static_cast<size_t>(i) * step;
        std::memset(c, 0, cb);
        uint32_t hi[2] = {};
        for (int rr = 0; rr < 32; ++rr) {
            const uint8_t v = codes[rr * n_in + i];
            if (m.bits == 8) {
                c[rr] = v;
                continue;
            }
            c[rr % 16] |= static_cast<uint8_t>((v & 0x0F) << (rr >= 16 ? 4 : 0));
            for (int plane = 0; plane < m.bits - 4; ++plane)
                hi[plane] |= static_cast<uint32_t>((v >> (4 + plane)) & 1) << rr;
        }
        if (m.bits > 4) pack_high_bits(m.bits, hi, c + 16);
    }
#endif
}

}  // namespace

void prepare_sparse_input(const int32_t* ids, int64_t count, const float* x, int64_t group,
                          SparseInput& in) {
    in.group = group;
    in.quad_ids.clear();
    in.quad_qx.clear();
    in.groups.clear();
    in.quad_begin.clear();
    in.dx.clear();
    in.qsum.clear();
    in.hsum.clear();
    in.kept = count;
    pack_quads(
        ids, count, group, [&](int64_t k) { return x[ids[k]]; }, in.quad_ids, in.quad_qx,
        [&](int32_t g, int32_t first, float d, int32_t qsum) {
            in.groups.push_back(g);
            in.quad_begin.push_back(first);
            in.dx.push_back(d);
            in.qsum.push_back(qsum);
            in.hsum.push_back(d * static_cast<float>(qsum));
        });
    in.quad_begin.push_back(static_cast<int32_t>(in.quad_qx.size()));
}

namespace {

// Matrices of up to one tile of outputs (every layer matrix; not a large
// vocabulary's head) are cut by their used groups instead of by outputs:
// kInputParts fixed parts (by the input, never by the thread count), each
// over every output into its own buffer, summed in part order. A worker then
// reads whole column segments, one contiguous run of the tile per pass; cut
// by outputs, each of two workers read every other half-segment, and the
// products of 7B-shaped Q4_0 layers ran 10-20 % slower at 2 threads
// (docs/benchmarks.md, ninth session). The head is cut by outputs: its
// parts would be kInputParts copies of a vocabulary's outputs.
constexpr int64_t kInputParts = 4;
constexpr int64_t kNarrowOutputs = kInputTileChunks * 32;

bool narrow(const InputMajorMatrix& w, const SparseInput& in) {
    return w.n_out <= kNarrowOutputs && static_cast<int64_t>(in.groups.size()) >= 2 * kInputParts;
}

// All products in one pool dispatch (null pool: in order on this thread).
void run_colsparse(ThreadPool* pool, std::span<const InputMajorMatrix* const> ws,
                   std::span<const SparseInput* const> ins, std::span<float* const> ys,
                   kernels::ColSparseFn fn) {
    struct Item {
        kernels::ColSparseArgs a;
        int64_t c0, c1;
        float* y;
    };
    thread_local std::vector<Item> items;
    thread_local std::vector<float> parts;
    items.clear();
    size_t part_floats = 0;
    for (size_t k = 0; k < ws.size(); ++k) {
        check(*ws[k], *ins[k]);
        if (narrow(*ws[k], *ins[k])) part_floats += static_cast<size_t>(kInputParts * ws[k]->n_out);
    }
    parts.resize(part_floats);
    float* part = parts.data();  // the caller's (the workers have their own thread_local)
    // One run of outputs per thread: every run starts its column streams
    // cold, and halving them cost 15-25 % on 7B-shaped Q4_0 matrices
    // (docs/benchmarks.md, eighth session).
    const int64_t pieces = pool ? pool->size() : 1;
    for (size_t k = 0; k < ws.size(); ++k) {
        const InputMajorMatrix& w = *ws[k];
        const SparseInput& in = *ins[k];
        const kernels::ColSparseArgs a = args_for(w, in);
        const int64_t chunks = w.n_out / 32;
        if (narrow(w, in)) {
            // Parts of about equal kept inputs (groups differ in how many
            // they keep): a part ends at the first group past its share.
            const auto n_groups = static_cast<int64_t>(in.groups.size());
            const int32_t* qb = in.quad_begin.data();
            const int64_t q0 = qb[0], quads = qb[n_groups] - q0;
            auto part_start = [&](int64_t p) {
                const int64_t target = q0 + quads * p / kInputParts;
                return static_cast<int64_t>(std::lower_bound(qb, qb + n_groups, target) - qb);
            };
            for (int64_t p = 0; p < kInputParts; ++p) {
                const int64_t g0 = part_start(p),
                              g1 = p + 1 < kInputParts ? part_start(p + 1) : n_groups;
                kernels::ColSparseArgs ap = a;
                ap.groups += g0;
                ap.quad_begin += g0;
                ap.dx += g0;
                ap.qsum += g0;
                ap.hsum += g0;
                ap.n_groups = g1 - g0;
                items.push_back({ap, 0, chunks, part + p * w.n_out});
            }
            part += kInputParts * w.n_out;
            continue;
        }
        // Each worker a run of chunks: its part of every kept column's
        // segment in a tile, front to back (how outputs are cut does not
        // change their sums).
        const int64_t n = std::min(pieces, chunks);
        for (int64_t p = 0; p < n; ++p)
            items.push_back({a, chunks * p / n, chunks * (p + 1) / n, ys[k]});
    }
    Item* const list = items.data();
    if (pool && pool->size() > 1 && items.size() > 1)
        pool->parallel_for(static_cast<int64_t>(items.size()), [&](int64_t b, int64_t e, int) {
            for (int64_t i = b; i < e; ++i) fn(list[i].a, list[i].c0, list[i].c1, list[i].y);
        });
    else
        for (const Item& it : items) fn(it.a, it.c0, it.c1, it.y);
    part = parts.data();
    for (size_t k = 0; k < ws.size(); ++k) {
        if (!narrow(*ws[k], *ins[k])) continue;
        const int64_t n_out = ws[k]->n_out;
        float* y = ys[k];
        int64_t j = 0;
#if defined(__SSE2__)
        // Four outputs at a time (the caller's thread sums while the others
        // wait): the same adds in the same order.
        for (; j + 4 <= n_out; j += 4) {
            __m128 v = _mm_loadu_ps(part + j);
            for (int64_t p = 1; p < kInputParts; ++p)
                v = _mm_add_ps(v, _mm_loadu_ps(part + p * n_out + j));
            _mm_storeu_ps(y + j, v);
        }
#endif
        for (; j < n_out; ++j) {
            float v = part[j];
            for (int64_t p = 1; p < kInputParts; ++p) v += part[p * n_out + j];
            y[j] = v;
        }
        part += kInputParts * n_out;
    }
}

}  // namespace

void colsparse_matvec(ThreadPool& pool, const InputMajorMatrix& w, const SparseInput& in,
                      float* y) {
    const InputMajorMatrix* ws[1] = {&w};
    const SparseInput* ins[1] = {&in};
    float* ys[1] = {y};
    run_colsparse(&pool, ws, ins, ys, kernels::active_table().colsparse);
}

void colsparse_matvec_many(ThreadPool& pool, std::span<const InputMajorMatrix* const> ws,
                           std::span<const SparseInput* const> ins, std::span<float* const> ys) {
    if (ws.size() != ins.size() || ws.size() != ys.size())
        throw EngineError("colsparse_matvec_many: as many inputs and outputs as matrices");
    run_colsparse(&pool, ws, ins, ys, kernels::active_table().colsparse);
}

void colsparse_matvec_ref(const InputMajorMatrix& w, const SparseInput& in, float* y) {
    const InputMajorMatrix* ws[1] = {&w};
    const SparseInput* ins[1] = {&in};
    float* ys[1] = {y};
    run_colsparse(nullptr, ws, ins, ys, kernels::reference_table().colsparse);
}

namespace kernels {

// Per output: each used group's integer sum, less its offset, then the
// fused multiply-adds the SIMD forms use, in group order.
void colsparse_scalar(const ColSparseArgs& A, int64_t c0, int64_t c1, float* y) {
    for (int64_t j = 32 * c0; j < 32 * c1; ++j) {
        const int64_t pos = scale_pos(j);
        float acc = 0.0f;
        for (int64_t gi = 0; gi < A.n_groups; ++gi) {
            int32_t sum = 0;
            for (int32_t qd = A.quad_begin[gi]; qd < A.quad_begin[gi + 1]; ++qd)
                for (int t = 0; t < 4; ++t)
                    sum += column_q(A.q, A.n_in, A.n_out, A.chunk_bytes, A.bits, j,
                                    A.quad_ids[4 * qd + t]) *
                           static_cast<int8_t>(A.quad_qx[qd] >> (8 * t));
            sum -= A.offset * A.qsum[gi];
            const int64_t g = A.groups[gi];
            acc = std::fma(scale_a(A, g, pos), static_cast<float>(sum) * A.dx[gi], acc);
            float c = 0;
            if (scale_c(A, g, pos, c)) acc = std::fma(c, A.hsum[gi], acc);
        }
        y[j] = acc;
    }
}

}  // namespace kernels

}  // namespace powerinfer::tensor
