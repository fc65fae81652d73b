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
    // below normal priority (common/thread_priority.h).
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

}  // namespace powerinfer::tensor
