// Minimal check helpers for the Qt-free tests (they also run on the GPU
// machine, which has no Qt): each check counts a pass or a failure; main()
// returns finish(), which prints "N passed, N failed".
#pragma once

#include <cstdio>
#include <string>

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

}  // namespace powerinfer::plaintest
