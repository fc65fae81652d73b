// The engine thread. One EngineWorker lives on one QThread and owns the
// Engine; commands (load, unload, generate, tune) are queued invocations, so
// the thread's event queue is the command queue and commands never overlap.
// EngineClient is its GUI-thread face: it posts commands, relays results as
// GUI-thread signals and exposes coroutine-friendly calls. Cancellation does
// not go through the (busy) queue: it sets an atomic flag the engine polls.
#pragma once

#include <qcoro/qcorotask.h>

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "powerinfer/engine.h"

namespace powerinfer::app {

using EngineFactory =
    std::function<std::unique_ptr<powerinfer::Engine>(const powerinfer::LoadOptions&)>;
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

struct LoadOutcome {
    bool ok = false;
    bool cancelled = false;
    QString error;
    powerinfer::ModelInfo info;
    QString deviceName;  // MemoryReport::device_name
};

// An immutable snapshot of everything one generation needs, taken on the GUI
// thread when the user sends; the engine thread never reads live settings.
struct GenerationJob {
    std::vector<powerinfer::ChatMessage> messages;
    int maxTokens = 512;
    powerinfer::SamplingParams sampling;
};

// A batch of streamed text (several tokens coalesced) with running stats.
struct StreamChunk {
    QString text;
    int tokens = 0;              // tokens in this batch
    int totalTokens = 0;         // tokens so far in this reply
    double tokensPerSecond = 0;  // decode speed so far
};

struct GenerationOutcome {
    bool ok = false;
    QString error;
    QString text;
    powerinfer::FinishReason finish = powerinfer::FinishReason::Error;
    int promptTokens = 0;
    int generatedTokens = 0;
    double tokensPerSecond = 0;
    double sparsity = -1;  // mean over tokens; -1 when the engine reported none
    double hitRate = -1;
    QString notice;
};

class EngineWorker : public QObject {
    Q_OBJECT
public:
    EngineWorker(EngineFactory factory, std::chrono::milliseconds batchInterval);
    ~EngineWorker() override;

    // Run on the worker thread only (posted by EngineClient).
    void load(quint64 id, powerinfer::LoadOptions options, CancelFlag cancel);
    void unload();
    void generate(quint64 id, GenerationJob job, CancelFlag cancel);
    void setTuning(powerinfer::Tuning tuning);
    void reset();

signals:
    void loadProgress(quint64 id, double fraction);
    void loadFinished(quint64 id, powerinfer::app::LoadOutcome outcome);
    void piecesReady(quint64 id, powerinfer::app::StreamChunk chunk);
    void generationFinished(quint64 id, powerinfer::app::GenerationOutcome outcome);

private:
    EngineFactory factory_;
    std::chrono::milliseconds batchInterval_;
    std::unique_ptr<powerinfer::Engine> engine_;
};

class EngineClient : public QObject {
    Q_OBJECT
public:
    // batchInterval: how often streamed text reaches the GUI (25 ms = 40 Hz).
    explicit EngineClient(EngineFactory factory, QObject* parent = nullptr,
                          std::chrono::milliseconds batchInterval = std::chrono::milliseconds(25));
    ~EngineClient() override;

    // Resolves when the model is loaded, failed or was cancelled.
    QCoro::Task<LoadOutcome> load(powerinfer::LoadOptions options);
    // Resolves when the reply is complete; text arrives earlier via piecesReady.
    QCoro::Task<GenerationOutcome> generate(GenerationJob job);
    void unload();
    void setTuning(const powerinfer::Tuning& tuning);
    // Drops the KV cache (next generation starts fresh).
    void reset();

    // Thread-safe and immediate: they flip the flag the engine polls.
    void cancelLoad();
    void cancelGeneration();

    bool isLoaded() const { return loaded_; }

signals:
    void loadProgress(double fraction);
    void piecesReady(const powerinfer::app::StreamChunk& chunk);

    // Relays of the worker's results on the GUI thread (awaited internally).
    void loadFinished(quint64 id, const powerinfer::app::LoadOutcome& outcome);
    void generationFinished(quint64 id, const powerinfer::app::GenerationOutcome& outcome);

private:
    QThread thread_;
    QPointer<EngineWorker> worker_;
    quint64 nextId_ = 0;
    quint64 currentLoad_ = 0;
    quint64 currentGeneration_ = 0;
    CancelFlag loadCancel_;
    CancelFlag generationCancel_;
    bool loaded_ = false;
};

}  // namespace powerinfer::app

Q_DECLARE_METATYPE(powerinfer::app::LoadOutcome)
Q_DECLARE_METATYPE(powerinfer::app::StreamChunk)
Q_DECLARE_METATYPE(powerinfer::app::GenerationOutcome)
