// The input-major copy's byte layout (tensor/input_major.h), for the code
// that builds the copy (input_major.cpp) and the code that turns it back into
// rows (input_major_rows.cpp). Internal header.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "tensor/input_major.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace powerinfer::tensor::layout {

// Where chunk ch of input i's column starts (the tile layout of input_major.h).
inline size_t code_offset(int64_t n_in, int64_t n_chunks, size_t chunk_bytes, int64_t ch,
                          int64_t i) {
    const int64_t t = ch / kInputTileChunks;
    const int64_t tc = std::min(kInputTileChunks, n_chunks - t * kInputTileChunks);
    return (static_cast<size_t>(t * n_in * kInputTileChunks) +
            static_cast<size_t>(i * tc + ch % kInputTileChunks)) *
           chunk_bytes;
}

// Bytes from one input's segment of chunk ch to the next input's: a tile row.
inline size_t segment_step(int64_t n_chunks, size_t chunk_bytes, int64_t ch) {
    const int64_t t = ch / kInputTileChunks;
    return static_cast<size_t>(std::min(kInputTileChunks, n_chunks - t * kInputTileChunks)) *
           chunk_bytes;
}

// Which bit of its byte (r % 4) keeps a 5-bit chunk's fifth bit of output r
// (r < 32): 4 + r / 4 for outputs 0-15, 7 - r / 4 for 16-31. So bit 4 + e
// of every byte is outputs 4e..4e+3's and bit 3 - e outputs 16 + 4e..: one
// shift of a 64-bit lane brings a lane's four outputs' bits to bit 4, right
// for outputs 0-15 and left for 16-31, also where two columns' bytes are
// interleaved (the AVX2 pairs, kernels_colsparse.inc).
inline int fifth_bit_pos(int64_t r) {
    return r < 16 ? 4 + static_cast<int>(r / 4) : 7 - static_cast<int>(r / 4);
}

// Where a chunk keeps the bits above the nibbles of its output r (r < 32),
// after its 16 nibble bytes (input_major.h): 5-bit, bit 4 at byte r % 4, bit
// fifth_bit_pos(r); 6-bit, bits 4-5 at byte r % 8, bits 2 (r / 8) and
// 2 (r / 8) + 1. The kernels widen them with one broadcast and one shift
// by a lane's amount (kernels_colsparse.inc).
inline int high_bits(const uint8_t* c, int bits, int64_t r) {
    if (bits == 5) return ((c[16 + r % 4] >> fifth_bit_pos(r)) & 1) << 4;
    return ((c[16 + r % 8] >> (2 * (r / 8))) & 3) << 4;
}

// The chunk's high-bit bytes (4 for 5-bit, 8 for 6-bit) from a bit mask per
// plane (bit r of hi[p]: bit 4 + p of output r's code).
inline void pack_high_bits(int bits, const uint32_t hi[2], uint8_t* out) {
    // Bits 0, 4, ..., 28 of x into bits 0-7.
    auto gather4 = [](uint32_t x) {
        x &= 0x11111111u;
        x = (x | x >> 3) & 0x03030303u;
        x = (x | x >> 6) & 0x000F000Fu;
        return static_cast<uint8_t>((x | x >> 12) & 0xFFu);
    };
    auto gather8 = [](uint32_t x) {  // bits 0, 8, 16, 24 into bits 0-3
        x &= 0x01010101u;
        x = (x | x >> 7) & 0x00030003u;
        return (x | x >> 14) & 0x0Fu;
    };
    auto spread = [](uint32_t x) {  // bits 0-3 to bits 0, 2, 4, 6
        x = (x | x << 2) & 0x33u;
        return (x | x << 1) & 0x55u;
    };
    if (bits == 5)
        for (int t = 0; t < 4; ++t) {
            // gather4 gives output 4e + t's bit at bit e: e < 4 moves to
            // 4 + e, e >= 4 to 7 - e (fifth_bit_pos).
            const uint32_t g = gather4(hi[0] >> t);
            const uint32_t rev = ((g >> 7) & 1) | ((g >> 5) & 2) | ((g >> 3) & 4) | ((g >> 1) & 8);
            out[t] = static_cast<uint8_t>((g & 0x0F) << 4 | rev);
        }
    else
        for (int i = 0; i < 8; ++i)
            out[i] = static_cast<uint8_t>(spread(gather8(hi[0] >> i)) | spread(gather8(hi[1] >> i))
                                                                            << 1);
}

// q of (output j, input i) as the kernels read it (8-bit: signed).
inline int column_q(const uint8_t* q, int64_t n_in, int64_t n_out, size_t chunk_bytes, int bits,
                    int64_t j, int64_t i) {
    const uint8_t* c = q + code_offset(n_in, n_out / 32, chunk_bytes, j / 32, i);
    const int64_t r = j % 32;
    if (bits == 8) return static_cast<int8_t>(c[r]);
    int v = (c[r % 16] >> (r >= 16 ? 4 : 0)) & 0x0F;
    if (bits >= 5) v |= high_bits(c, bits, r);
    return v;
}

#if defined(__SSE2__)
// The 16 rows of a 16 x 16 byte matrix become its columns (r[k] = byte k of
// every row).
inline void transpose16(__m128i r[16]) {
    __m128i a[16], b[16];
    for (int k = 0; k < 8; ++k) {
        a[2 * k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);  // columns 0-7 of two rows
        a[2 * k + 1] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
    }
    for (int s = 0; s < 16; s += 4) {  // four rows: four columns each
        b[s] = _mm_unpacklo_epi16(a[s], a[s + 2]);
        b[s + 1] = _mm_unpackhi_epi16(a[s], a[s + 2]);
        b[s + 2] = _mm_unpacklo_epi16(a[s + 1], a[s + 3]);
        b[s + 3] = _mm_unpackhi_epi16(a[s + 1], a[s + 3]);
    }
    for (int s = 0; s < 16; s += 8)  // eight rows: two columns each
        for (int c = 0; c < 4; ++c) {
            a[s + 2 * c] = _mm_unpacklo_epi32(b[s + c], b[s + 4 + c]);
            a[s + 2 * c + 1] = _mm_unpackhi_epi32(b[s + c], b[s + 4 + c]);
        }
    for (int p = 0; p < 8; ++p) {  // sixteen rows: one column each
        r[2 * p] = _mm_unpacklo_epi64(a[p], a[8 + p]);
        r[2 * p + 1] = _mm_unpackhi_epi64(a[p], a[8 + p]);
    }
}
#endif

}  // namespace powerinfer::tensor::layout
