// The host probes of fit_estimate.h: RAM (the one platform-specific part)
// and a read-bandwidth measurement.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "powerinfer/fit_estimate.h"

#if defined(_WIN32)
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#include <unistd.h>
#endif

namespace powerinfer {

HostMemory host_memory() {
    HostMemory h;
#if defined(_WIN32)
    MEMORYSTATUSEX s{};
    s.dwLength = sizeof s;
    if (GlobalMemoryStatusEx(&s)) {
        h.total_bytes = int64_t(s.ullTotalPhys);
        h.available_bytes = int64_t(s.ullAvailPhys);
    }
#elif defined(__linux__)
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
        if (key == "MemTotal:") h.total_bytes = kib * 1024;
        if (key == "MemAvailable:") h.available_bytes = kib * 1024;
    }
#elif defined(__APPLE__)
    int64_t mem = 0;
    size_t len = sizeof mem;
    if (sysctlbyname("hw.memsize", &mem, &len, nullptr, 0) == 0) h.total_bytes = mem;
#endif
    return h;
}

double measure_host_read_bandwidth(int threads) {
    if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
    // Far larger than any L3 cache (480 MB on some Xeons is not reached:
    // bandwidth-bound decode only matters for models beyond it anyway).
    const auto bytes = size_t(kFitBandwidthBufferBytes);
    std::vector<uint64_t> buffer(bytes / sizeof(uint64_t));
    for (size_t i = 0; i < buffer.size(); i += 512) buffer[i] = i;  // touch every page
    std::vector<uint64_t> sums(size_t(threads), 0);
    double best = 0;
    for (int pass = 0; pass < 4; ++pass) {
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::thread> pool;
        const size_t per = buffer.size() / size_t(threads);
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&, t] {
                const uint64_t* p = buffer.data() + size_t(t) * per;
                uint64_t a = 0, b = 0, c = 0, d = 0;
                for (size_t i = 0; i + 4 <= per; i += 4) {
                    a += p[i];
                    b ^= p[i + 1];
                    c += p[i + 2];
                    d ^= p[i + 3];
                }
                sums[size_t(t)] += a + b + c + d;
            });
        }
        for (auto& th : pool) th.join();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (s > 0) best = std::max(best, double(per * size_t(threads) * sizeof(uint64_t)) / s);
    }
    // Keep the sums observable so the reads are not optimised away.
    volatile uint64_t sink = 0;
    for (uint64_t v : sums) sink = sink + v;
    (void)sink;
    return best;
}

}  // namespace powerinfer
