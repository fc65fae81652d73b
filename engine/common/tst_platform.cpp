// The engine's platform code (plain test, no Qt; it runs on Linux and, in
// the mingw-w64 build, under Wine: scripts/windows-check):
// - a GGUF file larger than 4 GiB maps whole, and a tensor past 4 GiB reads
//   back (CreateFileMapping/MapViewOfFile on Windows, mmap elsewhere);
// - UTF-8 paths: a model in a folder named in Cyrillic, Latin-1 and CJK
//   opens, and messages name it in UTF-8;
// - a lowered thread priority is that thread's only;
// - the CPU features the kernels are chosen by agree with cpuid/xgetbv, and
//   every available SIMD level runs;
// - std::fma rounds once (MinGW's runtime did not: common/mingw_fmaf.cpp);
// - weight buffers start on a huge page on Linux and, where THP is on, get
//   huge pages (common/weight_memory.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/plain_test.h"
#include "common/weight_memory.h"
#include "gguf/gguf.h"
#include "powerinfer/error.h"
#include "powerinfer/model_file.h"
#include "powerinfer/threads.h"
#include "powerinfer/utf8_path.h"
#include "tensor/kernels.h"
#include "tensor/matmul.h"
#include "tensor/quant.h"
#include "tensor/thread_pool.h"

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// After windows.h, which it needs:
#include <winioctl.h>
#endif

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#define PI_TEST_CPUID 1
#endif

namespace fs = std::filesystem;
using namespace powerinfer;
using plaintest::contains;

namespace {

// ---- A GGUF image: two F32 tensors of 8 values, "near" at data offset 0
// and "far" at data offset `far_offset`. ------------------------------------

void put_u32(std::vector<uint8_t>& b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& b, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_str(std::vector<uint8_t>& b, const std::string& s) {
    put_u64(b, s.size());
    b.insert(b.end(), s.begin(), s.end());
}

constexpr uint64_t kAlign = 32;

// The header and tensor infos, padded to the data section.
std::vector<uint8_t> gguf_header(uint64_t far_offset) {
    std::vector<uint8_t> b{'G', 'G', 'U', 'F'};
    put_u32(b, 3);  // version
    put_u64(b, 2);  // tensors
    put_u64(b, 1);  // metadata keys
    put_str(b, "general.architecture");
    put_u32(b, 8);  // string
    put_str(b, "platform-test");
    for (const auto& [name, offset] : {std::pair<std::string, uint64_t>{"near", 0},
                                       std::pair<std::string, uint64_t>{"far", far_offset}}) {
        put_str(b, name);
        put_u32(b, 1);  // dimensions
        put_u64(b, 8);
        put_u32(b, 0);  // F32
        put_u64(b, offset);
    }
    while (b.size() % kAlign) b.push_back(0);
    return b;
}

std::vector<uint8_t> floats(float first) {
    std::vector<uint8_t> b(32);
    for (int i = 0; i < 8; ++i) {
        const float v = first + static_cast<float>(i);
        std::memcpy(b.data() + 4 * i, &v, 4);
    }
    return b;
}

// Writes `head` at 0 and `tail` at `tail_at`, leaving a hole between them
// (sparse where the file system can: NTFS only when asked, see below).
bool write_sparse(const fs::path& path, const std::vector<uint8_t>& head, uint64_t tail_at,
                  const std::vector<uint8_t>& tail) {
#ifdef _WIN32
    HANDLE h = CreateFileW(path.c_str(), GENERIC_READ | GENERIC_WRITE, 0, nullptr, CREATE_ALWAYS,
                           FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) return false;
    // Without it NTFS writes the 4 GiB of zeros; a file system that cannot
    // (or Wine, which passes the hole to Linux) does without.
    DWORD unused = 0;
    DeviceIoControl(h, FSCTL_SET_SPARSE, nullptr, 0, nullptr, 0, &unused, nullptr);
    DWORD written = 0;
    bool ok = WriteFile(h, head.data(), static_cast<DWORD>(head.size()), &written, nullptr) &&
              written == head.size();
    LARGE_INTEGER at;
    at.QuadPart = static_cast<LONGLONG>(tail_at);
    ok = ok && SetFilePointerEx(h, at, nullptr, FILE_BEGIN) &&
         WriteFile(h, tail.data(), static_cast<DWORD>(tail.size()), &written, nullptr) &&
         written == tail.size();
    CloseHandle(h);
    return ok;
#else
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(head.data()), static_cast<std::streamsize>(head.size()));
    f.seekp(static_cast<std::streamoff>(tail_at));
    f.write(reinterpret_cast<const char*>(tail.data()), static_cast<std::streamsize>(tail.size()));
    return static_cast<bool>(f);
#endif
}

float float_at(const uint8_t* p, int i) {
    float v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
}

void test_large_file(plaintest::Counter& c, const fs::path& dir) {
    // The far tensor 4.5 GiB into the data section: past every 32-bit size
    // and offset (DWORD, long on Windows, a 32-bit size_t).
    const uint64_t far_offset = (uint64_t{9} << 29);
    const std::vector<uint8_t> head = [&] {
        auto h = gguf_header(far_offset);
        const auto first = floats(1.0f);
        h.insert(h.end(), first.begin(), first.end());
        return h;
    }();
    const uint64_t data_offset = gguf_header(far_offset).size();
    const fs::path path = dir / "large.gguf";
    if (!write_sparse(path, head, data_offset + far_offset, floats(100.0f))) {
        c.check(false, "cannot write the 4.5 GiB sparse test file in " + path_to_utf8(dir));
        return;
    }
    const uint64_t size = data_offset + far_offset + 32;
    std::error_code ec;
    c.check(fs::file_size(path, ec) == size,
            "the sparse file is " + std::to_string(size) + " bytes");
    try {
        auto f = gguf::GgufFile::open(path);
        c.check(f->file_size() == size,
                "the whole file is mapped (" + std::to_string(f->file_size()) + " bytes)");
        const auto* first = f->tensor("near");
        const auto* far_tensor = f->tensor("far");
        c.check(first && float_at(first->data, 0) == 1.0f && float_at(first->data, 7) == 8.0f,
                "the tensor at the start reads back");
        c.check(far_tensor && static_cast<uint64_t>(far_tensor->data - f->bytes().data()) ==
                                  data_offset + far_offset,
                "the tensor past 4 GiB sits at its offset");
        c.check(far_tensor && float_at(far_tensor->data, 0) == 100.0f &&
                    float_at(far_tensor->data, 7) == 107.0f,
                "the tensor past 4 GiB reads back");
        // A byte in the hole just past 4 GiB, and the pages given back.
        c.check(f->bytes()[(uint64_t{1} << 32) + 1] == 0, "the hole past 4 GiB reads as zeros");
        f->release_pages(f->bytes().data() + (uint64_t{1} << 32), uint64_t{1} << 20);
        c.check(float_at(far_tensor->data, 3) == 103.0f, "released pages read back from the file");
        const ModelFileInfo info = inspect_model_file(path);
        c.check(info.file_bytes == static_cast<int64_t>(size) && info.n_tensors == 2,
                "inspect_model_file reports the 4.5 GiB size");
    } catch (const std::exception& e) {
        c.check(false, std::string("a 4.5 GiB GGUF opens: ") + e.what());
    }
    // Truncated below the far tensor: the message gives the true size.
    std::filesystem::resize_file(path, data_offset + far_offset + 16, ec);
    try {
        gguf::GgufFile::open(path);
        c.check(false, "a truncated 4.5 GiB file is refused");
    } catch (const EngineError& e) {
        c.check(
            contains(e.what(), "extends past the end of the " +
                                   std::to_string(data_offset + far_offset + 16) + "-byte file"),
            std::string("a truncated 4.5 GiB file: the message has the 64-bit size: ") + e.what());
    }
    // The mapping is gone with the file object: Windows deletes no file
    // that is still mapped.
    fs::remove(path, ec);
    c.check(!ec && !fs::exists(path), "the file can be deleted once closed");
}

// ---- UTF-8 paths -----------------------------------------------------------

void test_utf8_paths(plaintest::Counter& c, const fs::path& dir) {
    const std::string folder =
        "\xD0\xBC\xD0\xBE\xD0\xB4\xD0\xB5\xD0\xBB\xD0\xB8 \xC3\xA9 "
        "\xE6\xA8\xA1\xE5\x9E\x8B";  // "модели é 模型"
    const std::string name =
        "\xD0\xBC\xD0\xBE\xD0\xB4\xD0\xB5\xD0\xBB\xD1\x8C.gguf";  // "модель.gguf"
    const fs::path sub = dir / path_from_utf8(folder);
    std::error_code ec;
    fs::create_directories(sub, ec);
    c.check(!ec && fs::is_directory(sub), "a folder named in UTF-8 is created");
    c.check(path_to_utf8(path_from_utf8(folder + "/" + name)) == folder + "/" + name,
            "UTF-8 -> path -> UTF-8 is the identity");
    const fs::path model = sub / path_from_utf8(name);
    c.check(path_to_utf8(model.filename()) == name, "the file name stays UTF-8");
    auto head = gguf_header(32);
    const auto a = floats(1.0f), b = floats(2.0f);
    head.insert(head.end(), a.begin(), a.end());
    head.insert(head.end(), b.begin(), b.end());
    {
        std::ofstream out(model, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(head.data()),
                  static_cast<std::streamsize>(head.size()));
    }
    try {
        auto f = gguf::GgufFile::open(model);
        c.check(f->tensor("far") && float_at(f->tensor("far")->data, 0) == 2.0f,
                "a GGUF in a UTF-8-named folder opens");
        c.check(inspect_model_file(model).architecture == "platform-test",
                "inspect_model_file reads it");
    } catch (const std::exception& e) {
        c.check(false, std::string("a GGUF in a UTF-8-named folder opens: ") + e.what());
    }
    try {
        gguf::GgufFile::open(sub / path_from_utf8("missing.gguf"));
        c.check(false, "a missing file is refused");
    } catch (const EngineError& e) {
        c.check(contains(e.what(), folder) && contains(e.what(), "file not found"),
                std::string("the message names the folder in UTF-8: ") + e.what());
    }
    fs::remove_all(sub, ec);
}

// ---- Thread priority -------------------------------------------------------

void test_thread_priority(plaintest::Counter& c) {
#if defined(__linux__) || defined(_WIN32)
    const int main_before = current_thread_nice();
    int before = -100, after = -100;
    bool lowered = false;
    std::thread t([&] {
        before = current_thread_nice();
        lowered = lower_current_thread_priority();
        after = current_thread_nice();
    });
    t.join();
    if (before > 10) {
        std::printf("SKIP thread priority: the test already runs at nice %d\n", before);
        return;
    }
    c.check(lowered, "lower_current_thread_priority succeeds");
    c.check(after == 10,
            "the lowered thread runs at nice 10 (below normal): " + std::to_string(after));
    c.check(current_thread_nice() == main_before, "the other threads keep their priority");
#else
    (void)c;
    std::printf("SKIP thread priority: not implemented on this system\n");
#endif
}

// ---- CPU features ----------------------------------------------------------

#ifdef PI_TEST_CPUID
uint64_t xgetbv0() {
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t{hi} << 32) | lo;
}
#endif

void test_cpu_features(plaintest::Counter& c) {
    const tensor::kernels::CpuFeatures f = tensor::kernels::detect_cpu_features();
    const std::string name = tensor::cpu_model();
    std::printf("CPU: %s; features avx2 %d avx512 %d; kernels %s\n", name.c_str(), f.avx2, f.avx512,
                tensor::simd_level().c_str());
    c.check(!name.empty(), "the CPU has a name");
    c.check(!f.avx512 || f.avx2, "AVX-512 implies AVX2");
#ifdef PI_TEST_CPUID
    // The same question asked directly: the instructions (cpuid) and the
    // OS saving their registers (xgetbv), as the MSVC branch does.
    unsigned a = 0, b = 0, cx = 0, d = 0;
    bool avx2 = false, avx512 = false;
    if (__get_cpuid(1, &a, &b, &cx, &d) && ((cx >> 27) & 1)) {
        const bool fma = (cx >> 12) & 1, f16c = (cx >> 29) & 1, avx = (cx >> 28) & 1;
        const uint64_t xcr0 = xgetbv0();
        unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
        if (__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) {
            avx2 = avx && fma && f16c && ((b7 >> 5) & 1) && (xcr0 & 0x6) == 0x6;
            avx512 = avx2 && ((b7 >> 16) & 1) && ((b7 >> 30) & 1) && ((b7 >> 31) & 1) &&
                     ((c7 >> 11) & 1) && (xcr0 & 0xE6) == 0xE6;
        }
    }
    c.check(f.avx2 == avx2, "AVX2+FMA+F16C as cpuid and xgetbv say");
    c.check(f.avx512 == avx512, "AVX-512 F/BW/VL/VNNI as cpuid and xgetbv say");
#endif
    // Every level this CPU runs computes a Q4_1 product (the AVX code paths
    // under the platform's calling convention) close to the scalar one.
    const int64_t rows = 48, cols = 256;
    std::vector<float> w(static_cast<size_t>(rows * cols)), x(static_cast<size_t>(cols));
    uint32_t s = 1;
    auto rnd = [&] {
        s = s * 1664525u + 1013904223u;
        return static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
    };
    for (auto& v : w) v = rnd();
    for (auto& v : x) v = rnd();
    const size_t row_bytes = static_cast<size_t>(cols / 32 * 20);
    std::vector<uint8_t> q(static_cast<size_t>(rows) * row_bytes);
    for (int64_t r = 0; r < rows; ++r)
        tensor::quantize_row_ref(GgmlType::Q4_1, w.data() + r * cols, q.data() + r * row_bytes,
                                 cols);
    tensor::WeightView view;
    view.type = GgmlType::Q4_1;
    view.data = q.data();
    view.rows = rows;
    view.cols = cols;
    view.row_bytes = row_bytes;
    tensor::ThreadPool pool(2);
    const std::string active = tensor::simd_level();
    std::vector<float> want(static_cast<size_t>(rows));
    tensor::force_simd_level("scalar");
    tensor::matvec(pool, view, x.data(), want.data());
    for (const std::string& level : tensor::available_simd_levels()) {
        c.check(tensor::force_simd_level(level), "level " + level + " can be selected");
        std::vector<float> y(static_cast<size_t>(rows));
        tensor::matvec(pool, view, x.data(), y.data());
        double worst = 0;
        for (int64_t r = 0; r < rows; ++r)
            worst = std::max(worst, static_cast<double>(std::fabs(y[r] - want[r])));
        c.check(worst < 1e-3, "level " + level + ": Q4_1 matvec agrees with scalar (" +
                                  std::to_string(worst) + ")");
    }
    tensor::force_simd_level(active);
}

// ---- fmaf ------------------------------------------------------------------

void test_fmaf(plaintest::Counter& c) {
    // Cases where a product rounded before the sum (or a sum rounded to
    // double, then to float) gives another float: x * y = 1 + 2^-11 + 2^-24
    // lies halfway between two floats, and z decides the side.
    volatile float x = 1.0f + 0x1p-12f;
    struct Case {
        float x, y, z, want;
    };
    const Case cases[] = {
        {x, x, 0x1p-60f, 0x1.002002p+0f},
        {x, x, -0x1p-60f, 0x1.002p+0f},
        {-x, x, 0x1p-60f, -0x1.002p+0f},
        {-x, x, -0x1p-60f, -0x1.002002p+0f},
        {x, x, 0x1p-100f, 0x1.002002p+0f},
        {x, x, 0.0f, 0x1.002p+0f},
        {3.0f, 1.0f / 3.0f, -1.0f, 0x1p-25f},
        {0x1.fffffep+127f, 2.0f, -0x1.fffffep+127f, 0x1.fffffep+127f},
    };
    int wrong = 0;
    for (const Case& k : cases) {
        volatile float a = k.x, b = k.y, z = k.z;
        const float got =
            std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(z));
        if (got != k.want) {
            ++wrong;
            std::printf("fma(%a, %a, %a) = %a, want %a\n", k.x, k.y, k.z, got, k.want);
        }
    }
    c.check(wrong == 0, "std::fma(float) rounds once");
}

// ---- Weight memory -----------------------------------------------------------

#if defined(__linux__)
// The AnonHugePages of the mapping that holds p (/proc/self/smaps), in KiB.
int64_t anon_huge_kib(const void* p) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    const auto at = reinterpret_cast<uintptr_t>(p);
    while (std::getline(smaps, line)) {
        unsigned long long lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find('-') < 17) {
            inside = at >= lo && at < hi;
        } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
            return std::stoll(line.substr(14));
        }
    }
    return -1;
}
#endif

void test_weight_memory(plaintest::Counter& c) {
#if defined(__linux__)
    constexpr size_t kBigAlign = kHugePageBytes;  // a huge page
#else
    constexpr size_t kBigAlign = 64;  // a cache line
#endif
    const size_t big = 8 * kHugePageBytes + 4096 + 100;  // whole huge pages and a tail
    WeightBuffer b = make_weight_buffer(big);
    c.check(reinterpret_cast<uintptr_t>(b.get()) % kBigAlign == 0,
            "a weight buffer of 16 MiB starts on a huge page (Linux) or a cache line");
    for (size_t i = 0; i < big; i += 4096) b[i] = static_cast<uint8_t>(i >> 12);
    b[big - 1] = 7;
    bool same = b[big - 1] == 7;
    for (size_t i = 0; i < big; i += 4096) same = same && b[i] == static_cast<uint8_t>(i >> 12);
    c.check(same, "a weight buffer keeps what was written to it");
    WeightVector<uint16_t> v(3 << 20, 5);
    c.check(reinterpret_cast<uintptr_t>(v.data()) % kBigAlign == 0 && v[(3 << 20) - 1] == 5,
            "a weight vector of 6 MiB starts where a buffer does and is value-initialised");
    WeightVector<uint8_t> small(1000, 1);
    c.check(reinterpret_cast<uintptr_t>(small.data()) % 64 == 0,
            "a small weight vector starts on a cache line");
    const std::string mode = huge_page_mode();
    c.check(mode == "always" || mode == "madvise" || mode == "never" || mode == "unavailable",
            "huge_page_mode is one of the known words: " + mode);
#if defined(__linux__)
    const std::string defrag = transparent_huge_page_setting("defrag");
    if ((mode != "always" && mode != "madvise") || defrag == "never" || defrag == "defer") {
        std::printf("SKIP huge pages: THP is %s (defrag %s) here\n", mode.c_str(), defrag.c_str());
        return;
    }
    const int64_t kib = anon_huge_kib(b.get());
    c.check(kib >= 2048, "the buffer's whole 2 MiB pages are huge pages (AnonHugePages " +
                             std::to_string(kib) + " KiB)");
#else
    c.check(mode == "unavailable", "no transparent huge pages outside Linux");
#endif
}

}  // namespace

int main() {
    plaintest::Counter c;
    const fs::path dir = fs::temp_directory_path() / "pi_tst_platform";
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    try {
        test_large_file(c, dir);
        test_utf8_paths(c, dir);
        test_thread_priority(c);
        test_cpu_features(c);
        test_fmaf(c);
        test_weight_memory(c);
    } catch (const std::exception& e) {
        c.check(false, std::string("unexpected exception: ") + e.what());
    }
    fs::remove_all(dir, ec);
    return c.finish();
}
