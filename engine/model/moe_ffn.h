// The mixture-of-experts feed-forward block (qwen3moe, qwen2moe, Mixtral-style llama)
// on the CPU, computed as llama.cpp's build_moe_ffn computes it: router
// logits (an F32 product in tinyBLAS's order), ggml's softmax, the
// n_expert_used most probable experts in descending order, their
// probabilities renormalised (sum clamped as ggml clamps it) and optionally
// scaled, each expert's SwiGLU FFN over the expert's slice of the stacked
// gate/up/down tensors (views into the mmap, with the stack's row-panel copy
// where the model packed one), outputs weighted and summed in slot order.
//
// Decode (one token) runs the k routed experts only: their gate and up rows
// in one pool dispatch, then their down rows and the weighted sum in
// another. Prefill groups the batch's tokens by expert and runs each routed
// expert once over its tokens (matmuls of the gathered rows). Every dot
// product is the one llama.cpp's mul_mat_id takes, so results equal its
// CPU backend bit for bit where the dense products do.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/compute.h"
#include "model/ffn_executor.h"
#include "model/model_config.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

namespace powerinfer::model {

class ExpertOffload;

// One of a layer's stacked expert tensors ([n_expert][rows][cols] in the
// GGUF): expert e's matrix starts e * expert_bytes after expert 0's. When
// first.panels is set the whole stack has a row-panel copy (tensor/panels.h,
// the same size), expert e's panels e * expert_bytes after expert 0's.
struct ExpertStack {
    tensor::WeightView first;
    size_t expert_bytes = 0;
    tensor::WeightView expert(int64_t e) const {
        tensor::WeightView w = first;
        w.data += static_cast<size_t>(e) * expert_bytes;
        if (w.panels) w.panels += static_cast<size_t>(e) * expert_bytes;
        return w;
    }
    // The stack as one matrix of n_expert * first.rows rows (for packing).
    tensor::WeightView all(int64_t n_expert) const {
        tensor::WeightView w = first;
        w.rows *= n_expert;
        return w;
    }
    int64_t bytes(int64_t n_expert) const { return static_cast<int64_t>(expert_bytes) * n_expert; }
};

struct MoeWeights {
    tensor::WeightView router;   // ffn_gate_inp: n_expert rows of n_embd
    ExpertStack gate, up, down;  // n_ff_exp x n_embd, n_ff_exp x n_embd, n_embd x n_ff_exp
    // qwen2moe's shared expert (data null when none): its gate logit (one
    // row of n_embd) and its SwiGLU FFN of n_ff_shexp neurons.
    tensor::WeightView shared_gate_inp;
    tensor::WeightView shared_gate, shared_up, shared_down;
    // Bytes of one expert (gate + up + down), what placement moves.
    int64_t expert_bytes() const {
        return static_cast<int64_t>(gate.expert_bytes + up.expert_bytes + down.expert_bytes);
    }
};

// The experts a token was routed to, most probable first, with their weights.
struct Routing {
    std::vector<int32_t> experts;  // [n_tokens][n_expert_used]
    std::vector<float> weights;    // same shape
};

// Router of one layer for `n` tokens, exactly as llama.cpp: x is the
// normalised FFN input [n][n_embd]. `logits` is scratch [n][n_expert].
void route_tokens(tensor::ThreadPool& pool, const ModelConfig& cfg, const MoeWeights& w,
                  const float* x, int64_t n, std::vector<float>& logits, Routing& out);

class MoeFfn final : public FfnExecutor {
public:
    // `layers` holds every layer's expert weights; the pool must outlive this.
    MoeFfn(tensor::ThreadPool& pool, const ModelConfig& cfg, std::vector<MoeWeights> layers);

    void run(int layer, const float* x, int64_t n_tokens, float* out) override;

    const MoeWeights& weights(int layer) const { return layers_.at(static_cast<size_t>(layer)); }
    // How often each expert was routed since construction or reset_counts():
    // [layer][expert], one count per token and selected expert.
    const std::vector<std::vector<int64_t>>& expert_counts() const { return counts_; }
    void reset_counts();

    // Experts on a device (moe_offload.h): those it holds run there, the
    // rest here; null = every expert on the CPU. Must outlive its use.
    void set_offload(ExpertOffload* offload) { offload_ = offload; }
    ExpertOffload* offload() const { return offload_; }

private:
    void decode(int layer, const MoeWeights& w, const float* x, float* out);
    void prefill(int layer, const MoeWeights& w, const float* x, int64_t n, float* out);
    // Prefill: the device's experts of `layer` over their tokens (enqueued),
    // then their outputs into slot_out_ once the device is done.
    void run_device_experts(int layer, const float* x, const std::vector<int32_t>& experts);
    void finish_device_experts();
    // Expert e over its slots' tokens on `compute`, outputs into slot_out_.
    void run_expert(backend::Compute& compute, const MoeWeights& w, int64_t e, const float* x,
                    std::vector<float>& rows);
    // out += sigmoid(shared gate . x) * shared FFN(x), per token (qwen2moe).
    void add_shared_expert(const MoeWeights& w, const float* x, int64_t n, float* out);

    tensor::ThreadPool& pool_;
    ModelConfig cfg_;
    ExpertOffload* offload_ = nullptr;
    std::vector<int32_t> host_slots_, device_experts_;
    std::vector<float> dev_x_, dev_y_;  // prefill: the device experts' gathered rows, outputs
    std::vector<int32_t> dev_slots_;    // (token * k + slot) of each row in dev_y_
    std::vector<MoeWeights> layers_;
    std::vector<std::vector<int64_t>> counts_;
    Routing routing_;
    std::vector<float> logits_;
    // The experts' FFNs run as the backend's one gated FFN op
    // (backend::Compute::gated_ffn) on the host, over the pool.
    std::unique_ptr<backend::Compute> compute_;
    // Decode: the host experts' FFNs and their outputs (reserved: no
    // allocation per token), then the k experts' outputs [k][n_embd].
    std::vector<backend::GatedFfnWeights> decode_ffns_;
    std::vector<float*> decode_outs_;
    std::vector<float> down_;
    // Prefill: tokens per expert, gathered rows and the per-slot outputs.
    std::vector<std::vector<int32_t>> slots_;  // per expert: token * k + slot
    std::vector<float> slot_out_;
    std::vector<float> shared_;  // the shared expert's gate, up, output
    // Per worker: a one-thread pool and the op backend over it (experts run
    // side by side, each on one worker), and its gathered rows.
    std::vector<std::unique_ptr<tensor::ThreadPool>> solo_;
    std::vector<std::unique_ptr<backend::Compute>> solo_compute_;
    std::vector<std::vector<float>> rows_;
    std::vector<std::vector<int32_t>> worker_experts_;
};

}  // namespace powerinfer::model
