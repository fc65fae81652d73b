#include "smoke_mode.h"

#include <qcoro/qcorosignal.h>
#include <qcoro/qcorotimer.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QKeyEvent>
#include <QKeySequence>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QTimer>
#include <algorithm>
#include <cstdio>

#include "chat_controller.h"
#include "message_list_model.h"
#include "metrics_model.h"

namespace powerinfer::app {

void printFailure(const QString& message) {
    std::fprintf(stderr, "powerinfer-desktop: %s\n", qPrintable(message));
    std::fflush(stderr);
}

namespace {

// Measures the GUI thread's responsiveness: a 5 ms timer whose longest gap
// between ticks is the longest time the event loop was blocked. With
// PI_STALL_TRACE=MS every gap over MS ms is printed with what ran in it (the
// frames the window rendered, the streamed batches applied).
class StallMeter : public QObject {
public:
    StallMeter() {
        const QByteArray trace = qgetenv("PI_STALL_TRACE");
        traceMs_ = trace.isEmpty() ? -1 : std::max(1, trace.toInt() > 0 ? trace.toInt() : 20);
        timer_.setInterval(5);
        timer_.setTimerType(Qt::PreciseTimer);
        connect(&timer_, &QTimer::timeout, this, [this] {
            const qint64 gap = clock_.restart();
            if (traceMs_ > 0 && gap > traceMs_)
                std::fprintf(stderr,
                             "stall %lld ms at %lld ms: %d frames (longest %.1f ms), %d batches "
                             "(%.1f ms)\n",
                             (long long)gap, (long long)total_.elapsed(), frames_, longestFrameMs_,
                             batches_, batchMs_);
            frames_ = batches_ = 0;
            longestFrameMs_ = batchMs_ = 0;
            maxGapMs_ = std::max(maxGapMs_, gap);
        });
    }
    // Frames of a window rendered on this thread (the software renderer).
    void watch(QQuickWindow* window) {
        if (!window || traceMs_ < 0) return;
        connect(
            window, &QQuickWindow::beforeSynchronizing, this, [this] { frame_.start(); },
            Qt::DirectConnection);
        connect(
            window, &QQuickWindow::afterRendering, this,
            [this] {
                if (!frame_.isValid()) return;
                ++frames_;
                longestFrameMs_ = std::max(longestFrameMs_, frame_.nsecsElapsed() / 1e6);
            },
            Qt::DirectConnection);
    }
    void batchApplied(qint64 ns) {
        ++batches_;
        batchMs_ += double(ns) / 1e6;
    }
    void start() {
        maxGapMs_ = 0;
        clock_.start();
        total_.start();
        timer_.start();
    }
    void stop() { timer_.stop(); }
    qint64 maxGapMs() const { return maxGapMs_; }

private:
    QTimer timer_;
    QElapsedTimer clock_;
    QElapsedTimer total_;
    QElapsedTimer frame_;
    qint64 maxGapMs_ = 0;
    int traceMs_ = -1;
    int frames_ = 0, batches_ = 0;
    double longestFrameMs_ = 0, batchMs_ = 0;
};

// Mean GUI-thread cost of a streamed batch in the last tenth of the reply
// over the first tenth: about 1 when a batch costs the same however long the
// reply already is. 0 when there were too few batches to say.
double batchCostRatio(const QList<QPair<int, qint64>>& batches) {
    if (batches.size() < 20) return 0;
    const int total = batches.last().first;
    double first = 0, last = 0;
    int nFirst = 0, nLast = 0;
    for (const auto& [tokens, ns] : batches) {
        if (tokens <= total / 10) {
            first += double(ns);
            ++nFirst;
        } else if (tokens > total - total / 10) {
            last += double(ns);
            ++nLast;
        }
    }
    if (nFirst == 0 || nLast == 0 || first <= 0) return 0;
    return (last / nLast) / (first / nFirst);
}

}  // namespace

// The smoke mode: one prompt, one reply, a screenshot, an exit code.
QCoro::Task<> runSmoke(ChatController* controller, QQmlApplicationEngine* qml,
                       DesktopOptions options) {
    const auto finish = [](int code) { QCoreApplication::exit(code); };
    if (options.waitDownload) {
        // Polled, not awaited on a signal: downloads report in bursts.
        ModelDownloads* downloads = controller->downloads();
        while (downloads->busy()) co_await QCoro::sleepFor(std::chrono::milliseconds(50));
        for (int r = 0; r < downloads->rowCount(); ++r) {
            if (downloads->stateAt(r) == ModelDownloads::State::Failed) {
                printFailure(QStringLiteral("download failed: %1").arg(downloads->errorAt(r)));
                finish(1);
                co_return;
            }
            if (downloads->stateAt(r) == ModelDownloads::State::Done) {
                std::printf("downloaded: %s (%s)\n", qPrintable(downloads->pathAt(r)),
                            qPrintable(downloads->noteAt(r)));
                // The newcomer's flow: chat with what was just downloaded.
                if (options.model.isEmpty() && !options.prompt.isEmpty())
                    options.model = downloads->pathAt(r);
            }
        }
        std::fflush(stdout);
        // The model list has the new file once its scan is done.
        if (controller->models()->scanning())
            co_await qCoro(controller->models(), &ModelCatalog::scanned);
    }
    if (!options.model.isEmpty() && controller->modelState() != ChatController::ModelState::Ready) {
        if (!co_await controller->loadModelFile(options.model)) {
            printFailure(
                QStringLiteral("cannot load %1: %2").arg(options.model, controller->loadError()));
            finish(1);
            co_return;
        }
    }
    if (options.calibrateBackground) {
        const QString error = controller->backgroundCalibration()->start(
            !options.model.isEmpty() ? options.model : controller->modelPath());
        if (!error.isEmpty()) {
            printFailure(error);
            finish(1);
            co_return;
        }
    }
    if (!options.calibrate.isEmpty()) {
        SparseController* sparse = controller->sparse();
        if (options.calibrationTokens > 0) sparse->setCalibrationTokens(options.calibrationTokens);
        const bool file = options.calibrate != QLatin1String("bundled") &&
                          options.calibrate != QLatin1String("conversations");
        // Plain locals, not conditional temporaries inside the co_await:
        // GCC 12 destroys such temporaries twice.
        const QString source = file ? QStringLiteral("file") : options.calibrate;
        const QString corpus = file ? options.calibrate : QString();
        const bool calibrated = co_await sparse->runCalibration(source, corpus, 0.5);
        if (!calibrated) {
            printFailure(QStringLiteral("calibration failed: %1").arg(sparse->calibrationError()));
            finish(1);
            co_return;
        }
        // The controller reloads the model on its own: wait for that load.
        while (controller->modelState() == ChatController::ModelState::Loading)
            co_await qCoro(controller, &ChatController::modelChanged);
        if (controller->modelState() != ChatController::ModelState::Ready) {
            printFailure(
                QStringLiteral("cannot reload %1: %2").arg(options.model, controller->loadError()));
            finish(1);
            co_return;
        }
        std::printf("calibrated: sidecar %s, %s\n",
                    sparse->metrics()->hasSidecar() ? "in use" : "not used",
                    qPrintable(sparse->metrics()->sparseStatus()));
        std::fflush(stdout);
    }
    for (const QString& kv : options.tuning) {
        const QString key = kv.section(QLatin1Char('='), 0, 0).trimmed();
        const QString value = kv.section(QLatin1Char('='), 1).trimmed();
        if (key == QLatin1String("sparse"))
            controller->sparse()->setValue(key, value == QLatin1String("true"));
        else
            controller->sparse()->setValue(key, value);
    }
    auto* window = qobject_cast<QQuickWindow*>(qml->rootObjects().value(0));
    const auto save = [&options](QQuickWindow* w) {
        const QImage image = w ? w->grabWindow() : QImage();
        if (image.isNull() || !image.save(options.screenshot)) {
            printFailure(
                QStringLiteral("cannot save the screenshot to %1").arg(options.screenshot));
            return false;
        }
        return true;
    };
    bool saved = false, saveFailed = false;
    StallMeter meter;
    QList<QPair<int, qint64>> batches;
    qint64 newChatStallMs = -1;
    if (!options.prompt.isEmpty()) {
        // New chat, then the send, as a user does them: with a pause between.
        // Leaving a long conversation (the last one, reopened at start) tears
        // down its rows on the next event-loop pass; that slice belongs to the
        // new chat, and is measured and printed on its own.
        meter.watch(window);
        meter.start();
        controller->newConversation();
        co_await QCoro::sleepFor(std::chrono::milliseconds(150));
        newChatStallMs = meter.maxGapMs();
        meter.stop();
        // Mid-reply screenshot: grabbed from the stream, once N tokens are in.
        QMetaObject::Connection grab;
        if (options.screenshotAfterTokens > 0 && !options.screenshot.isEmpty()) {
            grab = QObject::connect(
                controller->sparse()->metrics(), &MetricsModel::updated, window, [&, window] {
                    if (saved || controller->sparse()->metrics()->totalTokens() <
                                     options.screenshotAfterTokens)
                        return;
                    saved = true;
                    saveFailed = !save(window);
                });
        }
        // Each batch's GUI-thread cost with its position in the reply.
        batches.clear();
        const QMetaObject::Connection cost =
            QObject::connect(controller, &ChatController::streamBatchApplied, controller,
                             [&batches, &meter](int tokens, qint64 ns) {
                                 batches.append({tokens, ns});
                                 meter.batchApplied(ns);
                             });
        meter.start();
        const bool ok = co_await controller->sendMessage(options.prompt);
        meter.stop();
        QObject::disconnect(grab);
        QObject::disconnect(cost);
        if (!ok) {
            printFailure(QStringLiteral("no reply: %1").arg(controller->notice()));
            finish(1);
            co_return;
        }
    }
    if (options.compare && !options.prompt.isEmpty()) {
        SparseController* sparse = controller->sparse();
        controller->compareWithDense();
        while (sparse->comparing()) co_await qCoro(sparse, &SparseController::compareChanged);
        if (!sparse->compareDone()) {
            printFailure(QStringLiteral("compare failed: %1").arg(sparse->compareError()));
            finish(1);
            co_return;
        }
        std::printf(
            "compare: agreement %.3f over %d tokens (identical for the first %d), dense %.1f "
            "tok/s, sparse %.1f tok/s\n",
            sparse->compareAgreement(), sparse->compareTokens(), sparse->compareCommonPrefix(),
            sparse->compareDenseTps(), sparse->compareSparseTps());
        std::fflush(stdout);
    }
    if (options.calibrateBackground) {
        // The reply above ran while calibrating; now wait for the sidecar.
        BackgroundCalibration* calibration = controller->backgroundCalibration();
        while (calibration->running()) co_await QCoro::sleepFor(std::chrono::milliseconds(100));
        if (!calibration->error().isEmpty()) {
            printFailure(
                QStringLiteral("background calibration failed: %1").arg(calibration->error()));
            finish(1);
            co_return;
        }
        if (controller->models()->scanning())
            co_await qCoro(controller->models(), &ModelCatalog::scanned);
        std::printf("background calibration: %s\n",
                    qPrintable(calibration->statusFor(controller->modelPath())));
        std::fflush(stdout);
    }
    if (saveFailed) {
        finish(1);
        co_return;
    }
    if (!options.screenshot.isEmpty() && !saved) {
        // Let the view settle (layout, scroll to the end) before grabbing.
        co_await QCoro::sleepFor(std::chrono::milliseconds(options.screenshotDelayMs));
        if (!save(window)) {
            finish(1);
            co_return;
        }
    }
    std::printf("reply: %.1f tokens/s\n", controller->tokensPerSecond());
    if (const double ratio = batchCostRatio(batches); ratio > 0)
        std::printf("batch_cost_ratio: %.2f\n", ratio);
    if (newChatStallMs >= 0)
        std::printf("gui_new_chat_stall_ms: %lld\n", static_cast<long long>(newChatStallMs));
    std::printf("gui_max_stall_ms: %lld\n", static_cast<long long>(meter.maxGapMs()));
    std::fflush(stdout);
    if (options.quitAfterReply && options.keysAfterReply.isEmpty() && !options.prompt.isEmpty()) {
        // Leaving the conversation just streamed, then coming back to it, as a
        // user switching chats does: the worst gap of each, with 150 ms for
        // the view to settle (the reopened one at its end).
        const qint64 id = controller->currentConversationId();
        meter.start();
        controller->newConversation();
        co_await QCoro::sleepFor(std::chrono::milliseconds(150));
        const qint64 leaveMs = meter.maxGapMs();
        meter.start();
        controller->openConversation(id);
        if (controller->messages()->rowCount() == 0)
            co_await qCoro(controller->messages(), &MessageListModel::countChanged,
                           std::chrono::seconds(5));
        co_await QCoro::sleepFor(std::chrono::milliseconds(150));
        meter.stop();
        std::printf("gui_leave_chat_stall_ms: %lld\ngui_open_chat_stall_ms: %lld\n",
                    static_cast<long long>(leaveMs), static_cast<long long>(meter.maxGapMs()));
        std::fflush(stdout);
    }
    if (!options.keysAfterReply.isEmpty()) {
        // Through the window's own key handling, as a user's keyboard would:
        // the shortcut has to quit the app (saving what the history holds).
        const QKeySequence keys(options.keysAfterReply);
        if (keys.isEmpty() || !window) {
            printFailure(
                QStringLiteral("cannot type %1 into the window").arg(options.keysAfterReply));
            finish(1);
            co_return;
        }
        window->requestActivate();
        for (int i = 0; i < keys.count(); ++i) {
            const QKeyCombination k = keys[i];
            QKeyEvent press(QEvent::KeyPress, k.key(), k.keyboardModifiers());
            QKeyEvent release(QEvent::KeyRelease, k.key(), k.keyboardModifiers());
            QCoreApplication::sendEvent(window, &press);
            QCoreApplication::sendEvent(window, &release);
        }
        std::printf("keys typed: %s\n", qPrintable(keys.toString()));
        std::fflush(stdout);
        co_await QCoro::sleepFor(std::chrono::seconds(5));
        printFailure(QStringLiteral("%1 did not quit the app").arg(options.keysAfterReply));
        finish(5);
        co_return;
    }
    if (options.quitAfterReply) finish(0);
}

}  // namespace powerinfer::app
