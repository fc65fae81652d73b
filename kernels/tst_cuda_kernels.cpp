// CUDA kernels against the CPU reference (engine/tensor's scalar dequantize
// and a float64 dot) on random data, for every quant type the kernels support.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/ggml_types.h"
#include "cuda_ops.h"
#include "gpu_test.h"
#include "tensor/ops.h"
#include "tensor/quant.h"

using namespace powerinfer;
using gputest::DeviceBuffer;
using gputest::random_floats;

namespace {

struct QuantMatrix {
    GgmlType type;
    int64_t rows, cols;
    size_t row_bytes;
    std::vector<uint8_t> bytes;
    std::vector<float> dequant;  // reference values
};

QuantMatrix make_matrix(GgmlType t, int64_t rows, int64_t cols, std::mt19937& rng) {
    QuantMatrix m{t, rows, cols, static_cast<size_t>(*ggml_row_bytes(t, uint64_t(cols))), {}, {}};
    m.bytes.resize(m.row_bytes * static_cast<size_t>(rows));
    m.dequant.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
        const auto src = random_floats(static_cast<size_t>(cols), rng, 0.05f);
        tensor::quantize_row_ref(t, src.data(), m.bytes.data() + static_cast<size_t>(r) * m.row_bytes, cols);
        tensor::dequantize_row_ref(t, m.bytes.data() + static_cast<size_t>(r) * m.row_bytes,
                                   m.dequant.data() + r * cols, cols);
    }
    return m;
}

double ref_dot(const float* w, const float* x, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(w[i]) * double(x[i]);
    return s;
}

bool close(double got, double want, double tol) {
    return std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
}

const GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                           GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

void test_rows_dot(gputest::Counter& c, std::mt19937& rng) {
    const int64_t rows = 300, cols = 1024;
    for (GgmlType t : kTypes) {
        const QuantMatrix m = make_matrix(t, rows, cols, rng);
        const auto x = random_floats(static_cast<size_t>(cols), rng);
        std::vector<int32_t> idx;
        for (int32_t r = 0; r < rows; r += 3) idx.push_back(r);
        DeviceBuffer<uint8_t> dw(m.bytes);
        DeviceBuffer<float> dx(x), dy(static_cast<size_t>(rows));
        DeviceBuffer<int32_t> didx(idx);
        // Dense (all rows) and row-sparse (every third row).
        cuda::rows_dot(uint32_t(t), dw.ptr, m.row_bytes, cols, nullptr, rows, dx.ptr, dy.ptr, 0);
        auto y = dy.download(static_cast<size_t>(rows));
        bool ok = true;
        for (int64_t r = 0; r < rows; ++r)
            ok &= close(y[static_cast<size_t>(r)], ref_dot(&m.dequant[static_cast<size_t>(r * cols)], x.data(), cols), 1e-4);
        c.check(ok, (std::string("rows_dot dense ") + std::string(ggml_type_name(t))).c_str());
        cuda::rows_dot(uint32_t(t), dw.ptr, m.row_bytes, cols, didx.ptr, int64_t(idx.size()),
                       dx.ptr, dy.ptr, 0);
        y = dy.download(idx.size());
        ok = true;
        for (size_t i = 0; i < idx.size(); ++i)
            ok &= close(y[i], ref_dot(&m.dequant[static_cast<size_t>(idx[i]) * static_cast<size_t>(cols)], x.data(), cols), 1e-4);
        c.check(ok, (std::string("rows_dot sparse ") + std::string(ggml_type_name(t))).c_str());
        c.check(cuda::last_error().empty(), "no CUDA error after rows_dot");
    }
}

void test_sparse_ffn(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_embd = 512, n_ff = 1536;
    for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q8_0, GgmlType::Q4_K,
                       GgmlType::Q6_K, GgmlType::F16}) {
        const QuantMatrix gate = make_matrix(t, n_ff, n_embd, rng);
        const QuantMatrix up = make_matrix(t, n_ff, n_embd, rng);
        const auto down_nm = random_floats(static_cast<size_t>(n_ff * n_embd), rng, 0.05f);  // neuron-major
        const auto x = random_floats(static_cast<size_t>(n_embd), rng);
        std::vector<int32_t> slots;
        for (int32_t j = 0; j < n_ff; ++j)
            if (rng() % 3 == 0) slots.push_back(j);
        DeviceBuffer<uint8_t> dg(gate.bytes), du(up.bytes);
        DeviceBuffer<float> dd(down_nm), dx(x), dh(slots.size()), dy(static_cast<size_t>(n_embd));
        DeviceBuffer<int32_t> ds(slots);
        DeviceBuffer<float> scratch(cuda::down_axpy_scratch_floats(n_embd, int64_t(slots.size())));
        cuda::swiglu_rows(uint32_t(t), dg.ptr, du.ptr, gate.row_bytes, n_embd, ds.ptr,
                          int64_t(slots.size()), dx.ptr, dh.ptr, false, 0);
        cuda::down_axpy(uint32_t(GgmlType::F32), dd.ptr, static_cast<size_t>(n_embd) * 4, n_embd, ds.ptr, dh.ptr,
                        int64_t(slots.size()), dy.ptr, scratch.ptr, 0);
        const auto y = dy.download(static_cast<size_t>(n_embd));
        std::vector<double> want(static_cast<size_t>(n_embd), 0.0);
        for (int32_t j : slots) {
            const double g = ref_dot(&gate.dequant[static_cast<size_t>(j) * n_embd], x.data(), n_embd);
            const double u = ref_dot(&up.dequant[static_cast<size_t>(j) * n_embd], x.data(), n_embd);
            const double h = g / (1.0 + std::exp(-g)) * u;
            for (int64_t k = 0; k < n_embd; ++k) want[static_cast<size_t>(k)] += h * down_nm[static_cast<size_t>(j) * n_embd + k];
        }
        bool ok = true;
        for (int64_t k = 0; k < n_embd; ++k) ok &= close(y[static_cast<size_t>(k)], want[static_cast<size_t>(k)], 1e-3);
        c.check(ok, (std::string("sparse FFN ") + std::string(ggml_type_name(t))).c_str());
        // Determinism: the same launch gives bit-identical output.
        cuda::down_axpy(uint32_t(GgmlType::F32), dd.ptr, static_cast<size_t>(n_embd) * 4, n_embd, ds.ptr, dh.ptr,
                        int64_t(slots.size()), dy.ptr, scratch.ptr, 0);
        c.check(dy.download(static_cast<size_t>(n_embd)) == y, "down_axpy is deterministic");
    }
}

// The neuron-major down copy in quantized types: against its dequantization.
void test_down_types(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n_embd = 512, n = 300;
    for (GgmlType t : {GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0}) {
        const QuantMatrix d = make_matrix(t, n, n_embd, rng);
        const auto h = random_floats(static_cast<size_t>(n), rng);
        std::vector<int32_t> slots;
        for (int32_t j = n - 1; j >= 0; j -= 2) slots.push_back(j);
        std::vector<float> hs;
        for (size_t i = 0; i < slots.size(); ++i) hs.push_back(h[i]);
        DeviceBuffer<uint8_t> dd(d.bytes);
        DeviceBuffer<int32_t> ds(slots);
        DeviceBuffer<float> dh(hs), dy(static_cast<size_t>(n_embd));
        DeviceBuffer<float> scratch(cuda::down_axpy_scratch_floats(n_embd, int64_t(slots.size())));
        cuda::down_axpy(uint32_t(t), dd.ptr, d.row_bytes, n_embd, ds.ptr, dh.ptr,
                        int64_t(slots.size()), dy.ptr, scratch.ptr, 0);
        const auto y = dy.download(static_cast<size_t>(n_embd));
        bool ok = true;
        for (int64_t k = 0; k < n_embd; ++k) {
            double want = 0;
            for (size_t i = 0; i < slots.size(); ++i)
                want += double(hs[i]) * d.dequant[static_cast<size_t>(slots[i]) * static_cast<size_t>(n_embd) + static_cast<size_t>(k)];
            ok &= close(y[static_cast<size_t>(k)], want, 1e-4);
        }
        c.check(ok, (std::string("down_axpy over ") + std::string(ggml_type_name(t))).c_str());
    }
}

void test_layer_ops(gputest::Counter& c, std::mt19937& rng) {
    const int64_t n = 576;
    const auto x = random_floats(static_cast<size_t>(n), rng), w = random_floats(static_cast<size_t>(n), rng);
    DeviceBuffer<float> dx(x), dw(w), dy(static_cast<size_t>(n));
    cuda::rms_norm(dx.ptr, dw.ptr, dy.ptr, n, 1e-5f, 0);
    std::vector<float> want(static_cast<size_t>(n));
    tensor::rms_norm(x.data(), w.data(), want.data(), n, 1e-5f);
    auto y = dy.download(static_cast<size_t>(n));
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) ok &= close(y[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 1e-4);
    c.check(ok, "rms_norm matches CPU");

    const int64_t n_head = 9, head_dim = 64;
    for (bool neox : {false, true}) {
        auto q = random_floats(static_cast<size_t>(n_head * head_dim), rng);
        DeviceBuffer<float> dq(q);
        cuda::rope(dq.ptr, n_head, head_dim, 37, 10000.f, neox, 0);
        for (int64_t h = 0; h < n_head; ++h)
            tensor::rope(q.data() + h * head_dim, head_dim, head_dim, 37, 10000.f, 1.f, neox);
        const auto got = dq.download(q.size());
        ok = true;
        for (size_t i = 0; i < q.size(); ++i) ok &= close(got[i], q[i], 1e-3);
        c.check(ok, neox ? "rope neox matches CPU" : "rope normal matches CPU");
    }

    // Attention with GQA (9 heads over 3 KV heads), 50 cached positions.
    const int64_t n_kv = 3, n_past = 49, n_pos = n_past + 1;
    const auto q = random_floats(static_cast<size_t>(n_head * head_dim), rng);
    const auto kc = random_floats(static_cast<size_t>(n_pos * n_kv * head_dim), rng);
    const auto vc = random_floats(static_cast<size_t>(n_pos * n_kv * head_dim), rng);
    DeviceBuffer<float> dq(q), dk(kc), dv(vc), dout(static_cast<size_t>(n_head * head_dim)),
        dscores(static_cast<size_t>(n_head * n_pos));
    cuda::attention_decode(dq.ptr, dk.ptr, dv.ptr, dout.ptr, n_head, n_kv, head_dim, n_past,
                           dscores.ptr, 0);
    const auto out = dout.download(static_cast<size_t>(n_head * head_dim));
    ok = true;
    for (int64_t h = 0; h < n_head; ++h) {
        const int64_t kvh = h / (n_head / n_kv);
        std::vector<double> s(static_cast<size_t>(n_pos));
        double mx = -1e300, sum = 0;
        for (int64_t t = 0; t < n_pos; ++t) {
            double d = 0;
            for (int64_t i = 0; i < head_dim; ++i)
                d += double(q[static_cast<size_t>(h * head_dim + i)]) * kc[static_cast<size_t>((t * n_kv + kvh) * head_dim + i)];
            s[static_cast<size_t>(t)] = d / std::sqrt(double(head_dim));
            mx = std::max(mx, s[static_cast<size_t>(t)]);
        }
        for (auto& v : s) sum += (v = std::exp(v - mx));
        for (int64_t i = 0; i < head_dim; ++i) {
            double acc = 0;
            for (int64_t t = 0; t < n_pos; ++t)
                acc += s[static_cast<size_t>(t)] * vc[static_cast<size_t>((t * n_kv + kvh) * head_dim + i)];
            ok &= close(out[static_cast<size_t>(h * head_dim + i)], acc / sum, 1e-3);
        }
    }
    c.check(ok, "attention_decode (GQA) matches float64");
}

}  // namespace

int main() {
    const cuda::DeviceProbe probe = cuda::probe_device(0);
    if (!probe.available) {
        std::printf("%s — skipping GPU kernel tests\n0 passed, 0 failed\n", probe.reason.c_str());
        return 77;
    }
    std::printf("device: %s (sm_%d, %.1f GiB free)\n", probe.name.c_str(), probe.compute_capability,
                double(probe.free_bytes) / (1 << 30));
    gputest::Counter c;
    std::mt19937 rng(1234);
    test_rows_dot(c, rng);
    test_sparse_ffn(c, rng);
    test_down_types(c, rng);
    test_layer_ops(c, rng);
    return c.finish();
}
