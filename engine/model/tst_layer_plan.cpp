// The layer-offload plan and device layout (pure functions, CPU only):
// exact bytes from the tensors' sizes, monotone in the budget, requested
// layer counts, the output head only when every layer fits. Sparse mode's
// plan: predictors first, then attention blocks layer by layer, then the
// head, the rest for hot neurons.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "calibrate/synth_model.h"
#include "common/plain_test.h"
#include "gguf/gguf.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;

namespace {

namespace fs = std::filesystem;

struct Loaded {
    std::shared_ptr<const gguf::GgufFile> file;
    std::unique_ptr<model::Model> model;
};

Loaded load_synth(const fs::path& dir, const calibrate::SynthSpec& spec, tensor::ThreadPool& pool,
                  int64_t n_ctx) {
    const fs::path path =
        dir / (spec.arch + "-" + std::string(ggml_type_name(spec.type)) + ".gguf");
    calibrate::write_synthetic_model(path, spec);
    Loaded l;
    l.file = gguf::GgufFile::open(path);
    l.model = std::make_unique<model::Model>(l.file, pool, n_ctx);
    return l;
}

int64_t al(int64_t b) { return (b + 255) / 256 * 256; }

void test_layout(plaintest::Counter& c, const model::Model& m, const std::string& what) {
    const auto costs = model::layer_offload_costs(m, 8);
    const auto& cfg = m.config();
    bool exact = true, ordered = true;
    for (int il = 0; il < cfg.n_layer; ++il) {
        const auto& w = m.layer(il);
        auto mb = [](const tensor::WeightView& v) { return int64_t(v.row_bytes) * v.rows; };
        int64_t want = al(cfg.n_embd * 4) * 2 + al(mb(w.q)) + al(mb(w.k)) + al(mb(w.v)) +
                       al(mb(w.o)) + al(mb(w.ffn.gate)) + al(mb(w.ffn.up)) + al(mb(w.ffn.down));
        if (w.q_bias) want += al(cfg.q_dim() * 4) + al(cfg.kv_dim() * 4) + al(cfg.v_dim() * 4);
        if (w.q_norm) want += 2 * al(cfg.head_dim * 4);
        const auto& l = costs.layers[size_t(il)];
        exact = exact && l.bytes == want;
        // Offsets are aligned, increasing, and inside the buffer.
        const int64_t offs[] = {l.attn_norm, l.q, l.k, l.v, l.o, l.ffn_norm, l.gate, l.up, l.down};
        for (int64_t o : offs) ordered = ordered && o >= 0 && o % 256 == 0 && o < l.bytes;
        ordered = ordered && (l.q_bias >= 0) == (w.q_bias != nullptr) &&
                  (l.q_norm >= 0) == (w.q_norm != nullptr) &&
                  l.down + al(mb(w.ffn.down)) == l.bytes;
    }
    c.check(exact, what + ": layer bytes = sum of 256-aligned tensor bytes");
    c.check(ordered, what + ": offsets aligned, in order, optional tensors only when present");
    const int64_t n_ctx = m.n_ctx();
    c.check(
        costs.kv_bytes_per_layer == al(n_ctx * cfg.kv_dim() * 2) + al(n_ctx * cfg.v_dim() * 2) &&
            costs.kv_values_offset == al(n_ctx * cfg.kv_dim() * 2),
        what + ": F16 KV cache bytes per layer");
    const auto& s = costs.scratch;
    c.check(s.token_batch == 8 && s.x == 0 && s.xn == al(8 * cfg.n_embd * 4) &&
                s.bytes == s.rope_sin + al(n_ctx * (cfg.n_rot / 2) * 4) &&
                s.scores + al(cfg.n_head * n_ctx * 4) == s.rope_cos,
            what + ": scratch layout");
    // Prefill GEMMs: 8 rows of each activation, F16 activations as wide as
    // the widest input row, one F16 tile big enough for every matrix's tile
    // of whole rows, the cuBLAS workspace, then the attention scores.
    int64_t tile = 0, widest = 0;
    for (int il = 0; il < cfg.n_layer; ++il) {
        const auto& w = m.layer(il);
        for (const auto* v : {&w.q, &w.k, &w.v, &w.o, &w.ffn.gate, &w.ffn.up, &w.ffn.down}) {
            tile = std::max(tile, std::min(v->rows, model::gemm_tile_rows(v->cols)) * v->cols);
            widest = std::max(widest, v->cols);
        }
    }
    c.check(s.gate == s.tmp + al(8 * cfg.n_embd * 4) && s.up == s.gate + al(8 * cfg.n_ff * 4) &&
                s.x16 == s.up + al(8 * cfg.n_ff * 4) && s.w16 == s.x16 + al(8 * widest * 2) &&
                s.w16_elems == tile && s.gemm_workspace == s.w16 + al(tile * 2) &&
                s.scores == s.gemm_workspace + model::kGemmWorkspaceBytes,
            what + ": prefill GEMM scratch (batched rows, F16 activations and tile, workspace)");
    const auto& o = costs.output;
    c.check(o.bytes == al(cfg.n_embd * 4) + al(int64_t(m.output().row_bytes) * m.output().rows) +
                           al(cfg.n_vocab * 4),
            what + ": output head bytes (norm, head weights, one logits row)");
}

void test_plan(plaintest::Counter& c, const model::Model& m) {
    const auto costs = model::layer_offload_costs(m);
    const int n_layer = int(costs.layers.size());
    const int64_t per = costs.layers[0].bytes + costs.kv_bytes_per_layer;
    const int64_t all = costs.scratch.bytes + n_layer * per;

    c.check(model::plan_layer_offload(costs, 0, int64_t{1} << 40).n_gpu_layers == 0,
            "requested 0: nothing offloaded");
    const auto none = model::plan_layer_offload(costs, -1, costs.scratch.bytes + per - 1);
    c.check(none.n_gpu_layers == 0 && none.bytes == 0 &&
                none.note.find("running on CPU") != std::string::npos,
            "one byte short of one layer: none, with a note");
    for (int k = 1; k <= n_layer; ++k) {
        const int64_t exact_budget = costs.scratch.bytes + k * per;
        const auto p = model::plan_layer_offload(costs, -1, exact_budget);
        const auto q = model::plan_layer_offload(costs, -1, exact_budget - 1);
        c.check(p.n_gpu_layers == k && p.bytes == exact_budget && !p.output_on_gpu,
                "budget of exactly " + std::to_string(k) + " layers: " + std::to_string(k) +
                    " layers, exact bytes, no head");
        c.check(q.n_gpu_layers == k - 1, "one byte less: " + std::to_string(k - 1) + " layers");
    }
    const auto full = model::plan_layer_offload(costs, -1, all + costs.output.bytes);
    c.check(full.n_gpu_layers == n_layer && full.output_on_gpu &&
                full.bytes == all + costs.output.bytes && full.note.empty(),
            "all layers and the head fit: everything offloaded, exact bytes");
    const auto no_head = model::plan_layer_offload(costs, -1, all + costs.output.bytes - 1);
    c.check(no_head.n_gpu_layers == n_layer && !no_head.output_on_gpu && no_head.bytes == all,
            "head one byte short: all layers, head on CPU");
    const auto half = model::plan_layer_offload(costs, n_layer / 2, int64_t{1} << 40);
    c.check(half.n_gpu_layers == n_layer / 2 && !half.output_on_gpu && half.note.empty() &&
                half.bytes == costs.scratch.bytes + (n_layer / 2) * per,
            "requested half: half, no head");
    const auto more = model::plan_layer_offload(costs, 1000, int64_t{1} << 40);
    c.check(more.n_gpu_layers == n_layer && more.output_on_gpu && more.note.empty(),
            "requested more than the model has: all layers");
    const auto capped = model::plan_layer_offload(costs, n_layer, costs.scratch.bytes + 2 * per);
    c.check(
        capped.n_gpu_layers == 2 && capped.note.find("only 2 of " + std::to_string(n_layer)) == 0,
        "requested N, budget for 2: 2 with a note saying so");

    // Monotone: more budget never means fewer layers or less memory.
    bool monotone = true;
    model::LayerPlan prev;
    for (int64_t b = 0; b <= all + costs.output.bytes + per; b += std::max<int64_t>(1, per / 7)) {
        const auto p = model::plan_layer_offload(costs, -1, b);
        monotone = monotone && p.n_gpu_layers >= prev.n_gpu_layers && p.bytes >= prev.bytes &&
                   p.bytes <= b && (!prev.output_on_gpu || p.output_on_gpu);
        prev = p;
    }
    c.check(monotone, "plan is monotone in the budget and never exceeds it");
}

// OffloadParts::Attention: the attention half of each layer (both norms, no
// FFN matrices), a scratch without the FFN rows, tiles sized by the
// attention matrices only.
void test_attention_layout(plaintest::Counter& c, const model::Model& m, const std::string& what) {
    const auto whole = model::layer_offload_costs(m, 8);
    const auto costs = model::layer_offload_costs(m, 8, model::OffloadParts::Attention);
    const auto& cfg = m.config();
    auto mb = [](const tensor::WeightView& v) { return int64_t(v.row_bytes) * v.rows; };
    bool exact = true;
    for (int il = 0; il < cfg.n_layer; ++il) {
        const auto& w = m.layer(il);
        int64_t want =
            al(cfg.n_embd * 4) * 2 + al(mb(w.q)) + al(mb(w.k)) + al(mb(w.v)) + al(mb(w.o));
        if (w.q_bias) want += al(cfg.q_dim() * 4) + al(cfg.kv_dim() * 4) + al(cfg.v_dim() * 4);
        if (w.q_norm) want += 2 * al(cfg.head_dim * 4);
        const auto& l = costs.layers[size_t(il)];
        const auto& lw = whole.layers[size_t(il)];
        exact = exact && l.bytes == want && l.gate == -1 && l.up == -1 && l.down == -1 &&
                l.ffn_norm >= 0 && l.ffn_norm + al(cfg.n_embd * 4) == l.bytes && l.q == lw.q &&
                l.o == lw.o && l.ffn_norm == lw.ffn_norm &&
                lw.bytes == l.bytes + al(mb(w.ffn.gate)) + al(mb(w.ffn.up)) + al(mb(w.ffn.down));
    }
    c.check(costs.parts == model::OffloadParts::Attention && exact,
            what + ": attention layout = the whole layer's up to the FFN norm, no FFN matrices");
    c.check(costs.kv_bytes_per_layer == whole.kv_bytes_per_layer &&
                costs.output.bytes == whole.output.bytes,
            what + ": attention: same KV cache and head as whole layers");
    int64_t tile = 0, widest = 0;
    for (int il = 0; il < cfg.n_layer; ++il) {
        const auto& w = m.layer(il);
        for (const auto* v : {&w.q, &w.k, &w.v, &w.o}) {
            tile = std::max(tile, std::min(v->rows, model::gemm_tile_rows(v->cols)) * v->cols);
            widest = std::max(widest, v->cols);
        }
    }
    const auto& s = costs.scratch;
    c.check(s.gate == -1 && s.up == -1 && s.x16 == s.tmp + al(8 * cfg.n_embd * 4) &&
                s.w16 == s.x16 + al(8 * widest * 2) && s.w16_elems == tile &&
                s.gemm_workspace == s.w16 + al(tile * 2) &&
                s.scores == s.gemm_workspace + model::kGemmWorkspaceBytes &&
                s.bytes == s.rope_sin + al(m.n_ctx() * (cfg.n_rot / 2) * 4) &&
                s.bytes < whole.scratch.bytes,
            what + ": attention scratch: no FFN rows, tiles of the attention matrices only");
}

// Sparse mode: predictors, then attention blocks, then the head; hot
// neurons get exactly the rest.
void test_sparse_plan(plaintest::Counter& c, const model::Model& m) {
    const auto costs = model::layer_offload_costs(m, 128, model::OffloadParts::Attention);
    const int n_layer = int(costs.layers.size());
    const int64_t per = costs.layers[0].bytes + costs.kv_bytes_per_layer;
    const int64_t pred = 3 * 1000 * 1000 + 17;  // any size, not aligned
    const int64_t all = pred + costs.scratch.bytes + n_layer * per;
    const int64_t head = costs.output.bytes;

    const auto none = model::plan_sparse_offload(costs, pred, -1, pred - 1);
    c.check(!none.predictors_fit && none.predictor_bytes == 0 && none.attention.n_gpu_layers == 0 &&
                none.hot_neuron_bytes == 0 &&
                none.attention.note.find("predictors") != std::string::npos,
            "sparse plan: predictors one byte short: nothing on the device, a note (" +
                none.attention.note + ")");
    const auto only_pred = model::plan_sparse_offload(costs, pred, -1, pred);
    c.check(only_pred.predictors_fit && only_pred.predictor_bytes == pred &&
                only_pred.attention.n_gpu_layers == 0 && only_pred.hot_neuron_bytes == 0 &&
                only_pred.attention.note.find("attention runs on the CPU") != std::string::npos,
            "sparse plan: budget = predictors: no attention, no hot neurons, a note");
    bool exact = true, short_by_one = true;
    for (int k = 1; k <= n_layer; ++k) {
        const int64_t b = pred + costs.scratch.bytes + k * per;
        const auto p = model::plan_sparse_offload(costs, pred, -1, b);
        const auto q = model::plan_sparse_offload(costs, pred, -1, b - 1);
        exact = exact && p.attention.n_gpu_layers == k && !p.attention.output_on_gpu &&
                p.attention.bytes == costs.scratch.bytes + k * per && p.hot_neuron_bytes == 0;
        // One byte less: one layer less, and what that layer would have
        // taken goes to the hot neurons.
        short_by_one = short_by_one && q.attention.n_gpu_layers == k - 1 &&
                       q.predictor_bytes + q.attention.bytes + q.hot_neuron_bytes == b - 1 &&
                       q.hot_neuron_bytes == (k == 1 ? b - 1 - pred : per - 1);
    }
    c.check(exact,
            "sparse plan: budget of predictors + k attention blocks: k layers, exact "
            "bytes, nothing left for hot neurons");
    c.check(short_by_one,
            "sparse plan: one byte less: one layer less, its bytes go to hot neurons");
    const auto full = model::plan_sparse_offload(costs, pred, -1, all + head + 12345);
    c.check(full.attention.n_gpu_layers == n_layer && full.attention.output_on_gpu &&
                full.attention.bytes == all - pred + head && full.hot_neuron_bytes == 12345 &&
                full.attention.note.empty(),
            "sparse plan: everything fits: all attention, the head, the rest (12345 bytes) for "
            "hot neurons");
    const auto no_head = model::plan_sparse_offload(costs, pred, -1, all + head - 1);
    c.check(no_head.attention.n_gpu_layers == n_layer && !no_head.attention.output_on_gpu &&
                no_head.hot_neuron_bytes == head - 1,
            "sparse plan: head one byte short: head on the CPU, its room to hot neurons");
    const auto off = model::plan_sparse_offload(costs, pred, 0, all + head);
    c.check(off.attention.n_gpu_layers == 0 && off.attention.bytes == 0 &&
                off.hot_neuron_bytes == all + head - pred && off.attention.note.empty(),
            "sparse plan: gpu_attention_layers 0: predictors and hot neurons only");
    const auto two = model::plan_sparse_offload(costs, pred, 2, all + head);
    c.check(two.attention.n_gpu_layers == 2 && !two.attention.output_on_gpu &&
                two.attention.bytes == costs.scratch.bytes + 2 * per &&
                two.hot_neuron_bytes == all + head - pred - two.attention.bytes,
            "sparse plan: at most 2 attention layers: 2, no head, the rest to hot neurons");

    // Monotone: more budget never means fewer attention layers or losing the
    // head; everything adds up to the budget; once the attention and head are
    // placed, the hot-neuron room only grows.
    bool monotone = true, sums = true, hot_grows = true;
    model::SparseOffloadPlan prev;
    for (int64_t b = 0; b <= all + head + 3 * per; b += std::max<int64_t>(1, per / 5)) {
        const auto p = model::plan_sparse_offload(costs, pred, -1, b);
        monotone = monotone && p.attention.n_gpu_layers >= prev.attention.n_gpu_layers &&
                   p.attention.bytes >= prev.attention.bytes &&
                   (!prev.attention.output_on_gpu || p.attention.output_on_gpu) &&
                   (!prev.predictors_fit || p.predictors_fit);
        sums = sums &&
               (p.predictors_fit ? p.predictor_bytes + p.attention.bytes + p.hot_neuron_bytes == b
                                 : p.hot_neuron_bytes == 0 && p.attention.bytes == 0);
        if (prev.attention.output_on_gpu)
            hot_grows = hot_grows && p.hot_neuron_bytes >= prev.hot_neuron_bytes;
        prev = p;
    }
    c.check(monotone, "sparse plan: monotone in the budget (layers, bytes, head, predictors)");
    c.check(sums, "sparse plan: predictors + attention + hot-neuron room = the budget");
    c.check(hot_grows, "sparse plan: once attention and head are placed, hot room only grows");
}

void test_budget(plaintest::Counter& c) {
    const int64_t mib = int64_t{1} << 20;
    c.check(model::offload_budget_bytes(8000 * mib, -1, 512 * mib) == 7488 * mib,
            "auto budget: free minus margin");
    c.check(model::offload_budget_bytes(100 * mib, -1, 512 * mib) == 0,
            "auto budget never negative");
    c.check(model::offload_budget_bytes(8000 * mib, 2000, 512 * mib) == 2000 * mib,
            "a set vram_budget_mb wins");
    c.check(model::offload_budget_bytes(-1, -1, 512 * mib) == 0, "unknown free memory: nothing");
    c.check(model::offload_budget_bytes(-1, -7, 512 * mib) == 0 &&
                model::offload_budget_bytes(8000 * mib, -7, 512 * mib) == 7488 * mib,
            "any negative vram_budget_mb is auto");
    // 0 = nothing on the GPU (not auto), whatever is free.
    c.check(model::offload_budget_bytes(8000 * mib, 0, 512 * mib) == 0 &&
                model::offload_budget_bytes(-1, 0, 512 * mib) == 0 &&
                model::offload_budget_bytes(8000 * mib, 0, 512 * mib, 32 * mib) == 0,
            "vram_budget_mb 0: a zero budget");
    // The device's own staging counts against a set budget (already gone
    // from the free memory an auto budget sees).
    c.check(model::offload_budget_bytes(8000 * mib, 2000, 512 * mib, 40 * mib) == 1960 * mib,
            "a set budget less what the device holds");
    c.check(model::offload_budget_bytes(8000 * mib, 20, 512 * mib, 40 * mib) == 0,
            "a set budget smaller than what the device holds: 0, never negative");
    c.check(model::offload_budget_bytes(8000 * mib, -1, 512 * mib, 40 * mib) == 7488 * mib,
            "auto: the held bytes are already out of the free memory");
    // cudaMemGetInfo is the truth: a set budget above what is free is capped.
    c.check(model::offload_budget_bytes(1000 * mib, 2000, 512 * mib) == 1000 * mib,
            "a set budget is capped at the free memory");
    c.check(model::offload_budget_bytes(-1, 2000, 512 * mib) == 2000 * mib,
            "free memory unknown: the set budget");
    // 64-bit: a budget beyond 2^31 MiB bytes.
    c.check(model::offload_budget_bytes(-1, 3000000, 0) == int64_t{3000000} << 20,
            "64-bit budget arithmetic");
}

}  // namespace

int main() {
    plaintest::Counter c;
    const fs::path dir = fs::temp_directory_path() / "pi_tst_layer_plan";
    fs::create_directories(dir);
    tensor::ThreadPool pool(1);
    try {
        calibrate::SynthSpec spec;
        spec.n_layer = 6;
        spec.n_embd = 256;
        spec.n_ff = 512;
        spec.n_head = 4;
        spec.n_head_kv = 2;
        spec.n_ctx = 256;
        spec.write_sidecar = false;
        for (const char* arch : {"llama", "qwen2", "qwen3"}) {
            spec.arch = arch;
            spec.type = spec.arch == "qwen3" ? GgmlType::Q6_K : GgmlType::Q4_0;
            spec.tied_output = spec.arch == "qwen2";
            auto l = load_synth(dir, spec, pool, 100);
            test_layout(c, *l.model, spec.arch);
            test_attention_layout(c, *l.model, spec.arch);
            if (spec.arch == "llama") {
                test_plan(c, *l.model);
                test_sparse_plan(c, *l.model);
            }
        }
        test_budget(c);
    } catch (const std::exception& e) {
        std::printf("FAIL: exception: %s\n", e.what());
        c.failed++;
    }
    fs::remove_all(dir);
    return c.finish();
}
