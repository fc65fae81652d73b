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
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "metrics_model.h"
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
    powerinfer::MemoryReport memory;
    powerinfer::Tuning tuning;  // what the engine runs with
    QString modelPath;          // the file that was loaded
    // The new file failed (or its load was cancelled) and the model that was
    // loaded before is loaded again: info, memory, tuning and modelPath
    // describe that one, error says why the new one did not load.
    bool restored = false;
    // Conversations whose KV cache the engine keeps (1: the last one only).
    int conversationContexts = 1;
};

// An immutable snapshot of everything one generation needs, taken on the GUI
// thread when the user sends; the engine thread never reads live settings.
struct GenerationJob {
    std::vector<powerinfer::ChatMessage> messages;
    std::string prompt;  // used as is when messages is empty (API completions)
    int maxTokens = 512;
    powerinfer::SamplingParams sampling;
    std::vector<std::string> stop;  // stop strings (the chat has none)
    // The chat leaves out its oldest turns when the history outgrows the
    // context; API requests get context_length_exceeded instead.
    bool dropOldestToFit = false;
};

// Whether a token went through the sparse path. The dense path reports
// every neuron active and no hits or per-layer arrays.
inline bool isSparseSample(const powerinfer::TokenMetrics& m) {
    return m.ffn_neurons_total > 0 &&
           (m.hot_hits + m.cache_hits + m.cold_misses > 0 || !m.layer_hit_rate.empty());
}

// A batch of streamed text (several tokens coalesced) with running stats.
struct StreamChunk {
    QString text;
    int tokens = 0;       // tokens in this batch
    int totalTokens = 0;  // tokens so far in this reply
    // The prompt's tokens, counted before generating: with totalTokens, the
    // context in use while the reply streams (the outcome has the exact count).
    int promptTokens = 0;
    double tokensPerSecond = 0;  // decode speed so far
    // The batch's per-token engine samples (at most kMaxSamplesPerChunk, the
    // latest; null when none) and the memory report at the time of the
    // batch. Shared and read-only: copying a chunk (the queued signal does)
    // copies no sample.
    TokenSamples samples;
    powerinfer::MemoryReport memory;
};
inline constexpr size_t kMaxSamplesPerChunk = 128;

// Calibration (sidecar creation) is injected like the engine factory, so the
// app library stays engine-free; the real executable wraps
// powerinfer::calibrate::calibrate_model.
struct CalibrationRequest {
    std::filesystem::path model;
    std::filesystem::path corpus;
    double targetSparsity = 0.5;
    int64_t tokens = 20000;
    int threads = 0;
};
// fraction in [0,1], ETA in seconds (-1: unknown), a log line; return false to cancel.
using CalibrationProgress =
    std::function<bool(double fraction, double eta, const std::string& line)>;
// Returns the sidecar written; throws EngineError (LoadCancelled when cancelled).
using Calibrator =
    std::function<std::filesystem::path(const CalibrationRequest&, const CalibrationProgress&)>;

struct CalibrationOutcome {
    bool ok = false;
    bool cancelled = false;
    QString error;
    QString sidecar;
};

// What the placement would be for a tuning, before it is applied.
struct PlacementPreview {
    bool available = false;
    int64_t hotNeurons = 0;
    int64_t totalNeurons = 0;
    int64_t deviceBytes = 0;  // fixed parts + hot neurons
    bool budgetLimited = false;
    QString note;  // how it was computed, or why there is none
};
// Runs on the engine thread with the loaded engine (may be null) and its file.
using PlacementPreviewer = std::function<PlacementPreview(
    const powerinfer::Engine*, const std::filesystem::path& model, const powerinfer::Tuning&)>;

// "Compare with dense": the same prompt, greedy, through both paths.
struct CompareOutcome {
    bool ok = false;
    QString error;
    int tokens = 0;        // compared positions (the longer reply's length)
    double agreement = 0;  // fraction of positions with equal tokens
    int commonPrefix = 0;  // tokens before the first difference
    double denseTokensPerSecond = 0, sparseTokensPerSecond = 0;
    QString denseText, sparseText;
};

struct GenerationOutcome {
    bool ok = false;
    QString error;
    QString text;
    powerinfer::FinishReason finish = powerinfer::FinishReason::Error;
    int promptTokens = 0;
    int generatedTokens = 0;
    double tokensPerSecond = 0;
    double promptTokensPerSecond = 0;
    double sparsity = -1;  // mean over tokens; -1 when the engine reported none
    double hitRate = -1;
    QString notice;
    bool invalidRequest = false;   // the engine rejected the request (EngineError)
    bool contextExceeded = false;  // the prompt alone does not fit the context
    // Chat messages left out (oldest first) so that the rest fits the context.
    int droppedMessages = 0;
};

class EngineWorker : public QObject {
    Q_OBJECT
public:
    EngineWorker(EngineFactory factory, std::chrono::milliseconds batchInterval);
    // Conversations whose KV cache the engine keeps (Engine::set_conversation_contexts):
    // at most this many, in at most this much memory besides the first one's.
    static constexpr int kMaxConversationContexts = 4;
    static constexpr int64_t kConversationContextBytes = int64_t{512} << 20;
    ~EngineWorker() override;

    // Run on the worker thread only (posted by EngineClient).
    void load(quint64 id, powerinfer::LoadOptions options, CancelFlag cancel);
    void unload();
    void generate(quint64 id, GenerationJob job, CancelFlag cancel);
    // Evaluates a chat's messages into its context (Engine::prefill).
    void prefill(GenerationJob job, CancelFlag cancel);
    void setTuning(powerinfer::Tuning tuning);
    void reset();
    void calibrate(quint64 id, CalibrationRequest request, CancelFlag cancel);
    void preview(quint64 id, powerinfer::Tuning tuning);
    void compare(quint64 id, GenerationJob job, CancelFlag cancel);
    void setCalibrator(Calibrator calibrator) { calibrator_ = std::move(calibrator); }
    void setPreviewer(PlacementPreviewer previewer) { previewer_ = std::move(previewer); }

    // Thread-safe: any thread may queue a tuning; the engine thread applies
    // it between tokens of a running generation (or at once when idle).
    void queueTuning(const powerinfer::Tuning& tuning);
    // Thread-safe, like queueTuning: the latest preview request is answered
    // between tokens of a running generation (or by the posted preview()).
    void queuePreview(quint64 id, const powerinfer::Tuning& tuning);
    void runPendingPreview();

signals:
    void loadProgress(quint64 id, double fraction);
    void loadFinished(quint64 id, powerinfer::app::LoadOutcome outcome);
    void piecesReady(quint64 id, const powerinfer::app::StreamChunk& chunk);
    void generationFinished(quint64 id, powerinfer::app::GenerationOutcome outcome);
    void tuningApplied(powerinfer::Tuning tuning, powerinfer::MemoryReport memory);
    void calibrationProgress(quint64 id, double fraction, double eta, QString line);
    void calibrationFinished(quint64 id, powerinfer::app::CalibrationOutcome outcome);
    void previewReady(quint64 id, powerinfer::app::PlacementPreview preview);
    void compareFinished(quint64 id, powerinfer::app::CompareOutcome outcome);

private:
    void applyPendingTuning();

    EngineFactory factory_;
    std::chrono::milliseconds batchInterval_;
    std::unique_ptr<powerinfer::Engine> engine_;
    Calibrator calibrator_;
    PlacementPreviewer previewer_;
    std::filesystem::path modelPath_;
    // What the loaded model was loaded with, to bring it back when another
    // file fails to load.
    std::optional<powerinfer::LoadOptions> loadedOptions_;
    std::mutex tuningMutex_;
    std::optional<powerinfer::Tuning> pendingTuning_;
    std::optional<std::pair<quint64, powerinfer::Tuning>> pendingPreview_;
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
    // A generation for another client (the local API server): it does not
    // become the chat's current generation, its text arrives through
    // generationPieces(id, ...) and its end through generationFinished(id, ...);
    // cancel flips its own flag. Returns the id.
    quint64 submitGeneration(GenerationJob job, CancelFlag cancel);
    // Generations and comparisons posted and not finished yet (chat and API).
    int generationsInFlight() const { return generationsInFlight_; }
    // Evaluates the chat so far (the last reply included) into its context
    // while the user writes, so that the next turn evaluates only its new
    // message (a reply's decoded keys and values are not reused:
    // Engine::prefill). Anything asked of the engine afterwards stops it
    // first; what it evaluated stays cached.
    void prefill(GenerationJob job);
    void unload();
    // Applied between tokens, even while a reply is streaming.
    void setTuning(const powerinfer::Tuning& tuning);
    // Drops the KV cache (next generation starts fresh).
    void reset();
    void setCalibrator(Calibrator calibrator);
    void setPreviewer(PlacementPreviewer previewer);
    // Unloads the model while it runs; the caller reloads it afterwards.
    QCoro::Task<CalibrationOutcome> calibrate(CalibrationRequest request);
    void cancelCalibration();
    // Answers with previewReady(id, ...) (a plain signal: slider drags ask
    // many times, and only the latest answer matters).
    quint64 requestPreview(const powerinfer::Tuning& tuning);
    QCoro::Task<CompareOutcome> compare(GenerationJob job);

    // Thread-safe and immediate: they flip the flag the engine polls.
    void cancelLoad();
    void cancelGeneration();

    bool isLoaded() const { return loaded_; }


signals:
    void loadProgress(double fraction);
    void piecesReady(const powerinfer::app::StreamChunk& chunk);
    // Every generation's streamed text, with its id.
    void generationPieces(quint64 id, const powerinfer::app::StreamChunk& chunk);
    // generationsInFlight() dropped to 0 (after the finished signal's slots ran).
    void generationsIdle();
    void tuningApplied(const powerinfer::Tuning& tuning, const powerinfer::MemoryReport& memory);
    void calibrationProgress(double fraction, double eta, const QString& line);

    // Relays of the worker's results on the GUI thread (awaited internally).
    void loadFinished(quint64 id, const powerinfer::app::LoadOutcome& outcome);
    void generationFinished(quint64 id, const powerinfer::app::GenerationOutcome& outcome);
    void calibrationFinished(quint64 id, const powerinfer::app::CalibrationOutcome& outcome);
    void previewReady(quint64 id, const powerinfer::app::PlacementPreview& preview);
    void compareFinished(quint64 id, const powerinfer::app::CompareOutcome& outcome);

private:
    void stopPrefill();

    QThread thread_;
    QPointer<EngineWorker> worker_;
    quint64 nextId_ = 0;
    quint64 currentLoad_ = 0;
    quint64 currentGeneration_ = 0;
    CancelFlag loadCancel_;
    CancelFlag generationCancel_;
    CancelFlag calibrationCancel_;
    CancelFlag prefillCancel_;
    quint64 currentCalibration_ = 0;
    bool loaded_ = false;
    int generationsInFlight_ = 0;
};

}  // namespace powerinfer::app

Q_DECLARE_METATYPE(powerinfer::app::LoadOutcome)
Q_DECLARE_METATYPE(powerinfer::app::StreamChunk)
Q_DECLARE_METATYPE(powerinfer::app::GenerationOutcome)
Q_DECLARE_METATYPE(powerinfer::app::CalibrationOutcome)
Q_DECLARE_METATYPE(powerinfer::app::PlacementPreview)
Q_DECLARE_METATYPE(powerinfer::app::CompareOutcome)
Q_DECLARE_METATYPE(powerinfer::Tuning)
Q_DECLARE_METATYPE(powerinfer::MemoryReport)
