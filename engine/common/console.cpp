#include "powerinfer/console.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// After windows.h, which it needs:
#include <fcntl.h>
#include <io.h>
#include <shellapi.h>
#endif

namespace powerinfer {

#ifdef _WIN32
namespace {

std::string to_utf8(const wchar_t* w, int n) {
    if (n <= 0) return {};
    const int bytes = WideCharToMultiByte(CP_UTF8, 0, w, n, nullptr, 0, nullptr, nullptr);
    if (bytes <= 0) return {};
    std::string s(static_cast<size_t>(bytes), '\0');
    WideCharToMultiByte(CP_UTF8, 0, w, n, s.data(), bytes, nullptr, nullptr);
    return s;
}

UINT g_output_cp = 0, g_input_cp = 0;

void restore_console_code_pages() {
    if (g_output_cp) SetConsoleOutputCP(g_output_cp);
    if (g_input_cp) SetConsoleCP(g_input_cp);
}

}  // namespace
#endif

Utf8Arguments::Utf8Arguments(int argc, char** argv) {
#ifdef _WIN32
    int n = 0;
    if (LPWSTR* w = CommandLineToArgvW(GetCommandLineW(), &n)) {
        for (int i = 0; i < n; ++i) args_.push_back(to_utf8(w[i], lstrlenW(w[i])));
        LocalFree(w);
    } else {
        // Without the UTF-16 command line, ASCII arguments still work.
        std::fprintf(stderr,
                     "warning: cannot read the command line as Unicode (error %lu); "
                     "non-ASCII arguments may be garbled\n",
                     static_cast<unsigned long>(GetLastError()));
        args_.assign(argv, argv + argc);
    }
#else
    args_.assign(argv, argv + argc);
#endif
    for (auto& a : args_) pointers_.push_back(a.data());
    pointers_.push_back(nullptr);
}

void use_utf8_console() {
#ifdef _WIN32
    // Without a console (output to a file or a pipe) these fail, harmlessly.
    g_output_cp = GetConsoleOutputCP();
    g_input_cp = GetConsoleCP();
    if (g_output_cp || g_input_cp) std::atexit(restore_console_code_pages);
    SetConsoleOutputCP(CP_UTF8);
    SetConsoleCP(CP_UTF8);
    _setmode(_fileno(stdin), _O_BINARY);
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
#endif
}

bool read_line_utf8(std::string& line) {
    line.clear();
#ifdef _WIN32
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    DWORD mode = 0;
    if (in != INVALID_HANDLE_VALUE && in != nullptr && GetConsoleMode(in, &mode)) {
        std::wstring w;
        for (;;) {
            wchar_t buf[256];
            DWORD got = 0;
            if (!ReadConsoleW(in, buf, 256, &got, nullptr) || got == 0) {
                if (w.empty()) return false;
                break;
            }
            w.append(buf, got);
            if (w.back() == L'\n') break;
        }
        // Ctrl-Z then Enter: the end of input, as Ctrl-D on a terminal.
        if (!w.empty() && w.front() == L'\x1a') return false;
        while (!w.empty() && (w.back() == L'\n' || w.back() == L'\r')) w.pop_back();
        line = to_utf8(w.data(), static_cast<int>(w.size()));
        return true;
    }
    if (!std::getline(std::cin, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
#else
    return static_cast<bool>(std::getline(std::cin, line));
#endif
}

}  // namespace powerinfer
