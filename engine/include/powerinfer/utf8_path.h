// File paths to and from the engine's UTF-8 strings. On Windows a
// std::filesystem::path built from a std::string does not read it as UTF-8
// (MSVC: the ANSI code page; MinGW's libstdc++: one byte a character), so a
// model in a folder named "Modèles" or "модели" would not be found, and
// path::string() can throw for characters the code page lacks. These two say
// the encoding; on POSIX systems they are the plain conversions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace powerinfer {

inline std::filesystem::path path_from_utf8(std::string_view utf8) {
#ifdef _WIN32
    return std::filesystem::path(std::u8string(utf8.begin(), utf8.end()));
#else
    return std::filesystem::path(std::string(utf8));
#endif
}

inline std::string path_to_utf8(const std::filesystem::path& path) {
#ifdef _WIN32
    const std::u8string u8 = path.u8string();
    return std::string(u8.begin(), u8.end());
#else
    return path.string();
#endif
}

}  // namespace powerinfer
