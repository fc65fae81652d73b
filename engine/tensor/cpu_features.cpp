// The one place that asks the CPU which instruction sets it has.
#include "tensor/kernels.h"

#if defined(_MSC_VER) && !defined(__clang__) && (defined(_M_X64) || defined(_M_IX86))
#include <immintrin.h>
#include <intrin.h>
#define PI_CPUID_MSVC 1
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#define PI_CPUID_GNU 1
#endif

#include <cstring>
#include <fstream>
#include <string>

namespace powerinfer::tensor::kernels {

CpuFeatures detect_cpu_features() {
    CpuFeatures f;
#if defined(PI_CPUID_GNU)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
    f.avx512 = f.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    // AVX-VNNI: cpuid leaf 7, sub-leaf 1, EAX bit 4 (its state is the YMM
    // state that the AVX2 check already asked the OS about).
    unsigned a = 0, b = 0, c = 0, d = 0;
    f.avxvnni = f.avx2 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 4) & 1);
#elif defined(PI_CPUID_MSVC)
    int info[4] = {};
    __cpuid(info, 0);
    const int max_leaf = info[0];
    __cpuid(info, 1);
    const bool osxsave = (info[2] >> 27) & 1;
    const bool fma = (info[2] >> 12) & 1;
    const bool f16c = (info[2] >> 29) & 1;
    if (!osxsave || max_leaf < 7) return f;
    // The OS must save the YMM (and for AVX-512, the opmask/ZMM) state.
    const unsigned long long xcr0 = _xgetbv(0);
    const bool os_avx = (xcr0 & 0x6) == 0x6;
    const bool os_avx512 = (xcr0 & 0xE6) == 0xE6;
    __cpuidex(info, 7, 0);
    const bool avx2 = (info[1] >> 5) & 1;
    const bool avx512f = (info[1] >> 16) & 1;
    const bool avx512bw = (info[1] >> 30) & 1;
    const bool avx512vl = (info[1] >> 31) & 1;
    const bool avx512vnni = (info[2] >> 11) & 1;
    f.avx2 = os_avx && avx2 && fma && f16c;
    f.avx512 = f.avx2 && os_avx512 && avx512f && avx512bw && avx512vl && avx512vnni;
    __cpuidex(info, 7, 1);
    f.avxvnni = f.avx2 && ((info[0] >> 4) & 1);
#endif
    return f;
}

std::string cpu_model_name() {
    // The brand string of cpuid leaves 0x80000002..4 (x86), else what the
    // OS reports.
    unsigned regs[12] = {};
    bool have = false;
#if defined(PI_CPUID_GNU)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
        for (unsigned i = 0; i < 3; ++i)
            __get_cpuid(0x80000002u + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2],
                        &regs[4 * i + 3]);
        have = true;
    }
#elif defined(PI_CPUID_MSVC)
    int info[4] = {};
    __cpuid(info, static_cast<int>(0x80000000u));
    if (static_cast<unsigned>(info[0]) >= 0x80000004u) {
        for (unsigned i = 0; i < 3; ++i) {
            __cpuid(info, static_cast<int>(0x80000002u + i));
            std::memcpy(&regs[4 * i], info, sizeof(info));
        }
        have = true;
    }
#endif
    std::string name;
    if (have) {
        char text[49] = {};
        std::memcpy(text, regs, 48);
        name = text;
    } else {
        std::ifstream in("/proc/cpuinfo");
        for (std::string line; std::getline(in, line);)
            if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
                name = line.substr(line.find(':') + 1);
                break;
            }
    }
    const auto first = name.find_first_not_of(' ');
    const auto last = name.find_last_not_of(' ');
    return first == std::string::npos ? "unknown CPU" : name.substr(first, last - first + 1);
}

}  // namespace powerinfer::tensor::kernels
