// The column-sparse half of a sparse FFN: y = W_down h over the active
// neurons only, from a neuron-major copy of W_down that keeps the model's own
// 4-bit quants and scales (lossless: every weight is the same a * q + c as in
// the model file).
//
// ffn_down is n_out rows (model dimension) by n_ff columns (neurons), stored
// in blocks of 32 neurons along a row. Here a neuron's column is contiguous
// (n_out / 2 bytes of 4-bit q, in chunks of 32 outputs: byte k of chunk c has
// output 32c + k in its low nibble and 32c + 16 + k in its high nibble), and
// the per-(output, 32-neuron group) scale a and offset c are arrays
// [group][n_out], in fp16 when every value is exactly an fp16 (Q4_0 and Q4_1
// store d and m as fp16, so theirs always are; Q4_K's d * scale may not be,
// and then they stay float). A group's active neurons are summed in integers (their h
// quantized to int8 with one scale per group and token), then
//   y_j += a_jg * (dh_g * S_jg) + c_jg * H_g,  S_jg = sum_i q_ji qh_i,
//   H_g = dh_g * sum_i qh_i,
// so reading a neuron costs n_out / 2 bytes and the per-group scales are read
// once per group that has an active neuron.
#pragma once

#include <cstdint>
#include <vector>

#include "common/ggml_types.h"
#include "common/weight_memory.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace powerinfer::tensor {

// a and c hold, per group, the outputs of each 32-output chunk in the order
// the SIMD kernel produces them (outputs 4k..4k+3 then 16+4k..16+4k+3 for
// k = 0..3): output j sits at scale_pos(j) of its group's n_out values.
inline int64_t scale_pos(int64_t j) {
    const int64_t r = j % 32;
    return j - r + 8 * ((r % 16) / 4) + (r >= 16 ? 4 : 0) + r % 4;
}
constexpr int64_t kMaxNeuronMajorOut = 16384;

struct NeuronMajorDown {
    int64_t n_out = 0, n_ff = 0;
    WeightVector<uint8_t> q;  // n_ff columns of n_out / 2 bytes
    WeightVector<float> a;    // [n_ff / 32][n_out], see scale_pos; empty when a16 holds them
    WeightVector<float> c;    // [n_ff / 32][n_out]
    WeightVector<uint16_t> a16, c16;  // the same in fp16 (exact), or empty
    bool empty() const { return q.empty(); }
    size_t bytes() const {
        return q.size() + (a.size() + c.size()) * sizeof(float) +
               (a16.size() + c16.size()) * sizeof(uint16_t);
    }
};

// Whether make_neuron_major_down takes this down matrix (Q4_0, Q4_1, Q4_K
// with n_out a multiple of 32, at most kMaxNeuronMajorOut).
bool neuron_major_supported(const WeightView& down);
// Throws EngineError for a matrix it does not take.
NeuronMajorDown make_neuron_major_down(const WeightView& down);
// The bytes make_neuron_major_down will take for this matrix with fp16
// scales (the usual case; fp32 where fp16 is not exact); 0 where it is
// not supported.
size_t neuron_major_down_bytes(const WeightView& down);

// A token's active set, grouped and quantized for sparse_down (reused across
// tokens without allocating once it has grown).
struct SparseDownInput {
    std::vector<int32_t> quad_ids;    // 4 neuron ids per quad (padding repeats one, qh 0)
    std::vector<uint32_t> quad_qh;    // the 4 int8 qh of a quad, byte k for quad_ids[4q + k]
    std::vector<int32_t> group;       // per used group: its index
    std::vector<int32_t> quad_begin;  // per used group: first quad; one more entry at the end
    std::vector<float> dh, hsum;      // per used group: h scale, dh * sum(qh)
    int64_t active = 0;
};
// ids ascending (each < n_ff), h[k] the activation of ids[k].
void prepare_sparse_down(const int32_t* ids, const float* h, int64_t count, SparseDownInput& in);

// Empties `in` (keeping its capacity) to start a concatenation.
void clear_sparse_down(SparseDownInput& in);
// Appends `part` to `into`: both prepared, part's groups all after into's
// (e.g. slices of a layer ending on 32-neuron group boundaries, in order).
void append_sparse_down(const SparseDownInput& part, SparseDownInput& into);

// y[n_out] = W_down h over the prepared active set (y overwritten).
void sparse_down(ThreadPool& pool, const NeuronMajorDown& w, const SparseDownInput& in, float* y);
// The scalar reference (same integer sums and float order).
void sparse_down_ref(const NeuronMajorDown& w, const SparseDownInput& in, float* y);

}  // namespace powerinfer::tensor
