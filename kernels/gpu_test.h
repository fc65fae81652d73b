// Check helpers for the Qt-free GPU tests: each CHECK counts a pass or a
// failure; main() prints "N passed, N failed".
#pragma once

#include "common/plain_test.h"

namespace powerinfer::gputest {

using Counter = plaintest::Counter;

}  // namespace powerinfer::gputest
