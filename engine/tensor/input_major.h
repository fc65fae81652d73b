// Input sparsity (sparse engine v3): y = W x over the kept inputs of x only,
// from an input-major ("column") copy of W in the model's own quant format,
// so that a skipped input is skipped bytes.
//
// W is n_out rows (outputs) by n_in columns (inputs), stored in GGUF with its
// quant blocks along a row (along the inputs). Every supported format writes a
// weight as a * q + c with q an unsigned integer per weight and (a, c) per
// (output, group of `group` inputs): the group is the format's block (32
// inputs; 16 for Q6_K). The outputs are cut into tiles of 16384
// (kInputTileChunks chunks of 32; the last tile may be shorter) and a tile
// stores every input's column segment in input order, so that a product
// over a tile streams through one contiguous region, skipping the segments
// of the inputs it drops (a tile's segment: its chunks of `chunk_bytes`
// each):
//   4-bit (Q4_0, Q4_1, Q4_K): 16 bytes, byte k = output k (low nibble) and
//                             16 + k (high nibble);
//   5-bit (Q5_0, Q5_K): the 16 nibble bytes, then 4 bytes of fifth bits (output
//                  k's in byte k % 4, bit 4 + k / 4 for k < 16 and 7 - k / 4
//                  above: one shift per 64-bit lane takes four outputs' to
//                  bit 4, also in two columns' bytes interleaved);
//   6-bit (Q6_K):  the 16 nibble bytes, then 8 bytes of fifth and sixth bits
//                  (output k's in byte k % 8, bits 2 (k / 8) and 2 (k / 8) + 1):
//                  one broadcast and one shift per lane widen either;
//   8-bit (Q8_0):  32 signed bytes (q itself, c = 0).
// Scales per (group, output), in the kernel's output order (scale_pos): fp16 a
// (and Q4_1's fp16 m as c) for the 32-element formats, which store exactly
// these; for the K formats the block's int8 sub-scale (and Q4_K's and Q5_K's
// min) per group and its fp16 d (and dmin) per 256-input super-block, as in
// the file: so a column costs no more bytes than its share of the row layout.
// Integer offsets (Q4_0 8, Q5_0 16, Q6_K 32) are taken out of the integer sums.
//
// x's kept inputs are quantized to int8 with one scale per group that has any
// (SparseInput), summed against q in integers per group, then
//   y_j += a_jg * (dx_g * (S_jg - offset * Q_g)) [+ c_jg * dx_g * Q_g],
// S_jg = sum over kept i of q_ji qx_i, Q_g = sum of qx_i: the dense product of
// the same quantized x with the skipped inputs set to zero, up to the order of
// the float sums. Every SIMD level gives the same bits as the scalar reference.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/ggml_types.h"
#include "common/weight_memory.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace powerinfer::tensor {

inline constexpr int64_t kInputTileChunks = 512;  // chunks of 32 outputs per tile

struct InputMajorMatrix {
    GgmlType source = GgmlType::F32;
    int64_t n_out = 0, n_in = 0;
    int64_t group = 32;                 // inputs per scale group
    int64_t super_groups = 0;           // groups per fp16 super-scale (K formats), else 0
    int bits = 4;                       // 4, 5, 6 or 8 (8: signed q, no offset)
    int offset = 0;                     // integer offset taken out of q (Q4_0 8, Q5_0 16, Q6_K 32)
    size_t chunk_bytes = 16;            // per 32 outputs of a column
    WeightVector<uint8_t> q;            // tiles of n_in column segments (see above)
    WeightVector<uint16_t> a16, c16;    // [group][n_out] fp16 scale / additive term (Q4_1)
    WeightVector<int8_t> sc, m8;        // [group][n_out] K sub-scale / Q4_K, Q5_K min
    WeightVector<uint16_t> d16, dmin16;  // [super-block][n_out] K fp16 d / Q4_K, Q5_K dmin
    // Bytes of one input's codes over all outputs.
    size_t col_bytes() const { return static_cast<size_t>(n_out / 32) * chunk_bytes; }
    bool empty() const { return q.empty(); }
    size_t bytes() const {
        return q.size() + sc.size() + m8.size() +
               (a16.size() + c16.size() + d16.size() + dmin16.size()) * sizeof(uint16_t);
    }
};

// Whether make_input_major takes this matrix: Q4_0, Q4_1, Q5_0, Q8_0, Q4_K,
// Q5_K, Q6_K with n_out a multiple of 32. Other matrices stay dense.
bool input_major_supported(const WeightView& w);
// "" when supported, else why not (for reports).
std::string input_major_refusal(const WeightView& w);
// Throws EngineError for a matrix it does not take. Built in parallel on
// `pool` when given; col_norms2, when given, gets ||W[:, j]||^2 added per
// input (in an order that does not depend on the pool).
// rows_read, when given, is called with each block of rows [r0, r1) once
// the copy has read it, from the pool's threads (concurrently): the owner
// may release those rows.
InputMajorMatrix make_input_major(const WeightView& w, ThreadPool* pool = nullptr,
                                  std::vector<double>* col_norms2 = nullptr,
                                  const std::function<void(int64_t, int64_t)>& rows_read = {});
// Weight (output j, input i) as the copy holds it (tests: it must equal the
// file's dequantized weight exactly).
float input_major_weight(const InputMajorMatrix& m, int64_t j, int64_t i);

// Bytes of one of the file's rows of the matrix the copy was made from.
size_t input_major_row_bytes(const InputMajorMatrix& m);
// Rows [r0, r1) of the file's matrix rebuilt from the copy, byte for byte
// (r0 and r1 multiples of 32): (r1 - r0) rows of input_major_row_bytes at dst.
void input_major_rows(const InputMajorMatrix& m, int64_t r0, int64_t r1, uint8_t* dst);
// ys[k][t * n_out_k + r] = row r of the file's matrix k times X[t] (t < n):
// the bits matmul over the file's rows gives (matvec's at n = 1), from the
// copies alone. Each worker rebuilds a slice of rows at a time in its cache
// (Q4_0, Q5_0 and Q8_0 as Q8_0 rows, which the Q8_0 kernels take with the
// same bits) and runs the dense kernels over it (in row panels where they
// have a form), so that a model whose copies replace its rows still runs its
// prompts as dense. About 0.3 ns per weight per thread: cheap against a
// prompt's arithmetic, several one-token products. The matrices take the
// same X (their n_in equal).
void input_major_matmul(ThreadPool& pool, std::span<const InputMajorMatrix* const> ms,
                        const float* X, int64_t n, std::span<float* const> ys);

// A token's kept inputs, grouped and quantized for colsparse_matvec (reused
// across tokens without allocating once it has grown).
struct SparseInput {
    int64_t group = 32;
    std::vector<int32_t> quad_ids;    // 4 input ids per quad (padding repeats one, qx 0)
    std::vector<uint32_t> quad_qx;    // the 4 int8 qx of a quad, byte k for quad_ids[4q + k]
    std::vector<int32_t> groups;      // per used group: its index
    std::vector<int32_t> quad_begin;  // per used group: first quad; one more entry at the end
    std::vector<float> dx;            // per used group: x scale
    std::vector<int32_t> qsum;        // per used group: sum of its qx
    std::vector<float> hsum;          // per used group: dx * qsum
    int64_t kept = 0;
};
// ids ascending (each < n_in), x the whole input vector; `group` the
// matrix's (InputMajorMatrix::group).
void prepare_sparse_input(const int32_t* ids, int64_t count, const float* x, int64_t group,
                          SparseInput& in);

// y[n_out] = W x over the prepared kept inputs (y overwritten).
void colsparse_matvec(ThreadPool& pool, const InputMajorMatrix& w, const SparseInput& in, float* y);
// ys[k] = ws[k] x over ins[k] for matrices that take the same x (q/k/v,
// gate/up), in one pool dispatch: the same bits as one at a time.
void colsparse_matvec_many(ThreadPool& pool, std::span<const InputMajorMatrix* const> ws,
                           std::span<const SparseInput* const> ins, std::span<float* const> ys);
// The scalar reference (same integer sums and float order).
void colsparse_matvec_ref(const InputMajorMatrix& w, const SparseInput& in, float* y);

}  // namespace powerinfer::tensor
