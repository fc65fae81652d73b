// Memory for the weight copies the engine builds at load (row panels,
// input-major and neuron-major copies). Decode reads all of them once per
// token, and the sparse layouts read them in short column segments scattered
// over the whole copy, so a TLB miss per 4 KiB page is a real share of a
// memory-bound token. On Linux a buffer of at least one huge page starts on
// a 2 MiB boundary and its whole 2 MiB pages are marked for transparent huge
// pages (madvise), which the kernel honours where THP is "always" or
// "madvise" (Debian's default): one TLB entry per 2 MiB. The tail past the
// last whole huge page keeps small pages, so no buffer grows the resident set.
// Elsewhere (Windows: large pages need a privilege users do not have) it is
// ordinary memory on a 64-byte boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace powerinfer {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Uninitialised; throws std::bad_alloc. Free with free_weight_bytes and the
// same size.
void* allocate_weight_bytes(size_t bytes);
void free_weight_bytes(void* p, size_t bytes) noexcept;

// A transparent-huge-page setting of this system: the selected word of
// /sys/kernel/mm/transparent_hugepage/<name> ("enabled": "always", "madvise"
// or "never"; "defrag": when the kernel compacts memory for them), or
// "unavailable" (no THP here).
std::string transparent_huge_page_setting(const char* name);
// What the system does with such a buffer: the "enabled" setting; the
// buffers get huge pages where it is "always" or "madvise".
inline std::string huge_page_mode() { return transparent_huge_page_setting("enabled"); }

struct WeightBytesDeleter {
    size_t bytes = 0;
    void operator()(uint8_t* p) const noexcept { free_weight_bytes(p, bytes); }
};
using WeightBuffer = std::unique_ptr<uint8_t[], WeightBytesDeleter>;

// `bytes` uninitialised bytes.
inline WeightBuffer make_weight_buffer(size_t bytes) {
    return WeightBuffer(static_cast<uint8_t*>(allocate_weight_bytes(bytes)),
                        WeightBytesDeleter{bytes});
}

// For the copies that are std::vectors (built by resize/assign).
template <class T>
struct WeightAllocator {
    using value_type = T;
    WeightAllocator() = default;
    template <class U>
    WeightAllocator(const WeightAllocator<U>&) noexcept {}
    T* allocate(size_t n) { return static_cast<T*>(allocate_weight_bytes(n * sizeof(T))); }
    void deallocate(T* p, size_t n) noexcept { free_weight_bytes(p, n * sizeof(T)); }
    friend bool operator==(const WeightAllocator&, const WeightAllocator&) { return true; }
};
template <class T>
using WeightVector = std::vector<T, WeightAllocator<T>>;

}  // namespace powerinfer
