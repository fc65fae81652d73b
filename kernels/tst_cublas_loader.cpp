// cuBLAS loaded at run time: the search reports presence or absence without
// crashing (no GPU or driver needed), POWERINFER_NO_CUBLAS switches it off,
// and the row-major -> column-major cublasGemmEx mapping is checked against
// a reference GEMM that follows cuBLAS's definition. Plain C++; runs on the
// CPU machines. Where the build's toolkit cuBLAS (POWERINFER_TOOLKIT_CUBLAS)
// still exists, the search must find it. --expect-disabled: run with
// POWERINFER_NO_CUBLAS=1.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/plain_test.h"
#include "cublas_loader.h"
#include "cuda_ops.h"
#include "backend/compute.h"

using namespace powerinfer;

namespace {

// What cublasGemmEx computes (cuBLAS documentation, column-major):
// C(i, j) = sum_l op(A)(i, l) * op(B)(l, j), i < m, j < n, l < k, where
// X(i, j) = X[i + j * ld] and op(X) = X (N) or X^T (T).
void reference_gemm_ex(const cuda::GemmArgs& a, const float* A, const float* B, float* C) {
    for (int i = 0; i < a.m; ++i)
        for (int j = 0; j < a.n; ++j) {
            double s = 0;
            for (int l = 0; l < a.k; ++l) {
                const float av =
                    a.transa == 0 ? A[i + size_t(l) * a.lda] : A[l + size_t(i) * a.lda];
                const float bv =
                    a.transb == 0 ? B[l + size_t(j) * a.ldb] : B[j + size_t(l) * a.ldb];
                s += double(av) * bv;
            }
            C[i + size_t(j) * a.ldc] = float(s);
        }
}

void test_gemm_mapping(plaintest::Counter& c) {
    // Rows not a multiple of the tile: the executor's tiling (whole rows,
    // output columns r0.. of each token's row, row stride = rows).
    const int64_t rows = 45, cols = 64, n = 37, tile = 16;
    std::mt19937 rng(5);
    std::normal_distribution<float> nd;
    std::vector<float> W(size_t(rows * cols)), X(size_t(n * cols)), Y(size_t(n * rows), NAN);
    for (auto& v : W) v = nd(rng);
    for (auto& v : X) v = nd(rng);
    for (int64_t r0 = 0; r0 < rows; r0 += tile) {
        const int64_t tr = std::min(tile, rows - r0);
        const cuda::GemmArgs a = cuda::gemm_args_for_rows(tr, cols, n, rows);
        reference_gemm_ex(a, W.data() + r0 * cols, X.data(), Y.data() + r0);
    }
    double worst = 0;
    for (int64_t t = 0; t < n; ++t)
        for (int64_t r = 0; r < rows; ++r) {
            double want = 0;
            for (int64_t k = 0; k < cols; ++k)
                want += double(W[size_t(r * cols + k)]) * X[size_t(t * cols + k)];
            const double got = Y[size_t(t * rows + r)];
            worst = std::isnan(got) ? INFINITY : std::max(worst, std::fabs(got - want));
        }
    c.check(worst < 1e-4,
            "cublasGemmEx arguments for row-major Y = X W^T (45 rows in tiles of "
            "16, 37 tokens) give Y under cuBLAS's column-major definition, max err " +
                std::to_string(worst));
    const cuda::GemmArgs a = cuda::gemm_args_for_rows(rows, cols, n, rows);
    c.check(a.transa == 1 && a.transb == 0 && a.m == rows && a.n == n && a.k == cols &&
                a.lda == cols && a.ldb == cols && a.ldc == rows,
            "mapping: transa T, transb N, m rows, n tokens, k cols, lda = ldb = cols, ldc = rows");
    bool threw_ld = false, threw_big = false;
    try {
        cuda::gemm_args_for_rows(rows, cols, n, rows - 1);
    } catch (const EngineError&) {
        threw_ld = true;
    }
    try {
        cuda::gemm_args_for_rows(rows, int64_t{1} << 31, n, rows);
    } catch (const EngineError&) {
        threw_big = true;
    }
    c.check(threw_ld && threw_big, "mapping refuses a short output stride and sizes past int");
}

void test_library(plaintest::Counter& c, bool expect_loaded, bool expect_disabled) {
    const auto names = cuda::cublas_candidate_names();
#ifdef _WIN32
    const char* first = "cublas64_13.dll";
    const char* not_cublas = "kernel32.dll";
#else
    const char* first = "libcublas.so.13";
    const char* not_cublas = "libm.so.6";
#endif
    c.check(!names.empty() && names.front() == first, std::string("candidates start with ") +
                                                          first + " (" +
                                                          std::to_string(names.size()) + " names)");

    const auto missing = cuda::load_cublas_from({"libpowerinfer-no-such-cublas.so"});
    c.check(!missing.loaded && missing.reason.rfind("cuBLAS not found", 0) == 0 &&
                missing.reason.find("libpowerinfer-no-such-cublas.so") != std::string::npos,
            "a missing library: not loaded, \"" + missing.reason + "\"");
    const auto wrong = cuda::load_cublas_from({not_cublas});
    c.check(!wrong.loaded && wrong.reason.find("lacks cublasGemmEx") != std::string::npos,
            "a library without the cuBLAS entry points is refused (" + wrong.reason + ")");

    const cuda::CublasLibrary& lib = cuda::cublas_library();
    std::printf("  cuBLAS: %s\n",
                lib.loaded ? (lib.name + " " + lib.version).c_str() : lib.reason.c_str());
    c.check(lib.loaded || lib.reason.rfind("cuBLAS not found", 0) == 0,
            "the process-wide search either loads cuBLAS or says it is not found");
    c.check(&cuda::cublas_library() == &lib, "the search runs once per process");
    if (expect_loaded) {
        c.check(lib.loaded, "the toolkit's cuBLAS is found (" + lib.reason + ")");
        c.check(lib.version.rfind("12.", 0) == 0 || lib.version.rfind("13.", 0) == 0,
                "its version comes from cublasGetProperty without a GPU (" + lib.version + ")");
    }

    c.check(cuda::cublas_disabled_by_environment() == expect_disabled,
            std::string("POWERINFER_NO_CUBLAS read as ") + (expect_disabled ? "set" : "unset"));
    // A handle needs a driver and a device: without them create() says why
    // instead of crashing; with POWERINFER_NO_CUBLAS it never tries.
    std::string why;
    auto gemm = cuda::CublasGemm::create(nullptr, nullptr, 0, why);
    std::printf("  CublasGemm::create: %s\n", gemm ? "a handle" : why.c_str());
    const bool has_gpu = cuda::probe_device(0).available;
    if (expect_disabled) {
        c.check(!gemm && why.find("POWERINFER_NO_CUBLAS") != std::string::npos,
                "POWERINFER_NO_CUBLAS=1: no handle, and the reason names the variable");
    } else if (!lib.loaded) {
        c.check(!gemm && why == "cuBLAS not found", "no library: no handle, \"cuBLAS not found\"");
    } else if (!has_gpu) {
        c.check(!gemm && why.rfind("cuBLAS could not start", 0) == 0,
                "library but no GPU: no handle, a reason (" + why + ")");
    } else {
        c.check(gemm != nullptr, "library and GPU: a handle (" + why + ")");
    }
}

}  // namespace

int main(int argc, char** argv) {
    bool expect_disabled = false;
    for (int i = 1; i < argc; ++i)
        expect_disabled = expect_disabled || std::strcmp(argv[i], "--expect-disabled") == 0;
#ifdef POWERINFER_TOOLKIT_CUBLAS
    std::error_code ec;
    const bool expect_loaded = std::filesystem::exists(POWERINFER_TOOLKIT_CUBLAS, ec);
#else
    const bool expect_loaded = false;
#endif
    plaintest::Counter c;
    try {
        test_gemm_mapping(c);
        test_library(c, expect_loaded, expect_disabled);
        c.check(backend::gemm_tile_rows(4096) == 2048 && backend::gemm_tile_rows(int64_t{1} << 24) == 1,
                "F16 tiles: 2048 rows of 4096, at least one row");
    } catch (const std::exception& e) {
        c.check(false, std::string("exception: ") + e.what());
    }
    return c.finish();
}
