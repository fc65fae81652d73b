// The local API server's CompletionBackend over the app's EngineClient, so the
// "Local API server" switch serves the model the app already has loaded. GUI
// thread only. API requests never interrupt the user's chat: one API job is on
// the engine at a time, and the next starts only once no generation (chat or
// API) is in flight, so a reply the user starts meanwhile goes first.
#pragma once

#include <QPointer>
#include <QTimer>
#include <deque>

#include "completion_backend.h"
#include "engine_worker.h"

namespace powerinfer::app {

class AppCompletionBackend final : public powerinfer::server::CompletionBackend {
    Q_OBJECT
public:
    explicit AppCompletionBackend(EngineClient* engine, QObject* parent = nullptr);
    // Cancels the running job and ends every job with a terminal event.
    ~AppCompletionBackend() override;

    // The loaded file's name without ".gguf" (empty while none is loaded).
    QString modelId() const override;
    QStringList modelAliases() const override;
    powerinfer::ModelInfo modelInfo() const override { return info_; }
    powerinfer::server::CompletionJob* submit(const powerinfer::GenerateRequest& request) override;
    powerinfer::server::BackendStatus status() const override;

private:
    struct Pending {
        QPointer<powerinfer::server::CompletionJob> job;
        powerinfer::GenerateRequest request;
    };
    struct Running {
        quint64 id = 0;
        QPointer<powerinfer::server::CompletionJob> job;
        CancelFlag cancel;
    };

    void startNext();
    void finishRunning(const GenerationOutcome& outcome);

    QPointer<EngineClient> engine_;
    QString modelPath_;
    powerinfer::ModelInfo info_;
    std::optional<powerinfer::MemoryReport> memory_;
    TokenSamples lastToken_;  // the latest batch (its last sample is the last token)
    std::deque<Pending> queue_;
    std::optional<Running> running_;
    // The HTTP layer cancels a job by flipping its flag; this carries it to
    // the engine's flag while the job runs.
    QTimer cancelPoll_;
};

}  // namespace powerinfer::app
