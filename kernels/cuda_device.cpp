// Long (about 800 lines) because the Device interface is one object: memory
// accounting, neuron slots, predictors and the hot FFN share its stream and
// staging; split it where a second GPU backend would share a part.
// CudaDevice. Neurons of a layer live in compact slot arrays (gate rows, up
// rows, down columns) sized by backend::plan_slot_growth; the host keeps the
// id<->slot maps and the accounting, so residency questions never wait for
// the GPU. Work is enqueued on one compute stream; x/ids/y travel through
// pinned staging memory that is recycled at synchronize().
//
// Accounting: every cudaMalloc is charged to a category before it is made and
// uncharged after its cudaFree, with 64-bit sizes: the staging arena's device
// half and the kernels' work buffers as Staging (allocated when the device is
// created and when layers and predictors are set, never while a token is
// computed), neuron slots by capacity (resident hot neurons as HotNeurons,
// the rest of the slots as NeuronCache: room the cache fills), predictors,
// and allocate()'s buffers. A cudaMalloc that fails although the budget
// allowed it (another program took the memory) places fewer neurons and
// says so in memory().note; it never throws out of upload_neurons.
#include "cuda_device.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "backend/neuron_slots.h"
#include "cuda_compute.h"
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
    int64_t capacity = 0;  // slots allocated (all charged)
    DeviceArray gate, up, down;
    std::vector<int32_t> slot_of;       // neuron id -> slot, -1 if not resident
    std::vector<MemCategory> category;  // neuron id -> category (valid if resident)
    std::vector<int32_t> free_slots;
    int64_t used_slots = 0;  // high-water mark of slots handed out
    int64_t resident = 0;
};

int64_t round256(int64_t b) { return (b + 255) / 256 * 256; }

// run_hot()'s staging: x, slot ids, y and the hidden activations.
int64_t run_hot_stage_bytes(int64_t n_embd, int64_t count) {
    return 2 * round256(n_embd * 4) + round256(count * 4) +
           round256(std::max<int64_t>(count, 1) * 4);
}

constexpr int64_t kStagingBytes = int64_t{32} << 20;

// The staging arena and the kernels' work buffers for these layers.
struct StagingSizes {
    int64_t arena_bytes = kStagingBytes;
    int64_t work_floats = 0;  // gate and up outputs (types differ); predictor work
    int64_t down_floats = 0;  // the down product's partial sums
};
StagingSizes staging_sizes(const std::vector<NeuronFormat>& formats) {
    StagingSizes z;
    for (const auto& f : formats) {
        z.work_floats = std::max(z.work_floats, 2 * f.n_ff);
        z.down_floats =
            std::max(z.down_floats, int64_t(down_axpy_scratch_floats(f.n_embd, f.n_ff)));
        // run_hot over every neuron, and an upload batch of at least one neuron.
        z.arena_bytes = std::max({z.arena_bytes, run_hot_stage_bytes(f.n_embd, f.n_ff),
                                  2 * (round256(f.bytes_per_neuron() + 4) + 1024)});
    }
    return z;
}

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
        // cudaMemGetInfo is the truth: a set budget never exceeds what is free.
        budget_ = options.budget_bytes >= 0
                      ? std::min(options.budget_bytes, probe.free_bytes)
                      : std::max<int64_t>(0, probe.free_bytes - options.safety_margin_bytes);
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudaEventCreate(&start_), "cudaEventCreate");
        check(cudaEventCreate(&stop_), "cudaEventCreate");
        // The arena is charged even when the budget is smaller (it is really
        // allocated); nothing else fits then.
        if (!reserve_staging(kStagingBytes, /*over_budget_ok=*/true))
            throw EngineError("the GPU has no room for the " + std::to_string(kStagingBytes >> 20) +
                              " MiB transfer buffer: close other GPU programs; running on CPU");
    }

    ~CudaDevice() override {
        compute_.reset();  // its buffers are ours
        cudaStreamSynchronize(stream_);
        for (auto& l : layers_) release_layer(l);
        for (auto& [_, p] : predictors_) release_predictor(p);
        for (auto& [_, b] : buffers_) cudaFree(b.array.ptr);
        cudaFree(dev_stage_);
        cudaFreeHost(host_stage_);
        cudaFree(scratch_);
        cudaFree(down_scratch_);
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
        cudaStreamDestroy(stream_);
    }

    std::string name() const override { return name_; }
    int64_t budget() const override { return budget_; }
    // Never above what the device holds plus what the driver reports free.
    void set_budget(int64_t bytes) override {
        bytes = std::max<int64_t>(0, bytes);
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
            bytes = std::min(bytes, used_total() + int64_t(free_b));
        else
            cudaGetLastError();
        budget_ = bytes;
    }

    DeviceMemoryInfo memory() const override {
        DeviceMemoryInfo info;
        info.name = name_;
        info.simulated = false;
        info.budget_bytes = budget_;
        info.used = used_;
        // Empty slots are room the neuron cache fills.
        info.used[category_index(MemCategory::NeuronCache)] += slot_slack_bytes();
        info.device_allocations = allocations_;
        info.note = note_;
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
            info.device_free_bytes = int64_t(free_b);
        else
            cudaGetLastError();
        return info;
    }

    BufferHandle allocate(MemCategory category, int64_t bytes) override {
        charge(category, bytes);
        DeviceArray a;
        if (!device_alloc(a, bytes)) {
            uncharge(category, bytes);
            throw DeviceOutOfMemory("the GPU could not allocate " + mib(bytes) +
                                    ": lower vram_budget_mb or close other GPU programs");
        }
        const BufferHandle h = next_handle_++;
        buffers_[h] = Buffer{a, category};
        return h;
    }

    void free(BufferHandle handle) override {
        auto it = buffers_.find(handle);
        if (it == buffers_.end()) return;
        cudaStreamSynchronize(stream_);
        device_free(it->second.array);
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

    void* buffer_address(BufferHandle handle) override { return pointer(handle); }

    backend::Compute* compute() override {
        if (!compute_) {
            note_external_work();  // the graph's ops run on this stream too
            compute_ = make_cuda_compute(*this, stream_);
        }
        return compute_.get();
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
        // The work buffers every later run_hot() needs, now rather than while
        // a token is computed: gate and up outputs (when their types differ)
        // and the down product's partial sums, for every neuron of a layer.
        const StagingSizes z = staging_sizes(formats);
        const int64_t stage = z.arena_bytes, work = z.work_floats, down = z.down_floats;
        if (stage > stage_capacity_ && !reserve_staging(stage, false))
            throw DeviceOutOfMemory("the GPU has no room for a " + mib(stage) +
                                    " transfer buffer: lower vram_budget_mb or close other GPU "
                                    "programs");
        reserve_work(scratch_, scratch_floats_, work, "work buffer");
        reserve_work(down_scratch_, down_scratch_floats_, down, "down-projection work buffer");
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
        // Slots for every new neuron, in one growth step where the budget
        // allows (fewer otherwise: the loop stops at the last free slot).
        int64_t fresh = 0;
        for (int64_t i = 0; i < count; ++i)
            if (ids[i] >= 0 && ids[i] < f.n_ff && l.slot_of[size_t(ids[i])] < 0) ++fresh;
        const int64_t open = l.capacity - l.used_slots + int64_t(l.free_slots.size());
        if (fresh > open) grow(l, l.capacity + fresh - open, src);
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
            int32_t slot;
            if (!l.free_slots.empty()) {
                slot = l.free_slots.back();
                l.free_slots.pop_back();
            } else if (l.used_slots < l.capacity) {
                slot = int32_t(l.used_slots++);
            } else {
                flush();
                return i;
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
        if (l.resident == 0 && l.capacity > 0) {
            // An empty layer holds no device memory (a smaller placement
            // then allocates exactly again).
            cudaStreamSynchronize(stream_);
            release_layer(l);
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
        const int64_t off_x = stage_take(run_hot_stage_bytes(n, count));
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
        if (f.activation == backend::GateActivation::GeluTanh)
            throw EngineError("GPU neurons: GeGLU is not implemented on CUDA (it runs on the CPU)");
        const bool relu = f.activation == backend::GateActivation::ReLU;
        if (f.gate_type == f.up_type) {
            swiglu_rows(uint32_t(f.gate_type), l.gate.ptr, l.up.ptr, size_t(f.gate_row_bytes), n,
                        dslots, count, dx, dh, relu, stream_);
        } else {
            require_work(scratch_floats_, 2 * count);
            rows_dot(uint32_t(f.gate_type), l.gate.ptr, size_t(f.gate_row_bytes), n, dslots, count,
                     dx, scratch_, stream_);
            rows_dot(uint32_t(f.up_type), l.up.ptr, size_t(f.up_row_bytes), n, dslots, count, dx,
                     scratch_ + count, stream_);
            act_mul(scratch_, scratch_ + count, dh, count, relu, stream_);
        }
        require_work(down_scratch_floats_, int64_t(down_axpy_scratch_floats(n, count)));
        down_axpy(uint32_t(f.down_type), l.down.ptr, size_t(f.down_col_bytes), n, dslots, dh, count,
                  dy, down_scratch_, stream_);
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
            if (cudaEventElapsedTime(&f, start_, stop_) == cudaSuccess)
                ms = f;
            else
                cudaGetLastError();
            busy_ = false;
        }
        for (const auto& p : pending_) std::memcpy(p.dst, host_stage_ + p.offset, size_t(p.n) * 4);
        pending_.clear();
        stage_used_ = 0;
        return ms;
    }

    void set_predictor(int layer, const PredictorWeights& w) override {
        if (w.rank % 32 != 0 || w.n_embd % 32 != 0)
            throw EngineError("predictor rank and width must be multiples of 32 on the GPU");
        const int64_t bytes = w.bytes();
        // predict()'s work buffer: x, the hidden layer and the logits.
        reserve_work(scratch_, scratch_floats_, w.n_embd + w.rank + w.n_ff,
                     "predictor work buffer");
        auto it = predictors_.find(layer);
        if (it != predictors_.end()) {
            cudaStreamSynchronize(stream_);
            release_predictor(it->second);
            uncharge(MemCategory::Predictors, it->second.shape.bytes());
            predictors_.erase(it);
        }
        if (used_total() + bytes > budget_)
            throw DeviceOutOfMemory("the predictor for layer " + std::to_string(layer) + " (" +
                                    mib(bytes) + ") does not fit the VRAM budget");
        const int64_t elem = w.type == GgmlType::F16 ? 2 : 4;
        DevicePredictor p;
        p.shape = w;
        const bool ok =
            upload(p.w1, w.w1, w.rank * w.n_embd * elem) && upload(p.b1, w.b1, w.rank * 4) &&
            upload(p.w2, w.w2, w.n_ff * w.rank * elem) && upload(p.b2, w.b2, w.n_ff * 4);
        if (!ok) {
            release_predictor(p);
            throw DeviceOutOfMemory("the GPU could not allocate the predictor for layer " +
                                    std::to_string(layer) + " (" + mib(bytes) +
                                    "): close other GPU programs or lower vram_budget_mb");
        }
        predictors_[layer] = p;
        used_[category_index(MemCategory::Predictors)] += bytes;
    }

    bool has_predictor(int layer) const override { return predictors_.count(layer) != 0; }

    void predict(int layer, const float* x, float threshold, std::vector<int32_t>& active,
                 float* logits) override {
        auto it = predictors_.find(layer);
        if (it == predictors_.end())
            throw EngineError("no predictor for layer " + std::to_string(layer));
        const DevicePredictor& p = it->second;
        const PredictorWeights& s = p.shape;
        const int64_t elem = s.type == GgmlType::F16 ? 2 : 4;
        synchronize();
        predict_host_.resize(size_t(s.n_ff));
        require_work(scratch_floats_, s.n_embd + s.rank + s.n_ff);
        float* dx = scratch_;
        float* dh = dx + s.n_embd;
        float* dl = dh + s.rank;
        check(cudaMemcpyAsync(dx, x, size_t(s.n_embd) * 4, cudaMemcpyHostToDevice, stream_),
              "copy x");
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

    static std::string mib(int64_t bytes) {
        return std::to_string((bytes + (int64_t{1} << 19)) >> 20) + " MiB";
    }

    // Bytes of neuron slots allocated beyond the resident neurons.
    int64_t slot_slack_bytes() const {
        return slot_bytes_ - used_[category_index(MemCategory::HotNeurons)] -
               used_[category_index(MemCategory::NeuronCache)];
    }
    int64_t used_total() const {
        int64_t t = 0;
        for (int64_t u : used_) t += u;
        return t + slot_slack_bytes();
    }
    void charge(MemCategory c, int64_t bytes) {
        if (bytes < 0 || used_total() + bytes > budget_)
            throw DeviceOutOfMemory("allocation of " + mib(bytes) +
                                    " does not fit the VRAM budget (" + mib(budget_) + ", " +
                                    mib(std::max<int64_t>(0, budget_ - used_total())) + " left)");
        used_[category_index(c)] += bytes;
    }
    void uncharge(MemCategory c, int64_t bytes) { used_[category_index(c)] -= bytes; }

    // The only places that call cudaMalloc / cudaFree for device memory.
    bool device_alloc(DeviceArray& a, int64_t bytes) {
        a = DeviceArray{};
        if (bytes < 0 || cudaMalloc(&a.ptr, size_t(std::max<int64_t>(bytes, 1))) != cudaSuccess) {
            cudaGetLastError();
            a.ptr = nullptr;
            return false;
        }
        a.bytes = size_t(bytes);
        ++allocations_;
        return true;
    }
    void device_free(DeviceArray& a) {
        if (a.ptr) {
            cudaFree(a.ptr);
            --allocations_;
        }
        a = DeviceArray{};
    }

    // Busy time = from the first enqueued op after a synchronize() to the end
    // of the last one (not to the synchronize() call, which may come later).
    void mark_busy() {
        if (!busy_) {
            cudaEventRecord(start_, stream_);
            busy_ = true;
        }
    }
    void mark_done() { cudaEventRecord(stop_, stream_); }

    // Allocates gate/up/down arrays of `cap` slots (charged as slots).
    bool alloc_slots(LayerSlots& l, int64_t cap, DeviceArray& g, DeviceArray& u, DeviceArray& d) {
        const NeuronFormat& f = l.format;
        if (!device_alloc(g, cap * f.gate_row_bytes) || !device_alloc(u, cap * f.up_row_bytes) ||
            !device_alloc(d, cap * f.down_col_bytes)) {
            device_free(g);
            device_free(u);
            device_free(d);
            return false;
        }
        slot_bytes_ += cap * f.bytes_per_neuron();
        return true;
    }

    // Grows l's slot arrays towards `needed` slots as far as the budget and
    // the real device allow (backend::plan_slot_growth). False when not one
    // slot more could be had.
    bool grow(LayerSlots& l, int64_t needed, const NeuronSource& src) {
        const NeuronFormat& f = l.format;
        const int64_t per = f.bytes_per_neuron();
        const backend::SlotGrowth plan =
            backend::plan_slot_growth(l.capacity, needed, f.n_ff, per, budget_ - used_total());
        if (plan.capacity <= l.capacity) return false;
        cudaStreamSynchronize(stream_);  // queued kernels may still read the old arrays
        DeviceArray g, u, d;
        if (!plan.rebuild) {
            if (!alloc_slots(l, plan.capacity, g, u, d)) {
                refused(l, plan.capacity, needed);
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
            l.capacity = plan.capacity;
            return true;
        }
        // No room for the old and the new arrays together: free the old
        // ones and copy the resident neurons again from the host.
        std::vector<int32_t> resident;
        for (int32_t id = 0; id < int32_t(f.n_ff); ++id)
            if (l.slot_of[size_t(id)] >= 0) resident.push_back(id);
        const int64_t old_capacity = l.capacity;
        release_layer(l);
        int64_t cap = plan.capacity;
        if (!alloc_slots(l, cap, g, u, d)) {
            refused(l, cap, needed);
            cap = old_capacity;  // just freed: most likely still there
            if (!alloc_slots(l, cap, g, u, d)) cap = 0;
        }
        l.gate = g;
        l.up = u;
        l.down = d;
        l.capacity = cap;
        l.free_slots.clear();
        l.used_slots = 0;
        std::vector<std::pair<int32_t, int32_t>> batch;
        const int64_t max_batch = std::max<int64_t>(1, stage_capacity_ / 2 / (per + 4));
        for (int32_t id : resident) {
            if (l.used_slots == cap) {  // not even the old arrays came back: the rest is gone
                uncharge(l.category[size_t(id)], per);
                l.slot_of[size_t(id)] = -1;
                l.category[size_t(id)] = MemCategory::Scratch;
                --l.resident;
                continue;
            }
            const int32_t slot = int32_t(l.used_slots++);
            l.slot_of[size_t(id)] = slot;
            batch.emplace_back(slot, id);
            if (int64_t(batch.size()) == max_batch) {
                upload_batch(l, batch, src);
                batch.clear();
            }
        }
        upload_batch(l, batch, src);
        return cap > old_capacity;
    }

    // A cudaMalloc the budget allowed was refused (another program holds the
    // memory): say so; the caller places fewer neurons.
    void refused(const LayerSlots& l, int64_t cap, int64_t needed) {
        const int64_t layer = &l - layers_.data();
        note_ = "the GPU refused " + mib(cap * l.format.bytes_per_neuron()) +
                " for the neurons of layer " + std::to_string(layer) +
                " (another program holds "
                "the memory): up to " +
                std::to_string(needed) +
                " of its neurons run on the CPU; close other GPU programs or lower vram_budget_mb";
    }

    // Space in the staging arena (pinned host + device twin); recycled at
    // synchronize(), so a full arena waits for the queue first. The arena is
    // sized in configure_layers() for the largest request.
    int64_t stage_take(int64_t bytes) {
        bytes = round256(bytes);
        if (stage_used_ + bytes > stage_capacity_) {
            synchronize();
            if (bytes > stage_capacity_)
                throw EngineError("CudaDevice: a transfer of " + mib(bytes) +
                                  " exceeds the staging arena");
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
        const int64_t off_slots = 0, off_gate = round256(n * 4),
                      off_up = off_gate + round256(n * gb), off_down = off_up + round256(n * ub),
                      total = off_down + n * db;
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
        check(cudaMemcpyAsync(d, h, size_t(total), cudaMemcpyHostToDevice, stream_),
              "cudaMemcpyAsync");
        const auto* slots = reinterpret_cast<const int32_t*>(d + off_slots);
        scatter_rows(d + off_gate, size_t(gb), slots, n, l.gate.ptr, stream_);
        scatter_rows(d + off_up, size_t(ub), slots, n, l.up.ptr, stream_);
        scatter_rows(d + off_down, size_t(db), slots, n, l.down.ptr, stream_);
        mark_done();
    }

    // Frees a layer's slot arrays (the caller has synchronised the stream);
    // the id<->slot maps are left to the caller.
    void release_layer(LayerSlots& l) {
        device_free(l.gate);
        device_free(l.up);
        device_free(l.down);
        slot_bytes_ -= l.capacity * l.format.bytes_per_neuron();
        l.capacity = 0;
        if (l.resident == 0) {
            l.free_slots.clear();
            l.used_slots = 0;
        }
    }
    void release_predictor(DevicePredictor& p) {
        device_free(p.w1);
        device_free(p.b1);
        device_free(p.w2);
        device_free(p.b2);
    }

    bool upload(DeviceArray& a, const void* host, int64_t bytes) {
        if (!device_alloc(a, bytes)) return false;
        if (host && bytes)
            check(cudaMemcpy(a.ptr, host, size_t(bytes), cudaMemcpyHostToDevice), "cudaMemcpy");
        return true;
    }

    // (Re)allocates the staging arena (charged as Staging); the old arena is
    // kept when the new one cannot be had.
    bool reserve_staging(int64_t bytes, bool over_budget_ok) {
        if (!over_budget_ok && used_total() + bytes > budget_) return false;
        DeviceArray d;
        if (!device_alloc(d, bytes)) return false;
        void* h = nullptr;
        if (cudaMallocHost(&h, size_t(bytes)) != cudaSuccess) {
            cudaGetLastError();
            device_free(d);
            return false;
        }
        cudaStreamSynchronize(stream_);
        if (dev_stage_) {
            DeviceArray old{dev_stage_, size_t(stage_capacity_)};
            device_free(old);
            uncharge(MemCategory::Staging, stage_capacity_);
        }
        cudaFreeHost(host_stage_);
        dev_stage_ = static_cast<uint8_t*>(d.ptr);
        host_stage_ = static_cast<uint8_t*>(h);
        used_[category_index(MemCategory::Staging)] += bytes;
        stage_capacity_ = bytes;
        stage_used_ = 0;
        return true;
    }

    // Makes a kernel work buffer hold at least `floats` floats (charged as
    // Staging). Throws DeviceOutOfMemory when the budget or the GPU has no
    // room (at set-up: configure_layers, set_predictor).
    void reserve_work(float*& buf, size_t& have, int64_t floats, const char* what) {
        if (floats <= int64_t(have)) return;
        const int64_t bytes = floats * 4, old = int64_t(have) * 4;
        if (used_total() - old + bytes > budget_)
            throw DeviceOutOfMemory(std::string("the ") + what + " (" + mib(bytes) +
                                    ") does not fit the VRAM budget");
        cudaStreamSynchronize(stream_);
        DeviceArray a{buf, size_t(old)};
        device_free(a);
        uncharge(MemCategory::Staging, old);
        buf = nullptr;
        have = 0;
        if (!device_alloc(a, bytes)) {
            if (old > 0 && device_alloc(a, old)) {  // keep what the kernels had
                buf = static_cast<float*>(a.ptr);
                have = size_t(old / 4);
                used_[category_index(MemCategory::Staging)] += old;
            }
            throw DeviceOutOfMemory(std::string("the GPU could not allocate the ") + what + " (" +
                                    mib(bytes) + "): close other GPU programs");
        }
        buf = static_cast<float*>(a.ptr);
        have = size_t(floats);
        used_[category_index(MemCategory::Staging)] += bytes;
    }
    static void require_work(size_t have, int64_t floats) {
        if (floats > int64_t(have))
            throw EngineError("CudaDevice: work buffer smaller than configured (" +
                              std::to_string(floats) + " floats)");
    }

    int ordinal_ = 0;
    std::string name_;
    int64_t budget_ = 0;
    std::array<int64_t, backend::kMemCategoryCount> used_{};
    int64_t slot_bytes_ = 0;   // neuron slots allocated, all layers
    int64_t allocations_ = 0;  // live cudaMalloc blocks
    std::string note_;         // the last refused allocation
    cudaStream_t stream_ = nullptr;
    std::unique_ptr<backend::Compute> compute_;
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

int64_t staging_bytes(const std::vector<backend::NeuronFormat>& formats, int64_t predictor_floats) {
    const StagingSizes z = staging_sizes(formats);
    return z.arena_bytes + 4 * (std::max(z.work_floats, predictor_floats) + z.down_floats);
}

std::unique_ptr<backend::Device> make_cuda_device(const CudaDeviceOptions& options) {
    return std::make_unique<CudaDevice>(options);
}

}  // namespace powerinfer::cuda
