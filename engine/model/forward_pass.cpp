// The forward pass every architecture shares, over the op-level backend
// interface (backend/compute.h): the embedding, each layer through its
// unit's graph (Architecture::layer, one file per unit), the output head;
// and the pieces the layers share (attention over the KV cache, the FFN
// block). Each layer's attention runs on the backend its GraphPlan names
// (with its KV cache there), its FFN
// either on that backend (dense) or through the model's host FfnExecutor
// (dense or sparse); the residual stream crosses between backends only
// where the plan changes site. One token's data flow:
//
//   embedding (host) -> per layer: the unit's layer (attention or a block
//   of its own over per-sequence state, then rms_norm -> FFN (device op, or
//   host FfnExecutor) -> add) -> output norm -> head matmul -> logits (host)
#include <cstdint>
#include <vector>

#include "model/architecture.h"
#include "model/model.h"
#include "tensor/quant.h"

namespace powerinfer::model {

void Model::positioned_attention(int il, backend::Compute& be, Scratch& s, int64_t n,
                                 int64_t n_past, float scale) {
    const ModelConfig& c = cfg_;
    const int64_t hd = c.head_dim;
    if (rows_) {
        // Several sequences: each row at its own position, in its own cache;
        // the rows' attention in one op.
        thread_local std::vector<const void*> keys, values;
        keys.resize(static_cast<size_t>(n));
        values.resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
            const int64_t pos = rows_->positions[i];
            float* q = s.q + i * c.q_dim();
            float* k = s.k + i * c.kv_dim();
            be.rope(q, 1, c.n_head, hd, s.rope, pos);
            be.rope(k, 1, c.n_head_kv, hd, s.rope, pos);
            slot_ = rows_->seq_slots[i];
            void* kc = kv_of(il);
            void* vc = static_cast<uint8_t*>(kc) + resident_[static_cast<size_t>(il)].kv_values;
            be.store_kv(k, kc, 1, c.n_head_kv, n_ctx_, hd, pos);
            be.store_kv(s.v + i * c.v_dim(), vc, 1, c.n_head_kv, n_ctx_, c.head_dim_v, pos);
            keys[static_cast<size_t>(i)] = kc;
            values[static_cast<size_t>(i)] = vc;
        }
        slot_ = 0;
        be.attention_rows(attention_shape(scale, 0), s.q, keys.data(), values.data(),
                          rows_->positions, n, s.attn);
    } else {
        be.rope(s.q, n, c.n_head, hd, s.rope, n_past);
        be.rope(s.k, n, c.n_head_kv, hd, s.rope, n_past);
        cached_attention(il, be, s, n, n_past, scale, 0);
    }
}

void Model::cached_attention(int il, backend::Compute& be, Scratch& s, int64_t n, int64_t n_past,
                             float scale, int64_t window) {
    const Resident& r = resident_[static_cast<size_t>(il)];
    const ModelConfig& c = cfg_;
    void* keys = kv_of(il);
    void* values = static_cast<uint8_t*>(keys) + r.kv_values;
    be.store_kv(s.k, keys, n, c.n_head_kv, n_ctx_, c.head_dim, n_past);
    be.store_kv(s.v, values, n, c.n_head_kv, n_ctx_, c.head_dim_v, n_past);
    be.attention(attention_shape(scale, window), s.q, keys, values, n, n_past, s.attn);
}

backend::AttentionShape Model::attention_shape(float scale, int64_t window) const {
    backend::AttentionShape shape;
    shape.n_head = cfg_.n_head;
    shape.n_head_kv = cfg_.n_head_kv;
    shape.head_dim = cfg_.head_dim;
    shape.head_dim_v = cfg_.head_dim_v;
    shape.n_ctx = n_ctx_;
    shape.scale = scale;
    shape.window = window;
    return shape;
}

void Model::ffn_block(int il, backend::Compute& be, Scratch& s, int64_t n) {
    be.rms_norm(s.x, resident_[static_cast<size_t>(il)].w.ffn_norm, s.xn, n, cfg_.n_embd,
                cfg_.rms_eps);
    run_ffn(il, be, s, n);
    be.add(s.x, s.tmp, n * cfg_.n_embd);
}

// s.tmp = FFN(s.xn) for layer il: the dense op on the device where the plan
// puts the FFN there, else the host's FfnExecutor (dense or sparse).
void Model::run_ffn(int il, backend::Compute& be, Scratch& s, int64_t n) {
    const Resident& r = resident_[static_cast<size_t>(il)];
    // Mixture-of-experts layers: the experts' executor (moe_ffn.h), on the host.
    FfnExecutor& host_ffn = moe_ffn_ ? static_cast<FfnExecutor&>(*moe_ffn_) : *ffn_;
    if (&be == device_ && plan_.at(il).ffn == Site::Device) {
        be.gated_ffn(r.w.ffn, s.xn, n, s.tmp);
    } else if (be.host_memory()) {
        host_ffn.run(il, s.xn, n, s.tmp);
    } else {
        // Attention on the device, FFN on the host (sparse placement: the
        // executor may enqueue its hot part on the same device).
        const int64_t bytes = n * cfg_.n_embd * static_cast<int64_t>(sizeof(float));
        be.download(host_s_.xn, s.xn, bytes);
        be.synchronize();
        host_ffn.run(il, host_s_.xn, n, host_s_.tmp);
        be.upload(s.tmp, host_s_.tmp, bytes);
    }
}

// logits[n - from][n_vocab] for rows [from, n) of the final residual stream.
void Model::output_block(backend::Compute& be, Scratch& s, int64_t from, int64_t n, float* logits) {
    const int64_t E = cfg_.n_embd, V = cfg_.n_vocab, n_out = n - from;
    if (be.host_memory()) {
        be.rms_norm(s.x + from * E, output_norm_, s.xn, n_out, E, cfg_.rms_eps);
        be.matmul(output_, s.xn, n_out, logits);
        return;
    }
    // One row at a time through the device's logits row.
    for (int64_t i = 0; i < n_out; ++i) {
        be.rms_norm(s.x + (from + i) * E, device_out_norm_, s.xn, 1, E, cfg_.rms_eps);
        be.matmul(device_head_, s.xn, 1, device_logits_);
        be.download(logits + i * V, device_logits_, V * static_cast<int64_t>(sizeof(float)));
        be.synchronize();
    }
}

// Evaluates one chunk (at most the scratch's rows); logits for its rows
// [logits_from, n) go to `logits`.
void Model::forward_chunk(const int32_t* tokens, int64_t n, int64_t n_past, int64_t logits_from,
                          float* logits) {
    const int64_t E = cfg_.n_embd;
    const int64_t bytes = n * E * static_cast<int64_t>(sizeof(float));
    for (int64_t i = 0; i < n; ++i)
        tensor::dequantize_row(tok_embd_.type, tok_embd_.row(tokens[i]), host_s_.x + i * E, E);
    if (cfg_.embd_scale != 0.0f) host_->scale(host_s_.x, n * E, cfg_.embd_scale);

    backend::Compute* at = host_.get();  // where the residual stream is
    auto move_to = [&](backend::Compute* be) {
        if (be == at) return;
        if (be == device_) {
            device_->upload(device_s_.x, host_s_.x, bytes);
        } else {
            device_->download(host_s_.x, device_s_.x, bytes);
            device_->synchronize();
        }
        at = be;
    };
    for (int il = 0; il < static_cast<int>(cfg_.n_layer); ++il) {
        backend::Compute* be = resident_[static_cast<size_t>(il)].on;
        move_to(be);
        Scratch& s = be == host_.get() ? host_s_ : device_s_;
        cfg_.unit->layer(*this, il, *be, s, n, n_past);
    }
    for (int64_t i = 0; i < n; ++i) ffn_->end_token();
    if (device_ && plan_.any_device())
        (n >= 2 && device_->batched_matmul() ? device_tokens_.batched : device_tokens_.single) += n;

    if (n - logits_from > 0 && logits) {
        if (plan_.output == Site::Device && device_) {
            move_to(device_);
            output_block(*device_, device_s_, logits_from, n, logits);
        } else {
            move_to(host_.get());
            output_block(*host_, host_s_, logits_from, n, logits);
        }
    }
    move_to(host_.get());  // last_hidden() and the next chunk read it there
}

}  // namespace powerinfer::model
