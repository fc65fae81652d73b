#include "gguf/mapped_file.h"

#include <cerrno>
#include <string>
#include <system_error>

#include "gguf/gguf.h"
#include "gguf/gguf_format.h"

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace powerinfer::gguf {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
    throw GgufError(detail::display_path(path) + ": " + problem);
}

// Checks what std::filesystem can tell portably, so both platforms give the
// same messages for the common mistakes.
void check_path(const std::filesystem::path& path) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (st.type() == std::filesystem::file_type::not_found)
        fail(path, "file not found — check the path");
    if (ec)
        fail(path,
             "cannot access the file (" + ec.message() + ") — check the path and its permissions");
    if (st.type() == std::filesystem::file_type::directory)
        fail(path, "is a directory, not a GGUF file — pass the path of a .gguf model file");
    if (st.type() != std::filesystem::file_type::regular)
        fail(path, "is not a regular file — pass the path of a .gguf model file");
}

}  // namespace

#ifdef _WIN32

std::unique_ptr<MappedFile> MappedFile::open(const std::filesystem::path& path) {
    check_path(path);
    HANDLE file = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE,
                              nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) {
        const DWORD err = GetLastError();
        if (err == ERROR_ACCESS_DENIED || err == ERROR_SHARING_VIOLATION)
            fail(path,
                 "permission denied — check the file's permissions or close programs using it");
        fail(path, "cannot open the file (" +
                       std::system_category().message(static_cast<int>(err)) + ")");
    }
    LARGE_INTEGER size{};
    if (!GetFileSizeEx(file, &size)) {
        const DWORD err = GetLastError();
        CloseHandle(file);
        fail(path, "cannot read the file size (" +
                       std::system_category().message(static_cast<int>(err)) + ")");
    }
    std::unique_ptr<MappedFile> m(new MappedFile);
    if (size.QuadPart == 0) {
        CloseHandle(file);
        return m;
    }
    HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
    CloseHandle(file);  // the mapping keeps the file open
    if (!mapping) {
        fail(path, "cannot map the file (" +
                       std::system_category().message(static_cast<int>(GetLastError())) + ")");
    }
    void* view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
    if (!view) {
        const DWORD err = GetLastError();
        CloseHandle(mapping);
        fail(path,
             "cannot map the file (" + std::system_category().message(static_cast<int>(err)) + ")");
    }
    m->data_ = static_cast<const uint8_t*>(view);
    m->size_ = static_cast<size_t>(size.QuadPart);
    m->mapping_handle_ = mapping;
    return m;
}

void MappedFile::release_pages(const void* p, size_t n) {
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    const uintptr_t page = si.dwPageSize;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
    // Unlocking pages that are not locked takes them out of the working set.
    if (end > begin) VirtualUnlock(reinterpret_cast<void*>(begin), end - begin);
}

MappedFile::~MappedFile() {
    if (data_) UnmapViewOfFile(data_);
    if (mapping_handle_) CloseHandle(static_cast<HANDLE>(mapping_handle_));
}

#else

std::unique_ptr<MappedFile> MappedFile::open(const std::filesystem::path& path) {
    check_path(path);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (err == EACCES || err == EPERM)
            fail(path, "permission denied — check the file's permissions");
        fail(path, "cannot open the file (" + std::generic_category().message(err) + ")");
    }
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail(path, "cannot read the file size (" + std::generic_category().message(err) + ")");
    }
    std::unique_ptr<MappedFile> m(new MappedFile);
    if (st.st_size == 0) {
        ::close(fd);
        return m;
    }
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);  // the mapping keeps the file alive
    if (p == MAP_FAILED)
        fail(path, "cannot map the file (" + std::generic_category().message(err) + ")");
    m->data_ = static_cast<const uint8_t*>(p);
    m->size_ = static_cast<size_t>(st.st_size);
    return m;
}

void MappedFile::release_pages(const void* p, size_t n) {
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
    if (data_) munmap(const_cast<uint8_t*>(data_), size_);
}

#endif

}  // namespace powerinfer::gguf
