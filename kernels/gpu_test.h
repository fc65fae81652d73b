// Minimal check helpers for the Qt-free GPU tests: each CHECK counts a pass
// or a failure; main() prints "N passed, N failed".
#pragma once

#include <cstdio>

namespace powerinfer::gputest {

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
    int finish() const {
        std::printf("%d passed, %d failed\n", passed, failed);
        return failed == 0 ? 0 : 1;
    }
};

}  // namespace powerinfer::gputest
