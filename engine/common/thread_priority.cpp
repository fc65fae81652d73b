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
#elif defined(_WIN32)
    // The thread's priority level as a nice value: below normal (what
    // lower_current_thread_priority sets) is 10, as on Linux.
    switch (GetThreadPriority(GetCurrentThread())) {
        case THREAD_PRIORITY_IDLE:
        case THREAD_PRIORITY_LOWEST:
            return 19;
        case THREAD_PRIORITY_BELOW_NORMAL:
            return 10;
        case THREAD_PRIORITY_ABOVE_NORMAL:
            return -5;
        case THREAD_PRIORITY_HIGHEST:
            return -10;
        case THREAD_PRIORITY_TIME_CRITICAL:
            return -20;
        default:  // THREAD_PRIORITY_NORMAL, or THREAD_PRIORITY_ERROR_RETURN
            return 0;
    }
#else
    return 0;
#endif
}

}  // namespace powerinfer
