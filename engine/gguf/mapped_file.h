// A read-only memory mapping of a whole file. The only platform-specific part
// of the GGUF reader; mapped_file.cpp holds the POSIX and Windows versions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace powerinfer::gguf {

class MappedFile {
public:
    // Throws GgufError saying what is wrong (missing, a directory, not
    // readable, ...). An empty file maps to an empty span.
    static std::unique_ptr<MappedFile> open(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    std::span<const uint8_t> bytes() const { return {data_, size_}; }

    // Tells the OS that the mapped pages inside [p, p + n) are not needed
    // for now (a copy in another layout serves them): they leave the
    // process's resident set and are read from the file again if touched.
    // Only whole pages inside the range; a hint, never an error.
    static void release_pages(const void* p, size_t n);

private:
    MappedFile() = default;

    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
#ifdef _WIN32
    void* mapping_handle_ = nullptr;
#endif
};

}  // namespace powerinfer::gguf
