// The platform file for loading cuBLAS at run time: dlopen on Linux,
// LoadLibrary on Windows. Nothing here links against cuBLAS.
#include "cublas_loader.h"

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <mutex>

#include "common/error.h"

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace powerinfer::cuda {
namespace {

// Values from cublas_api.h and library_types.h (CUDA 13.0; unchanged since
// CUDA 11). The C enums are int-sized, so the entry points take ints.
constexpr int kCublasOpN = 0, kCublasOpT = 1;                         // cublasOperation_t
constexpr int kCudaR16F = 2, kCudaR32F = 0;                           // cudaDataType
constexpr int kCublasCompute32F = 68;                                 // cublasComputeType_t
constexpr int kCublasGemmDefault = -1;                                // cublasGemmAlgo_t
constexpr int kMajorVersion = 0, kMinorVersion = 1, kPatchLevel = 2;  // libraryPropertyType

#ifdef _WIN32
#define PI_CUBLASAPI __stdcall
#else
#define PI_CUBLASAPI
#endif

using CreateFn = int(PI_CUBLASAPI*)(void** handle);
using DestroyFn = int(PI_CUBLASAPI*)(void* handle);
using SetStreamFn = int(PI_CUBLASAPI*)(void* handle, cudaStream_t stream);
using SetWorkspaceFn = int(PI_CUBLASAPI*)(void* handle, void* workspace, size_t bytes);
using GetPropertyFn = int(PI_CUBLASAPI*)(int type, int* value);
using GemmExFn = int(PI_CUBLASAPI*)(void* handle, int transa, int transb, int m, int n, int k,
                                    const void* alpha, const void* A, int Atype, int lda,
                                    const void* B, int Btype, int ldb, const void* beta, void* C,
                                    int Ctype, int ldc, int computeType, int algo);

struct CublasApi {
    CreateFn create = nullptr;
    DestroyFn destroy = nullptr;
    SetStreamFn set_stream = nullptr;
    SetWorkspaceFn set_workspace = nullptr;  // optional
    GetPropertyFn get_property = nullptr;    // optional
    GemmExFn gemm_ex = nullptr;
};

std::string env_value(const char* name) {
#ifdef _WIN32
    char* value = nullptr;
    size_t len = 0;
    if (_dupenv_s(&value, &len, name) != 0 || !value) return {};
    std::string s(value);
    std::free(value);
    return s;
#else
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
#endif
}

void* open_library(const std::string& name) {
#ifdef _WIN32
    // A full path also finds cublasLt64_*.dll next to it.
    const bool has_dir = name.find_first_of("\\/") != std::string::npos;
    return reinterpret_cast<void*>(
        LoadLibraryExA(name.c_str(), nullptr, has_dir ? LOAD_WITH_ALTERED_SEARCH_PATH : 0));
#else
    return dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
}

void* symbol(void* lib, const char* name) {
#ifdef _WIN32
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(lib), name));
#else
    return dlsym(lib, name);
#endif
}

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(symbol(lib, name));
    return fn != nullptr;
}

// Opens the first of `names` that has every entry point we call.
CublasLibrary load(const std::vector<std::string>& names, CublasApi& api) {
    CublasLibrary lib;
    std::string tried, missing;
    for (const std::string& name : names) {
        tried += (tried.empty() ? "" : ", ") + name;
        void* h = open_library(name);
        if (!h) continue;
        CublasApi a;
        if (!resolve(h, "cublasCreate_v2", a.create) ||
            !resolve(h, "cublasDestroy_v2", a.destroy) ||
            !resolve(h, "cublasSetStream_v2", a.set_stream) ||
            !resolve(h, "cublasGemmEx", a.gemm_ex)) {
            missing = name;
            continue;  // stays loaded: unloading cuBLAS is not worth the risk
        }
        resolve(h, "cublasSetWorkspace_v2", a.set_workspace);
        resolve(h, "cublasGetProperty", a.get_property);
        api = a;
        lib.loaded = true;
        lib.name = name;
        int major = 0, minor = 0, patch = 0;
        if (a.get_property && a.get_property(kMajorVersion, &major) == 0 &&
            a.get_property(kMinorVersion, &minor) == 0 && a.get_property(kPatchLevel, &patch) == 0)
            lib.version =
                std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
        return lib;
    }
    lib.reason = "cuBLAS not found (tried " + tried + ")";
    if (!missing.empty()) lib.reason += "; " + missing + " lacks cublasGemmEx or cublasCreate_v2";
    return lib;
}

std::mutex g_mutex;
bool g_searched = false;
CublasLibrary g_library;
CublasApi g_api;

const CublasApi& api() {
    cublas_library();
    return g_api;
}

void check_status(int status, const char* what) {
    if (status != 0)
        throw EngineError(std::string(what) + " failed: " + cublas_status_text(status));
}

int to_int(int64_t v, const char* what) {
    if (v < 0 || v > std::numeric_limits<int>::max())
        throw EngineError(std::string("cuBLAS GEMM: ") + what + " of " + std::to_string(v) +
                          " does not fit cuBLAS's 32-bit sizes");
    return static_cast<int>(v);
}

}  // namespace

std::vector<std::string> cublas_candidate_names() {
#ifdef _WIN32
    const std::vector<std::string> files{"cublas64_13.dll", "cublas64_12.dll"};
    const std::vector<std::string> subdirs{"bin\\x64", "bin"};  // CUDA 13, CUDA 12
    const std::vector<std::string> roots{env_value("CUDA_PATH")};
#else
    const std::vector<std::string> files{"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    const std::vector<std::string> subdirs{"lib64", "lib"};
    const std::vector<std::string> roots{env_value("CUDA_HOME"), env_value("CUDA_PATH"),
                                         "/usr/local/cuda"};
#endif
    std::vector<std::string> names = files;
    for (const std::string& root : roots) {
        if (root.empty()) continue;
        for (const std::string& sub : subdirs)
            for (const std::string& f : files) {
                const std::filesystem::path p = std::filesystem::path(root) / sub / f;
                std::error_code ec;
                if (std::filesystem::exists(p, ec)) names.push_back(p.string());
            }
    }
    return names;
}

const CublasLibrary& cublas_library() {
    std::lock_guard lock(g_mutex);
    if (!g_searched) {
        g_library = load(cublas_candidate_names(), g_api);
        g_searched = true;
    }
    return g_library;
}

CublasLibrary load_cublas_from(const std::vector<std::string>& names) {
    CublasApi unused;
    return load(names, unused);
}

bool cublas_disabled_by_environment() {
    const std::string v = env_value("POWERINFER_NO_CUBLAS");
    return !v.empty() && v != "0";
}

GemmArgs gemm_args_for_rows(int64_t rows, int64_t cols, int64_t n_tokens, int64_t ldy) {
    if (ldy < rows)
        throw EngineError("cuBLAS GEMM: the output row stride " + std::to_string(ldy) +
                          " is shorter than " + std::to_string(rows) + " rows");
    GemmArgs a;
    a.transa = kCublasOpT;  // A = W read as Wc = W^T (cols x rows): op(A) = W
    a.transb = kCublasOpN;  // B = X read as Xc = X^T (cols x n_tokens)
    a.m = to_int(rows, "rows");
    a.n = to_int(n_tokens, "tokens");
    a.k = to_int(cols, "columns");
    a.lda = a.k;
    a.ldb = a.k;
    a.ldc = to_int(ldy, "output row stride");
    return a;
}

std::unique_ptr<CublasGemm> CublasGemm::create(cudaStream_t stream, void* workspace,
                                               size_t workspace_bytes, std::string& why) {
    why.clear();
    if (cublas_disabled_by_environment()) {
        why = "cuBLAS off (POWERINFER_NO_CUBLAS is set)";
        return nullptr;
    }
    const CublasLibrary& lib = cublas_library();
    if (!lib.loaded) {
        why = "cuBLAS not found";
        return nullptr;
    }
    const CublasApi& f = api();
    std::unique_ptr<CublasGemm> g(new CublasGemm());
    int st = f.create(&g->handle_);
    if (st != 0 || !g->handle_) {
        g->handle_ = nullptr;
        why = "cuBLAS could not start (" + cublas_status_text(st) + ")";
        return nullptr;
    }
    // The stream first: setting it resets a user workspace.
    st = f.set_stream(g->handle_, stream);
    if (st == 0 && f.set_workspace && workspace && workspace_bytes > 0)
        st = f.set_workspace(g->handle_, workspace, workspace_bytes);
    if (st != 0) {
        why = "cuBLAS could not be bound to the stream (" + cublas_status_text(st) + ")";
        return nullptr;  // the destructor releases the handle
    }
    return g;
}

CublasGemm::~CublasGemm() {
    if (handle_) api().destroy(handle_);
}

void CublasGemm::rows_gemm(const void* w16, int64_t rows, int64_t cols, const void* x16,
                           int64_t n_tokens, float* y, int64_t ldy) {
    if (rows <= 0 || n_tokens <= 0) return;
    const GemmArgs a = gemm_args_for_rows(rows, cols, n_tokens, ldy);
    const float alpha = 1.f, beta = 0.f;  // host scalars: the default pointer mode
    check_status(api().gemm_ex(handle_, a.transa, a.transb, a.m, a.n, a.k, &alpha, w16, kCudaR16F,
                               a.lda, x16, kCudaR16F, a.ldb, &beta, y, kCudaR32F, a.ldc,
                               kCublasCompute32F, kCublasGemmDefault),
                 "cublasGemmEx");
}

std::string cublas_status_text(int status) {
    const char* name = "unknown status";
    switch (status) {
        case 0:
            name = "CUBLAS_STATUS_SUCCESS";
            break;
        case 1:
            name = "CUBLAS_STATUS_NOT_INITIALIZED";
            break;
        case 3:
            name = "CUBLAS_STATUS_ALLOC_FAILED";
            break;
        case 7:
            name = "CUBLAS_STATUS_INVALID_VALUE";
            break;
        case 8:
            name = "CUBLAS_STATUS_ARCH_MISMATCH";
            break;
        case 11:
            name = "CUBLAS_STATUS_MAPPING_ERROR";
            break;
        case 13:
            name = "CUBLAS_STATUS_EXECUTION_FAILED";
            break;
        case 14:
            name = "CUBLAS_STATUS_INTERNAL_ERROR";
            break;
        case 15:
            name = "CUBLAS_STATUS_NOT_SUPPORTED";
            break;
        case 16:
            name = "CUBLAS_STATUS_LICENSE_ERROR";
            break;
        default:
            break;
    }
    return std::string(name) + " (" + std::to_string(status) + ")";
}

}  // namespace powerinfer::cuda
