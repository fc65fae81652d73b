#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/error.h"
#include "common/ggml_types.h"
#include "gguf/gguf.h"
#include "model/architecture.h"
#include "powerinfer/fit_estimate.h"
#include "powerinfer/utf8_path.h"
#include "tensor/ops.h"
#include "tensor/panels.h"
#include "tensor/quant.h"

namespace powerinfer::model {

Model::Model(std::shared_ptr<const gguf::GgufFile> file, tensor::ThreadPool& pool, int64_t n_ctx,
             int64_t chunk_size, int64_t panel_limit_bytes)
    : file_(std::move(file)), pool_(pool), cfg_(ModelConfig::from_gguf(*file_)) {
    if (n_ctx <= 0) n_ctx = cfg_.n_ctx_train;
    n_ctx_ = std::min<int64_t>(n_ctx, cfg_.n_ctx_train);
    chunk_size_ = std::max<int64_t>(1, chunk_size);
    bind_weights();
    pack_panels(panel_limit_bytes);
    host_ = backend::make_cpu_compute(pool_);

    std::vector<FfnWeights> ffn;
    ffn.reserve(layers_.size());
    for (const auto& l : layers_) ffn.push_back(l.ffn);
    dense_ffn_ = std::make_unique<DenseFfn>(*host_, std::move(ffn));
    ffn_ = dense_ffn_.get();
    if (cfg_.moe()) {
        std::vector<MoeWeights> moe;
        moe.reserve(layers_.size());
        for (const auto& l : layers_) moe.push_back(l.moe);
        moe_ffn_ = std::make_unique<MoeFfn>(pool_, cfg_, std::move(moe));
    }

    resident_.resize(static_cast<size_t>(cfg_.n_layer));
    for (int il = 0; il < static_cast<int>(cfg_.n_layer); ++il) place_host_kv(il);

    // RoPE angles exactly as ggml computes them (float, theta *= theta_scale),
    // with llama3-style per-dimension frequency factors when present.
    const int64_t half = cfg_.n_rot / 2;
    const float* freq_factors = nullptr;
    if (const auto* t = file_->tensor("rope_freqs.weight")) {
        if (t->type != GgmlType::F32 || t->n_elements != static_cast<uint64_t>(half))
            throw EngineError("tensor 'rope_freqs.weight' must be F32 with " +
                              std::to_string(half) + " values");
        freq_factors = reinterpret_cast<const float*>(t->data);
    }
    auto tables = [&](float base, float scale, std::vector<float>& cos_t,
                      std::vector<float>& sin_t) {
        cos_t.resize(static_cast<size_t>(n_ctx_ * half));
        sin_t.resize(cos_t.size());
        const float theta_scale = std::pow(base, -2.0f / static_cast<float>(cfg_.n_rot));
        for (int64_t pos = 0; pos < n_ctx_; ++pos) {
            float theta = static_cast<float>(pos);
            for (int64_t i = 0; i < half; ++i) {
                const float ff = freq_factors ? freq_factors[i] : 1.0f;
                const float angle = scale * (theta / ff);
                cos_t[static_cast<size_t>(pos * half + i)] = std::cos(angle);
                sin_t[static_cast<size_t>(pos * half + i)] = std::sin(angle);
                theta *= theta_scale;
            }
        }
    };
    tables(cfg_.rope_freq_base, cfg_.rope_freq_scale, rope_cos_, rope_sin_);
    if (cfg_.swa_window > 0)
        tables(cfg_.rope_freq_base_swa, cfg_.rope_freq_scale_swa, rope_cos_swa_, rope_sin_swa_);
    alloc_host_scratch();
    resize_sequence_state(1);
}

Model::~Model() {
    release_sequence_slots(0);
    resize_sequence_state(0);
    release_device();
    for (auto& r : resident_)
        if (r.kv) host_->release(r.kv);
    if (host_s_.buffer) host_->release(host_s_.buffer);
}

void Model::bind_weights() {
    TensorBinder bind(*file_, cfg_.arch, weight_bytes_);
    const int64_t E = cfg_.n_embd;
    tok_embd_ = bind.matrix("token_embd.weight", E, cfg_.n_vocab);
    output_norm_ = bind.vector("output_norm.weight", E);
    output_ = bind.matrix("output.weight", E, cfg_.n_vocab, false);
    tied_output_ = output_.data == nullptr;
    if (tied_output_) output_ = tok_embd_;

    layers_.resize(static_cast<size_t>(cfg_.n_layer));
    for (int64_t il = 0; il < cfg_.n_layer; ++il) {
        auto& L = layers_[static_cast<size_t>(il)];
        cfg_.unit->bind_layer(bind, cfg_, il, L);
        // The FFN has the same names in every architecture.
        const std::string b = "blk." + std::to_string(il) + ".";
        L.ffn.activation =
            cfg_.gelu_ffn ? backend::GateActivation::GeluTanh : backend::GateActivation::SiLU;
        if (cfg_.moe()) {
            // The router and the stacked experts ([n_expert][rows][cols]).
            const int64_t NE = cfg_.n_expert, F = cfg_.n_ff_exp;
            L.moe.router = bind.matrix(b + "ffn_gate_inp.weight", E, NE);
            auto stack = [&](const std::string& name, int64_t cols, int64_t rows) {
                ExpertStack st;
                st.first = bind.matrix(b + name, cols, rows, true, NE);
                st.expert_bytes = st.first.row_bytes * static_cast<size_t>(rows);
                return st;
            };
            L.moe.gate = stack("ffn_gate_exps.weight", E, F);
            L.moe.up = stack("ffn_up_exps.weight", E, F);
            L.moe.down = stack("ffn_down_exps.weight", F, E);
            if (cfg_.n_ff_shexp > 0) {
                const int64_t FS = cfg_.n_ff_shexp;
                L.moe.shared_gate_inp = bind.matrix(b + "ffn_gate_inp_shexp.weight", E, 1);
                L.moe.shared_gate = bind.matrix(b + "ffn_gate_shexp.weight", E, FS);
                L.moe.shared_up = bind.matrix(b + "ffn_up_shexp.weight", E, FS);
                L.moe.shared_down = bind.matrix(b + "ffn_down_shexp.weight", FS, E);
            }
            continue;
        }
        L.ffn.gate = bind.matrix(b + "ffn_gate.weight", E, cfg_.n_ff);
        L.ffn.up = bind.matrix(b + "ffn_up.weight", E, cfg_.n_ff);
        L.ffn.down = bind.matrix(b + "ffn_down.weight", cfg_.n_ff, E);
    }
    for (const auto& t : file_->tensors()) n_params_ += static_cast<int64_t>(t.n_elements);
}

// The dense matrices that the active kernels compute faster as row panels
// (tensor/panels.h) get that copy; the file's pages of the original then
// leave the resident set (the row layout is still read for sparse gathers
// and device uploads, from the file). Same bits either way.
void Model::pack_panels(int64_t limit) {
    // The panels are anonymous memory (the file's pages they replace are
    // released, but the kernel can no longer drop and re-read them): beyond
    // what the machine has free they would push it into swap. Matrices past
    // the limit (by default the RAM available at load less 1 GiB) keep their
    // rows: the same bits, slower.
    if (limit < 0) {
        const int64_t available = powerinfer::host_memory().available_bytes;
        limit =
            available > 0 ? available - (int64_t{1} << 30) : std::numeric_limits<int64_t>::max();
    }
    auto pack = [&](tensor::WeightView& w) {
        if (!tensor::panels_available(w)) return;
        const auto bytes = static_cast<int64_t>(w.row_bytes) * w.rows;
        if (panel_bytes_ + bytes > limit) {
            panels_skipped_bytes_ += bytes;
            return;
        }
        // Uninitialised: the workers' first writes fault the pages in, in
        // parallel, as their reads of the file do (huge pages where the
        // system gives them: common/weight_memory.h).
        WeightBuffer p = make_weight_buffer(static_cast<size_t>(bytes));
        const size_t panel_bytes = w.row_bytes * static_cast<size_t>(tensor::kPanelRows);
        pool_.parallel_for(w.rows / tensor::kPanelRows, [&](int64_t begin, int64_t end, int) {
            tensor::pack_panels_into(w.slice(begin * tensor::kPanelRows, end * tensor::kPanelRows),
                                     p.get() + static_cast<size_t>(begin) * panel_bytes);
        });
        w.panels = p.get();
        file_->release_pages(w.data, static_cast<size_t>(bytes));
        panel_bytes_ += bytes;
        panel_store_.push_back(std::move(p));
    };
    for (auto& L : layers_) {
        for (tensor::WeightView* w : {&L.q, &L.k, &L.v, &L.o, &L.ffn.gate, &L.ffn.up, &L.ffn.down})
            pack(*w);
        // Stacked experts: one copy of the whole stack (whole panels per
        // expert, as the experts' rows are multiples of 16 where it packs).
        for (ExpertStack* st : {&L.moe.gate, &L.moe.up, &L.moe.down}) {
            if (!st->first.data || st->first.rows % tensor::kPanelRows != 0) continue;
            tensor::WeightView w = st->all(cfg_.n_expert);
            pack(w);
            st->first.panels = w.panels;
        }
    }
    // A tied head shares the embedding's bytes: the lookup faults back in
    // the pages of the rows it reads (one row per token).
    pack(output_);
}

void Model::drop_panels(const uint8_t* data) {
    const uint8_t* panels = nullptr;
    int64_t bytes = 0;
    const auto forget = [&](tensor::WeightView& w) {
        if (w.data != data || !w.panels) return;
        panels = w.panels;
        bytes = static_cast<int64_t>(w.row_bytes) * w.rows;
        w.panels = nullptr;
    };
    for (auto& L : layers_)
        for (tensor::WeightView* w : {&L.q, &L.k, &L.v, &L.o, &L.ffn.gate, &L.ffn.up, &L.ffn.down})
            forget(*w);
    for (Resident& r : resident_)
        for (tensor::WeightView* w :
             {&r.w.q, &r.w.k, &r.w.v, &r.w.o, &r.w.ffn.gate, &r.w.ffn.up, &r.w.ffn.down})
            forget(*w);
    forget(output_);
    if (dense_ffn_) dense_ffn_->forget_panels(data);
    if (!panels) return;
    for (auto it = panel_store_.begin(); it != panel_store_.end(); ++it)
        if (it->get() == panels) {
            panel_store_.erase(it);
            panel_bytes_ -= bytes;
            return;
        }
}

// Host activations for chunk_size tokens (reused; decoding allocates nothing).
void Model::alloc_host_scratch() {
    if (host_s_.buffer) host_->release(host_s_.buffer);
    const int64_t rows = chunk_size_;
    const int64_t widths[] = {cfg_.n_embd,   cfg_.n_embd,  cfg_.q_dim(),
                              cfg_.kv_dim(), cfg_.v_dim(), cfg_.n_head * cfg_.head_dim_v,
                              cfg_.n_embd};
    int64_t floats = 0;
    for (int64_t w : widths) floats += rows * w;
    host_s_.buffer = host_->allocate(backend::MemCategory::Scratch,
                                     floats * static_cast<int64_t>(sizeof(float)));
    float* p = static_cast<float*>(host_s_.buffer);
    float** slots[] = {&host_s_.x, &host_s_.xn,   &host_s_.q,  &host_s_.k,
                       &host_s_.v, &host_s_.attn, &host_s_.tmp};
    for (size_t i = 0; i < std::size(slots); ++i) {
        *slots[i] = p;
        p += rows * widths[i];
    }
    host_s_.rows = rows;
    host_s_.rope = {rope_cos_.data(), rope_sin_.data(), cfg_.n_rot,
                    cfg_.rope_style == RopeStyle::Neox};
}

std::vector<SiteMatrices> Model::decode_products() const {
    std::vector<SiteMatrices> out;
    if (cfg_.moe() || !cfg_.unit->input_sites) return out;
    for (int l = 0; l < static_cast<int>(cfg_.n_layer); ++l) {
        const LayerWeights& w = layer(l);
        out.push_back({InputSite::AttnIn, l, {w.q, w.k, w.v}});
        out.push_back({InputSite::AttnOut, l, {w.o}});
        out.push_back({InputSite::FfnIn, l, {w.ffn.gate, w.ffn.up}});
        out.push_back({InputSite::FfnMid, l, {w.ffn.down}});
    }
    out.push_back({InputSite::Head, -1, {output_}});
    return out;
}

void Model::set_ffn_executor(FfnExecutor* executor) {
    ffn_ = executor ? executor : dense_ffn_.get();
    host_->set_matvec_hook(ffn_->matvec_hook());
}

// Layer il runs its attention on the host: its weights are the mmap'd ones
// and its KV cache is host memory (F16 like llama.cpp's default cache: half
// the memory of F32, and the same rounding the reference applies).
void Model::place_host_kv(int il) {
    Resident& r = resident_[static_cast<size_t>(il)];
    if (r.on == host_.get() && r.kv) return;
    r.w = layers_[static_cast<size_t>(il)];
    r.on = host_.get();
    r.weights = nullptr;
    r.kv_values = n_ctx_ * cfg_.kv_dim() * static_cast<int64_t>(sizeof(uint16_t));
    const int64_t bytes =
        r.kv_values + n_ctx_ * cfg_.v_dim() * static_cast<int64_t>(sizeof(uint16_t));
    if (has_kv_cache(il)) r.kv = host_->allocate(backend::MemCategory::KvCache, bytes);
}

// Everything back on the host (and the device's buffers freed).
void Model::release_device() {
    if (!device_) return;
    try {
        device_->synchronize();  // nothing may still target a buffer
    } catch (const EngineError&) {
    }
    for (int il = 0; il < static_cast<int>(resident_.size()); ++il) {
        Resident& r = resident_[static_cast<size_t>(il)];
        if (r.on != device_) continue;
        if (r.weights) device_->release(r.weights);
        if (r.kv) device_->release(r.kv);
        r = Resident{};
        place_host_kv(il);
    }
    if (device_out_) device_->release(device_out_);
    if (device_s_.buffer) device_->release(device_s_.buffer);
    device_out_ = nullptr;
    device_logits_ = nullptr;
    device_out_norm_ = nullptr;
    device_head_ = {};
    device_s_ = Scratch{};
    device_->set_workspace({});
    device_ = nullptr;
    plan_ = GraphPlan{};
    device_tokens_ = {};
}

std::string Model::unsupported_on(const backend::Compute& device, OffloadParts parts) const {
    if (std::string why = missing_capabilities(*cfg_.unit, cfg_, device, parts); !why.empty())
        return why;
    if (cfg_.unit->host_only && !device.host_memory()) return cfg_.unit->host_only;
    std::vector<const tensor::WeightView*> mats{&output_};
    for (const auto& L : layers_) {
        mats.insert(mats.end(), {&L.q, &L.k, &L.v, &L.o});
        if (parts == OffloadParts::WholeLayers)
            mats.insert(mats.end(), {&L.ffn.gate, &L.ffn.up, &L.ffn.down});
    }
    for (const auto* m : mats)
        if (std::string why = device.unsupported(*m); !why.empty()) return why;
    return {};
}

std::string Model::set_plan(const GraphPlan& asked, backend::Compute* device) {
    release_device();
    if (!device || !asked.any_device()) return {};
    release_sequence_slots(0);  // one KV cache per layer on a device
    // Mixture-of-experts layers keep their experts on the host (as
    // llama.cpp's --cpu-moe): whole layers become their attention half.
    GraphPlan want = asked;
    if (cfg_.moe())
        for (auto& site : want.layers) site.ffn = Site::Host;
    using backend::MemCategory;
    bool any_ffn = false;
    for (int il = 0; il < static_cast<int>(cfg_.n_layer); ++il)
        any_ffn =
            any_ffn || (want.at(il).attention == Site::Device && want.at(il).ffn == Site::Device);
    const LayerOffloadCosts costs = layer_offload_costs(
        *this, kDeviceTokenBatch, any_ffn ? OffloadParts::WholeLayers : OffloadParts::Attention);
    const ScratchLayout& sl = costs.scratch;
    // Every matrix the plan puts on the device must have its kernels there.
    if (std::string why =
            unsupported_on(*device, any_ffn ? OffloadParts::WholeLayers : OffloadParts::Attention);
        !why.empty())
        return why + ": running on the CPU";
    device_ = device;
    std::string note;
    try {
        device_s_.buffer = device->allocate(MemCategory::Scratch, sl.bytes);
    } catch (const backend::DeviceOutOfMemory& e) {
        device_ = nullptr;
        return std::string("no layer could be placed on the device (") + e.what() +
               "): running on the CPU";
    }
    auto* base = static_cast<uint8_t*>(device_s_.buffer);
    auto f32 = [&](int64_t off) { return reinterpret_cast<float*>(base + off); };
    device_s_.rows = sl.token_batch;
    device_s_.x = f32(sl.x);
    device_s_.xn = f32(sl.xn);
    device_s_.q = f32(sl.q);
    device_s_.k = f32(sl.k);
    device_s_.v = f32(sl.v);
    device_s_.attn = f32(sl.attn);
    device_s_.tmp = f32(sl.tmp);
    const int64_t rope_bytes = static_cast<int64_t>(rope_cos_.size() * sizeof(float));
    device->upload(base + sl.rope_cos, rope_cos_.data(), rope_bytes);
    device->upload(base + sl.rope_sin, rope_sin_.data(), rope_bytes);
    device_s_.rope = {f32(sl.rope_cos), f32(sl.rope_sin), cfg_.n_rot,
                      cfg_.rope_style == RopeStyle::Neox};
    backend::Workspace ws;
    ws.x16 = base + sl.x16;
    ws.x16_halves = (sl.w16 - sl.x16) / 2;
    ws.w16 = base + sl.w16;
    ws.w16_halves = sl.w16_elems;
    ws.blas = base + sl.gemm_workspace;
    ws.scores = f32(sl.scores);
    if (sl.gate >= 0) {
        ws.ffn_gate = f32(sl.gate);
        ws.ffn_up = f32(sl.up);
        ws.ffn_floats = sl.token_batch * cfg_.n_ff;
    }
    device->set_workspace(ws);

    int want_layers = 0, placed = 0;
    bool stopped = false;
    for (int il = 0; il < static_cast<int>(cfg_.n_layer); ++il) {
        const LayerSite site = want.at(il);
        if (site.attention != Site::Device) continue;
        ++want_layers;
        if (stopped) continue;
        const LayerLayout& L = costs.layers[static_cast<size_t>(il)];
        void* wbuf = nullptr;
        void* kv = nullptr;
        try {
            wbuf = device->allocate(MemCategory::DenseWeights, L.bytes);
            kv = device->allocate(MemCategory::KvCache, costs.kv_bytes_per_layer);
        } catch (const backend::DeviceOutOfMemory& e) {
            if (wbuf) device->release(wbuf);
            note = std::string("the device holds ") + "only " + std::to_string(placed) +
                   " of the layers asked for (" + e.what() + ")";
            stopped = true;
            continue;
        }
        auto* w = static_cast<uint8_t*>(wbuf);
        const LayerWeights& src = layers_[static_cast<size_t>(il)];
        LayerWeights dst = src;
        auto vec = [&](int64_t off, const float* v, int64_t n) -> const float* {
            if (off < 0 || !v) return nullptr;
            device->upload(w + off, v, n * static_cast<int64_t>(sizeof(float)));
            return reinterpret_cast<const float*>(w + off);
        };
        auto mat = [&](int64_t off, const tensor::WeightView& v) {
            tensor::WeightView d = v;
            device->upload(w + off, v.data, static_cast<int64_t>(v.row_bytes) * v.rows);
            d.data = w + off;
            d.panels = nullptr;  // the device copy has rows only
            return d;
        };
        dst.attn_norm = vec(L.attn_norm, src.attn_norm, cfg_.n_embd);
        dst.q = mat(L.q, src.q);
        dst.k = mat(L.k, src.k);
        dst.v = mat(L.v, src.v);
        dst.o = mat(L.o, src.o);
        dst.q_bias = vec(L.q_bias, src.q_bias, cfg_.q_dim());
        dst.k_bias = vec(L.k_bias, src.k_bias, cfg_.kv_dim());
        dst.v_bias = vec(L.v_bias, src.v_bias, cfg_.v_dim());
        dst.q_norm = vec(L.q_norm, src.q_norm, cfg_.head_dim);
        dst.k_norm = vec(L.k_norm, src.k_norm, cfg_.head_dim);
        dst.ffn_norm = vec(L.ffn_norm, src.ffn_norm, cfg_.n_embd);
        const bool ffn_here = site.ffn == Site::Device && L.gate >= 0;
        if (ffn_here) {
            dst.ffn.gate = mat(L.gate, src.ffn.gate);
            dst.ffn.up = mat(L.up, src.ffn.up);
            dst.ffn.down = mat(L.down, src.ffn.down);
        }
        // Positions are written before they are read; zeros keep a stray
        // read finite.
        device->fill_zero(kv, costs.kv_bytes_per_layer);
        Resident& r = resident_[static_cast<size_t>(il)];
        if (r.kv) host_->release(r.kv);  // the host cache of this layer goes
        r.w = dst;
        r.on = device;
        r.weights = wbuf;
        r.kv = kv;
        r.kv_values = costs.kv_values_offset;
        plan_.layers.resize(static_cast<size_t>(il) + 1);
        plan_.layers[static_cast<size_t>(il)] = {Site::Device,
                                                 ffn_here ? Site::Device : Site::Host};
        ++placed;
    }
    if (want.output == Site::Device && placed == cfg_.n_layer) {
        try {
            device_out_ = device->allocate(MemCategory::DenseWeights, costs.output.bytes);
            auto* o = static_cast<uint8_t*>(device_out_);
            device->upload(o + costs.output.norm, output_norm_,
                           cfg_.n_embd * static_cast<int64_t>(sizeof(float)));
            device->upload(o + costs.output.head, output_.data,
                           static_cast<int64_t>(output_.row_bytes) * output_.rows);
            device_head_ = output_;
            device_head_.data = o + costs.output.head;
            device_head_.panels = nullptr;
            device_out_norm_ = reinterpret_cast<const float*>(o + costs.output.norm);
            device_logits_ = reinterpret_cast<float*>(o + costs.output.logits);
            plan_.output = Site::Device;
        } catch (const backend::DeviceOutOfMemory& e) {
            note = std::string("the output head stays on the CPU (") + e.what() + ")";
        }
    }
    try {
        device->synchronize();
    } catch (const EngineError& e) {
        release_device();
        return std::string(e.what()) + ": running on the CPU";
    }
    if (placed == 0 && plan_.output != Site::Device) {
        const std::string why = note.empty() ? "no layer was placed on the device" : note;
        release_device();
        return why + ": running on the CPU";
    }
    if (placed < want_layers && note.empty())
        note = "only " + std::to_string(placed) + " of " + std::to_string(want_layers) +
               " layers fit on the device";
    return note;
}

void Model::set_chunk_size(int64_t chunk_size) {
    chunk_size = std::max<int64_t>(1, chunk_size);
    if (chunk_size == chunk_size_) return;
    chunk_size_ = chunk_size;
    alloc_host_scratch();
}

int64_t Model::kv_cache_bytes() const {
    return host_->memory_use()[static_cast<size_t>(backend::MemCategory::KvCache)];
}

const float* Model::last_hidden() const { return host_s_.x; }

void* Model::kv_of(int il) const {
    if (slot_ == 0) return resident_[static_cast<size_t>(il)].kv;
    return extra_kv_[static_cast<size_t>(slot_ - 1)][static_cast<size_t>(il)];
}

void Model::release_sequence_slots(size_t keep) {
    while (extra_kv_.size() > keep) {
        for (void* kv : extra_kv_.back())
            if (kv) host_->release(kv);
        extra_kv_.pop_back();
    }
    // The dropped slots' states go with their caches.
    if (static_cast<int>(seq_state_.size()) > sequence_slots())
        resize_sequence_state(sequence_slots());
}

void Model::set_sequence_slots(int n_slots) {
    n_slots = std::max(1, n_slots);
    if (n_slots > 1 && !cfg_.unit->several_sequences)
        throw EngineError(cfg_.arch + " models run one sequence at a time in this version");
    if (n_slots > 1 && device_)
        throw EngineError(
            "several sequences run on the CPU only: layers on the GPU keep one "
            "KV cache (use --gpu-layers 0 or one request at a time)");
    release_sequence_slots(static_cast<size_t>(n_slots - 1));
    while (sequence_slots() < n_slots) {
        std::vector<void*> layers;
        for (const Resident& r : resident_) {
            const int64_t bytes =
                r.kv_values + n_ctx_ * cfg_.v_dim() * static_cast<int64_t>(sizeof(uint16_t));
            const bool kv = has_kv_cache(static_cast<int>(layers.size()));
            layers.push_back(kv ? host_->allocate(backend::MemCategory::KvCache, bytes) : nullptr);
        }
        extra_kv_.push_back(std::move(layers));
    }
    resize_sequence_state(n_slots);
}

void Model::forward(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits,
                    float* logits, int slot) {
    if (slot < 0 || slot >= sequence_slots())
        throw EngineError("sequence slot " + std::to_string(slot) + " does not exist");
    struct Restore {
        int& s;
        ~Restore() { s = 0; }
    } restore{slot_};
    slot_ = slot;
    forward(tokens, n, n_past, n_logits, logits);
}

void Model::forward_sequences(const int32_t* tokens, const int* seq_slots, const int64_t* positions,
                              int64_t n, float* logits) {
    if (n <= 0) return;
    if (n > chunk_size_ || n > sequence_slots())
        throw EngineError("a step of " + std::to_string(n) + " sequences exceeds the " +
                          std::to_string(sequence_slots()) + " slots or the chunk size");
    for (int64_t i = 0; i < n; ++i) {
        if (seq_slots[i] < 0 || seq_slots[i] >= sequence_slots())
            throw EngineError("sequence slot " + std::to_string(seq_slots[i]) + " does not exist");
        for (int64_t j = 0; j < i; ++j)
            if (seq_slots[j] == seq_slots[i])
                throw EngineError("a step holds sequence slot " + std::to_string(seq_slots[i]) +
                                  " twice");
        if (positions[i] < 0 || positions[i] >= n_ctx_)
            throw EngineError("position " + std::to_string(positions[i]) +
                              " exceeds the context of " + std::to_string(n_ctx_) + " tokens");
        if (tokens[i] < 0 || tokens[i] >= cfg_.n_vocab)
            throw EngineError("token id " + std::to_string(tokens[i]) +
                              " is outside the vocabulary of " + std::to_string(cfg_.n_vocab));
    }
    const SequenceRows rows{seq_slots, positions};
    struct Restore {
        const SequenceRows*& r;
        int& s;
        ~Restore() {
            r = nullptr;
            s = 0;
        }
    } restore{rows_, slot_};
    for (int64_t i = 0; i < n; ++i) {
        slot_ = seq_slots[i];
        rewind_sequence_state(positions[i]);
    }
    slot_ = 0;
    rows_ = &rows;
    forward_chunk(tokens, n, 0, 0, logits);
    for (int64_t i = 0; i < n; ++i) record_state_tokens(seq_slots[i], tokens + i, 1);
}

void Model::forward(const int32_t* tokens, int64_t n, int64_t n_past, int64_t n_logits,
                    float* logits) {
    if (n <= 0) return;
    if (n_past < 0 || n_past + n > n_ctx_)
        throw EngineError("positions " + std::to_string(n_past) + ".." +
                          std::to_string(n_past + n - 1) + " exceed the context of " +
                          std::to_string(n_ctx_) + " tokens");
    for (int64_t i = 0; i < n; ++i)
        if (tokens[i] < 0 || tokens[i] >= cfg_.n_vocab)
            throw EngineError("token id " + std::to_string(tokens[i]) +
                              " is outside the vocabulary of " + std::to_string(cfg_.n_vocab));
    n_logits = std::clamp<int64_t>(n_logits, 0, n);
    rewind_sequence_state(n_past);
    // The device's scratch holds fewer rows than the host's; with a device
    // the chunks are balanced, so that no chunk of a prompt has a single row
    // (which a sparse FFN executor would take for a decoded token).
    const int64_t chunk = device_ ? std::min(chunk_size_, device_s_.rows) : chunk_size_;
    const int64_t n_chunks = (n + chunk - 1) / chunk;
    const int64_t first_logit = n - n_logits;  // global index of the first token with logits
    int64_t start = 0;
    for (int64_t k = 0; k < n_chunks; ++k) {
        const int64_t m = device_ ? (n - start) / (n_chunks - k) : std::min(chunk, n - start);
        const int64_t from = std::clamp<int64_t>(first_logit - start, 0, m);
        float* out =
            logits ? logits + std::max<int64_t>(0, start - first_logit) * cfg_.n_vocab : nullptr;
        forward_chunk(tokens + start, m, n_past + start, from, out);
        record_state_tokens(slot_, tokens + start, m);
        start += m;
    }
    if (n >= 2) snapshot_state();
}

// ---- per-sequence state -----------------------------------------------------

bool Model::has_kv_cache(int il) const {
    return !cfg_.unit->memory || cfg_.unit->memory(cfg_, il).kv_cache;
}

void Model::resize_sequence_state(int n_slots) {
    if (state_offset_.empty() && cfg_.unit->memory) {
        int64_t off = 0;
        for (int64_t il = 0; il < cfg_.n_layer; ++il) {
            const int64_t floats = cfg_.unit->memory(cfg_, il).state_floats;
            state_offset_.push_back(floats > 0 ? off : -1);
            off += floats;
        }
        state_floats_ = off;
    }
    if (state_floats_ == 0) return;
    while (static_cast<int>(seq_state_.size()) > n_slots) {
        host_->release(seq_state_.back());
        for (const StateSnapshot& snap : state_snapshots_.back())
            if (snap.state) host_->release(snap.state);
        seq_state_.pop_back();
        state_tokens_.pop_back();
        state_snapshots_.pop_back();
    }
    while (static_cast<int>(seq_state_.size()) < n_slots) {
        const int64_t bytes = state_floats_ * int64_t{sizeof(float)};
        auto* state = static_cast<float*>(host_->allocate(backend::MemCategory::KvCache, bytes));
        std::fill_n(state, state_floats_, 0.0f);
        seq_state_.push_back(state);
        state_tokens_.emplace_back();
        state_snapshots_.emplace_back();
    }
}

void Model::snapshot_state() {
    if (state_floats_ == 0) return;
    const auto slot = static_cast<size_t>(slot_);
    const auto at = static_cast<int64_t>(state_tokens_[slot].size());
    auto& snaps = state_snapshots_[slot];
    StateSnapshot* into = &snaps[0];
    for (StateSnapshot& snap : snaps) {
        if (snap.at == at) return;  // already kept (a replay ending where one was taken)
        if (snap.at < into->at) into = &snap;
    }
    if (!into->state)
        into->state = static_cast<float*>(
            host_->allocate(backend::MemCategory::KvCache, state_floats_ * int64_t{sizeof(float)}));
    std::copy_n(seq_state_[slot], state_floats_, into->state);
    into->at = at;
}

float* Model::sequence_state(int il, int64_t row) const {
    const int slot = rows_ ? rows_->seq_slots[row] : slot_;
    return seq_state_[static_cast<size_t>(slot)] + state_offset_[static_cast<size_t>(il)];
}

float* Model::layer_temporaries(int64_t n_floats) {
    if (static_cast<int64_t>(layer_temps_.size()) < n_floats)
        layer_temps_.resize(static_cast<size_t>(n_floats));
    return layer_temps_.data();
}

// Slot `slot_` continues at n_past: where its state stands, or, for an
// earlier position, after re-evaluating its tokens up to n_past from its
// latest snapshot at or before n_past, or from a zero state (what
// llama.cpp's fresh sequence starts from). A snapshot is of the slot's first
// `at` tokens, which stay as they were: only the tokens after n_past go.
void Model::rewind_sequence_state(int64_t n_past) {
    if (state_floats_ == 0) return;
    const auto slot = static_cast<size_t>(slot_);
    std::vector<int32_t>& seen = state_tokens_[slot];
    const auto at = static_cast<int64_t>(seen.size());
    if (n_past == at) return;
    if (n_past > at)
        throw EngineError("a " + cfg_.arch + " sequence cannot continue at position " +
                          std::to_string(n_past) + ": its state holds " + std::to_string(at) +
                          " tokens");
    const StateSnapshot* from = nullptr;
    for (StateSnapshot& snap : state_snapshots_[slot]) {
        if (snap.at > n_past) snap.at = -1;  // of tokens that go
        if (snap.at >= 0 && (!from || snap.at > from->at)) from = &snap;
    }
    const int64_t start = from ? from->at : 0;
    std::vector<int32_t> replay(seen.begin() + start, seen.begin() + n_past);
    seen.resize(static_cast<size_t>(start));
    if (from) {
        std::copy_n(from->state, state_floats_, seq_state_[slot]);
    } else {
        std::fill_n(seq_state_[slot], state_floats_, 0.0f);
    }
    state_replayed_ += n_past - start;
    if (!replay.empty()) forward(replay.data(), n_past - start, start, 0, nullptr);
}

void Model::record_state_tokens(int slot, const int32_t* tokens, int64_t n) {
    if (state_floats_ == 0) return;
    auto& seen = state_tokens_[static_cast<size_t>(slot)];
    seen.insert(seen.end(), tokens, tokens + n);
}

}  // namespace powerinfer::model
