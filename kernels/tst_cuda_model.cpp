// Layer offload on the GPU against the CPU model (the reference): synthetic
// models of several architectures and quant types, all layers (with the
// output head) and half the layers on the GPU; the new layer kernels against
// scalar references; budget accounting and graceful degradation when
// allocations fail. Plain C++ (the GPU machine has no Qt); exits 77 without
// a device.
//
// Prefill with cuBLAS: a 37-token prompt through the GEMM path (one batch of
// 37; and chunks of 18, 18, 1 that mix GEMM batches at later positions with
// a single token) against the per-token path and the CPU model, then decode
// on the KV cache the GEMMs wrote; the executor's counters prove which path
// ran. cuBLAS must be present on the GPU machine (the toolkit ships it).
//
// Tolerance: the CPU quantizes activations to Q8 for its quantized dot
// products and the GPU keeps them in F32 (F16 for the prefill GEMMs), so
// logits differ by rounding. We
// require a relative RMS difference of the logits below kLogitsRelRms and
// the same greedy token wherever the CPU's top two logits are further apart
// than 3x the largest logit difference seen at that step.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "calibrate/synth_model.h"
#include "cublas_loader.h"
#include "cuda_device.h"
#include "cuda_layers.h"
#include "cuda_ops.h"
#include "gguf/gguf.h"
#include "gpu_test.h"
#include "model/layer_plan.h"
#include "model/model.h"
#include "powerinfer/engine.h"
#include "runtime/local_engine.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

using namespace powerinfer;
using gputest::argmax;
using gputest::compare_logits;
using gputest::compare_rows;
using gputest::DeviceBuffer;
using gputest::random_floats;
using gputest::random_prompt;
using gputest::RowsCompare;
using gputest::sync_ok;
using gputest::top_gap;
namespace fs = std::filesystem;

namespace {

constexpr double kLogitsRelRms = 0.03;
constexpr int64_t kCtx = 96;

float round_f16(float x) { return tensor::fp16_to_fp32(tensor::fp32_to_fp16(x)); }

// ---- the new layer kernels against scalar references ----------------------

void test_rms_norm_rows(gputest::Counter& c, std::mt19937& rng) {
    const int64_t rows = 5, n = 96;
    const auto x = random_floats(size_t(rows * n), rng, 2.f);
    const auto w = random_floats(size_t(n), rng);
    DeviceBuffer<float> dx(x), dw(w), dy(x.size());
    cuda::rms_norm_rows(dx.ptr, dw.ptr, dy.ptr, rows, n, 1e-5f, nullptr);
    cuda::rms_norm_rows(dx.ptr, dw.ptr, dx.ptr, rows, n, 1e-5f, nullptr);  // in place
    if (!sync_ok(c, "rms_norm_rows")) return;
    const auto y = dy.download(x.size()), y2 = dx.download(x.size());
    double worst = 0;
    for (int64_t r = 0; r < rows; ++r) {
        double ss = 0;
        for (int64_t i = 0; i < n; ++i) ss += double(x[size_t(r * n + i)]) * x[size_t(r * n + i)];
        const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
        for (int64_t i = 0; i < n; ++i) {
            const double want = x[size_t(r * n + i)] * scale * w[size_t(i)];
            worst = std::max({worst, std::fabs(y[size_t(r * n + i)] - want),
                              std::fabs(y2[size_t(r * n + i)] - want)});
        }
    }
    c.check(worst < 1e-4,
            "rms_norm_rows (and in place) matches the reference, max err " + std::to_string(worst));
}

void test_rope_table(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_head = 3, hd = 64, n_rot = 32, half = n_rot / 2;
    const auto v = random_floats(size_t(n_head * hd), rng);
    const auto cs = random_floats(size_t(half), rng), sn = random_floats(size_t(half), rng);
    for (bool neox : {false, true}) {
        DeviceBuffer<float> dv(v), dc(cs), ds(sn);
        cuda::rope_table(dv.ptr, n_head, hd, n_rot, dc.ptr, ds.ptr, neox, nullptr);
        if (!sync_ok(c, "rope_table")) return;
        const auto got = dv.download(v.size());
        std::vector<float> want = v;
        for (int64_t h = 0; h < n_head; ++h) {
            float* head = want.data() + h * hd;
            for (int64_t i = 0; i < half; ++i) {
                const int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
                const float x0 = head[a], x1 = head[b];
                head[a] = x0 * cs[size_t(i)] - x1 * sn[size_t(i)];
                head[b] = x0 * sn[size_t(i)] + x1 * cs[size_t(i)];
            }
        }
        double worst = 0;
        for (size_t i = 0; i < v.size(); ++i)
            worst = std::max(worst, double(std::fabs(got[i] - want[i])));
        c.check(worst < 1e-5, std::string("rope_table ") + (neox ? "neox" : "normal") +
                                  " (partial rotation) matches, max err " + std::to_string(worst));
    }
}

void test_attention_f16(gputest::Counter& c, std::mt19937& rng) {
    // GQA 8/2, K and V of different widths, more keys than threads per block.
    const int64_t n_head = 8, n_kv = 2, hd = 128, hdv = 64, n_ctx = 400, n_keys = 301, pos = 300;
    const auto q = random_floats(size_t(n_head * hd), rng, 0.3f);
    std::vector<uint16_t> kc(size_t(n_kv * n_ctx * hd)), vc(size_t(n_kv * n_ctx * hdv));
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& k : kc) k = tensor::fp32_to_fp16(nd(rng));
    for (auto& v : vc) v = tensor::fp32_to_fp16(nd(rng));
    // The newest key/value row goes in through store_kv_f16.
    const auto k_new = random_floats(size_t(n_kv * hd), rng),
               v_new = random_floats(size_t(n_kv * hdv), rng);
    for (int64_t g = 0; g < n_kv; ++g) {
        for (int64_t d = 0; d < hd; ++d)
            kc[size_t((g * n_ctx + pos) * hd + d)] =
                tensor::fp32_to_fp16(k_new[size_t(g * hd + d)]);
        for (int64_t d = 0; d < hdv; ++d)
            vc[size_t((g * n_ctx + pos) * hdv + d)] =
                tensor::fp32_to_fp16(v_new[size_t(g * hdv + d)]);
    }
    std::vector<uint16_t> kc_dev = kc, vc_dev = vc;
    for (int64_t g = 0; g < n_kv; ++g) {  // scribble over row pos on the device copy
        for (int64_t d = 0; d < hd; ++d) kc_dev[size_t((g * n_ctx + pos) * hd + d)] = 0x7C00;
        for (int64_t d = 0; d < hdv; ++d) vc_dev[size_t((g * n_ctx + pos) * hdv + d)] = 0x7C00;
    }
    DeviceBuffer<float> dq(q), dkn(k_new), dvn(v_new), out(size_t(n_head * hdv)),
        scores(size_t(n_head * n_ctx));
    DeviceBuffer<uint16_t> dk(kc_dev), dv(vc_dev);
    cuda::store_kv_f16(dkn.ptr, dk.ptr, n_kv, n_ctx, hd, pos, nullptr);
    cuda::store_kv_f16(dvn.ptr, dv.ptr, n_kv, n_ctx, hdv, pos, nullptr);
    cuda::attention_decode_f16(dq.ptr, dk.ptr, dv.ptr, out.ptr, n_head, n_kv, hd, hdv, n_ctx,
                               n_keys, scores.ptr, nullptr);
    if (!sync_ok(c, "attention_decode_f16")) return;
    c.check(dk.download(kc.size()) == kc && dv.download(vc.size()) == vc,
            "store_kv_f16 writes row pos of each head, F16 round-to-nearest-even");
    const auto got = out.download(size_t(n_head * hdv));
    double worst = 0;
    for (int64_t h = 0; h < n_head; ++h) {
        const int64_t g = h / (n_head / n_kv);
        std::vector<double> s(static_cast<size_t>(n_keys));
        double m = -1e300, sum = 0;
        for (int64_t t = 0; t < n_keys; ++t) {
            double d = 0;
            for (int64_t i = 0; i < hd; ++i)
                d += double(round_f16(q[size_t(h * hd + i)])) *
                     tensor::fp16_to_fp32(kc[size_t((g * n_ctx + t) * hd + i)]);
            s[size_t(t)] = d / std::sqrt(double(hd));
            m = std::max(m, s[size_t(t)]);
        }
        for (auto& x : s) sum += (x = std::exp(x - m));
        for (int64_t d = 0; d < hdv; ++d) {
            double acc = 0;
            for (int64_t t = 0; t < n_keys; ++t)
                acc += s[size_t(t)] * tensor::fp16_to_fp32(vc[size_t((g * n_ctx + t) * hdv + d)]);
            worst = std::max(worst, std::fabs(got[size_t(h * hdv + d)] - acc / sum));
        }
    }
    c.check(worst < 2e-3, "attention_decode_f16 (GQA, 301 keys, hd 128, hdv 64) matches, max err " +
                              std::to_string(worst));
}

// ---- whole models ----------------------------------------------------------

using Case = gputest::ModelCase;

struct Models {
    fs::path path;
    std::shared_ptr<const gguf::GgufFile> file;
    std::unique_ptr<model::Model> cpu, gpu;
};

Models open_models(const fs::path& dir, const Case& k, tensor::ThreadPool& pool) {
    calibrate::SynthSpec spec = gputest::case_spec(k, 512);
    spec.write_sidecar = false;
    Models m;
    m.path = dir / (std::string(k.arch) + "-" + std::string(ggml_type_name(k.type)) + ".gguf");
    calibrate::write_synthetic_model(m.path, spec);
    m.file = gguf::GgufFile::open(m.path);
    m.cpu =
        std::make_unique<model::Model>(m.file, pool, kCtx, 5);  // chunks of 5: several per prompt
    m.gpu = std::make_unique<model::Model>(m.file, pool, kCtx, 5);
    return m;
}

// Prompt (all logits, several chunks) then teacher-forced greedy decode; the
// GPU model must track the CPU model.
void check_against_cpu(gputest::Counter& c, Models& m, const std::string& what,
                       int64_t n_prompt = 13) {
    const int64_t V = m.cpu->config().n_vocab;
    const std::vector<int32_t> prompt = random_prompt(n_prompt, V);
    const int64_t n = int64_t(prompt.size());
    std::vector<float> lc(size_t(n * V)), lg(size_t(n * V));
    m.cpu->forward(prompt.data(), n, 0, n, lc.data());
    m.gpu->forward(prompt.data(), n, 0, n, lg.data());
    const RowsCompare pc = compare_rows(lg.data(), lc.data(), n, V);
    const double worst_rms = pc.worst_rms;
    c.check(worst_rms < kLogitsRelRms, what + ": prompt logits (" + std::to_string(n) +
                                           " tokens, chunks of " +
                                           std::to_string(m.gpu->chunk_size()) +
                                           "), worst rel RMS " + std::to_string(worst_rms));
    c.check(pc.disagree == 0, what + ": prompt greedy tokens agree (" + std::to_string(pc.agree) +
                                  " clear, " + std::to_string(pc.ties) + " near ties)");
    // Hidden state after the last layer agrees as well (calibration reads it).
    const auto hc =
        compare_logits(m.gpu->last_hidden(), m.cpu->last_hidden(), m.cpu->config().n_embd);
    c.check(hc.rel_rms < kLogitsRelRms,
            what + ": last hidden state rel RMS " + std::to_string(hc.rel_rms));

    std::vector<float> dc(static_cast<size_t>(V)), dg(static_cast<size_t>(V));
    std::copy(lc.end() - V, lc.end(), dc.begin());
    std::copy(lg.end() - V, lg.end(), dg.begin());
    int agree = 0, ties = 0, disagree = 0;
    double decode_rms = 0;
    for (int64_t step = 0; step < 8; ++step) {
        const auto cmp = compare_logits(dg.data(), dc.data(), V);
        if (top_gap(dc.data(), V) > 3 * cmp.max_abs) {
            (argmax(dg.data(), V) == argmax(dc.data(), V) ? agree : disagree)++;
        } else {
            ++ties;
        }
        const int32_t tok = int32_t(argmax(dc.data(), V));
        m.cpu->forward(&tok, 1, n + step, 1, dc.data());
        m.gpu->forward(&tok, 1, n + step, 1, dg.data());
        decode_rms = std::max(decode_rms, compare_logits(dg.data(), dc.data(), V).rel_rms);
    }
    c.check(decode_rms < kLogitsRelRms,
            what + ": decode logits (8 steps), worst rel RMS " + std::to_string(decode_rms));
    c.check(disagree == 0, what + ": greedy tokens agree (" + std::to_string(agree) + " clear, " +
                               std::to_string(ties) + " near ties, " + std::to_string(disagree) +
                               " disagreements)");
    std::printf("  %s: prompt rel RMS %.2e, decode rel RMS %.2e, greedy %d/%d clear steps\n",
                what.c_str(), worst_rms, decode_rms, agree, agree + disagree);
}

// A device whose budget leaves `budget` bytes after its own staging (a
// 32 MiB arena: no layers are configured on it).
std::unique_ptr<backend::Device> cuda_device(int64_t budget) {
    cuda::CudaDeviceOptions o;
    o.budget_bytes = budget + cuda::staging_bytes({}, 0);
    return cuda::make_cuda_device(o);
}

// Everything the device holds besides its own staging.
int64_t held(backend::Device& dev) {
    const auto m = dev.memory();
    return m.used_total() - m.used_by(backend::MemCategory::Staging);
}

void test_model(gputest::Counter& c, const fs::path& dir, const Case& k, tensor::ThreadPool& pool) {
    const std::string name = std::string(k.arch) + " " + std::string(ggml_type_name(k.type)) +
                             " heads " + std::to_string(k.n_head) + "/" +
                             std::to_string(k.n_head_kv) + (k.tied ? " tied" : "");
    for (int part : {-1, 2}) {  // all layers with the head, then the first half
        Models m = open_models(dir, k, pool);
        auto dev = cuda_device(int64_t{1} << 30);
        const auto costs = model::layer_offload_costs(*m.gpu);
        const auto plan = model::plan_layer_offload(costs, part, dev->memory().available());
        std::string note;
        auto exec = cuda::make_cuda_layer_executor(*m.gpu, *dev, plan, note);
        const std::string what = name + (part < 0 ? ", all layers" : ", 2 of 4 layers");
        if (!exec) {
            c.check(false, what + ": executor created (" + note + ")");
            continue;
        }
        // The note may only say how prompts are processed (cuBLAS missing).
        c.check(exec->n_layers() == (part < 0 ? 4 : 2) && exec->runs_output() == (part < 0) &&
                    (note.empty() || (note.find("token by token") != std::string::npos &&
                                      note.find(" fit") == std::string::npos)),
                what + ": planned layers placed (" + note + ")");
        c.check(held(*dev) == plan.bytes && dev->memory().used_by(backend::MemCategory::Staging) ==
                                                cuda::staging_bytes({}, 0),
                what + ": device accounting equals the plan (" + std::to_string(plan.bytes) +
                    " bytes) plus the 32 MiB staging arena");
        m.gpu->set_layer_executor(exec.get());
        try {
            check_against_cpu(c, m, what);
        } catch (const std::exception& e) {
            c.check(false, what + ": threw " + e.what());
        }
        m.gpu->set_layer_executor(nullptr);
        exec.reset();
        c.check(held(*dev) == 0, what + ": everything freed with the executor");
    }
}

// Prefill through cuBLAS GEMMs vs token by token vs the CPU model, on a
// 37-token prompt, all layers and the head on the GPU.
void test_prefill(gputest::Counter& c, const fs::path& dir, const Case& k,
                  tensor::ThreadPool& pool) {
    const std::string name = std::string(k.arch) + " " + std::string(ggml_type_name(k.type));
    constexpr int64_t kPrompt = 37, kDecode = 8;
    for (int64_t chunk : {int64_t{64}, int64_t{18}}) {
        Models m = open_models(dir, k, pool);
        m.cpu->set_chunk_size(chunk);
        m.gpu->set_chunk_size(chunk);
        // A third model runs the same layers token by token.
        model::Model token_model(m.file, pool, kCtx, chunk);
        auto dev = cuda_device(int64_t{1} << 30);
        const auto plan =
            model::plan_layer_offload(model::layer_offload_costs(*m.gpu), -1, int64_t{1} << 30);
        const auto plan2 = model::plan_layer_offload(model::layer_offload_costs(token_model), -1,
                                                     int64_t{1} << 30);
        std::string note, note2;
        auto gemm = cuda::make_cuda_layer_executor(*m.gpu, *dev, plan, note);
        cuda::CudaLayerOptions per_token;
        per_token.prefill_gemm = false;
        auto single = cuda::make_cuda_layer_executor(token_model, *dev, plan2, note2, per_token);
        const std::string what = name + ", prefill in chunks of " + std::to_string(chunk);
        if (!gemm || !single) {
            c.check(false, what + ": executors created (" + note + " / " + note2 + ")");
            continue;
        }
        c.check(cuda::layer_offload_stats(*gemm).prefill_gemm && note.empty(),
                what + ": cuBLAS ready for prefill (" + note + "; " +
                    cuda::cublas_library().reason + ")");
        c.check(!cuda::layer_offload_stats(*single).prefill_gemm &&
                    note2.find("token by token") != std::string::npos,
                what + ": GEMMs off: the note says so (" + note2 + ")");
        m.gpu->set_layer_executor(gemm.get());
        token_model.set_layer_executor(single.get());

        const int64_t V = m.cpu->config().n_vocab;
        const auto prompt = random_prompt(kPrompt, V);
        std::vector<float> lc(size_t(kPrompt * V)), lg(lc.size()), lt(lc.size());
        try {
            m.cpu->forward(prompt.data(), kPrompt, 0, kPrompt, lc.data());
            m.gpu->forward(prompt.data(), kPrompt, 0, kPrompt, lg.data());
            token_model.forward(prompt.data(), kPrompt, 0, kPrompt, lt.data());
        } catch (const std::exception& e) {
            c.check(false, what + ": prompt threw " + e.what());
            continue;
        }
        const auto sg = cuda::layer_offload_stats(*gemm), st = cuda::layer_offload_stats(*single);
        const int64_t want_gemm = chunk >= kPrompt ? kPrompt : kPrompt - kPrompt % chunk;
        c.check(sg.gemm_tokens == want_gemm && sg.token_by_token == kPrompt - want_gemm,
                what + ": " + std::to_string(sg.gemm_tokens) +
                    " prompt tokens through the GEMMs, " + std::to_string(sg.token_by_token) +
                    " token by token (want " + std::to_string(want_gemm) + ", " +
                    std::to_string(kPrompt - want_gemm) + ")");
        c.check(st.gemm_tokens == 0 && st.token_by_token == kPrompt,
                what + ": GEMMs off: every prompt token went token by token");
        const RowsCompare gc = compare_rows(lg.data(), lc.data(), kPrompt, V);
        const RowsCompare tc = compare_rows(lt.data(), lc.data(), kPrompt, V);
        const RowsCompare gt = compare_rows(lg.data(), lt.data(), kPrompt, V);
        c.check(gc.worst_rms < kLogitsRelRms && gc.disagree == 0,
                what + ": GEMM prefill vs CPU, worst rel RMS " + std::to_string(gc.worst_rms) +
                    ", greedy " + std::to_string(gc.agree) + " clear agree, " +
                    std::to_string(gc.disagree) + " disagree");
        c.check(tc.worst_rms < kLogitsRelRms && tc.disagree == 0,
                what + ": per-token prefill vs CPU, worst rel RMS " + std::to_string(tc.worst_rms));
        c.check(gt.worst_rms < kLogitsRelRms && gt.disagree == 0,
                what + ": GEMM vs per-token prefill, worst rel RMS " +
                    std::to_string(gt.worst_rms) + ", greedy " + std::to_string(gt.agree) +
                    " clear agree");
        // Decode on the KV cache the GEMM batches wrote.
        std::vector<float> dc(static_cast<size_t>(V)), dg(dc.size());
        double decode_rms = 0;
        int disagree = 0;
        int32_t tok = int32_t(argmax(lc.data() + (kPrompt - 1) * V, V));
        for (int64_t step = 0; step < kDecode; ++step) {
            m.cpu->forward(&tok, 1, kPrompt + step, 1, dc.data());
            m.gpu->forward(&tok, 1, kPrompt + step, 1, dg.data());
            const RowsCompare r = compare_rows(dg.data(), dc.data(), 1, V);
            decode_rms = std::max(decode_rms, r.worst_rms);
            disagree += r.disagree;
            tok = int32_t(argmax(dc.data(), V));
        }
        c.check(
            decode_rms < kLogitsRelRms && disagree == 0,
            what + ": decode after the GEMM prefill, worst rel RMS " + std::to_string(decode_rms));
        c.check(cuda::layer_offload_stats(*gemm).gemm_tokens == want_gemm,
                what + ": single decode tokens never take the GEMM path");
        std::printf("  %s: rel RMS vs CPU: GEMM %.2e, per token %.2e; GEMM vs per token %.2e\n",
                    what.c_str(), gc.worst_rms, tc.worst_rms, gt.worst_rms);
        m.gpu->set_layer_executor(nullptr);
        token_model.set_layer_executor(nullptr);
    }
}

void test_degrade(gputest::Counter& c, const fs::path& dir, tensor::ThreadPool& pool) {
    const Case k{"llama", GgmlType::Q4_0, 8, 2, false};
    Models m = open_models(dir, k, pool);
    const auto costs = model::layer_offload_costs(*m.gpu);
    const int64_t per = costs.layers[0].bytes + costs.kv_bytes_per_layer;
    const int64_t two = costs.scratch.bytes + 2 * per;

    // The planner on a device whose budget holds exactly two layers.
    {
        auto dev = cuda_device(two);
        const auto plan = model::plan_layer_offload(costs, -1, dev->memory().available());
        c.check(plan.n_gpu_layers == 2 && !plan.output_on_gpu && plan.bytes == two,
                "plan on a two-layer budget: 2 layers, exact bytes");
    }
    // A plan that asks for more than the device's budget allows: the
    // executor keeps what fits, says so, and the model still matches.
    {
        auto dev = cuda_device(two);
        model::LayerPlan greedy;
        greedy.n_gpu_layers = 4;
        greedy.output_on_gpu = true;
        std::string note;
        auto exec = cuda::make_cuda_layer_executor(*m.gpu, *dev, greedy, note);
        c.check(exec && exec->n_layers() == 2 && !exec->runs_output() &&
                    note.find("only 2 of 4 layers") == 0,
                "over-budget plan degrades to 2 layers with a note (" + note + ")");
        c.check(held(*dev) == two, "degraded: accounting equals what was placed");
        if (exec) {
            m.gpu->set_layer_executor(exec.get());
            check_against_cpu(c, m, "degraded to 2 layers");
            m.gpu->set_layer_executor(nullptr);
        }
    }
    // Not even the scratch fits: no executor, a note, nothing allocated.
    {
        auto dev = cuda_device(costs.scratch.bytes - 1);
        model::LayerPlan want;
        want.n_gpu_layers = 1;
        std::string note;
        auto exec = cuda::make_cuda_layer_executor(*m.gpu, *dev, want, note);
        c.check(!exec && note.find("running on CPU") != std::string::npos && held(*dev) == 0,
                "nothing fits: no executor, CPU, nothing left allocated (" + note + ")");
    }
    // A plan of zero layers: no executor, the plan's note passed on.
    {
        auto dev = cuda_device(int64_t{1} << 30);
        const auto plan = model::plan_layer_offload(costs, -1, 1000);
        std::string note;
        auto exec = cuda::make_cuda_layer_executor(*m.gpu, *dev, plan, note);
        c.check(!exec && note == plan.note, "zero-layer plan: no executor, the plan's note");
    }
}

// The facade: LocalEngine with gpu_layers -1 against gpu_layers 0.
void test_engine(gputest::Counter& c, const fs::path& dir) {
    calibrate::SynthSpec spec;
    spec.n_layer = 6;
    spec.n_embd = 256;
    spec.n_ff = 512;
    spec.n_head = 8;
    spec.n_head_kv = 4;
    spec.random_norms = true;
    spec.write_sidecar = false;
    const fs::path path = dir / "engine.gguf";
    calibrate::write_synthetic_model(path, spec);
    auto load = [&](int gpu_layers) {
        LoadOptions o;
        o.model_path = path;
        o.n_threads = 4;
        o.n_ctx = 256;
        o.gpu_layers = gpu_layers;
        o.tuning.sparse = false;
        return runtime::LocalEngine::load(o);
    };
    auto cpu = load(0);
    auto gpu = load(-1);
    auto half = load(3);
    std::printf("  engine: %s\n  engine: %s\n", gpu->info().offload_status.c_str(),
                half->info().offload_status.c_str());
    c.check(gpu->info().gpu_layers == 6 &&
                gpu->info().offload_status.find("with the output head") != std::string::npos,
            "engine gpu_layers -1: all 6 layers and the head on the GPU");
    c.check(half->info().gpu_layers == 3, "engine gpu_layers 3: 3 layers on the GPU");
    const MemoryReport mr = gpu->memory();
    c.check(mr.dense_weights > 0 && mr.kv_cache > 0 && !mr.simulated,
            "engine memory report: GPU weights and KV cache");
    GenerateRequest r;
    r.prompt = "the quick brown fox jumps over the lazy dog";
    r.max_tokens = 16;
    r.sampling.temperature = 0;
    const auto a = cpu->generate(r, nullptr), b = gpu->generate(r, nullptr);
    c.check(b.generated_tokens > 0, "engine on the GPU generates");
    std::printf("  engine greedy, CPU: '%s'\n  engine greedy, GPU: '%s'\n", a.text.c_str(),
                b.text.c_str());
    std::printf("  engine decode tok/s: CPU %.1f, GPU %.1f; prompt tok/s: CPU %.1f, GPU %.1f\n",
                a.decode_tokens_per_s, b.decode_tokens_per_s, a.prompt_tokens_per_s,
                b.prompt_tokens_per_s);
    c.check(gpu->info().offload_status.find("token by token") == std::string::npos,
            "engine: prompts use the cuBLAS GEMMs (" + gpu->info().offload_status + ")");
    // Multi-turn reuse of the GPU KV cache: a longer prompt sharing the prefix.
    r.prompt += " again";
    const auto b2 = gpu->generate(r, nullptr);
    c.check(b2.evaluated_prompt_tokens < b2.prompt_tokens && b2.generated_tokens > 0,
            "engine on the GPU reuses the cached prefix");
}

}  // namespace

int main() {
    const cuda::DeviceProbe probe = cuda::probe_device(0);
    if (!probe.available) {
        std::printf("%s — skipping GPU model tests\n0 passed, 0 failed\n", probe.reason.c_str());
        return 77;
    }
    std::printf("device: %s (sm_%d, %.1f GiB free)\n", probe.name.c_str(), probe.compute_capability,
                double(probe.free_bytes) / (1 << 30));
    gputest::Counter c;
    const fs::path dir = fs::temp_directory_path() / "pi_tst_cuda_model";
    fs::create_directories(dir);
    try {
        std::mt19937 rng(4321);
        test_rms_norm_rows(c, rng);
        test_rope_table(c, rng);
        test_attention_f16(c, rng);
        tensor::ThreadPool pool(4);
        const Case cases[] = {
            {"llama", GgmlType::Q4_0, 8, 2, false}, {"llama", GgmlType::Q8_0, 4, 4, false},
            {"qwen2", GgmlType::Q4_K, 8, 2, true},  {"qwen3", GgmlType::Q6_K, 4, 2, false},
            {"llama", GgmlType::F16, 4, 1, false},  {"llama", GgmlType::Q5_1, 8, 4, true},
        };
        for (const Case& k : cases) test_model(c, dir, k, pool);
        for (const Case& k : cases) test_prefill(c, dir, k, pool);
        test_degrade(c, dir, pool);
        test_engine(c, dir);
    } catch (const std::exception& e) {
        c.check(false, std::string("exception: ") + e.what());
    }
    fs::remove_all(dir);
    return c.finish();
}
