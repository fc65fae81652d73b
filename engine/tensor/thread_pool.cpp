#include "tensor/thread_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/thread_priority.h"

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#include <immintrin.h>
#define PI_PAUSE() _mm_pause()
#else
#define PI_PAUSE() std::this_thread::yield()
#endif

namespace powerinfer::tensor {

namespace {

// How long an idle worker spins before sleeping: long enough to bridge the
// gap between two matvecs of one token, short enough not to burn a core when
// generation stops.
constexpr auto kSpinTime = std::chrono::microseconds(200);
// The caller waiting for stragglers yields its core after this many pauses.
constexpr int kWaitSpinsBeforeYield = 4096;

using Fn = std::function<void(int64_t, int64_t, int)>;

}  // namespace

struct ThreadPool::Impl {
    int n_threads = 1;
    std::vector<std::thread> workers;

    // The current job; written by the caller before the generation bump.
    const Fn* fn = nullptr;
    int64_t n = 0;
    int64_t grain = 1;

    std::atomic<uint64_t> generation{0};
    std::atomic<int> pending{0};  // chunks 1..n-1 not yet finished
    // claimed[k]: chunk k of the current job has been taken, by worker k or
    // by the caller (which runs chunks whose worker has not woken up yet:
    // the partition stays the same, only the thread running it differs).
    std::unique_ptr<std::atomic<int>[]> claimed;
    std::atomic<int> sleepers{0};
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::condition_variable cv;
    std::mutex dispatch_mu;  // one parallel_for at a time

    std::mutex error_mu;
    std::exception_ptr error;

    bool claim(int idx) { return claimed[idx].exchange(1, std::memory_order_acq_rel) == 0; }

    void run_chunk(int idx) {
        const int64_t blocks = (n + grain - 1) / grain;
        const int64_t b0 = blocks * idx / n_threads;
        const int64_t b1 = blocks * (idx + 1) / n_threads;
        const int64_t begin = b0 * grain < n ? b0 * grain : n;
        const int64_t end = b1 * grain < n ? b1 * grain : n;
        if (begin >= end) return;
        try {
            (*fn)(begin, end, idx);
        } catch (...) {
            std::lock_guard<std::mutex> lk(error_mu);
            if (!error) error = std::current_exception();
        }
    }

    void worker_loop(int idx);
};

namespace {
// The pool whose job this thread is running (nested calls run inline).
thread_local const void* t_current_pool = nullptr;
}  // namespace

void ThreadPool::Impl::worker_loop(int idx) {
    t_current_pool = this;
    uint64_t seen = 0;
    for (;;) {
        uint64_t g = generation.load(std::memory_order_acquire);
        if (g == seen) {
            const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
            for (int i = 0;; ++i) {
                PI_PAUSE();
                g = generation.load(std::memory_order_acquire);
                if (g != seen) break;
                if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
            }
        }
        if (g == seen) {
            std::unique_lock<std::mutex> lk(mu);
            sleepers.fetch_add(1, std::memory_order_seq_cst);
            cv.wait(lk, [&] {
                g = generation.load(std::memory_order_seq_cst);
                return g != seen;
            });
            sleepers.fetch_sub(1, std::memory_order_relaxed);
        }
        if (stop.load(std::memory_order_acquire)) return;
        seen = g;
        if (claim(idx)) {
            run_chunk(idx);
            pending.fetch_sub(1, std::memory_order_acq_rel);
        }
    }
}

ThreadPool::ThreadPool(int n_threads, bool low_priority) : impl_(std::make_unique<Impl>()) {
    if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
    if (n_threads <= 0) n_threads = 1;
    impl_->n_threads = n_threads;
    impl_->claimed = std::make_unique<std::atomic<int>[]>(static_cast<size_t>(n_threads));
    for (int i = 0; i < n_threads; ++i) impl_->claimed[i].store(1);
    impl_->workers.reserve(static_cast<size_t>(n_threads - 1));
    for (int i = 1; i < n_threads; ++i)
        impl_->workers.emplace_back([impl = impl_.get(), i, low_priority] {
            if (low_priority) lower_current_thread_priority();
            impl->worker_loop(i);
        });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lk(impl_->mu);
        impl_->stop.store(true, std::memory_order_release);
        impl_->generation.fetch_add(1, std::memory_order_seq_cst);
    }
    impl_->cv.notify_all();
    for (auto& t : impl_->workers) t.join();
}

int ThreadPool::size() const { return impl_->n_threads; }

void ThreadPool::parallel_for(int64_t n, const Fn& fn, int64_t grain) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    Impl& p = *impl_;
    // A single thread, or a nested call from inside a job: run inline.
    if (p.n_threads == 1 || t_current_pool == &p) {
        fn(0, n, 0);
        return;
    }
    std::lock_guard<std::mutex> dispatch(p.dispatch_mu);
    p.fn = &fn;
    p.n = n;
    p.grain = grain;
    p.error = nullptr;
    p.pending.store(p.n_threads - 1, std::memory_order_relaxed);
    // Released with the job above; a worker that claims a chunk sees both.
    for (int i = 1; i < p.n_threads; ++i) p.claimed[i].store(0, std::memory_order_release);
    p.generation.fetch_add(1, std::memory_order_seq_cst);
    if (p.sleepers.load(std::memory_order_seq_cst) > 0) {
        // Taking the lock orders the wake-up after a sleeper's last check.
        { std::lock_guard<std::mutex> lk(p.mu); }
        p.cv.notify_all();
    }
    const void* outer = t_current_pool;
    t_current_pool = &p;
    p.run_chunk(0);
    // Chunks whose worker is still asleep or descheduled (a busy machine)
    // run here instead of being waited for.
    for (int i = 1; i < p.n_threads; ++i) {
        if (p.claim(i)) {
            p.run_chunk(i);
            p.pending.fetch_sub(1, std::memory_order_acq_rel);
        }
    }
    t_current_pool = outer;
    for (int i = 0; p.pending.load(std::memory_order_acquire) != 0; ++i) {
        if (i < kWaitSpinsBeforeYield)
            PI_PAUSE();
        else
            std::this_thread::yield();
    }
    if (p.error) {
        std::exception_ptr e = p.error;
        p.error = nullptr;
        std::rethrow_exception(e);
    }
}

}  // namespace powerinfer::tensor
