// cuBLAS, loaded at run time (dlopen / LoadLibrary) for the prefill GEMMs of
// offloaded layers. The binaries link the CUDA runtime statically and have no
// hard dependency on cuBLAS: without it, prompt processing on the GPU runs
// token by token. Only the few entry points used here are declared, with the
// enum values of the CUDA 13 headers (identical in CUDA 12).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace powerinfer::cuda {

struct CublasLibrary {
    bool loaded = false;
    std::string name;     // the file that loaded, e.g. "libcublas.so.13"
    std::string version;  // "13.0.2" (cublasGetProperty; needs no GPU)
    std::string reason;   // why not loaded ("cuBLAS not found (tried ...)")
};

// The file names tried, in order (libcublas.so.13, .12, .so; cublas64_13.dll,
// cublas64_12.dll on Windows), then the same names under $CUDA_HOME /
// $CUDA_PATH and the default toolkit directory.
std::vector<std::string> cublas_candidate_names();

// Looks for cuBLAS once per process (thread-safe) and keeps it loaded. Needs
// no GPU or driver.
const CublasLibrary& cublas_library();

// Tries exactly `names` (no caching; a library found stays loaded). For tests.
CublasLibrary load_cublas_from(const std::vector<std::string>& names);

// True when POWERINFER_NO_CUBLAS is set to anything but "" or "0" (read on
// every call): prompt processing on the GPU then runs token by token.
bool cublas_disabled_by_environment();

// The cublasGemmEx arguments for Y = X W^T with row-major matrices
// (see gemm_args_for_rows).
struct GemmArgs {
    int transa = 0, transb = 0;  // cublasOperation_t: 0 = N, 1 = T
    int m = 0, n = 0, k = 0;
    int lda = 0, ldb = 0, ldc = 0;
};

// Y[t][r] = sum_c W[r][c] * X[t][c] for t < n_tokens, r < rows, with
// row-major W[rows][cols] (row stride cols), X[n_tokens][cols] (row stride
// cols) and Y[n_tokens][...] (row stride ldy >= rows; a tile of rows writes
// at Y + r0 with the full ldy).
//
// cuBLAS is column-major: C(m x n) = op(A) op(B), element (i, j) of a matrix
// with leading dimension ld at p[i + j * ld]. Read in column-major, row-major
// W is Wc = W^T (cols x rows, ld cols), X is Xc = X^T (cols x n_tokens, ld
// cols) and Y is Yc = Y^T (rows x n_tokens, ld ldy). Y = X W^T is
// Yc = W Xc = Wc^T Xc, so: transa = T, transb = N, m = rows, n = n_tokens,
// k = cols, A = W with lda = cols, B = X with ldb = cols, C = Y with
// ldc = ldy. Throws EngineError when a size does not fit cuBLAS's int.
GemmArgs gemm_args_for_rows(int64_t rows, int64_t cols, int64_t n_tokens, int64_t ldy);

// A cuBLAS handle on one CUDA stream, with a caller-owned workspace.
class CublasGemm {
public:
    // Null with the reason in `why` when cuBLAS is missing, switched off or a
    // handle cannot be created (no driver, no device).
    static std::unique_ptr<CublasGemm> create(cudaStream_t stream, void* workspace,
                                              size_t workspace_bytes, std::string& why);
    ~CublasGemm();
    CublasGemm(const CublasGemm&) = delete;
    CublasGemm& operator=(const CublasGemm&) = delete;

    // y[t][r] (F32, row stride ldy) = w16[r][:] . x16[t][:] for r < rows,
    // t < n_tokens: F16 inputs (device pointers, rows of `cols`), F32
    // accumulation and output. Enqueued on the stream; throws EngineError
    // when cuBLAS reports an error.
    void rows_gemm(const void* w16, int64_t rows, int64_t cols, const void* x16, int64_t n_tokens,
                   float* y, int64_t ldy);

private:
    CublasGemm() = default;
    void* handle_ = nullptr;
};

// A cuBLAS status as text ("CUBLAS_STATUS_NOT_INITIALIZED (1)").
std::string cublas_status_text(int status);

}  // namespace powerinfer::cuda
