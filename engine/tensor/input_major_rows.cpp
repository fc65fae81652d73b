// The input-major copy back into the file's rows (tensor/input_major.h):
// input_major_rows, and the dense product from the copies
// (input_major_matmul) that sparse engine v3 runs for prompts once its
// copies replace the dense layout.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "tensor/input_major.h"
#include "tensor/input_major_layout.h"
#include "tensor/panels.h"
#include "tensor/quant.h"
#include "tensor/quant_blocks.h"
#include "tensor/sparse_down.h"

namespace powerinfer::tensor {

namespace {

using namespace blocks;
using namespace layout;

// codes[rr * stride + i - i0] = q of (output 32 * ch + rr, input i) for the
// inputs [i0, i1) (multiples of 16): chunk ch's column segments turned into
// its 32 rows of codes (8-bit: the int8's bits).
void chunk_codes(const InputMajorMatrix& m, int64_t ch, int64_t i0, int64_t i1, uint8_t* codes,
                 int64_t stride) {
    const int64_t n_in = m.n_in, n_chunks = m.n_out / 32;
    const size_t cb = m.chunk_bytes;
    const uint8_t* seg = m.q.data() + code_offset(n_in, n_chunks, cb, ch, i0);
    const size_t step = segment_step(n_chunks, cb, ch);
#if defined(__SSE2__)
    const __m128i low4 = _mm_set1_epi8(0x0F), one = _mm_set1_epi8(1);
    for (int64_t i = i0; i < i1; i += 16, seg += 16 * step) {
        __m128i r[16];
        uint8_t* c = codes + (i - i0);
        if (m.bits == 8) {
            for (int half = 0; half < 2; ++half) {
                for (int k = 0; k < 16; ++k)
                    r[k] = _mm_loadu_si128(
                        reinterpret_cast<const __m128i*>(seg + k * step + 16 * half));
                transpose16(r);
                for (int k = 0; k < 16; ++k)
                    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + (16 * half + k) * stride),
                                     r[k]);
            }
            continue;
        }
        for (int k = 0; k < 16; ++k)
            r[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(seg + k * step));
        transpose16(r);
        for (int k = 0; k < 16; ++k) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(c + k * stride), _mm_and_si128(r[k], low4));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(c + (16 + k) * stride),
                             _mm_and_si128(_mm_srli_epi16(r[k], 4), low4));
        }
        // The bits above the nibbles (layout::high_bits): 5-bit, byte b's bit
        // 4 + e is output 4e + b's and bit 3 - e output 16 + 4e + b's; 6-bit,
        // byte b's bits 2e and 2e + 1 are output 8e + b's.
        if (m.bits > 4) {
            const int n_bytes = m.bits == 5 ? 4 : 8, planes = m.bits - 4;
            alignas(16) uint8_t f[8][16];
            for (int k = 0; k < 16; ++k)
                for (int b = 0; b < n_bytes; ++b) f[b][k] = seg[k * step + 16 + b];
            for (int b = 0; b < n_bytes; ++b) {
                const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(f[b]));
                for (int bit = 0; bit < 8; ++bit) {
                    const int e = m.bits == 5 ? (bit >= 4 ? bit - 4 : 7 - bit) : bit / planes;
                    const int plane = bit % planes;
                    const __m128i x = _mm_and_si128(_mm_srl_epi16(v, _mm_cvtsi32_si128(bit)), one);
                    __m128i* dst = reinterpret_cast<__m128i*>(c + (n_bytes * e + b) * stride);
                    _mm_storeu_si128(dst,
                                     _mm_or_si128(_mm_loadu_si128(dst),
                                                  _mm_sll_epi16(x, _mm_cvtsi32_si128(4 + plane))));
                }
            }
        }
    }
#else
    for (int64_t i = i0; i < i1; ++i)
        for (int64_t rr = 0; rr < 32; ++rr)
            codes[rr * stride + i - i0] = static_cast<uint8_t>(
                column_q(m.q.data(), n_in, m.n_out, cb, m.bits, 32 * ch + rr, i));
    (void)seg;
    (void)step;
#endif
}

// out[k] = (lo[k] & 15) | (hi[k] & 15) << 4 for k < 16.
inline void pack_nibbles16(const uint8_t* lo, const uint8_t* hi, uint8_t* out) {
#if defined(__SSE2__)
    const __m128i m = _mm_set1_epi8(0x0F);
    const __m128i l = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo)), m);
    const __m128i h = _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(hi)), m);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_or_si128(l, _mm_slli_epi16(h, 4)));
#else
    for (int k = 0; k < 16; ++k) out[k] = static_cast<uint8_t>((lo[k] & 15) | ((hi[k] & 15) << 4));
#endif
}

// Bit k of the result = bit `bit` of q[k], k < 32.
inline uint32_t bit_plane32(const uint8_t* q, int bit) {
#if defined(__SSE2__)
    const __m128i s = _mm_cvtsi32_si128(7 - bit);  // the bit to the top of its byte
    const auto lo = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_sll_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), s)));
    const auto hi = static_cast<uint32_t>(_mm_movemask_epi8(
        _mm_sll_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)), s)));
    return lo | hi << 16;
#else
    uint32_t r = 0;
    for (int k = 0; k < 32; ++k) r |= static_cast<uint32_t>((q[k] >> bit) & 1) << k;
    return r;
#endif
}

// out[l] = the top two bits (of six) of v[l], v[l + 32], v[l + 64] and
// v[l + 96] at bits 0, 2, 4 and 6, l < 16 (Q6_K's qh).
inline void pack_high_pairs16(const uint8_t* v, uint8_t* out) {
#if defined(__SSE2__)
    const __m128i three = _mm_set1_epi8(3);
    __m128i r = _mm_setzero_si128();
    for (int k = 0; k < 4; ++k) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + 32 * k));
        const __m128i t = _mm_and_si128(_mm_srli_epi16(x, 4), three);
        r = _mm_or_si128(r, _mm_sll_epi16(t, _mm_cvtsi32_si128(2 * k)));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), r);
#else
    for (int l = 0; l < 16; ++l)
        out[l] = static_cast<uint8_t>((v[l] >> 4) | ((v[l + 32] >> 4) << 2) |
                                      ((v[l + 64] >> 4) << 4) | ((v[l + 96] >> 4) << 6));
#endif
}

// qh[l] = the fifth bits of v[32 g + l] at bit g, g < 8, l < 32 (Q5_K's qh).
inline void pack_fifth_bits_k(const uint8_t* v, uint8_t* qh) {
#if defined(__SSE2__)
    const __m128i one = _mm_set1_epi8(1);
    for (int h = 0; h < 32; h += 16) {
        __m128i r = _mm_setzero_si128();
        for (int g = 0; g < 8; ++g) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + 32 * g + h));
            r = _mm_or_si128(
                r, _mm_sll_epi16(_mm_and_si128(_mm_srli_epi16(x, 4), one), _mm_cvtsi32_si128(g)));
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qh + h), r);
    }
#else
    for (int l = 0; l < 32; ++l) {
        uint8_t r = 0;
        for (int g = 0; g < 8; ++g) r |= static_cast<uint8_t>(((v[32 * g + l] >> 4) & 1) << g);
        qh[l] = r;
    }
#endif
}

// Inputs [i0, i1) of row j in the file's layout (i0 a multiple of 256, i1
// of the format's block) from their codes q and the copy's scales, into the
// row at dst: decode_row backwards, every bit of the row comes back.
void encode_row(const InputMajorMatrix& m, int64_t j, int64_t i0, int64_t i1, const uint8_t* q,
                uint8_t* dst) {
    const int64_t pos = scale_pos(j);
    const auto at = [&](int64_t g) { return static_cast<size_t>(g * m.n_out + pos); };
    switch (m.source) {
        case GgmlType::Q4_0:
        case GgmlType::Q4_1: {
            const bool q41 = m.source == GgmlType::Q4_1;
            const size_t bs = q41 ? sizeof(BlockQ4_1) : sizeof(BlockQ4_0);
            for (int64_t g = i0 / kQK; g < i1 / kQK; ++g, q += kQK) {
                uint8_t* b = dst + static_cast<size_t>(g) * bs;
                std::memcpy(b, &m.a16[at(g)], 2);
                if (q41) std::memcpy(b + 2, &m.c16[at(g)], 2);
                pack_nibbles16(q, q + kQK / 2, b + (q41 ? 4 : 2));
            }
            return;
        }
        case GgmlType::Q5_0: {
            auto* b = reinterpret_cast<BlockQ5_0*>(dst);
            for (int64_t g = i0 / kQK; g < i1 / kQK; ++g, q += kQK) {
                b[g].d = m.a16[at(g)];
                const uint32_t qh = bit_plane32(q, 4);
                std::memcpy(b[g].qh, &qh, 4);
                pack_nibbles16(q, q + 16, b[g].qs);
            }
            return;
        }
        case GgmlType::Q8_0: {
            auto* b = reinterpret_cast<BlockQ8_0*>(dst);
            for (int64_t g = i0 / kQK; g < i1 / kQK; ++g, q += kQK) {
                b[g].d = m.a16[at(g)];
                std::memcpy(b[g].qs, q, kQK);
            }
            return;
        }
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: {
            const bool five = m.source == GgmlType::Q5_K;
            const size_t bs = five ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
            for (int64_t s = i0 / kQKK; s < i1 / kQKK; ++s, q += kQKK) {
                uint8_t* b = dst + static_cast<size_t>(s) * bs;
                uint8_t* scales = b + offsetof(BlockQ4_K, scales);
                uint8_t* qs = b + (five ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs));
                const size_t st = static_cast<size_t>(s * m.n_out + pos);
                std::memcpy(b + offsetof(BlockQ4_K, d), &m.d16[st], 2);
                std::memcpy(b + offsetof(BlockQ4_K, dmin), &m.dmin16[st], 2);
                uint8_t sc[8], mn[8];
                for (int g = 0; g < 8; ++g) {
                    sc[g] = static_cast<uint8_t>(m.sc[at(s * 8 + g)]);
                    mn[g] = static_cast<uint8_t>(m.m8[at(s * 8 + g)]);
                }
                // scale_min_k4 backwards.
                for (int k = 0; k < 4; ++k) {
                    scales[k] = static_cast<uint8_t>((sc[k] & 63) | ((sc[k + 4] >> 4) << 6));
                    scales[k + 4] = static_cast<uint8_t>((mn[k] & 63) | ((mn[k + 4] >> 4) << 6));
                    scales[k + 8] =
                        static_cast<uint8_t>((sc[k + 4] & 0x0F) | ((mn[k + 4] & 0x0F) << 4));
                }
                for (int p = 0; p < 4; ++p)
                    for (int l = 0; l < 32; l += 16)
                        pack_nibbles16(q + 64 * p + l, q + 64 * p + 32 + l, qs + 32 * p + l);
                if (five) pack_fifth_bits_k(q, b + offsetof(BlockQ5_K, qh));
            }
            return;
        }
        case GgmlType::Q6_K: {
            auto* b = reinterpret_cast<BlockQ6_K*>(dst);
            for (int64_t s = i0 / kQKK; s < i1 / kQKK; ++s, q += kQKK) {
                b[s].d = m.d16[static_cast<size_t>(s * m.n_out + pos)];
                for (int g = 0; g < kQKK / 16; ++g) b[s].scales[g] = m.sc[at(s * 16 + g)];
                for (int h = 0; h < 2; ++h) {
                    const uint8_t* v = q + 128 * h;
                    uint8_t* ql = b[s].ql + 64 * h;
                    uint8_t* qh = b[s].qh + 32 * h;
                    for (int l = 0; l < 32; l += 16) {
                        pack_nibbles16(v + l, v + 64 + l, ql + l);
                        pack_nibbles16(v + 32 + l, v + 96 + l, ql + 32 + l);
                        pack_high_pairs16(v + l, qh + l);
                    }
                }
            }
            return;
        }
        default:
            throw EngineError("input-major copy: no row form for " +
                              std::string(ggml_type_name(m.source)));
    }
}

// Inputs [i0, i1) of row j as Q8_0 blocks (Q4_0, Q5_0 and Q8_0 copies: the
// codes less their offset, the same scale): the blocks a prompt's Q4_0 and
// Q5_0 rows are rewritten into before the Q8_0 kernels take them (the same
// bits, kernels.h).
void encode_row_q8(const InputMajorMatrix& m, int64_t j, int64_t i0, int64_t i1, const uint8_t* q,
                   uint8_t* dst) {
    const int64_t pos = scale_pos(j);
    auto* b = reinterpret_cast<BlockQ8_0*>(dst);
    for (int64_t g = i0 / kQK; g < i1 / kQK; ++g, q += kQK) {
        b[g].d = m.a16[static_cast<size_t>(g * m.n_out + pos)];
#if defined(__SSE2__)
        const __m128i off = _mm_set1_epi8(static_cast<char>(m.offset));
        for (int h = 0; h < kQK; h += 16)
            _mm_storeu_si128(
                reinterpret_cast<__m128i*>(b[g].qs + h),
                _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + h)), off));
#else
        for (int k = 0; k < kQK; ++k) b[g].qs[k] = static_cast<int8_t>(q[k] - m.offset);
#endif
    }
}

// Whether a copy's rows can come back as Q8_0 blocks (encode_row_q8).
bool rows_as_q8(const InputMajorMatrix& m) {
    return m.source == GgmlType::Q4_0 || m.source == GgmlType::Q5_0 || m.source == GgmlType::Q8_0;
}

// Bytes of a rebuilt row: the file's, or Q8_0's (rows_as_q8).
size_t rebuilt_row_bytes(const InputMajorMatrix& m, bool as_q8) {
    return as_q8 ? *ggml_row_bytes(GgmlType::Q8_0, static_cast<uint64_t>(m.n_in))
                 : *ggml_row_bytes(m.source, static_cast<uint64_t>(m.n_in));
}

// Rows [r0, r1) from the copy into dst, in the file's format or as Q8_0.
void rebuild_rows(const InputMajorMatrix& m, int64_t r0, int64_t r1, uint8_t* dst, bool as_q8) {
    const size_t rb = rebuilt_row_bytes(m, as_q8);
    // Four chunks at a time (a 16-byte segment's cache line read whole) over
    // 256 inputs (a K super-block) at a time: the codes stay in L1, and each
    // group's scales of the four chunks are one run of bytes.
    constexpr int64_t kChunks = 4, kInputs = 256;
    thread_local std::vector<uint8_t> codes;
    codes.resize(static_cast<size_t>(kChunks * 32 * kInputs));
    for (int64_t c0 = r0 / 32; c0 < r1 / 32; c0 += kChunks) {
        const int64_t c1 = std::min(r1 / 32, c0 + kChunks);
        for (int64_t i0 = 0; i0 < m.n_in; i0 += kInputs) {
            const int64_t i1 = std::min(m.n_in, i0 + kInputs);
            for (int64_t ch = c0; ch < c1; ++ch)
                chunk_codes(m, ch, i0, i1, codes.data() + (ch - c0) * 32 * kInputs, kInputs);
            for (int64_t j = 32 * c0; j < 32 * c1; ++j)
                (as_q8 ? encode_row_q8 : encode_row)(m, j, i0, i1,
                                                     codes.data() + (j - 32 * c0) * kInputs,
                                                     dst + static_cast<size_t>(j - r0) * rb);
        }
    }
}

// Rebuilt rows per slice of input_major_matmul: a worker's slice and its
// panels stay in L2 while the tokens pass.
constexpr size_t kRebuildBytes = 192 * 1024;

}  // namespace

size_t input_major_row_bytes(const InputMajorMatrix& m) { return rebuilt_row_bytes(m, false); }

void input_major_rows(const InputMajorMatrix& m, int64_t r0, int64_t r1, uint8_t* dst) {
    if (r0 < 0 || r1 > m.n_out || r0 > r1 || r0 % 32 != 0 || r1 % 32 != 0)
        throw EngineError("input_major_rows: rows " + std::to_string(r0) + ".." +
                          std::to_string(r1) + " of " + std::to_string(m.n_out) +
                          " are not whole chunks of 32");
    rebuild_rows(m, r0, r1, dst, false);
}

void input_major_matmul(ThreadPool& pool, std::span<const InputMajorMatrix* const> ms,
                        const float* X, int64_t n, std::span<float* const> ys) {
    if (ms.size() != ys.size())
        throw EngineError("input_major_matmul: as many outputs as matrices");
    if (n <= 0 || ms.empty()) return;
    // X quantized once per activation format.
    const int64_t n_in = ms[0]->n_in;
    struct Act {
        GgmlType weight_type;
        size_t stride;
        std::vector<uint8_t> xq;
    };
    std::vector<Act> acts;
    std::vector<size_t> act_of(ms.size());
    for (size_t k = 0; k < ms.size(); ++k) {
        if (ms[k]->n_in != n_in)
            throw EngineError("input_major_matmul: the matrices take one input");
        const GgmlType vt = vec_dot_type(ms[k]->source);
        size_t a = 0;
        while (a < acts.size() && vec_dot_type(acts[a].weight_type) != vt) ++a;
        if (a == acts.size()) {
            const size_t stride = *ggml_row_bytes(vt, static_cast<uint64_t>(n_in));
            acts.push_back(
                {ms[k]->source, stride, std::vector<uint8_t>(stride * static_cast<size_t>(n))});
            quantize_activation_rows(pool, ms[k]->source, X, n_in, n, stride, acts[a].xq.data());
        }
        act_of[k] = a;
    }
    struct Slice {
        size_t k;
        int64_t r0, r1;
    };
    // Q4_0, Q5_0 and Q8_0 come back as Q8_0 rows, which the Q8_0 kernels
    // take without a rewrite; the others in their format (row panels packed
    // where the kernels have them).
    const auto row_bytes = [](const InputMajorMatrix& m) {
        return rebuilt_row_bytes(m, rows_as_q8(m));
    };
    std::vector<Slice> slices;
    for (size_t k = 0; k < ms.size(); ++k) {
        const int64_t rows = std::max<int64_t>(
            32, static_cast<int64_t>(kRebuildBytes / row_bytes(*ms[k])) / 32 * 32);
        for (int64_t r0 = 0; r0 < ms[k]->n_out; r0 += rows)
            slices.push_back({k, r0, std::min(ms[k]->n_out, r0 + rows)});
    }
    auto run = [&](int64_t b, int64_t e, int) {
        thread_local std::vector<uint8_t> rows, panels;
        for (int64_t i = b; i < e; ++i) {
            const Slice& s = slices[static_cast<size_t>(i)];
            const InputMajorMatrix& m = *ms[s.k];
            const bool q8 = rows_as_q8(m);
            const size_t rb = row_bytes(m);
            rows.resize(static_cast<size_t>(s.r1 - s.r0) * rb);
            rebuild_rows(m, s.r0, s.r1, rows.data(), q8);
            WeightView v{
                q8 ? GgmlType::Q8_0 : m.source, rows.data(), s.r1 - s.r0, m.n_in, rb, nullptr};
            // One token: the row kernels (packing would cost more than it saves).
            if (n > 1 && panels_available(v)) {
                panels.resize(rows.size());
                pack_panels_into(v, panels.data());
                v.panels = panels.data();
            }
            const Act& a = acts[act_of[s.k]];
            matmul_q(pool, v, a.xq.data(), a.stride, n, ys[s.k] + s.r0,
                     static_cast<size_t>(m.n_out));
        }
    };
    if (pool.size() > 1 && slices.size() > 1)
        pool.parallel_for(static_cast<int64_t>(slices.size()), run, 1);
    else
        run(0, static_cast<int64_t>(slices.size()), 0);
}

}  // namespace powerinfer::tensor
