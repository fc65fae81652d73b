// CudaDevice. Neurons of a layer live in compact slot arrays (gate rows, up
// rows, down columns) that grow by doubling; the host keeps the id<->slot maps
// and the accounting, so residency questions never wait for the GPU. Work is
// enqueued on one compute stream; x/ids/y travel through pinned staging
// memory that is recycled at synchronize().
#include "cuda_device.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "cuda_ops.h"

namespace powerinfer::cuda {
namespace {

using backend::BufferHandle;
using backend::DeviceMemoryInfo;
using backend::DeviceOutOfMemory;
using backend::MemCategory;
using backend::NeuronFormat;
using backend::NeuronSource;
using backend::PredictorWeights;

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw EngineError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
    }
}

size_t category_index(MemCategory c) { return static_cast<size_t>(c); }

struct DeviceArray {
    void* ptr = nullptr;
    size_t bytes = 0;
};

struct LayerSlots {
    NeuronFormat format;
    int64_t capacity = 0;
    DeviceArray gate, up, down;
    std::vector<int32_t> slot_of;         // neuron id -> slot, -1 if not resident
    std::vector<MemCategory> category;    // neuron id -> category (valid if resident)
    std::vector<int32_t> free_slots;
    int64_t used_slots = 0;               // high-water mark of slots handed out
    int64_t resident = 0;
};

struct DevicePredictor {
    PredictorWeights shape;
    DeviceArray w1, b1, w2, b2;
};

class CudaDevice final : public backend::Device {
public:
    explicit CudaDevice(const CudaDeviceOptions& options) {
        const DeviceProbe probe = probe_device(options.ordinal);
        if (!probe.available) throw EngineError(probe.reason);
        ordinal_ = options.ordinal;
        name_ = probe.name;
        check(cudaSetDevice(ordinal_), "cudaSetDevice");
        budget_ = options.budget_bytes >= 0
                      ? options.budget_bytes
                      : std::max<int64_t>(0, probe.free_bytes - options.safety_margin_bytes);
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaEventCreate(&start_), "cudaEventCreate");
        check(cudaEventCreate(&stop_), "cudaEventCreate");
        reserve_staging(int64_t{32} << 20);
    }

    ~CudaDevice() override {
        cudaStreamSynchronize(stream_);
        for (auto& l : layers_) release_layer(l);
        for (auto& [_, p] : predictors_) release_predictor(p);
        for (auto& [_, b] : buffers_) cudaFree(b.array.ptr);
        cudaFree(dev_stage_);
        cudaFreeHost(host_stage_);
        cudaFree(scratch_);
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
        cudaStreamDestroy(stream_);
    }

    std::string name() const override { return name_; }
    int64_t budget() const override { return budget_; }
    void set_budget(int64_t bytes) override { budget_ = std::max<int64_t>(0, bytes); }

    DeviceMemoryInfo memory() const override {
        DeviceMemoryInfo info;
        info.name = name_;
        info.simulated = false;
        info.budget_bytes = budget_;
        info.used = used_;
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) info.device_free_bytes = int64_t(free_b);
        else cudaGetLastError();
        return info;
    }

    BufferHandle allocate(MemCategory category, int64_t bytes) override {
        charge(category, bytes);
        DeviceArray a;
        if (cudaMalloc(&a.ptr, size_t(std::max<int64_t>(bytes, 1))) != cudaSuccess) {
            cudaGetLastError();
            uncharge(category, bytes);
            throw DeviceOutOfMemory("the GPU could not allocate " + std::to_string(bytes >> 20) +
                                    " MiB: lower vram_budget_mb or close other GPU programs");
        }
        a.bytes = size_t(bytes);
        const BufferHandle h = next_handle_++;
        buffers_[h] = Buffer{a, category};
        return h;
    }

    void free(BufferHandle handle) override {
        auto it = buffers_.find(handle);
        if (it == buffers_.end()) return;
        cudaStreamSynchronize(stream_);
        cudaFree(it->second.array.ptr);
        uncharge(it->second.category, int64_t(it->second.array.bytes));
        buffers_.erase(it);
    }

    void write(BufferHandle handle, int64_t offset, const void* src, int64_t bytes) override {
        auto it = buffers_.find(handle);
        if (it == buffers_.end() || offset < 0 || bytes < 0 ||
            size_t(offset + bytes) > it->second.array.bytes)
            throw EngineError("CudaDevice::write outside the buffer");
        mark_busy();
        check(cudaMemcpyAsync(static_cast<uint8_t*>(it->second.array.ptr) + offset, src,
                              size_t(bytes), cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync");
        mark_done();
    }

    void configure_layers(const std::vector<NeuronFormat>& formats) override {
        for (const auto& f : formats)
            if (!type_supported(uint32_t(f.gate_type)) || !type_supported(uint32_t(f.up_type)) ||
                !down_type_supported(uint32_t(f.down_type)))
                throw EngineError("the CUDA device has no kernels for this model's FFN types (" +
                                  std::string(ggml_type_name(f.gate_type)) + "/" +
                                  std::string(ggml_type_name(f.down_type)) + ")");
        cudaStreamSynchronize(stream_);
        for (auto& l : layers_) release_layer(l);
        layers_.assign(formats.size(), LayerSlots{});
        for (size_t i = 0; i < formats.size(); ++i) {
            layers_[i].format = formats[i];
            layers_[i].slot_of.assign(size_t(formats[i].n_ff), -1);
            layers_[i].category.assign(size_t(formats[i].n_ff), MemCategory::Scratch);
        }
        used_[category_index(MemCategory::HotNeurons)] = 0;
        used_[category_index(MemCategory::NeuronCache)] = 0;
        for (auto& [_, p] : predictors_) release_predictor(p);
        predictors_.clear();
        used_[category_index(MemCategory::Predictors)] = 0;
    }

    const NeuronFormat& layer_format(int layer) const override { return layer_at(layer).format; }

    int64_t upload_neurons(int layer, MemCategory category, const int32_t* ids, int64_t count,
                           const NeuronSource& src) override {
        LayerSlots& l = layer_at(layer);
        const NeuronFormat& f = l.format;
        const int64_t per = f.bytes_per_neuron();
        // New neurons are gathered into pinned staging and placed with one
        // copy and one scatter per batch (not three small pageable copies
        // per neuron: the neuron cache uploads every token).
        const int64_t max_batch = std::max<int64_t>(1, stage_capacity_ / 2 / (per + 4));
        std::vector<std::pair<int32_t, int32_t>> batch;  // (slot, id)
        auto flush = [&] {
            upload_batch(l, batch, src);
            batch.clear();
        };
        for (int64_t i = 0; i < count; ++i) {
            const int32_t id = ids[i];
            if (id < 0 || id >= f.n_ff) {
                flush();
                throw EngineError("neuron id out of range");
            }
            if (l.slot_of[size_t(id)] >= 0) {
                const MemCategory old = l.category[size_t(id)];
                if (old != category) {
                    uncharge(old, per);
                    used_[category_index(category)] += per;
                    l.category[size_t(id)] = category;
                }
                continue;
            }
            if (used_total() + per > budget_) {
                flush();
                return i;
            }
            int32_t slot;
            if (!l.free_slots.empty()) {
                slot = l.free_slots.back();
                l.free_slots.pop_back();
            } else {
                if (l.used_slots == l.capacity && !grow(l)) {
                    flush();
                    return i;
                }
                slot = int32_t(l.used_slots++);
            }
            batch.emplace_back(slot, id);
            if (int64_t(batch.size()) == max_batch) flush();
            l.slot_of[size_t(id)] = slot;
            l.category[size_t(id)] = category;
            used_[category_index(category)] += per;
            ++l.resident;
        }
        flush();
        return count;
    }

    void evict_neurons(int layer, const int32_t* ids, int64_t count) override {
        LayerSlots& l = layer_at(layer);
        const int64_t per = l.format.bytes_per_neuron();
        for (int64_t i = 0; i < count; ++i) {
            const int32_t id = ids[i];
            if (id < 0 || id >= l.format.n_ff || l.slot_of[size_t(id)] < 0) continue;
            l.free_slots.push_back(l.slot_of[size_t(id)]);
            l.slot_of[size_t(id)] = -1;
            uncharge(l.category[size_t(id)], per);
            l.category[size_t(id)] = MemCategory::Scratch;
            --l.resident;
        }
    }

    bool is_resident(int layer, int32_t id) const override {
        const LayerSlots& l = layer_at(layer);
        return id >= 0 && id < l.format.n_ff && l.slot_of[size_t(id)] >= 0;
    }
    MemCategory residency(int layer, int32_t id) const override {
        return is_resident(layer, id) ? layer_at(layer).category[size_t(id)] : MemCategory::Scratch;
    }
    int64_t resident_count(int layer) const override { return layer_at(layer).resident; }

    void run_hot(int layer, const float* x, const int32_t* ids, int64_t count, float* y) override {
        LayerSlots& l = layer_at(layer);
        const NeuronFormat& f = l.format;
        const int64_t n = f.n_embd;
        std::vector<int32_t> slots(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
            const int32_t id = ids[i];
            if (id < 0 || id >= f.n_ff || l.slot_of[size_t(id)] < 0)
                throw EngineError("run_hot: neuron " + std::to_string(id) + " is not resident");
            slots[size_t(i)] = l.slot_of[size_t(id)];
        }
        const int64_t off_x = stage_take(n * 4 + round256(count * 4) + n * 4 +
                                         round256(std::max<int64_t>(count, 1) * 4) + 256);
        const int64_t off_ids = off_x + round256(n * 4), off_y = off_ids + round256(count * 4),
                      off_h = off_y + round256(n * 4);
        std::memcpy(host_stage_ + off_x, x, size_t(n) * 4);
        std::memcpy(host_stage_ + off_ids, slots.data(), size_t(count) * 4);
        mark_busy();
        check(cudaMemcpyAsync(dev_stage_ + off_x, host_stage_ + off_x, size_t(off_y - off_x),
                              cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync");
        auto* dx = reinterpret_cast<float*>(dev_stage_ + off_x);
        auto* dslots = reinterpret_cast<int32_t*>(dev_stage_ + off_ids);
        auto* dy = reinterpret_cast<float*>(dev_stage_ + off_y);
        auto* dh = reinterpret_cast<float*>(dev_stage_ + off_h);
        const bool relu = f.activation == backend::FfnActivation::ReLU;
        if (f.gate_type == f.up_type) {
            swiglu_rows(uint32_t(f.gate_type), l.gate.ptr, l.up.ptr, size_t(f.gate_row_bytes), n,
                        dslots, count, dx, dh, relu, stream_);
        } else {
            ensure_scratch(size_t(count) * 2);
            rows_dot(uint32_t(f.gate_type), l.gate.ptr, size_t(f.gate_row_bytes), n, dslots, count,
                     dx, scratch_, stream_);
            rows_dot(uint32_t(f.up_type), l.up.ptr, size_t(f.up_row_bytes), n, dslots, count, dx,
                     scratch_ + count, stream_);
            act_mul(scratch_, scratch_ + count, dh, count, relu, stream_);
        }
        const size_t down_scratch = down_axpy_scratch_floats(n, count);
        ensure_down_scratch(down_scratch);
        down_axpy(uint32_t(f.down_type), l.down.ptr, size_t(f.down_col_bytes), n, dslots, dh,
                  count, dy, down_scratch_, stream_);
        check(cudaMemcpyAsync(host_stage_ + off_y, dy, size_t(n) * 4, cudaMemcpyDeviceToHost,
                              stream_),
              "cudaMemcpyAsync");
        const std::string err = last_error();
        if (!err.empty()) throw EngineError("CUDA kernel launch failed: " + err);
        mark_done();
        pending_.push_back({off_y, y, n});
    }

    double synchronize() override {
        double ms = 0;
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        if (busy_) {
            float f = 0;
            if (cudaEventElapsedTime(&f, start_, stop_) == cudaSuccess) ms = f;
            else cudaGetLastError();
            busy_ = false;
        }
        for (const auto& p : pending_)
            std::memcpy(p.dst, host_stage_ + p.offset, size_t(p.n) * 4);
        pending_.clear();
        stage_used_ = 0;
        return ms;
    }

    void set_predictor(int layer, const PredictorWeights& w) override {
        if (w.rank % 32 != 0 || w.n_embd % 32 != 0)
            throw EngineError("predictor rank and width must be multiples of 32 on the GPU");
        const int64_t bytes = w.bytes();
        auto it = predictors_.find(layer);
        const int64_t old = it == predictors_.end() ? 0 : it->second.shape.bytes();
        if (used_total() - old + bytes > budget_)
            throw DeviceOutOfMemory("predictor for layer " + std::to_string(layer) +
                                    " does not fit the VRAM budget");
        if (it != predictors_.end()) {
            release_predictor(it->second);
            predictors_.erase(it);
        }
        const int64_t elem = w.type == GgmlType::F16 ? 2 : 4;
        DevicePredictor p;
        p.shape = w;
        p.w1 = upload(w.w1, size_t(w.rank * w.n_embd * elem));
        p.b1 = upload(w.b1, size_t(w.rank) * 4);
        p.w2 = upload(w.w2, size_t(w.n_ff * w.rank * elem));
        p.b2 = upload(w.b2, size_t(w.n_ff) * 4);
        predictors_[layer] = p;
        used_[category_index(MemCategory::Predictors)] += bytes;
    }

    bool has_predictor(int layer) const override { return predictors_.count(layer) != 0; }

    void predict(int layer, const float* x, float threshold, std::vector<int32_t>& active,
                 float* logits) override {
        auto it = predictors_.find(layer);
        if (it == predictors_.end()) throw EngineError("no predictor for layer " + std::to_string(layer));
        const DevicePredictor& p = it->second;
        const PredictorWeights& s = p.shape;
        const int64_t elem = s.type == GgmlType::F16 ? 2 : 4;
        synchronize();
        predict_host_.resize(size_t(s.n_ff));
        ensure_scratch(size_t(s.n_embd + s.rank + s.n_ff));
        float* dx = scratch_;
        float* dh = dx + s.n_embd;
        float* dl = dh + s.rank;
        check(cudaMemcpyAsync(dx, x, size_t(s.n_embd) * 4, cudaMemcpyHostToDevice, stream_), "copy x");
        rows_dot(uint32_t(s.type), p.w1.ptr, size_t(s.n_embd * elem), s.n_embd, nullptr, s.rank, dx,
                 dh, stream_);
        bias_act(dh, static_cast<const float*>(p.b1.ptr), s.rank, 1, stream_);
        rows_dot(uint32_t(s.type), p.w2.ptr, size_t(s.rank * elem), s.rank, nullptr, s.n_ff, dh, dl,
                 stream_);
        bias_act(dl, static_cast<const float*>(p.b2.ptr), s.n_ff, 0, stream_);
        check(cudaMemcpyAsync(predict_host_.data(), dl, size_t(s.n_ff) * 4, cudaMemcpyDeviceToHost,
                              stream_),
              "copy logits");
        check(cudaStreamSynchronize(stream_), "predict");
        // p > t  <=>  logit > log(t / (1 - t))
        const float t = std::clamp(threshold, 1e-6f, 1.f - 1e-6f);
        const float cut = std::log(t / (1.f - t));
        active.clear();
        for (int64_t j = 0; j < s.n_ff; ++j)
            if (predict_host_[size_t(j)] > cut) active.push_back(int32_t(j));
        if (logits) std::memcpy(logits, predict_host_.data(), size_t(s.n_ff) * 4);
    }

    void* pointer(BufferHandle handle) {
        auto it = buffers_.find(handle);
        return it == buffers_.end() ? nullptr : it->second.array.ptr;
    }
    cudaStream_t stream() const { return stream_; }
    // Kernels a caller enqueues on stream() count as device work.
    void note_external_work() {
        mark_busy();
        mark_done();
    }

private:
    struct Buffer {
        DeviceArray array;
        MemCategory category;
    };
    struct PendingCopy {
        int64_t offset;
        float* dst;
        int64_t n;
    };

    LayerSlots& layer_at(int layer) {
        if (layer < 0 || size_t(layer) >= layers_.size()) throw EngineError("layer out of range");
        return layers_[size_t(layer)];
    }
    const LayerSlots& layer_at(int layer) const {
        return const_cast<CudaDevice*>(this)->layer_at(layer);
    }

    int64_t used_total() const {
        int64_t t = 0;
        for (int64_t u : used_) t += u;
        return t;
    }
    void charge(MemCategory c, int64_t bytes) {
        if (bytes < 0 || used_total() + bytes > budget_)
            throw DeviceOutOfMemory("allocation of " + std::to_string(bytes >> 20) +
                                    " MiB does not fit the VRAM budget (" +
                                    std::to_string(budget_ >> 20) + " MiB)");
        used_[category_index(c)] += bytes;
    }
    void uncharge(MemCategory c, int64_t bytes) { used_[category_index(c)] -= bytes; }

    // Busy time = from the first enqueued op after a synchronize() to the end
    // of the last one (not to the synchronize() call, which may come later).
    void mark_busy() {
        if (!busy_) {
            cudaEventRecord(start_, stream_);
            busy_ = true;
        }
    }
    void mark_done() { cudaEventRecord(stop_, stream_); }

    bool grow(LayerSlots& l) {
        const int64_t cap = std::min<int64_t>(l.format.n_ff, std::max<int64_t>(256, l.capacity * 2));
        if (cap <= l.capacity) return false;
        DeviceArray g, u, d;
        auto alloc = [](DeviceArray& a, size_t bytes) {
            if (cudaMalloc(&a.ptr, bytes) != cudaSuccess) {
                cudaGetLastError();
                a.ptr = nullptr;
                return false;
            }
            a.bytes = bytes;
            return true;
        };
        const NeuronFormat& f = l.format;
        if (!alloc(g, size_t(cap * f.gate_row_bytes)) || !alloc(u, size_t(cap * f.up_row_bytes)) ||
            !alloc(d, size_t(cap * f.down_col_bytes))) {
            // Out of real GPU memory: keep what we have (fewer hot neurons).
            cudaFree(g.ptr);
            cudaFree(u.ptr);
            cudaFree(d.ptr);
            return false;
        }
        if (l.capacity > 0) {
            cudaMemcpyAsync(g.ptr, l.gate.ptr, l.gate.bytes, cudaMemcpyDeviceToDevice, stream_);
            cudaMemcpyAsync(u.ptr, l.up.ptr, l.up.bytes, cudaMemcpyDeviceToDevice, stream_);
            cudaMemcpyAsync(d.ptr, l.down.ptr, l.down.bytes, cudaMemcpyDeviceToDevice, stream_);
            cudaStreamSynchronize(stream_);
            release_layer(l);
        }
        l.gate = g;
        l.up = u;
        l.down = d;
        l.capacity = cap;
        return true;
    }

    static int64_t round256(int64_t b) { return (b + 255) / 256 * 256; }

    // Space in the staging arena (pinned host + device twin); recycled at
    // synchronize(), so a full arena waits for the queue first.
    int64_t stage_take(int64_t bytes) {
        bytes = round256(bytes);
        if (stage_used_ + bytes > stage_capacity_) {
            synchronize();
            if (bytes > stage_capacity_) reserve_staging(bytes * 2);
        }
        const int64_t off = stage_used_;
        stage_used_ += bytes;
        return off;
    }

    void upload_batch(LayerSlots& l, const std::vector<std::pair<int32_t, int32_t>>& batch,
                      const NeuronSource& src) {
        if (batch.empty()) return;
        const NeuronFormat& f = l.format;
        const int64_t n = int64_t(batch.size());
        const int64_t gb = f.gate_row_bytes, ub = f.up_row_bytes, db = f.down_col_bytes;
        const int64_t off_slots = 0, off_gate = round256(n * 4), off_up = off_gate + round256(n * gb),
                      off_down = off_up + round256(n * ub), total = off_down + n * db;
        const int64_t off = stage_take(total);
        uint8_t* h = host_stage_ + off;
        for (int64_t i = 0; i < n; ++i) {
            const auto [slot, id] = batch[size_t(i)];
            std::memcpy(h + off_slots + i * 4, &slot, 4);
            std::memcpy(h + off_gate + i * gb, src.gate.row(id), size_t(gb));
            std::memcpy(h + off_up + i * ub, src.up.row(id), size_t(ub));
            std::memcpy(h + off_down + i * db, src.down_t.row(id), size_t(db));
        }
        mark_busy();
        uint8_t* d = dev_stage_ + off;
        check(cudaMemcpyAsync(d, h, size_t(total), cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
        const auto* slots = reinterpret_cast<const int32_t*>(d + off_slots);
        scatter_rows(d + off_gate, size_t(gb), slots, n, l.gate.ptr, stream_);
        scatter_rows(d + off_up, size_t(ub), slots, n, l.up.ptr, stream_);
        scatter_rows(d + off_down, size_t(db), slots, n, l.down.ptr, stream_);
        mark_done();
    }

    static void release_layer(LayerSlots& l) {
        cudaFree(l.gate.ptr);
        cudaFree(l.up.ptr);
        cudaFree(l.down.ptr);
        l.gate = l.up = l.down = DeviceArray{};
    }
    static void release_predictor(DevicePredictor& p) {
        cudaFree(p.w1.ptr);
        cudaFree(p.b1.ptr);
        cudaFree(p.w2.ptr);
        cudaFree(p.b2.ptr);
    }

    DeviceArray upload(const void* host, size_t bytes) {
        DeviceArray a;
        check(cudaMalloc(&a.ptr, std::max<size_t>(bytes, 1)), "cudaMalloc (predictor)");
        a.bytes = bytes;
        if (host && bytes) check(cudaMemcpy(a.ptr, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
        return a;
    }

    void reserve_staging(int64_t bytes) {
        cudaStreamSynchronize(stream_);
        cudaFree(dev_stage_);
        cudaFreeHost(host_stage_);
        check(cudaMalloc(reinterpret_cast<void**>(&dev_stage_), size_t(bytes)), "cudaMalloc (staging)");
        check(cudaMallocHost(reinterpret_cast<void**>(&host_stage_), size_t(bytes)),
              "cudaMallocHost (pinned staging)");
        stage_capacity_ = bytes;
        stage_used_ = 0;
    }
    void ensure_scratch(size_t floats) {
        if (floats <= scratch_floats_) return;
        cudaStreamSynchronize(stream_);
        cudaFree(scratch_);
        check(cudaMalloc(reinterpret_cast<void**>(&scratch_), floats * 4), "cudaMalloc (scratch)");
        scratch_floats_ = floats;
    }
    void ensure_down_scratch(size_t floats) {
        if (floats <= down_scratch_floats_) return;
        cudaStreamSynchronize(stream_);
        cudaFree(down_scratch_);
        check(cudaMalloc(reinterpret_cast<void**>(&down_scratch_), floats * 4 * 2),
              "cudaMalloc (down scratch)");
        down_scratch_floats_ = floats * 2;
    }

    int ordinal_ = 0;
    std::string name_;
    int64_t budget_ = 0;
    std::array<int64_t, backend::kMemCategoryCount> used_{};
    cudaStream_t stream_ = nullptr;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    bool busy_ = false;
    std::vector<LayerSlots> layers_;
    std::map<int, DevicePredictor> predictors_;
    std::map<BufferHandle, Buffer> buffers_;
    BufferHandle next_handle_ = 1;
    uint8_t* dev_stage_ = nullptr;
    uint8_t* host_stage_ = nullptr;
    int64_t stage_capacity_ = 0;
    int64_t stage_used_ = 0;
    std::vector<PendingCopy> pending_;
    float* scratch_ = nullptr;
    size_t scratch_floats_ = 0;
    float* down_scratch_ = nullptr;
    size_t down_scratch_floats_ = 0;
    std::vector<float> predict_host_;
};

}  // namespace

std::unique_ptr<backend::Device> make_cuda_device(const CudaDeviceOptions& options) {
    return std::make_unique<CudaDevice>(options);
}

void* buffer_pointer(backend::Device& device, backend::BufferHandle buffer) {
    auto* cuda = dynamic_cast<CudaDevice*>(&device);
    return cuda ? cuda->pointer(buffer) : nullptr;
}

void* device_stream(backend::Device& device) {
    auto* cuda = dynamic_cast<CudaDevice*>(&device);
    if (!cuda) return nullptr;
    cuda->note_external_work();
    return cuda->stream();
}

}  // namespace powerinfer::cuda
