#include "tensor/thread_pool.h"

#include <algorithm>
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

using Clock = std::chrono::steady_clock;

// How long an idle worker spins before sleeping: long enough to bridge the
// gap between two matvecs of one token, short enough not to burn a core when
// generation stops.
constexpr auto kSpinTime = std::chrono::microseconds(200);
// The caller waiting for a chunk still running elsewhere yields its core
// after this many pauses.
constexpr int kWaitSpinsBeforeYield = 4096;
// The contention check: once shared calls have taken kWindow of wall time,
// the caller compares that with its own time per chunk times the chunks (what
// running them alone would have cost). Below kMinGain the workers are not
// worth waking (descheduled by other programs, or woken too late for such
// short calls), and the caller runs every chunk alone for a back-off that
// doubles while the check keeps failing; the next shared calls re-check. The
// window spans a few scheduler time slices (a few ms each), so that it sees
// the stalls a descheduled worker causes, not only the calls between them.
constexpr auto kWindow = std::chrono::milliseconds(10);
// Only one call in kSampleEvery reads the clock (four reads cost about as much
// as the claiming itself on a short call): the window counts the sampled
// calls' time, so it closes after about kWindow of all calls.
constexpr uint32_t kSampleEvery = 4;
constexpr double kMinGain = 1.15;
constexpr auto kBackoffMin = std::chrono::milliseconds(20);
constexpr auto kBackoffMax = std::chrono::milliseconds(320);

using Fn = std::function<void(int64_t, int64_t, int)>;

// One thread's share of the chunks, claimed from the front by its owner and
// then by the others: the next chunk in the low 32 bits, the end in the high
// ones, so that one atomic add claims a chunk and reads which job's range it
// came from.
struct alignas(64) Home {
    std::atomic<uint64_t> slot{0};
};

void bump(std::atomic<uint64_t>& c) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace

struct ThreadPool::Impl {
    int n_threads = 1;
    std::vector<std::thread> workers;
    std::unique_ptr<Home[]> homes;

    // The current job; written by the caller before the homes are refilled
    // (release), read by a thread only after it has claimed one of its
    // chunks (acquire).
    const Fn* fn = nullptr;
    int64_t n = 0;
    int64_t grain = 1;
    int64_t blocks = 0;
    int64_t chunks = 0;

    // Each on its own cache line: what idle workers spin on, and what the
    // caller waits on.
    alignas(64) std::atomic<uint64_t> generation{0};
    // Chunks of the current job other threads have finished (reset by the
    // caller before the homes are refilled; only the caller waits on it).
    alignas(64) std::atomic<int64_t> finished_by_others{0};
    alignas(64) std::atomic<int> sleepers{0};
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::condition_variable cv;
    std::mutex dispatch_mu;  // one parallel_for at a time

    std::mutex error_mu;
    std::exception_ptr error;

    // The contention check (caller only, under dispatch_mu).
    double window_wall = 0, window_alone = 0;
    Clock::time_point alone_until{};
    bool backing_off = false;  // until alone_until (checked on sampled calls)
    uint32_t calls = 0;
    Clock::duration backoff = kBackoffMin;
    std::atomic<uint64_t> shared_calls{0}, alone_calls{0}, worker_chunks{0}, backoffs{0};

    void run_chunk(int64_t c, int thread) {
        const int64_t b0 = blocks * c / chunks;
        const int64_t b1 = blocks * (c + 1) / chunks;
        const int64_t begin = std::min(b0 * grain, n);
        const int64_t end = std::min(b1 * grain, n);
        try {
            (*fn)(begin, end, thread);
        } catch (...) {
            std::lock_guard<std::mutex> lk(error_mu);
            if (!error) error = std::current_exception();
        }
    }

    // Runs chunks until none is left to claim: this thread's own first, then
    // the others' (a descheduled thread's unstarted chunks are taken over).
    // The caller's look at every share after its own (it wrote them) is what
    // guarantees each chunk is claimed; a worker that skips a share on a
    // stale look only leaves it to the others.
    // Returns how many it ran. A thread late from the previous job may claim
    // a chunk of the next: the job's fields it then reads are that job's, and
    // its count goes to that job's `finished_by_others`, as a job cannot
    // finish before every thread that claimed one of its chunks has reported.
    int64_t run_chunks(int self, bool report) {
        int64_t count = 0, reported = 0;
        for (int k = 0; k < n_threads; ++k) {
            Home& h = homes[static_cast<size_t>((self + k) % n_threads)];
            // Another's share: a plain look first, so that an empty one is
            // not written (its owner's line stays put).
            if (k > 0) {
                const uint64_t s = h.slot.load(std::memory_order_relaxed);
                if (static_cast<uint32_t>(s) >= static_cast<uint32_t>(s >> 32)) continue;
            }
            for (;;) {
                const uint64_t s = h.slot.fetch_add(1, std::memory_order_acq_rel);
                const auto c = static_cast<uint32_t>(s);
                const auto end = static_cast<uint32_t>(s >> 32);
                if (c >= end) break;
                run_chunk(c, self);
                ++count;
                if (c + 1 == end) break;  // that was the share's last chunk
            }
            // A worker reports its own share before it looks at the others',
            // so that the caller does not wait for that look.
            if (report && k == 0 && count > 0) {
                finished_by_others.fetch_add(count, std::memory_order_acq_rel);
                reported += count;
                count = 0;
            }
        }
        if (report && count > 0) finished_by_others.fetch_add(count, std::memory_order_acq_rel);
        return reported + count;
    }

    void worker_loop(int idx);
    void check_gain(Clock::time_point t0, Clock::time_point work0, Clock::time_point t1,
                    Clock::time_point t2, int64_t own);
};

namespace {
// The pool whose job this thread is running (nested calls run inline) and
// this thread's index in it (a nested call's chunk gets the same).
thread_local const void* t_current_pool = nullptr;
thread_local int t_current_thread = 0;
}  // namespace

void ThreadPool::Impl::worker_loop(int idx) {
    t_current_pool = this;
    t_current_thread = idx;
    uint64_t seen = 0;
    for (;;) {
        uint64_t g = generation.load(std::memory_order_acquire);
        if (g == seen) {
            const auto deadline = Clock::now() + kSpinTime;
            for (int i = 0;; ++i) {
                PI_PAUSE();
                g = generation.load(std::memory_order_acquire);
                if (g != seen) break;
                if ((i & 63) == 63 && Clock::now() > deadline) break;
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
        run_chunks(idx, true);
    }
}

void ThreadPool::Impl::check_gain(Clock::time_point t0, Clock::time_point work0,
                                  Clock::time_point t1, Clock::time_point t2, int64_t own) {
    const double wall = std::chrono::duration<double>(t2 - t0).count();
    // The caller's own chunks took work0..t1: all of them alone would take
    // that per chunk (the chunks are near equal in size).
    const double alone = own > 0 ? std::chrono::duration<double>(t1 - work0).count() *
                                       static_cast<double>(chunks) / static_cast<double>(own)
                                 : wall * static_cast<double>(chunks);
    window_wall += wall;
    window_alone += alone;
    if (window_wall * kSampleEvery < std::chrono::duration<double>(kWindow).count()) return;
    if (window_alone < kMinGain * window_wall) {
        backing_off = true;
        alone_until = t2 + backoff;
        backoff = std::min<Clock::duration>(backoff * 2, kBackoffMax);
        bump(backoffs);
    } else {
        // Halved, not reset: on a busy machine a window between two stalls
        // passes now and then.
        backoff = std::max<Clock::duration>(backoff / 2, kBackoffMin);
    }
    window_wall = window_alone = 0;
}

ThreadPool::ThreadPool(int n_threads, bool low_priority) : impl_(std::make_unique<Impl>()) {
    if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
    if (n_threads <= 0) n_threads = 1;
    impl_->n_threads = n_threads;
    impl_->homes = std::make_unique<Home[]>(static_cast<size_t>(n_threads));
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

ThreadPool::Counters ThreadPool::counters() const {
    const Impl& p = *impl_;
    return {p.shared_calls.load(std::memory_order_relaxed),
            p.alone_calls.load(std::memory_order_relaxed),
            p.worker_chunks.load(std::memory_order_relaxed),
            p.backoffs.load(std::memory_order_relaxed)};
}

void ThreadPool::parallel_for(int64_t n, const Fn& fn, int64_t grain) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    Impl& p = *impl_;
    const int64_t blocks = (n + grain - 1) / grain;
    const int64_t chunks = std::min<int64_t>(blocks, int64_t(p.n_threads) * kChunksPerThread);
    // A nested call from inside a job, a single thread or a single chunk:
    // run inline.
    if (t_current_pool == &p) {
        fn(0, n, t_current_thread);
        return;
    }
    if (p.n_threads == 1 || chunks == 1) {
        fn(0, n, 0);
        return;
    }
    std::lock_guard<std::mutex> dispatch(p.dispatch_mu);
    p.fn = &fn;
    p.n = n;
    p.grain = grain;
    p.blocks = blocks;
    p.chunks = chunks;
    p.error = nullptr;
    const void* outer = t_current_pool;
    const int outer_thread = t_current_thread;
    t_current_pool = &p;
    t_current_thread = 0;
    const bool sampled = p.calls++ % kSampleEvery == 0;
    const Clock::time_point t0 = sampled ? Clock::now() : Clock::time_point{};
    if (p.backing_off && sampled && t0 >= p.alone_until) p.backing_off = false;
    if (p.backing_off) {
        // Backing off: the same chunks, on this thread, the workers asleep.
        for (int64_t c = 0; c < chunks; ++c) p.run_chunk(c, 0);
        bump(p.alone_calls);
    } else {
        p.finished_by_others.store(0, std::memory_order_relaxed);
        // Released with the job above; a thread that claims a chunk sees it.
        for (int t = 0; t < p.n_threads; ++t) {
            const auto c0 = static_cast<uint64_t>(chunks * t / p.n_threads);
            const auto c1 = static_cast<uint64_t>(chunks * (t + 1) / p.n_threads);
            p.homes[static_cast<size_t>(t)].slot.store(c1 << 32 | c0, std::memory_order_release);
        }
        p.generation.fetch_add(1, std::memory_order_seq_cst);
        if (p.sleepers.load(std::memory_order_seq_cst) > 0) {
            // Taking the lock orders the wake-up after a sleeper's last check.
            { std::lock_guard<std::mutex> lk(p.mu); }
            p.cv.notify_all();
        }
        const Clock::time_point work0 = sampled ? Clock::now() : Clock::time_point{};
        const int64_t own = p.run_chunks(0, false);
        const Clock::time_point t1 = sampled ? Clock::now() : Clock::time_point{};
        // Only chunks another thread has started are left: wait for them.
        const int64_t others = chunks - own;
        for (int i = 0; p.finished_by_others.load(std::memory_order_acquire) != others; ++i) {
            if (i < kWaitSpinsBeforeYield)
                PI_PAUSE();
            else
                std::this_thread::yield();
        }
        bump(p.shared_calls);
        p.worker_chunks.store(
            p.worker_chunks.load(std::memory_order_relaxed) + static_cast<uint64_t>(chunks - own),
            std::memory_order_relaxed);
        if (sampled) p.check_gain(t0, work0, t1, Clock::now(), own);
    }
    t_current_pool = outer;
    t_current_thread = outer_thread;
    if (p.error) {
        std::exception_ptr e = p.error;
        p.error = nullptr;
        std::rethrow_exception(e);
    }
}

}  // namespace powerinfer::tensor
