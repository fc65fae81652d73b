#include "common/thread_priority.h"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(_WIN32)
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#endif

namespace powerinfer {

bool lower_current_thread_priority() {
#if defined(__linux__)
    // On Linux the nice value is per thread (PRIO_PROCESS with a thread id).
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    return setpriority(PRIO_PROCESS, tid, 10) == 0;
#elif defined(_WIN32)
    return SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL) != 0;
#else
    return false;
#endif
}

int current_thread_nice() {
#if defined(__linux__)
    return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
#else
    return 0;
#endif
}

}  // namespace powerinfer
