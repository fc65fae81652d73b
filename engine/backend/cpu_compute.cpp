// The CPU backend's ops: each one as llama.cpp computes it on x86 (the
// model's bit-exact fixtures hold through these), parallel over the model's
// thread pool. Memory is host memory; the budgeted variant charges a
// simulated device for it.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <vector>

#include "backend/compute.h"
#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/fused_matvec.h"
#include "tensor/ops.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

namespace powerinfer::backend {
namespace {

class CpuCompute final : public Compute {
public:
    CpuCompute(tensor::ThreadPool& pool, Device* budget, std::vector<Capability> lacking)
        : pool_(pool), budget_(budget), lacking_(std::move(lacking)) {}
    using Compute::matmul;

    ~CpuCompute() override {
        for (auto& [p, b] : buffers_) release_storage(p, b);
    }

    std::string name() const override {
        return budget_ ? "CPU (budgeted: " + budget_->name() + ")" : "CPU";
    }

    bool host_memory() const override { return budget_ == nullptr; }
    bool supports(Capability c) const override {
        return std::find(lacking_.begin(), lacking_.end(), c) == lacking_.end();
    }

    void* allocate(MemCategory category, int64_t bytes) override {
        if (bytes < 0) throw EngineError("negative allocation");
        Buffer b{category, bytes, 0};
        void* p = nullptr;
        if (budget_) {
            b.handle = budget_->allocate(category, bytes);
            p = budget_->buffer_address(b.handle);
        } else {
            p = std::calloc(static_cast<size_t>(std::max<int64_t>(bytes, 1)), 1);
            if (!p)
                throw DeviceOutOfMemory("out of host memory for " + std::to_string(bytes) +
                                        " bytes");
        }
        use_[static_cast<size_t>(category)] += bytes;
        buffers_[p] = b;
        return p;
    }

    void release(void* buffer) override {
        auto it = buffers_.find(buffer);
        if (it == buffers_.end()) return;
        release_storage(it->first, it->second);
        use_[static_cast<size_t>(it->second.category)] -= it->second.bytes;
        buffers_.erase(it);
    }

    MemoryUse memory_use() const override { return use_; }

    void upload(void* dst, const void* src, int64_t bytes) override {
        std::memcpy(dst, src, static_cast<size_t>(bytes));
    }
    void download(void* dst, const void* src, int64_t bytes) override {
        std::memcpy(dst, src, static_cast<size_t>(bytes));
    }
    void fill_zero(void* dst, int64_t bytes) override {
        std::memset(dst, 0, static_cast<size_t>(bytes));
    }
    void synchronize() override {}

    void matmul(std::span<const tensor::WeightView> ws, const float* x, int64_t rows,
                std::span<float* const> ys) override {
        if (hook_) {
            hook_->observe(ws, x, rows);
            if (hook_->skip(ws)) return;
        }
        if (rows > 1) {
            if (hook_ && hook_->matmul(ws, x, rows, ys)) return;
            // Several tokens: one quantized copy of x and one pool dispatch
            // for matrices that take the same activations.
            if (ws.size() > 1 && tensor::can_fuse(ws))
                return tensor::matmul_fused(pool_, ws, x, rows, ys);
            for (size_t k = 0; k < ws.size(); ++k) tensor::matmul(pool_, ws[k], x, rows, ys[k]);
            return;
        }
        if (hook_ && hook_->matvec(ws, x, ys)) return;
        // One token: one quantized copy of x serves every matrix that takes
        // its format, and matrices that all do run in one pool dispatch.
        if (ws.size() > 1 && tensor::can_fuse(ws)) {
            tensor::quantize_activations(ws[0].type, x, ws[0].cols, xq_);
            tensor::matvec_fused(pool_, ws, ys, xq_);
            return;
        }
        xq_.n = 0;
        for (size_t k = 0; k < ws.size(); ++k) {
            if (xq_.n != ws[k].cols || xq_.type != tensor::vec_dot_type(ws[k].type))
                tensor::quantize_activations(ws[k].type, x, ws[k].cols, xq_);
            tensor::matvec_q(pool_, ws[k], xq_, ys[k]);
        }
    }

    void set_matvec_hook(MatvecHook* hook) override { hook_ = budget_ ? nullptr : hook; }

    void rms_norm(const float* x, const float* w, float* y, int64_t rows, int64_t n,
                  float eps) override {
        over_rows(rows, n, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) tensor::rms_norm(x + r * n, w, y + r * n, n, eps);
        });
    }

    void add(float* y, const float* x, int64_t n) override {
        over_chunks(n, [&](int64_t i0, int64_t i1) { tensor::add(y + i0, x + i0, i1 - i0); });
    }

    void scale(float* v, int64_t n, float s) override {
        over_chunks(n, [&](int64_t i0, int64_t i1) {
            for (int64_t i = i0; i < i1; ++i) v[i] *= s;
        });
    }

    void add_bias(float* v, const float* bias, int64_t rows, int64_t n) override {
        over_rows(rows, n, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) tensor::add(v + r * n, bias, n);
        });
    }

    void rope(float* v, int64_t rows, int64_t n_head, int64_t head_dim, const RopeTable& t,
              int64_t pos0) override {
        const int64_t half = t.n_rot / 2;
        const int64_t stride = t.neox ? 1 : 2;
        const int64_t other = t.neox ? half : 1;
        over_rows(rows, n_head * head_dim, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const float* c = t.cos + (pos0 + r) * half;
                const float* s = t.sin + (pos0 + r) * half;
                for (int64_t h = 0; h < n_head; ++h) {
                    float* head = v + (r * n_head + h) * head_dim;
                    // As ggml's rotate_pairs compiled with FMA contraction (how
                    // llama.cpp ships on x86): the first product fused, the
                    // second not.
                    for (int64_t i = 0; i < half; ++i) {
                        float* p = head + i * stride;
                        const float x0 = p[0], x1 = p[other];
                        p[0] = std::fma(x0, c[i], -(x1 * s[i]));
                        p[other] = std::fma(x0, s[i], x1 * c[i]);
                    }
                }
            }
        });
    }

    void store_kv(const float* src, void* cache, int64_t rows, int64_t n_head, int64_t n_ctx,
                  int64_t dim, int64_t pos0) override {
        auto* c16 = static_cast<uint16_t*>(cache);
        over_rows(rows, n_head * dim, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r)
                for (int64_t h = 0; h < n_head; ++h) {
                    const float* s = src + (r * n_head + h) * dim;
                    uint16_t* dst = c16 + (h * n_ctx + pos0 + r) * dim;
                    tensor::to_f16(s, dst, dim);
                }
        });
    }

    // Parallel over (token, head) pairs.
    void attention(const AttentionShape& a, const float* q, const void* k_cache,
                   const void* v_cache, int64_t rows, int64_t pos0, float* out) override {
        // ggml multiplies 2+ tokens of one sequence in another order than one.
        const AttentionRows job{q, &k_cache, &v_cache, nullptr, pos0, rows > 1};
        run_attention(a, job, rows, out);
    }

    // Every sequence's row in one dispatch, each as attention() with one row.
    void attention_rows(const AttentionShape& a, const float* q, const void* const* k_caches,
                        const void* const* v_caches, const int64_t* positions, int64_t rows,
                        float* out) override {
        const AttentionRows job{q, k_caches, v_caches, positions, 0, false};
        run_attention(a, job, rows, out);
    }

    FfnBuffers ffn_buffers(int64_t floats) override {
        if (gate_.size() < static_cast<size_t>(floats)) {
            gate_.resize(static_cast<size_t>(floats));
            up_.resize(static_cast<size_t>(floats));
        }
        return {gate_.data(), up_.data()};
    }

    // Every FFN's gate and up products in one call (one quantized copy of x,
    // one pool dispatch where the matrices take the same activations), then
    // each FFN's activation over the rows.
    void gated_products(std::span<const GatedFfnWeights> ffns, const float* x, int64_t rows,
                        std::span<float* const> hs, std::span<float* const> us) override {
        gu_ws_.clear();
        gu_ys_.clear();
        for (size_t k = 0; k < ffns.size(); ++k) {
            gu_ws_.push_back(ffns[k].gate);
            gu_ys_.push_back(hs[k]);
            gu_ws_.push_back(ffns[k].up);
            gu_ys_.push_back(us[k]);
        }
        matmul(gu_ws_, x, rows, gu_ys_);
        for (size_t k = 0; k < ffns.size(); ++k) {
            const int64_t n_ff = ffns[k].gate.rows;
            float* h = hs[k];
            const float* u = us[k];
            const GateActivation act = ffns[k].activation;
            // Row by row, as ggml applies it (a vector kernel's tail is per row).
            over_rows(rows, n_ff, [&](int64_t r0, int64_t r1) {
                for (int64_t r = r0; r < r1; ++r)
                    gate_activation(act, h + r * n_ff, u + r * n_ff, h + r * n_ff, n_ff);
            });
        }
    }

    // One token through several matrices of as many rows (a token's routed
    // experts' down products): one pool dispatch over the output rows, each
    // worker running its slice of every matrix. Otherwise (one matrix, a
    // batch, a hook that must see each product) one matmul() per matrix.
    void matmul_each(std::span<const tensor::WeightView> ws, std::span<const float* const> xs,
                     int64_t rows, std::span<float* const> ys) override {
        bool together = ws.size() > 1 && rows == 1 && !hook_;
        int64_t bytes = 0;
        for (const tensor::WeightView& w : ws) {
            together = together && w.rows == ws[0].rows;
            bytes += static_cast<int64_t>(w.row_bytes) * w.rows;
        }
        if (!together) return Compute::matmul_each(ws, xs, rows, ys);
        if (each_q_.size() < ws.size()) each_q_.resize(ws.size());
        for (size_t k = 0; k < ws.size(); ++k)
            tensor::quantize_activations(ws[k].type, xs[k], ws[k].cols, each_q_[k]);
        if (solo_.empty())
            for (int i = 0; i < pool_.size(); ++i)
                solo_.push_back(std::make_unique<tensor::ThreadPool>(1));
        auto slice = [&](int64_t begin, int64_t end, int worker) {
            for (size_t k = 0; k < ws.size(); ++k)
                tensor::matvec_q(*solo_[static_cast<size_t>(worker)], ws[k].slice(begin, end),
                                 each_q_[k], ys[k] + begin);
        };
        if (pool_.size() > 1 && bytes >= 64 * 1024) {
            pool_.parallel_for(ws[0].rows, slice, 16);
        } else {
            slice(0, ws[0].rows, 0);
        }
    }

private:
    // A prompt's per-token ops (norms, RoPE, the KV stores, activations,
    // residual adds) over the pool, rows [r0, r1) per chunk: each row's
    // result is the same however the rows are cut. A decode step's single row
    // and other small jobs stay on the calling thread, where waking the
    // workers would cost more than the op.
    template <typename F>
    void over_rows(int64_t rows, int64_t row_elems, F&& f) {
        constexpr int64_t kParallelElems = 16 * 1024;
        if (pool_.size() == 1 || rows < 2 || rows * row_elems < kParallelElems) return f(0, rows);
        pool_.parallel_for(rows, [&f](int64_t r0, int64_t r1, int) { f(r0, r1); });
    }
    // The same over the elements of one vector, in 1024-element rows.
    template <typename F>
    void over_chunks(int64_t n, F&& f) {
        constexpr int64_t kChunk = 1024;
        over_rows((n + kChunk - 1) / kChunk, kChunk, [&](int64_t c0, int64_t c1) {
            f(c0 * kChunk, std::min(n, c1 * kChunk));
        });
    }

    // Where row r's keys, values and first position are: one sequence's
    // caches (positions null: row r at pos0 + r) or one per row.
    struct AttentionRows {
        const float* q;
        const void* const* k;
        const void* const* v;
        const int64_t* positions;
        int64_t pos0;
        bool batched;
    };

    void run_attention(const AttentionShape& a, const AttentionRows& rows_of, int64_t rows,
                       float* out) {
        const size_t workers = static_cast<size_t>(pool_.size());
        const size_t mix_floats = static_cast<size_t>(tensor::mix_f16_scratch_floats(a.head_dim_v));
        if (scores_.size() < workers * static_cast<size_t>(a.n_ctx))
            scores_.assign(workers * static_cast<size_t>(a.n_ctx), 0.0f);
        if (q16_.size() < workers * static_cast<size_t>(a.head_dim))
            q16_.assign(workers * static_cast<size_t>(a.head_dim), 0);
        if (mix_.size() < workers * mix_floats) mix_.assign(workers * mix_floats, 0.0f);
        struct Job {
            CpuCompute* self;
            const AttentionShape* a;
            const AttentionRows* rows;
            float* out;
            size_t mix_floats;
            int64_t n_rows;
        } job{this, &a, &rows_of, out, mix_floats, rows};
        pool_.parallel_for(rows * a.n_head, [&job](int64_t begin, int64_t end, int worker) {
            const AttentionShape& c = *job.a;
            const AttentionRows& rs = *job.rows;
            CpuCompute& m = *job.self;
            const int64_t hd = c.head_dim, hdv = c.head_dim_v;
            const int64_t group = c.n_head / c.n_head_kv;
            float* scores = m.scores_.data() + static_cast<size_t>(worker) * c.n_ctx;
            uint16_t* qh = m.q16_.data() + static_cast<size_t>(worker) * hd;
            float* mix = m.mix_.data() + static_cast<size_t>(worker) * job.mix_floats;
            for (int64_t item = begin; item < end; ++item) {
                // Rows in folded order (0, n-1, 1, n-2, ...): a prompt's later
                // rows see more keys, so contiguous chunks of rows in order
                // would give the caller the cheap ones and the pool's
                // contention check a false alarm; folded, every chunk holds
                // about the same number of keys. Each row is computed the
                // same wherever it runs.
                const int64_t k = item / c.n_head, h = item % c.n_head;
                const int64_t i = k % 2 == 0 ? k / 2 : job.n_rows - 1 - k / 2;
                const int64_t g = h / group;
                const size_t seq = rs.positions ? static_cast<size_t>(i) : 0;
                const auto* K = static_cast<const uint16_t*>(rs.k[seq]);
                const auto* V = static_cast<const uint16_t*>(rs.v[seq]);
                const int64_t n_keys = rs.positions ? rs.positions[i] + 1 : rs.pos0 + i + 1;
                // q in F16 like the cache (ggml converts it for the product).
                const float* qf = rs.q + (i * c.n_head + h) * hd;
                tensor::to_f16(qf, qh, hd);
                tensor::scores_f16(K + g * c.n_ctx * hd, n_keys, hd, qh, c.scale, rs.batched,
                                   scores);
                // Keys outside the sliding window are masked (-inf), as
                // llama.cpp masks them in the row it normalises.
                if (c.window > 0)
                    for (int64_t t = 0; t < n_keys - c.window; ++t) scores[t] = -INFINITY;
                tensor::softmax(scores, n_keys);
                // The probabilities enter the product with V as F16, as in ggml.
                tensor::round_to_f16(scores, n_keys);
                tensor::mix_f16(scores, V + g * c.n_ctx * hdv, n_keys, hdv, hdv, rs.batched,
                                job.out + (i * c.n_head + h) * hdv, mix);
            }
        });
    }

    struct Buffer {
        MemCategory category;
        int64_t bytes;
        BufferHandle handle;  // on the budget device
    };

    void release_storage(void* p, const Buffer& b) {
        if (budget_) {
            budget_->free(b.handle);
        } else {
            std::free(p);
        }
    }

    tensor::ThreadPool& pool_;
    Device* budget_;
    std::vector<Capability> lacking_;  // what a budgeted stand-in says it cannot run
    std::map<void*, Buffer> buffers_;
    MemoryUse use_{};
    MatvecHook* hook_ = nullptr;
    tensor::QuantizedVector xq_;
    std::vector<float> scores_, mix_, gate_, up_;
    // gated_products()'s matrices and outputs; matmul_each()'s quantized
    // inputs and one-thread pools (one per worker: each runs its slices alone).
    std::vector<tensor::WeightView> gu_ws_;
    std::vector<float*> gu_ys_;
    std::vector<tensor::QuantizedVector> each_q_;
    std::vector<std::unique_ptr<tensor::ThreadPool>> solo_;
    std::vector<uint16_t> q16_;
};

}  // namespace

// Plain host memory, 64-byte aligned (what a backend without pinned memory
// copies through).
void* Compute::allocate_host(int64_t bytes) {
    return ::operator new (static_cast<size_t>(std::max<int64_t>(bytes, 1)), std::align_val_t{64});
}
void Compute::release_host(void* host) {
    if (host) ::operator delete (host, std::align_val_t{64});
}

std::unique_ptr<Compute> make_cpu_compute(tensor::ThreadPool& pool) {
    return std::make_unique<CpuCompute>(pool, nullptr, std::vector<Capability>{});
}

std::unique_ptr<Compute> make_budgeted_cpu_compute(tensor::ThreadPool& pool, Device& device,
                                                   std::vector<Capability> lacking) {
    return std::make_unique<CpuCompute>(pool, &device, std::move(lacking));
}

}  // namespace powerinfer::backend
