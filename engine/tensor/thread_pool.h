// A persistent worker pool: threads are created once, and parallel_for hands
// each worker a contiguous, deterministic range (no per-call thread creation,
// no racy accumulation).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace powerinfer::tensor {

class ThreadPool {
public:
    // n_threads <= 0: hardware concurrency. low_priority: the workers run
    // below normal priority (see lower_current_thread_priority).
    explicit ThreadPool(int n_threads, bool low_priority = false);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const;
    // Splits [0, n) into size() contiguous chunks (aligned to `grain`) and runs
    // fn(begin, end, worker_index) on all workers, the caller being worker 0.
    // Returns when all are done. Not reentrant.
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                      int64_t grain = 1);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Runs the calling thread below normal priority (Linux: nice 10 for this
// thread only; Windows: THREAD_PRIORITY_BELOW_NORMAL; elsewhere nothing), so
// that inference on every core never starves a GUI thread: it still gets
// all idle CPU. Returns false if the OS refused.
bool lower_current_thread_priority();
// The calling thread's nice value on Linux (0 elsewhere); for tests.
int current_thread_nice();

}  // namespace powerinfer::tensor
