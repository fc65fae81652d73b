// Format constants, sanity limits and helpers shared by the GGUF reader and
// writer, so that the writer never produces a file the reader rejects.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

namespace powerinfer::gguf::detail {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr uint32_t kVersion = 3;         // what the writer emits
constexpr uint64_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;
constexpr uint32_t kMaxValueType = 12;  // FLOAT64

// Arrays of arrays are allowed by the spec but no model uses more than one
// level; the limit bounds recursion on hostile input.
constexpr int kMaxArrayDepth = 8;

// Every array element becomes a Value in memory (~50 bytes) even when it is
// one byte in the file. The largest real tokenizers have well under 1M
// entries per array; this cap keeps a hostile file from costing gigabytes.
constexpr uint64_t kMaxMetadataItems = uint64_t{1} << 23;

// Smallest encoding of one value of a type (the whole value for scalars, the
// length prefix for strings, element type + length for arrays).
constexpr uint64_t min_value_bytes(uint32_t type) {
    switch (type) {
        case 0:
        case 1:
        case 7:
            return 1;  // u8, i8, bool
        case 2:
        case 3:
            return 2;  // u16, i16
        case 4:
        case 5:
        case 6:
            return 4;  // u32, i32, f32
        case 8:
            return 8;  // string: length
        case 9:
            return 4 + 8;  // array: element type + length
        case 10:
        case 11:
        case 12:
            return 8;  // u64, i64, f64
        default:
            return 1;
    }
}

// One KV pair: key length, (empty) key, value type, smallest value.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
// One tensor info: name length, n_dims, one dim, type, offset.
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

// Hostile counts must not turn into huge up-front allocations: reserve at
// most this many entries and let vectors grow for real data.
constexpr uint64_t kMaxReserve = uint64_t{1} << 16;
inline size_t capped_reserve(uint64_t n) { return static_cast<size_t>(std::min(n, kMaxReserve)); }

// UTF-8 for messages; path::string() can throw on Windows for names outside
// the ANSI code page.
inline std::string display_path(const std::filesystem::path& p) {
    const auto u8 = p.u8string();
    return std::string(u8.begin(), u8.end());
}

}  // namespace powerinfer::gguf::detail
