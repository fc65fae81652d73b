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

// q of (output j, input i) as the kernels read it (8-bit: signed).
inline int column_q(const uint8_t* q, int64_t n_in, int64_t n_out, size_t chunk_bytes, int bits,
                    int64_t j, int64_t i) {
    const uint8_t* c = q + code_offset(n_in, n_out / 32, chunk_bytes, j / 32, i);
    const int64_t r = j % 32;
    if (bits == 8) return static_cast<int8_t>(c[r]);
    int v = (c[r % 16] >> (r >= 16 ? 4 : 0)) & 0x0F;
    if (bits >= 5) v |= ((c[16 + r / 8] >> (r % 8)) & 1) << 4;
    if (bits == 6) v |= ((c[20 + r / 8] >> (r % 8)) & 1) << 5;
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
