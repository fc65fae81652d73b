// The prefill kernels of offloaded layers. Without a GPU: the dequantizer's
// own code (quant_dot.cuh's unit_dequant, run on the host) against the CPU
// reference for every quant type, bit for bit after rounding to F16. With a
// GPU as well: the device dequantizer equal to the host copy, F16
// conversion, the batched bias / RoPE / KV-store kernels against their
// one-token forms, and cuBLAS GEMMs on F16 tiles against a double reference.
// Plain C++; prints "N passed, N failed".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cublas_loader.h"
#include "cuda_ops.h"
#include "gpu_test.h"
#include "tensor/quant.h"

using namespace powerinfer;
using gputest::DeviceBuffer;
using gputest::random_floats;
using gputest::sync_ok;

namespace {

const GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                           GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

struct QuantRows {
    std::vector<uint8_t> bytes;
    size_t row_bytes = 0;
};

// `rows` rows of `cols` random values (with outliers) quantized by the CPU
// reference quantizer.
QuantRows quantized_rows(GgmlType t, int64_t rows, int64_t cols, std::mt19937& rng) {
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<float> x(static_cast<size_t>(cols));
    QuantRows q;
    q.row_bytes = size_t(ggml_row_bytes(t, uint64_t(cols)).value());
    q.bytes.resize(q.row_bytes * size_t(rows));
    for (int64_t r = 0; r < rows; ++r) {
        for (auto& v : x) v = nd(rng) * (rng() % 17 == 0 ? 8.f : 1.f);
        tensor::quantize_row_ref(t, x.data(), q.bytes.data() + size_t(r) * q.row_bytes, cols);
    }
    return q;
}

// F16 bits of the CPU reference's dequantization.
std::vector<uint16_t> reference_f16(GgmlType t, const QuantRows& q, int64_t rows, int64_t cols) {
    std::vector<float> f(static_cast<size_t>(cols));
    std::vector<uint16_t> out(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
        tensor::dequantize_row_ref(t, q.bytes.data() + size_t(r) * q.row_bytes, f.data(), cols);
        for (int64_t i = 0; i < cols; ++i)
            out[size_t(r * cols + i)] = tensor::fp32_to_fp16(f[size_t(i)]);
    }
    return out;
}

void test_host_dequant(plaintest::Counter& c, std::mt19937& rng) {
    const int64_t rows = 3, cols = 512;
    for (GgmlType t : kTypes) {
        const QuantRows q = quantized_rows(t, rows, cols, rng);
        const auto want = reference_f16(t, q, rows, cols);
        std::vector<uint16_t> got(want.size());
        bool ok = true;
        for (int64_t r = 0; r < rows; ++r)
            ok = ok && cuda::dequantize_row_f16_on_host(uint32_t(t),
                                                        q.bytes.data() + size_t(r) * q.row_bytes,
                                                        cols, got.data() + r * cols);
        size_t diff = 0;
        for (size_t i = 0; i < want.size(); ++i) diff += got[i] != want[i];
        c.check(ok && diff == 0, "unit_dequant (host) " + std::string(ggml_type_name(t)) +
                                     " equals the CPU reference in F16 (" + std::to_string(diff) +
                                     " of " + std::to_string(want.size()) + " differ)");
    }
    uint16_t sink[32];
    c.check(!cuda::dequantize_row_f16_on_host(uint32_t(GgmlType::Q2_K), nullptr, 256, sink),
            "a type without a kernel is refused");
}

// ---- on the GPU ------------------------------------------------------------

void test_device_dequant(plaintest::Counter& c, std::mt19937& rng) {
    const int64_t rows = 37, cols = 768;  // three K-quant super-blocks per row
    for (GgmlType t : kTypes) {
        const QuantRows q = quantized_rows(t, rows, cols, rng);
        const auto want = reference_f16(t, q, rows, cols);
        DeviceBuffer<uint8_t> dw(q.bytes);
        DeviceBuffer<uint16_t> out(want.size());
        const bool ok = cuda::dequantize_rows_f16(uint32_t(t), dw.ptr, q.row_bytes, cols, rows,
                                                  out.ptr, nullptr);
        if (!sync_ok(c, "dequantize_rows_f16")) return;
        const auto got = out.download(want.size());
        size_t diff = 0;
        for (size_t i = 0; i < want.size(); ++i) diff += got[i] != want[i];
        c.check(ok && diff == 0, "dequantize_rows_f16 (GPU) " + std::string(ggml_type_name(t)) +
                                     " equals the CPU reference in F16 (" + std::to_string(diff) +
                                     " of " + std::to_string(want.size()) + " differ)");
    }
    const auto x = random_floats(1000, rng, 3.f);
    DeviceBuffer<float> dx(x);
    DeviceBuffer<uint16_t> dh(x.size());
    cuda::f32_to_f16(dx.ptr, dh.ptr, int64_t(x.size()), nullptr);
    if (!sync_ok(c, "f32_to_f16")) return;
    const auto h = dh.download(x.size());
    bool same = true;
    for (size_t i = 0; i < x.size(); ++i) same = same && h[i] == tensor::fp32_to_fp16(x[i]);
    c.check(same, "f32_to_f16 rounds like the CPU (to nearest even)");
}

void test_batched_layer_kernels(plaintest::Counter& c, std::mt19937& rng) {
    const int64_t nt = 5, n_head = 4, hd = 64, n_rot = 32, half = n_rot / 2, n_ctx = 16, pos = 3;
    const int64_t dim = n_head * hd;
    // Bias over rows.
    {
        const auto v = random_floats(size_t(nt * dim), rng), b = random_floats(size_t(dim), rng);
        DeviceBuffer<float> dv(v), db(b);
        cuda::add_bias_rows(dv.ptr, db.ptr, nt, dim, nullptr);
        if (!sync_ok(c, "add_bias_rows")) return;
        const auto got = dv.download(v.size());
        bool ok = true;
        for (int64_t i = 0; i < nt * dim; ++i)
            ok = ok && got[size_t(i)] == v[size_t(i)] + b[size_t(i % dim)];
        c.check(ok, "add_bias_rows adds the bias to every row");
    }
    // RoPE and the KV store over tokens equal their one-token forms.
    for (bool neox : {false, true}) {
        const auto v = random_floats(size_t(nt * dim), rng);
        const auto cs = random_floats(size_t((pos + nt) * half), rng),
                   sn = random_floats(size_t((pos + nt) * half), rng);
        DeviceBuffer<float> batch(v), single(v), dc(cs), ds(sn);
        cuda::rope_table_rows(batch.ptr, nt, n_head, hd, n_rot, dc.ptr + pos * half,
                              ds.ptr + pos * half, neox, nullptr);
        for (int64_t t = 0; t < nt; ++t)
            cuda::rope_table(single.ptr + t * dim, n_head, hd, n_rot, dc.ptr + (pos + t) * half,
                             ds.ptr + (pos + t) * half, neox, nullptr);
        if (!sync_ok(c, "rope_table_rows")) return;
        c.check(batch.download(v.size()) == single.download(v.size()),
                std::string("rope_table_rows (") + (neox ? "neox" : "normal") +
                    ") equals rope_table per token");
    }
    {
        const auto v = random_floats(size_t(nt * dim), rng);
        DeviceBuffer<float> dv(v);
        DeviceBuffer<uint16_t> a(size_t(n_head * n_ctx * hd)), b(size_t(n_head * n_ctx * hd));
        cudaMemset(a.ptr, 0, size_t(n_head * n_ctx * hd) * 2);
        cudaMemset(b.ptr, 0, size_t(n_head * n_ctx * hd) * 2);
        cuda::store_kv_f16_rows(dv.ptr, a.ptr, nt, n_head, n_ctx, hd, pos, nullptr);
        for (int64_t t = 0; t < nt; ++t)
            cuda::store_kv_f16(dv.ptr + t * dim, b.ptr, n_head, n_ctx, hd, pos + t, nullptr);
        if (!sync_ok(c, "store_kv_f16_rows")) return;
        c.check(a.download(size_t(n_head * n_ctx * hd)) == b.download(size_t(n_head * n_ctx * hd)),
                "store_kv_f16_rows equals store_kv_f16 per token");
    }
}

// cuBLAS on F16 tiles, as the executor calls it: Y[n][rows] in tiles of
// whole rows, against a double reference on the same F16 values.
void test_gemm(plaintest::Counter& c, std::mt19937& rng) {
    std::string why;
    DeviceBuffer<uint8_t> workspace(size_t(4) << 20);
    auto gemm = cuda::CublasGemm::create(nullptr, workspace.ptr, size_t(4) << 20, why);
    const cuda::CublasLibrary& lib = cuda::cublas_library();
    if (!gemm) {
        std::printf("  no cuBLAS GEMM (%s): GEMM checks skipped\n", why.c_str());
        c.check(!lib.loaded || cuda::cublas_disabled_by_environment(),
                "cuBLAS loaded and allowed implies a handle on a GPU (" + why + ")");
        return;
    }
    std::printf("  cuBLAS %s (%s)\n", lib.version.c_str(), lib.name.c_str());
    const GgmlType t = GgmlType::Q4_0;
    for (int64_t n : {2, 37}) {
        const int64_t rows = 300, cols = 256, tile = 64;
        const QuantRows q = quantized_rows(t, rows, cols, rng);
        const auto w16 = reference_f16(t, q, rows, cols);
        const auto x = random_floats(size_t(n * cols), rng);
        std::vector<uint16_t> x16(x.size());
        for (size_t i = 0; i < x.size(); ++i) x16[i] = tensor::fp32_to_fp16(x[i]);
        DeviceBuffer<uint8_t> dw(q.bytes);
        DeviceBuffer<float> dx(x);
        DeviceBuffer<uint16_t> dx16(x.size()), dtile(size_t(tile * cols));
        DeviceBuffer<float> dy(size_t(n * rows));
        cuda::f32_to_f16(dx.ptr, dx16.ptr, n * cols, nullptr);
        for (int64_t r0 = 0; r0 < rows; r0 += tile) {
            const int64_t tr = std::min(tile, rows - r0);
            cuda::dequantize_rows_f16(uint32_t(t), dw.ptr + size_t(r0) * q.row_bytes, q.row_bytes,
                                      cols, tr, dtile.ptr, nullptr);
            gemm->rows_gemm(dtile.ptr, tr, cols, dx16.ptr, n, dy.ptr + r0, rows);
        }
        if (!sync_ok(c, "cublasGemmEx")) return;
        const auto y = dy.download(size_t(n * rows));
        double worst = 0, scale = 0;
        for (int64_t tk = 0; tk < n; ++tk)
            for (int64_t r = 0; r < rows; ++r) {
                double want = 0;
                for (int64_t k = 0; k < cols; ++k)
                    want += double(tensor::fp16_to_fp32(w16[size_t(r * cols + k)])) *
                            tensor::fp16_to_fp32(x16[size_t(tk * cols + k)]);
                worst = std::max(worst, std::fabs(y[size_t(tk * rows + r)] - want));
                scale = std::max(scale, std::fabs(want));
            }
        c.check(worst <= 1e-4 * std::max(scale, 1.0),
                "cuBLAS rows_gemm, " + std::to_string(n) +
                    " tokens, 300 rows in tiles of 64: " + "Y[t][r] = W[r].X[t], max err " +
                    std::to_string(worst) + " (|Y| up to " + std::to_string(scale) + ")");
    }
}

}  // namespace

int main() {
    plaintest::Counter c;
    std::mt19937 rng(2024);
    try {
        test_host_dequant(c, rng);
        const cuda::DeviceProbe probe = cuda::probe_device(0);
        if (!probe.available) {
            // The host checks ran; the GPU ones did not: ctest reports a skip (exit 77).
            std::printf("%s: GPU checks skipped\n", probe.reason.c_str());
            const int rc = c.finish();
            return rc == 0 ? 77 : rc;
        }
        std::printf("device: %s (sm_%d)\n", probe.name.c_str(), probe.compute_capability);
        test_device_dequant(c, rng);
        test_batched_layer_kernels(c, rng);
        test_gemm(c, rng);
    } catch (const std::exception& e) {
        c.check(false, std::string("exception: ") + e.what());
    }
    return c.finish();
}
