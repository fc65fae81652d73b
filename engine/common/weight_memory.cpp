// The platform part of common/weight_memory.h.
#include "common/weight_memory.h"

#include <fstream>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace powerinfer {

namespace {

// On Linux huge-page-sized buffers start on a huge page; everything else on
// a cache line (the kernels' loads never split one). Elsewhere a 2 MiB
// alignment would only reserve memory for nothing.
std::align_val_t alignment_for(size_t bytes) {
#if defined(__linux__)
    if (bytes >= kHugePageBytes) return std::align_val_t{kHugePageBytes};
#else
    (void)bytes;
#endif
    return std::align_val_t{64};
}

}  // namespace

void* allocate_weight_bytes(size_t bytes) {
    if (bytes == 0) bytes = 1;
    void* p = ::operator new(bytes, alignment_for(bytes));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Before the first write faults the pages in: then the kernel backs the
    // range with huge pages directly. A refusal (THP off) leaves small pages.
    if (bytes >= kHugePageBytes) madvise(p, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
#endif
    return p;
}

void free_weight_bytes(void* p, size_t bytes) noexcept {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    ::operator delete(p, alignment_for(bytes));
}

std::string transparent_huge_page_setting(const char* name) {
#if defined(__linux__)
    // "always [madvise] never": the bracketed word is the setting.
    std::ifstream f(std::string("/sys/kernel/mm/transparent_hugepage/") + name);
    std::string word;
    while (f >> word)
        if (word.size() > 2 && word.front() == '[' && word.back() == ']')
            return word.substr(1, word.size() - 2);
#else
    (void)name;
#endif
    return "unavailable";
}

}  // namespace powerinfer
