// The seam between the HTTP API and whatever runs the model. The server
// executable implements it with its own engine thread (EngineThreadBackend);
// the desktop app can implement it over its EngineWorker so that its "Local
// API server" switch serves the model the app already has loaded.
//
// Contract: submit() is called on the HTTP layer's thread and returns a job
// that lives on that thread. Every job emits zero or more Piece events and then
// exactly one terminal event (Finished or Failed), also for jobs that were
// cancelled while still queued. The HTTP layer deletes a job only after its
// terminal event, so a backend may post to a job until then from any thread;
// posting the terminal event is the backend's last use of the job (it may be
// deleted as soon as that event is delivered).
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <optional>
#include <string>

#include "powerinfer/engine.h"

namespace powerinfer::server {

struct JobEvent {
    enum class Kind { Piece, Finished, Failed };
    Kind kind = Kind::Piece;
    std::string piece;                  // Piece: complete UTF-8 text
    powerinfer::GenerateResult result;  // Finished
    int httpStatus = 500;               // Failed: 400 for a request the engine rejected
    QString error;                      // Failed: message for the client
    // Failed: OpenAI's error code; empty = "invalid_request" for a 4xx,
    // "engine_error" for a 5xx. "context_length_exceeded" for a prompt that
    // does not fit the context.
    QString code;
};

// Whether a request the engine refused was refused for its length: its
// prompt has at least n_ctx tokens. (The facade's EngineError carries no
// kind, so the backends count the prompt themselves.)
bool promptExceedsContext(const powerinfer::Engine& engine,
                          const powerinfer::GenerateRequest& request);
inline const QString kContextLengthExceeded = QStringLiteral("context_length_exceeded");

class CompletionJob : public QObject {
    Q_OBJECT
public:
    explicit CompletionJob(QObject* parent = nullptr) : QObject(parent) {}

    // Thread-safe: the backend polls the flag between tokens.
    void cancel() { cancelled_.store(true); }
    bool isCancelled() const { return cancelled_.load(); }
    const std::atomic<bool>* cancelFlag() const { return &cancelled_; }

    // Thread-safe: queues the event for delivery on the job's thread.
    void post(JobEvent event);

signals:
    void event(const powerinfer::server::JobEvent& event);

private:
    std::atomic<bool> cancelled_{false};
};

// What /metrics and /health report about the backend. Values are snapshots,
// cheap to take from the HTTP thread (the engine thread publishes them).
struct BackendStatus {
    int queued = 0;   // accepted, not started
    int running = 0;  // generating now (0 or 1 for one engine)
    std::optional<powerinfer::MemoryReport> memory;
    std::optional<powerinfer::TokenMetrics> lastToken;  // last generated token's sample
};

class CompletionBackend : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    // The model this backend serves: its id in /v1/models and the names a
    // request's "model" field may use.
    virtual QString modelId() const = 0;
    virtual QStringList modelAliases() const { return {}; }
    virtual powerinfer::ModelInfo modelInfo() const = 0;

    // Why the engine would refuse this request before generating (an
    // unsupported JSON schema, say); empty if it would not. Called on the
    // HTTP thread before anything is sent, so the client gets a plain 400.
    virtual QString requestProblem(const powerinfer::GenerateRequest& request) const {
        Q_UNUSED(request);
        return {};
    }

    // Queues a generation. Never returns null.
    virtual CompletionJob* submit(const powerinfer::GenerateRequest& request) = 0;
    virtual BackendStatus status() const = 0;
};

}  // namespace powerinfer::server

Q_DECLARE_METATYPE(powerinfer::server::JobEvent)
