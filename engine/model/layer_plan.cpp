#include "model/layer_plan.h"

#include <algorithm>

#include "model/model.h"

namespace powerinfer::model {
namespace {

// Appends a tensor of `bytes` to a layout and returns its offset.
int64_t place(int64_t& end, int64_t bytes) {
    const int64_t at = end;
    end += device_align(bytes);
    return at;
}

int64_t matrix_bytes(const tensor::WeightView& w) {
    return static_cast<int64_t>(w.row_bytes) * w.rows;
}

std::string mib(int64_t bytes) {
    return std::to_string((bytes + (int64_t{1} << 19)) >> 20) + " MiB";
}

}  // namespace

LayerOffloadCosts layer_offload_costs(const Model& model, int64_t token_batch, OffloadParts parts) {
    const ModelConfig& c = model.config();
    const int64_t f = sizeof(float);
    const bool ffn = parts == OffloadParts::WholeLayers;
    LayerOffloadCosts costs;
    costs.parts = parts;
    costs.layers.resize(static_cast<size_t>(c.n_layer));
    for (int il = 0; il < static_cast<int>(c.n_layer); ++il) {
        const LayerWeights& w = model.layer(il);
        LayerLayout& l = costs.layers[static_cast<size_t>(il)];
        int64_t end = 0;
        l.attn_norm = place(end, c.n_embd * f);
        l.q = place(end, matrix_bytes(w.q));
        l.k = place(end, matrix_bytes(w.k));
        l.v = place(end, matrix_bytes(w.v));
        l.o = place(end, matrix_bytes(w.o));
        if (w.q_bias) l.q_bias = place(end, c.q_dim() * f);
        if (w.k_bias) l.k_bias = place(end, c.kv_dim() * f);
        if (w.v_bias) l.v_bias = place(end, c.v_dim() * f);
        if (w.q_norm) l.q_norm = place(end, c.head_dim * f);
        if (w.k_norm) l.k_norm = place(end, c.head_dim * f);
        l.ffn_norm = place(end, c.n_embd * f);
        if (ffn) {
            l.gate = place(end, matrix_bytes(w.ffn.gate));
            l.up = place(end, matrix_bytes(w.ffn.up));
            l.down = place(end, matrix_bytes(w.ffn.down));
        }
        l.bytes = end;
    }
    const int64_t n_ctx = model.n_ctx();
    const int64_t h = sizeof(uint16_t);
    costs.kv_values_offset = device_align(n_ctx * c.kv_dim() * h);
    costs.kv_bytes_per_layer = costs.kv_values_offset + device_align(n_ctx * c.v_dim() * h);

    ScratchLayout& s = costs.scratch;
    s.token_batch = std::max<int64_t>(1, token_batch);
    int64_t end = 0;
    const int64_t tb = s.token_batch;
    s.x = place(end, tb * c.n_embd * f);
    s.xn = place(end, tb * c.n_embd * f);
    s.q = place(end, tb * c.q_dim() * f);
    s.k = place(end, tb * c.kv_dim() * f);
    s.v = place(end, tb * c.v_dim() * f);
    s.attn = place(end, tb * c.n_head * c.head_dim_v * f);
    s.tmp = place(end, tb * c.n_embd * f);
    s.gate = ffn ? place(end, tb * c.n_ff * f) : -1;
    s.up = ffn ? place(end, tb * c.n_ff * f) : -1;
    int64_t widest = 0;
    for (int il = 0; il < static_cast<int>(c.n_layer); ++il) {
        const LayerWeights& w = model.layer(il);
        for (const auto* m : {&w.q, &w.k, &w.v, &w.o, &w.ffn.gate, &w.ffn.up, &w.ffn.down}) {
            if (!ffn && (m == &w.ffn.gate || m == &w.ffn.up || m == &w.ffn.down)) continue;
            widest = std::max(widest, m->cols);
            s.w16_elems =
                std::max(s.w16_elems, std::min(m->rows, gemm_tile_rows(m->cols)) * m->cols);
        }
    }
    const int64_t h16 = sizeof(uint16_t);
    s.x16 = place(end, tb * widest * h16);
    s.w16 = place(end, s.w16_elems * h16);
    s.gemm_workspace = place(end, kGemmWorkspaceBytes);
    s.scores = place(end, c.n_head * n_ctx * f);
    s.rope_cos = place(end, n_ctx * (c.n_rot / 2) * f);
    s.rope_sin = place(end, n_ctx * (c.n_rot / 2) * f);
    s.bytes = end;

    OutputLayout& o = costs.output;
    end = 0;
    o.norm = place(end, c.n_embd * f);
    o.head = place(end, matrix_bytes(model.output()));
    o.logits = place(end, c.n_vocab * f);
    o.bytes = end;
    return costs;
}

LayerPlan plan_layer_offload(const LayerOffloadCosts& costs, int requested, int64_t budget_bytes) {
    LayerPlan plan;
    const int n_layer = static_cast<int>(costs.layers.size());
    if (requested == 0 || n_layer == 0) return plan;
    const int want = requested < 0 ? n_layer : std::min(requested, n_layer);
    int64_t used = costs.scratch.bytes;
    int n = 0;
    while (n < want) {
        const int64_t next =
            used + costs.layers[static_cast<size_t>(n)].bytes + costs.kv_bytes_per_layer;
        if (next > budget_bytes) break;
        used = next;
        ++n;
    }
    if (n == 0) {
        plan.note = "no layer fits the VRAM budget of " + mib(std::max<int64_t>(0, budget_bytes)) +
                    " (one layer needs " +
                    mib(costs.scratch.bytes + costs.layers[0].bytes + costs.kv_bytes_per_layer) +
                    "): running on CPU";
        return plan;
    }
    plan.n_gpu_layers = n;
    plan.bytes = used;
    if (n == n_layer && used + costs.output.bytes <= budget_bytes) {
        plan.output_on_gpu = true;
        plan.bytes += costs.output.bytes;
    }
    if (requested > 0 && n < want)
        plan.note = "only " + std::to_string(n) + " of " + std::to_string(want) +
                    " layers fit the VRAM budget of " + mib(budget_bytes);
    return plan;
}

SparseOffloadPlan plan_sparse_offload(const LayerOffloadCosts& costs, int64_t predictor_bytes,
                                      int max_attention_layers, int64_t budget_bytes) {
    SparseOffloadPlan plan;
    plan.budget_bytes = std::max<int64_t>(0, budget_bytes);
    predictor_bytes = std::max<int64_t>(0, predictor_bytes);
    if (predictor_bytes > plan.budget_bytes) {
        plan.attention.note = "the predictors (" + mib(predictor_bytes) +
                              ") do not fit the VRAM budget of " + mib(plan.budget_bytes) +
                              ": attention runs on the CPU";
        return plan;
    }
    plan.predictors_fit = true;
    plan.predictor_bytes = predictor_bytes;
    const int64_t rest = plan.budget_bytes - predictor_bytes;
    if (max_attention_layers != 0 && !costs.layers.empty()) {
        plan.attention = plan_layer_offload(costs, max_attention_layers, rest);
        if (plan.attention.n_gpu_layers == 0)
            plan.attention.note = "no layer's attention fits the VRAM budget of " +
                                  mib(plan.budget_bytes) + " after the predictors (" +
                                  mib(predictor_bytes) + "): attention runs on the CPU";
    }
    plan.hot_neuron_bytes = rest - plan.attention.bytes;
    return plan;
}

int64_t offload_budget_bytes(int64_t device_free_bytes, int64_t vram_budget_mb,
                             int64_t safety_margin_bytes, int64_t device_held_bytes) {
    if (vram_budget_mb == 0) return 0;
    if (vram_budget_mb < 0) return std::max<int64_t>(0, device_free_bytes - safety_margin_bytes);
    int64_t bytes = (vram_budget_mb << 20) - std::max<int64_t>(0, device_held_bytes);
    if (device_free_bytes >= 0) bytes = std::min(bytes, device_free_bytes);
    return std::max<int64_t>(0, bytes);
}

}  // namespace powerinfer::model

namespace powerinfer::model {

int GraphPlan::device_layers() const {
    int n = 0;
    for (const auto& l : layers) n += l.attention == Site::Device ? 1 : 0;
    return n;
}

GraphPlan graph_plan(const LayerPlan& plan, OffloadParts parts) {
    GraphPlan g;
    const LayerSite on_device{Site::Device,
                              parts == OffloadParts::WholeLayers ? Site::Device : Site::Host};
    g.layers.assign(static_cast<size_t>(std::max(0, plan.n_gpu_layers)), on_device);
    g.output = plan.output_on_gpu ? Site::Device : Site::Host;
    return g;
}

}  // namespace powerinfer::model
