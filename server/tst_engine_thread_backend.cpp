// EngineThreadBackend on its own, without HTTP: the job lifetime contract of
// CompletionBackend (terminal event last, then the job is the HTTP layer's to
// delete) and teardown with work still queued. Best run under ASan/TSan.
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "engine_thread_backend.h"
#include "scripted_engine.h"

using namespace powerinfer::server;
using powerinfer::testing::EngineScript;
using powerinfer::testing::ScriptedEngine;

namespace {

std::unique_ptr<ScriptedEngine> scriptedEngine(std::chrono::milliseconds delay) {
    EngineScript s = EngineScript::words();
    s.tokenDelay = delay;
    return std::make_unique<ScriptedEngine>(s);
}

powerinfer::GenerateRequest prompt(int maxTokens) {
    powerinfer::GenerateRequest r;
    r.prompt = "Once upon a time";
    r.max_tokens = maxTokens;
    return r;
}

// Runs the event loop until the job's terminal event; returns it.
std::optional<JobEvent> waitForTerminal(CompletionJob* job, int timeoutMs = 10000) {
    std::optional<JobEvent> terminal;
    QEventLoop loop;
    QObject::connect(job, &CompletionJob::event, &loop, [&](const JobEvent& e) {
        if (e.kind == JobEvent::Kind::Piece) return;
        terminal = e;
        loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    return terminal;
}

}  // namespace

class TestEngineThreadBackend : public QObject {
    Q_OBJECT
private slots:
    void finishesAJob() {
        EngineThreadBackend backend(scriptedEngine(std::chrono::milliseconds(0)), "m");
        CompletionJob* job = backend.submit(prompt(3));
        const auto terminal = waitForTerminal(job);
        QVERIFY(terminal);
        QCOMPARE(terminal->kind, JobEvent::Kind::Finished);
        QCOMPARE(terminal->result.generated_tokens, 3);
        delete job;
    }

    // --concurrency on an engine that cannot batch: said, and served one at
    // a time (never silently).
    void concurrencyFallsBackWithAReason() {
        EngineThreadBackend backend(scriptedEngine(std::chrono::milliseconds(0)), "m", nullptr, 4);
        QCOMPARE(backend.concurrency(), 1);
        QVERIFY2(backend.batchingNote().contains("one at a time"),
                 qPrintable(backend.batchingNote()));
        CompletionJob* job = backend.submit(prompt(2));
        const auto terminal = waitForTerminal(job);
        QVERIFY(terminal);
        QCOMPARE(terminal->result.generated_tokens, 2);
        delete job;
    }

    // The HTTP layer may delete a job as soon as its terminal event arrives,
    // and then destroy the backend: the engine thread must not reach the job
    // after posting that event (it once cancelled a freed job in the
    // destructor, corrupting the heap). Delivering the event the moment it
    // is posted, instead of waking from the event loop, makes that window
    // show up in about every run under ASan.
    void destroysRightAfterTheTerminalEvent() {
        for (int i = 0; i < 1000; ++i) {
            auto backend = std::make_unique<EngineThreadBackend>(
                scriptedEngine(std::chrono::milliseconds(0)), "m");
            CompletionJob* job = backend->submit(prompt(1));
            bool ended = false;
            QObject::connect(job, &CompletionJob::event, [&ended](const JobEvent& e) {
                ended = e.kind != JobEvent::Kind::Piece;
            });
            QElapsedTimer clock;
            clock.start();
            while (!ended && clock.elapsed() < 10000)
                QCoreApplication::sendPostedEvents(job, QEvent::MetaCall);
            QVERIFY(ended);
            delete job;
            backend.reset();
        }
    }

    // Teardown with a job running and others queued: every job still gets
    // exactly one terminal event, delivered after the backend is gone.
    void endsEveryJobOnDestruction() {
        auto backend = std::make_unique<EngineThreadBackend>(
            scriptedEngine(std::chrono::milliseconds(5)), "m");
        std::vector<CompletionJob*> jobs;
        std::vector<int> terminals(4, 0);
        for (int i = 0; i < 4; ++i) {
            jobs.push_back(backend->submit(prompt(1000)));
            QObject::connect(jobs.back(), &CompletionJob::event,
                             [&terminals, i](const JobEvent& e) {
                                 if (e.kind != JobEvent::Kind::Piece) ++terminals[size_t(i)];
                             });
        }
        QTRY_COMPARE(backend->status().running, 1);
        backend.reset();
        QTRY_VERIFY(std::all_of(terminals.begin(), terminals.end(), [](int n) { return n > 0; }));
        QTest::qWait(20);
        for (int n : terminals) QCOMPARE(n, 1);
        qDeleteAll(jobs);
    }
};

QTEST_GUILESS_MAIN(TestEngineThreadBackend)
#include "tst_engine_thread_backend.moc"
