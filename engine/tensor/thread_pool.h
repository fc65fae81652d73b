// A persistent worker pool: threads are created once, and parallel_for cuts
// [0, n) into a deterministic set of ranges (no per-call thread creation, no
// racy accumulation) that the threads claim as they come: a worker the OS has
// descheduled holds at most one small range, and while parallel runs give no
// gain (a busy machine) the caller runs every range alone for a while.
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
    // Splits [0, n) into contiguous chunks aligned to `grain` (up to
    // kChunksPerThread per thread; how many depends only on n, grain and
    // size(), never on timing) and runs fn(begin, end, thread) once per
    // chunk, the caller being thread 0. `thread` is in [0, size()) and no two
    // chunks run at once with the same value: it indexes per-thread scratch.
    // A thread may run several chunks of one call, any of them; callers must
    // not assume one call per thread. Returns when all are done. Not
    // reentrant (a nested call from inside a chunk runs inline, as one range).
    // Cut [0, n) so that equal ranges cost about the same (reorder the items
    // if their costs grow along the range, as a prompt's attention rows do):
    // the pool judges contention by the caller's own chunks, and uneven ones
    // make it run later calls on the caller alone (docs/architecture.md).
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                      int64_t grain = 1);

    // At most this many chunks per thread in one call.
    static constexpr int kChunksPerThread = 2;

    // What the calls so far did (for tests and benchmarks).
    struct Counters {
        uint64_t shared = 0;  // calls offered to the workers
        uint64_t alone = 0;   // multi-chunk calls the caller ran alone (contention back-off)
        uint64_t chunks_by_workers = 0;
        uint64_t backoffs = 0;  // times the pool found parallel runs gave no gain
    };
    Counters counters() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace powerinfer::tensor
