// The worker pool: partitioning, determinism, persistent threads,
// exceptions and nested calls.
#include <QTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/thread_priority.h"
#include "tensor/thread_pool.h"

using powerinfer::current_thread_nice;
using powerinfer::lower_current_thread_priority;
using powerinfer::tensor::ThreadPool;

class TestThreadPool : public QObject {
    Q_OBJECT

private:
    std::thread::id caller_;

private slots:
    void sizeDefaultsToHardware() {
        ThreadPool pool(0);
        QVERIFY(pool.size() >= 1);
        ThreadPool three(3);
        QCOMPARE(three.size(), 3);
    }

    // Every index once, in contiguous grain-aligned chunks (at most
    // kChunksPerThread per thread) whose set depends on n, grain and the
    // thread count only: which thread runs which chunk may differ per call.
    void partitionsIntoFixedGrainAlignedChunks() {
        for (int threads : {1, 2, 3, 5}) {
            ThreadPool pool(threads);
            for (int64_t n : {int64_t(1), int64_t(7), int64_t(64), int64_t(1000), int64_t(4097)}) {
                for (int64_t grain : {int64_t(1), int64_t(16), int64_t(32)}) {
                    std::vector<int> hits(static_cast<size_t>(n), 0);
                    std::mutex mu;
                    std::vector<std::pair<int64_t, int64_t>> ranges;
                    auto record = [&](int64_t b, int64_t e, int w) {
                        QVERIFY(w >= 0 && w < threads);
                        std::lock_guard<std::mutex> lk(mu);
                        ranges.emplace_back(b, e);
                        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
                    };
                    pool.parallel_for(n, record, grain);
                    for (int h : hits) QCOMPARE(h, 1);
                    std::sort(ranges.begin(), ranges.end());
                    QVERIFY(ranges.size() <= size_t(threads) * ThreadPool::kChunksPerThread);
                    int64_t next = 0;
                    for (const auto& [b, e] : ranges) {
                        QCOMPARE(b, next);
                        QVERIFY(b % grain == 0);
                        QVERIFY(e > b);
                        next = e;
                    }
                    QCOMPARE(next, n);
                    // The same call partitions the same way again.
                    const auto first = ranges;
                    for (int again = 0; again < 3; ++again) {
                        ranges.clear();
                        pool.parallel_for(n, record, grain);
                        std::sort(ranges.begin(), ranges.end());
                        QVERIFY(first == ranges);
                    }
                }
            }
        }
    }

    // A worker stopped inside its first chunk (as the OS deschedules one on a
    // busy machine) holds only that chunk: the others run the remaining
    // three quarters of the call meanwhile, with the same chunks and
    // results as an undisturbed call. (On a pool of one chunk per thread the
    // stopped worker held half the call: the caller ran out of work and the
    // release condition never came true.) The 10 s limit only turns a hang
    // into a failure; nothing here is timed.
    void aStoppedWorkerHoldsOneSmallChunk() {
        constexpr int64_t n = 800;
        const std::thread::id caller = std::this_thread::get_id();
        auto values = [](int64_t i) { return 1.0f / float(i + 1) + float(i % 7); };
        ThreadPool pool(2);
        std::vector<float> out(n, 0.0f);
        std::mutex mu;
        std::vector<std::pair<int64_t, int64_t>> ranges;
        std::atomic<int64_t> done{0};
        std::atomic<bool> worker_started{false}, released{false}, timed_out{false};
        auto wait_until = [&](auto condition) {
            const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!condition()) {
                if (std::chrono::steady_clock::now() > limit) {
                    timed_out = true;
                    return;
                }
                std::this_thread::yield();
            }
        };
        pool.parallel_for(n, [&](int64_t b, int64_t e, int) {
            {
                std::lock_guard<std::mutex> lk(mu);
                ranges.emplace_back(b, e);
            }
            if (std::this_thread::get_id() == caller) {
                // The caller starts once the worker is inside a chunk.
                wait_until([&] { return worker_started.load(); });
            } else if (!worker_started.exchange(true)) {
                wait_until([&] { return done.load() >= 3 * n / 4; });
                released = !timed_out;
            }
            for (int64_t i = b; i < e; ++i) out[static_cast<size_t>(i)] = values(i);
            done += e - b;
        });
        QVERIFY2(!timed_out, "the stopped worker's chunk held the call up");
        QVERIFY(released);
        QCOMPARE(done.load(), n);
        for (int64_t i = 0; i < n; ++i) QCOMPARE(out[static_cast<size_t>(i)], values(i));
        // The same chunks as a call nobody disturbs.
        std::sort(ranges.begin(), ranges.end());
        const auto disturbed = ranges;
        ranges.clear();
        pool.parallel_for(n, [&](int64_t b, int64_t e, int) {
            std::lock_guard<std::mutex> lk(mu);
            ranges.emplace_back(b, e);
        });
        std::sort(ranges.begin(), ranges.end());
        QVERIFY(disturbed == ranges);
    }

    // Every call of more than one chunk is counted once, shared with the
    // workers or run by the caller alone (while the pool backs off).
    void countersAccountForEveryCall() {
        ThreadPool pool(2);
        for (int i = 0; i < 100; ++i) pool.parallel_for(64, [](int64_t, int64_t, int) {});
        pool.parallel_for(1, [](int64_t, int64_t, int) {});  // one chunk: inline, not counted
        const ThreadPool::Counters c = pool.counters();
        QCOMPARE(c.shared + c.alone, uint64_t(100));
        QVERIFY(c.chunks_by_workers <= c.shared * 2 * ThreadPool::kChunksPerThread);
    }

    // Results written per index do not depend on the thread count or run.
    void resultsIdenticalAcrossThreadCounts() {
        const int64_t n = 100000;
        auto compute = [&](int threads) {
            ThreadPool pool(threads);
            std::vector<float> out(static_cast<size_t>(n));
            pool.parallel_for(n, [&](int64_t b, int64_t e, int) {
                for (int64_t i = b; i < e; ++i) {
                    float acc = 0;
                    for (int k = 0; k < 16; ++k) acc += 1.0f / float(i + k + 1);
                    out[static_cast<size_t>(i)] = acc;
                }
            });
            return out;
        };
        const auto one = compute(1);
        QVERIFY(one == compute(2));
        QVERIFY(one == compute(3));
        QVERIFY(one == compute(2));
    }

    // Workers are created once: many calls see at most size() distinct threads.
    void noThreadCreationPerCall() {
        ThreadPool pool(2);
        std::mutex mu;
        std::set<std::thread::id> ids;
        for (int call = 0; call < 2000; ++call) {
            pool.parallel_for(2, [&](int64_t, int64_t, int) {
                std::lock_guard<std::mutex> lk(mu);
                ids.insert(std::this_thread::get_id());
            });
        }
        QVERIFY(ids.size() <= 2);
        QVERIFY(ids.count(std::this_thread::get_id()) == 1);  // the caller is worker 0
    }

    // Two chunks of ~30 us each: run in parallel, a call costs one chunk plus
    // the dispatch overhead; run serially (a descheduled worker's chunk taken
    // over by the caller), two chunks.
    void dispatchOverheadIsSmall() {
        ThreadPool pool(2);
        std::atomic<int> ran_on_worker{0};
        auto body = [&](int64_t, int64_t, int w) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(30);
            while (std::chrono::steady_clock::now() < until) {
            }
            if (w == 1 && std::this_thread::get_id() != caller_) ran_on_worker++;
        };
        caller_ = std::this_thread::get_id();
        for (int i = 0; i < 50; ++i) pool.parallel_for(2, body);
        const int batches = 51, per_batch = 40;
        std::vector<double> us;
        for (int b = 0; b < batches; ++b) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < per_batch; ++i) pool.parallel_for(2, body);
            us.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count() /
                per_batch);
        }
        std::sort(us.begin(), us.end());
        const double median = us[batches / 2];
        qInfo(
            "2 x 30 us chunks on 2 threads: median %.1f us per call (%.1f us over one chunk); "
            "worker ran its chunk in %d of %d calls",
            median, median - 30.0, ran_on_worker.load(), 50 + batches * per_batch);
        // Timing is reported, not asserted: on a shared machine other processes
        // decide it. What must hold is that the worker takes part.
        QVERIFY(ran_on_worker.load() > 0);
    }

    void workersSleepAndWakeUp() {
        ThreadPool pool(2);
        std::atomic<int> count{0};
        pool.parallel_for(2, [&](int64_t b, int64_t e, int) { count += int(e - b); });
        // Long enough for the workers to stop spinning and wait on the condition variable.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        pool.parallel_for(2, [&](int64_t b, int64_t e, int) { count += int(e - b); });
        QCOMPARE(count.load(), 4);
    }

    void exceptionsReachTheCaller() {
        ThreadPool pool(3);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 pool.parallel_for(300, [](int64_t b, int64_t, int) {
                                     if (b > 0) throw std::runtime_error("worker failed");
                                 }));
        // The pool keeps working afterwards.
        std::atomic<int64_t> sum{0};
        pool.parallel_for(300, [&](int64_t b, int64_t e, int) { sum += e - b; });
        QCOMPARE(sum.load(), int64_t(300));
    }

    // A GUI process runs the engine's workers below normal priority; the
    // caller's own priority is untouched (it is the GUI's worker thread,
    // which lowers itself explicitly).
    void lowPriorityWorkers() {
#if defined(__linux__)
        const int caller_before = current_thread_nice();
        ThreadPool pool(3, true);
        std::mutex mu;
        std::vector<int> nice_of(3, -100);
        // Workers 1 and 2 are separate threads; make every chunk non-trivial
        // so each worker runs its own.
        pool.parallel_for(3, [&](int64_t b, int64_t, int worker) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            std::lock_guard<std::mutex> lk(mu);
            nice_of[size_t(b)] = current_thread_nice();
            Q_UNUSED(worker);
        });
        QCOMPARE(current_thread_nice(), caller_before);
        // Chunk 0 runs on the caller; chunks 1 and 2 on workers unless the
        // caller took them over (then they show the caller's value).
        int lowered = 0;
        for (int i = 1; i < 3; ++i) lowered += nice_of[size_t(i)] == 10;
        QVERIFY2(lowered >= 1, "no worker runs at nice 10");
        ThreadPool normal(2);
        int seen = -100;
        normal.parallel_for(2, [&](int64_t b, int64_t, int) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (b == 1) seen = current_thread_nice();
        });
        QCOMPARE(seen, caller_before);
        // And the explicit call lowers this thread (on a thread of its own,
        // so the test runner keeps its priority).
        int after = -100;
        std::thread t([&] {
            QVERIFY(lower_current_thread_priority());
            after = current_thread_nice();
        });
        t.join();
        QCOMPARE(after, 10);
#else
        QSKIP("per-thread nice values are a Linux notion");
#endif
    }

    void nestedCallsRunInline() {
        ThreadPool pool(2);
        std::atomic<int64_t> sum{0};
        std::atomic<int> other_index{0};
        pool.parallel_for(4, [&](int64_t b, int64_t e, int w) {
            for (int64_t i = b; i < e; ++i)
                pool.parallel_for(10, [&](int64_t b2, int64_t e2, int w2) {
                    sum += e2 - b2;
                    // The inner chunk runs on this thread: its scratch index too.
                    other_index += w2 != w;
                });
        });
        QCOMPARE(sum.load(), int64_t(40));
        QCOMPARE(other_index.load(), 0);
    }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "tst_thread_pool.moc"
