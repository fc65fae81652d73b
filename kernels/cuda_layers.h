// Whole-layer offload on a CUDA device (llama.cpp's -ngl): the first layers
// of a model, and its output head when every layer fits, run on the GPU
// behind model::LayerExecutor. Memory comes from the CudaDevice's accounted
// buffers (DenseWeights, KvCache, Scratch) laid out by model::layer_plan.
#pragma once

#include <memory>
#include <string>

#include "backend/device.h"
#include "model/layer_executor.h"
#include "model/layer_plan.h"
#include "model/model.h"

namespace powerinfer::cuda {

// Why the model's layers (or, with OffloadParts::Attention, their attention
// matrices and the output head) cannot run on the GPU ("" if they can):
// weight types without a CUDA kernel, rows not a multiple of 32 elements.
std::string layer_offload_unsupported(const model::Model& model,
                                      model::OffloadParts parts = model::OffloadParts::WholeLayers);

struct CudaLayerOptions {
    // Prefill batches of 2+ tokens through cuBLAS GEMMs on F16 weight tiles;
    // false (or no cuBLAS, or POWERINFER_NO_CUBLAS=1) runs them token by
    // token through the decode path.
    bool prefill_gemm = true;
    // Attention (sparse mode): the executor holds each planned layer's
    // attention half and the output head (plan from model::plan_sparse_offload)
    // and calls the model's FfnExecutor for every FFN: per layer the
    // normalised FFN input (rows x n_embd floats) is copied to pinned host
    // memory, the FfnExecutor computes the FFN there (hot part on the
    // CudaDevice, cold part on the CPU) and its output is added to the
    // device's residual stream.
    model::OffloadParts parts = model::OffloadParts::WholeLayers;
};

// Uploads the planned layers (and head) to `device`, which must be a CUDA
// device from make_cuda_device() and outlive the executor (in sparse mode
// the HybridFfn's device, so that both share its stream and accounting). When an
// allocation fails (the budget or the real GPU memory), keeps the layers that
// fit and says so in `note`; returns null with the reason in `note` when not
// even one layer fits. Never throws for lack of memory.
// When prefill cannot use cuBLAS, `note` says so too ("cuBLAS not found:
// prompt processing on the GPU runs token by token").
std::unique_ptr<model::LayerExecutor> make_cuda_layer_executor(
    model::Model& model, backend::Device& device, const model::LayerPlan& plan, std::string& note,
    const CudaLayerOptions& options = {});

// Which path the tokens of an executor from make_cuda_layer_executor took.
struct LayerOffloadStats {
    bool prefill_gemm = false;   // cuBLAS is ready for prefill
    int64_t gemm_tokens = 0;     // tokens run through the prefill GEMMs
    int64_t token_by_token = 0;  // tokens run through the decode path
};
LayerOffloadStats layer_offload_stats(const model::LayerExecutor& executor);

}  // namespace powerinfer::cuda
