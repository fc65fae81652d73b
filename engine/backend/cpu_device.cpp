// CpuDevice: the Device interface on the host. One worker thread executes the
// device stream (a FIFO of commands) so that the hot FFN part overlaps with
// the cold part the caller runs on the model's pool. Residency and memory
// accounting live on the caller's side (answered at once); the neuron slots
// themselves are touched only by the worker, in stream order.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "backend/device.h"
#include "backend/neuron_ffn.h"
#include "common/thread_priority.h"
#include "tensor/matmul.h"
#include "tensor/ops.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

namespace powerinfer::backend {
namespace {

// Worker-side storage of one layer's resident neurons, indexed by neuron id
// (gate rows, up rows, down columns as three matrices in the standard row
// layout), so that the hot part runs through the same row-sparse tensor
// kernels as the cold part. Host memory for a full layer is taken when its
// first neuron is uploaded; the budget counts only resident neurons.
struct NeuronSlab {
    NeuronFormat fmt;
    std::vector<uint8_t> gate, up, down;

    void ensure() {
        if (!gate.empty()) return;
        gate.resize(static_cast<size_t>(fmt.n_ff * fmt.gate_row_bytes));
        up.resize(static_cast<size_t>(fmt.n_ff * fmt.up_row_bytes));
        down.resize(static_cast<size_t>(fmt.n_ff * fmt.down_col_bytes));
    }
    tensor::WeightView view(const std::vector<uint8_t>& m, GgmlType t, int64_t row_bytes) const {
        return {t, m.data(), fmt.n_ff, fmt.n_embd, static_cast<size_t>(row_bytes)};
    }
};

struct StoredPredictor {
    PredictorWeights view;  // pointers into the vectors below
    std::vector<uint8_t> w1, w2;
    std::vector<float> b1, b2;
};

class CpuDevice final : public Device {
public:
    explicit CpuDevice(const CpuDeviceOptions& opt)
        : budget_(opt.budget_bytes), pool_(std::max(1, opt.n_threads), opt.low_priority) {
        worker_ = std::thread([this, low = opt.low_priority] {
            if (low) lower_current_thread_priority();
            worker_loop();
        });
    }

    ~CpuDevice() override {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        worker_.join();
    }

    std::string name() const override { return "CPU device (simulated budget)"; }

    int64_t budget() const override { return budget_; }
    void set_budget(int64_t bytes) override { budget_ = std::max<int64_t>(0, bytes); }

    DeviceMemoryInfo memory() const override {
        DeviceMemoryInfo info;
        info.name = name();
        info.simulated = true;
        info.budget_bytes = budget_;
        info.used = used_;
        return info;
    }

    BufferHandle allocate(MemCategory category, int64_t bytes) override {
        if (bytes < 0 || bytes > available()) {
            throw DeviceOutOfMemory("device budget exceeded: " + std::to_string(bytes) +
                                    " bytes requested for " +
                                    std::string(mem_category_name(category)) + ", " +
                                    std::to_string(std::max<int64_t>(0, available())) +
                                    " available; raise vram_budget_mb or lower "
                                    "hot_neuron_threshold");
        }
        BufferHandle h = next_handle_++;
        auto& b = buffers_[h];
        b.category = category;
        b.bytes =
            bytes;  // host memory is taken on the first write (accounting-only buffers are free)
        account(category, bytes);
        return h;
    }

    void free(BufferHandle buffer) override {
        auto it = buffers_.find(buffer);
        if (it == buffers_.end()) return;
        wait_idle();  // a queued write may still target it
        account(it->second.category, -it->second.bytes);
        buffers_.erase(it);
    }

    void write(BufferHandle buffer, int64_t offset, const void* src, int64_t bytes) override {
        auto it = buffers_.find(buffer);
        if (it == buffers_.end() || offset < 0 || bytes < 0 || offset + bytes > it->second.bytes) {
            throw EngineError("device write outside its buffer");
        }
        if (it->second.data.empty()) it->second.data.resize(static_cast<size_t>(it->second.bytes));
        uint8_t* dst = it->second.data.data() + offset;
        enqueue([dst, src, bytes] { std::memcpy(dst, src, static_cast<size_t>(bytes)); });
    }

    void* buffer_address(BufferHandle buffer) override {
        auto it = buffers_.find(buffer);
        if (it == buffers_.end()) return nullptr;
        wait_idle();  // its queued writes land first
        auto& data = it->second.data;
        if (data.empty()) data.resize(static_cast<size_t>(std::max<int64_t>(1, it->second.bytes)));
        return data.data();
    }

    void configure_layers(const std::vector<NeuronFormat>& formats) override {
        wait_idle();
        used_[static_cast<size_t>(MemCategory::HotNeurons)] = 0;
        used_[static_cast<size_t>(MemCategory::NeuronCache)] = 0;
        used_[static_cast<size_t>(MemCategory::Predictors)] = 0;
        formats_ = formats;
        residency_.assign(formats.size(), {});
        resident_count_.assign(formats.size(), 0);
        slabs_.clear();
        slabs_.resize(formats.size());
        predictors_.clear();
        predictors_.resize(formats.size());
        for (size_t l = 0; l < formats.size(); ++l) {
            residency_[l].assign(static_cast<size_t>(formats[l].n_ff), -1);
            slabs_[l].fmt = formats[l];
        }
    }

    const NeuronFormat& layer_format(int layer) const override {
        return formats_.at(static_cast<size_t>(layer));
    }

    int64_t upload_neurons(int layer, MemCategory category, const int32_t* ids, int64_t count,
                           const NeuronSource& src) override {
        check_layer(layer);
        const NeuronFormat& fmt = formats_[static_cast<size_t>(layer)];
        auto& res = residency_[static_cast<size_t>(layer)];
        const int64_t per = fmt.bytes_per_neuron();
        std::vector<int32_t> to_copy;
        int64_t done = 0;
        for (; done < count; ++done) {
            const int32_t id = ids[done];
            if (id < 0 || id >= fmt.n_ff) throw EngineError("neuron id out of range");
            int8_t& c = res[static_cast<size_t>(id)];
            if (c >= 0) {
                if (static_cast<MemCategory>(c) != category) {
                    account(static_cast<MemCategory>(c), -per);
                    account(category, per);
                    c = static_cast<int8_t>(category);
                }
                continue;
            }
            if (per > available()) break;
            c = static_cast<int8_t>(category);
            account(category, per);
            ++resident_count_[static_cast<size_t>(layer)];
            to_copy.push_back(id);
        }
        if (!to_copy.empty()) {
            enqueue([this, layer, src, ids = std::move(to_copy)] {
                NeuronSlab& slab = slabs_[static_cast<size_t>(layer)];
                const NeuronFormat& f = slab.fmt;
                slab.ensure();
                for (int32_t id : ids) {
                    std::memcpy(slab.gate.data() + id * f.gate_row_bytes, src.gate.row(id),
                                static_cast<size_t>(f.gate_row_bytes));
                    std::memcpy(slab.up.data() + id * f.up_row_bytes, src.up.row(id),
                                static_cast<size_t>(f.up_row_bytes));
                    std::memcpy(slab.down.data() + id * f.down_col_bytes, src.down_t.row(id),
                                static_cast<size_t>(f.down_col_bytes));
                }
            });
        }
        return done;
    }

    void evict_neurons(int layer, const int32_t* ids, int64_t count) override {
        check_layer(layer);
        const int64_t per = formats_[static_cast<size_t>(layer)].bytes_per_neuron();
        auto& res = residency_[static_cast<size_t>(layer)];
        // The rows stay in the layer's arrays; only residency changes (a
        // later run_hot never names an evicted id, run_hot checks).
        for (int64_t i = 0; i < count; ++i) {
            const int32_t id = ids[i];
            if (id < 0 || static_cast<size_t>(id) >= res.size() ||
                res[static_cast<size_t>(id)] < 0) {
                continue;
            }
            account(static_cast<MemCategory>(res[static_cast<size_t>(id)]), -per);
            res[static_cast<size_t>(id)] = -1;
            --resident_count_[static_cast<size_t>(layer)];
        }
    }

    bool is_resident(int layer, int32_t id) const override {
        return residency(layer, id) != MemCategory::Scratch;
    }

    MemCategory residency(int layer, int32_t id) const override {
        if (layer < 0 || static_cast<size_t>(layer) >= residency_.size())
            return MemCategory::Scratch;
        const auto& res = residency_[static_cast<size_t>(layer)];
        if (id < 0 || static_cast<size_t>(id) >= res.size() || res[static_cast<size_t>(id)] < 0) {
            return MemCategory::Scratch;
        }
        return static_cast<MemCategory>(res[static_cast<size_t>(id)]);
    }

    int64_t resident_count(int layer) const override {
        if (layer < 0 || static_cast<size_t>(layer) >= resident_count_.size()) return 0;
        return resident_count_[static_cast<size_t>(layer)];
    }

    void run_hot(int layer, const float* x, const int32_t* ids, int64_t count, float* y) override {
        check_layer(layer);
        const int64_t n = formats_[static_cast<size_t>(layer)].n_embd;
        for (int64_t i = 0; i < count; ++i) {
            if (!is_resident(layer, ids[i])) {
                throw EngineError("run_hot: neuron " + std::to_string(ids[i]) + " of layer " +
                                  std::to_string(layer) + " is not resident");
            }
        }
        enqueue([this, layer, xv = std::vector<float>(x, x + n),
                 idv = std::vector<int32_t>(ids, ids + count),
                 y] { hot_ffn(layer, xv.data(), idv, y); });
    }

    double synchronize() override {
        wait_idle();
        std::lock_guard<std::mutex> lock(mu_);
        double ms = busy_ms_;
        busy_ms_ = 0;
        return ms;
    }

    void set_predictor(int layer, const PredictorWeights& w) override {
        check_layer(layer);
        wait_idle();
        auto& slot = predictors_[static_cast<size_t>(layer)];
        if (slot) account(MemCategory::Predictors, -slot->view.bytes());
        slot.reset();
        if (w.bytes() > available()) {
            throw DeviceOutOfMemory("predictor of layer " + std::to_string(layer) +
                                    " does not fit the device budget; raise vram_budget_mb");
        }
        auto p = std::make_unique<StoredPredictor>();
        const size_t elem = w.type == GgmlType::F16 ? 2 : 4;
        p->w1.assign(w.w1, w.w1 + static_cast<size_t>(w.rank * w.n_embd) * elem);
        p->w2.assign(w.w2, w.w2 + static_cast<size_t>(w.n_ff * w.rank) * elem);
        p->b1.assign(w.b1, w.b1 + w.rank);
        p->b2.assign(w.b2, w.b2 + w.n_ff);
        p->view = w;
        p->view.w1 = p->w1.data();
        p->view.w2 = p->w2.data();
        p->view.b1 = p->b1.data();
        p->view.b2 = p->b2.data();
        account(MemCategory::Predictors, w.bytes());
        slot = std::move(p);
    }

    bool has_predictor(int layer) const override {
        return layer >= 0 && static_cast<size_t>(layer) < predictors_.size() &&
               predictors_[static_cast<size_t>(layer)] != nullptr;
    }

    void predict(int layer, const float* x, float threshold, std::vector<int32_t>& active,
                 float* logits) override {
        if (!has_predictor(layer)) {
            throw EngineError("no predictor loaded for layer " + std::to_string(layer));
        }
        // The device stream is drained first (in-order semantics), then the
        // caller runs the predictor on the device's pool itself: the workers
        // are idle, and a thread hand-off per layer would cost more than the
        // predictor on small models.
        const StoredPredictor& p = *predictors_[static_cast<size_t>(layer)];
        wait_idle();
        std::vector<float>& h = pred_hidden_;
        std::vector<float>& z = pred_logits_;
        h.resize(static_cast<size_t>(p.view.rank));
        z.resize(static_cast<size_t>(p.view.n_ff));
        const size_t elem = p.view.type == GgmlType::F16 ? 2 : 4;
        tensor::WeightView w1{p.view.type, p.view.w1, p.view.rank, p.view.n_embd,
                              static_cast<size_t>(p.view.n_embd) * elem};
        tensor::WeightView w2{p.view.type, p.view.w2, p.view.n_ff, p.view.rank,
                              static_cast<size_t>(p.view.rank) * elem};
        {
            tensor::matvec(pool_, w1, x, h.data());
            for (int64_t i = 0; i < p.view.rank; ++i) {
                h[static_cast<size_t>(i)] =
                    std::max(0.0f, h[static_cast<size_t>(i)] + p.b1[static_cast<size_t>(i)]);
            }
            tensor::matvec(pool_, w2, h.data(), z.data());
        }
        // p > t  <=>  logit > log(t / (1 - t))
        const float t = std::clamp(threshold, 1e-6f, 1.0f - 1e-6f);
        const float cut = std::log(t / (1.0f - t));
        active.clear();
        for (int64_t j = 0; j < p.view.n_ff; ++j) {
            const float v = z[static_cast<size_t>(j)] + p.b2[static_cast<size_t>(j)];
            if (logits) logits[j] = v;
            if (v > cut) active.push_back(static_cast<int32_t>(j));
        }
    }

private:
    struct Buffer {
        MemCategory category = MemCategory::Scratch;
        int64_t bytes = 0;
        std::vector<uint8_t> data;
    };

    int64_t available() const {
        int64_t total = 0;
        for (int64_t u : used_) total += u;
        return budget_ - total;
    }
    void account(MemCategory c, int64_t delta) { used_[static_cast<size_t>(c)] += delta; }
    void check_layer(int layer) const {
        if (layer < 0 || static_cast<size_t>(layer) >= formats_.size()) {
            throw EngineError("device layer " + std::to_string(layer) + " is not configured");
        }
    }

    // Worker-side: the FFN over the resident neurons `ids` (slab rows).
    void hot_ffn(int layer, const float* x, const std::vector<int32_t>& ids, float* y) {
        NeuronSlab& slab = slabs_[static_cast<size_t>(layer)];
        const NeuronFormat& f = slab.fmt;
        const NeuronFfnWeights w{slab.view(slab.gate, f.gate_type, f.gate_row_bytes),
                                 slab.view(slab.up, f.up_type, f.up_row_bytes),
                                 slab.view(slab.down, f.down_type, f.down_col_bytes),
                                 f.activation};
        hot_.run(pool_, w, x, ids.data(), static_cast<int64_t>(ids.size()), y);
    }

    void enqueue(std::function<void()> fn) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            queue_.push_back(std::move(fn));
        }
        cv_.notify_all();
    }

    void wait_idle() {
        std::unique_lock<std::mutex> lock(mu_);
        idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
    }

    void worker_loop() {
        std::unique_lock<std::mutex> lock(mu_);
        for (;;) {
            cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stop_ and drained
            auto fn = std::move(queue_.front());
            queue_.pop_front();
            busy_ = true;
            lock.unlock();
            const auto t0 = std::chrono::steady_clock::now();
            fn();
            const auto t1 = std::chrono::steady_clock::now();
            lock.lock();
            busy_ = false;
            busy_ms_ += std::chrono::duration<double, std::milli>(t1 - t0).count();
            if (queue_.empty()) idle_cv_.notify_all();
        }
    }

    // Caller side.
    int64_t budget_;
    std::array<int64_t, kMemCategoryCount> used_{};
    std::vector<NeuronFormat> formats_;
    std::vector<std::vector<int8_t>> residency_;  // MemCategory or -1
    std::vector<int64_t> resident_count_;
    std::map<BufferHandle, Buffer> buffers_;
    BufferHandle next_handle_ = 1;
    std::vector<std::unique_ptr<StoredPredictor>> predictors_;
    std::vector<float> pred_hidden_, pred_logits_;

    // Worker side.
    tensor::ThreadPool pool_;
    std::vector<NeuronSlab> slabs_;
    NeuronFfn hot_;

    std::mutex mu_;
    std::condition_variable cv_, idle_cv_;
    std::deque<std::function<void()>> queue_;
    bool busy_ = false;
    bool stop_ = false;
    double busy_ms_ = 0;
    std::thread worker_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(const CpuDeviceOptions& options) {
    return std::make_unique<CpuDevice>(options);
}

}  // namespace powerinfer::backend
