// Minimal check helpers for the Qt-free tests (they also run on the GPU
// machine, which has no Qt): each check counts a pass or a failure; main()
// returns finish(), which prints "N passed, N failed".
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#ifndef _WIN32
#include <sys/wait.h>
#endif

namespace powerinfer::plaintest {

struct Counter {
    int passed = 0;
    int failed = 0;
    void check(bool ok, const char* what) {
        if (ok) {
            ++passed;
        } else {
            ++failed;
            std::printf("FAIL: %s\n", what);
        }
    }
    void check(bool ok, const std::string& what) { check(ok, what.c_str()); }
    int finish() const {
        std::printf("%d passed, %d failed\n", passed, failed);
        return failed == 0 ? 0 : 1;
    }
};

inline bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs `"program" args` with stdout and stderr to files in dir
// (stdout.txt, stderr.txt); returns the exit code (-1 if it did not exit).
inline int run_program(const std::string& program, const std::string& args,
                       const std::filesystem::path& dir) {
    std::string cmd = "\"" + program + "\" " + args + " > \"" + (dir / "stdout.txt").string() +
                      "\" 2> \"" + (dir / "stderr.txt").string() + "\"";
#ifdef _WIN32
    // cmd /c drops the first and the last quote of a line that has more
    // than two: one more pair keeps the program's.
    cmd = "\"" + cmd + "\"";
#endif
    const int status = std::system(cmd.c_str());
#ifdef _WIN32
    return status;
#else
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
}

}  // namespace powerinfer::plaintest
