// The OpenAI wire format: validating request bodies into a GenerateRequest,
// and building response, chunk and error objects. Pure functions (no I/O), so
// each rule is unit-tested without a socket.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::server {

// {"error":{"message","type","param","code"}} with its HTTP status.
struct ApiError {
    int status = 400;
    QString message;
    QString type = QStringLiteral("invalid_request_error");
    QString param;  // empty: null
    QString code;   // empty: null

    QJsonObject toJson() const;
};

enum class Endpoint { ChatCompletions, Completions };

struct CompletionCall {
    Endpoint endpoint = Endpoint::ChatCompletions;
    QString model;  // as requested; empty when the client sent none
    powerinfer::GenerateRequest request;
    bool stream = false;
    bool includeUsage = false;  // stream_options.include_usage
};

struct ParseLimits {
    int defaultMaxTokens = 512;
    int maxTokensCap = 1 << 20;  // the context length in practice
    int maxMessages = 4096;
    int maxStops = 4;
};

struct ParseOutcome {
    std::optional<CompletionCall> call;
    ApiError error;  // meaningful when !call
};

ParseOutcome parseCompletionRequest(Endpoint endpoint, const QByteArray& body,
                                    const ParseLimits& limits);

QString finishReasonName(powerinfer::FinishReason reason);

struct ResponseIdentity {
    QString id;  // "chatcmpl-..." or "cmpl-..."
    qint64 created = 0;
    QString model;
};

QJsonObject usageJson(const powerinfer::GenerateResult& result);
QJsonObject completionResponse(Endpoint endpoint, const ResponseIdentity& who,
                               const powerinfer::GenerateResult& result);
// One streamed chunk. For chat, `delta` is the delta object; for completions
// its "content" becomes "text". finishReason empty: null.
QJsonObject streamChunk(Endpoint endpoint, const ResponseIdentity& who, const QJsonObject& delta,
                        const QString& finishReason);
// The last chunk when stream_options.include_usage is set: no choices.
QJsonObject usageChunk(Endpoint endpoint, const ResponseIdentity& who,
                       const powerinfer::GenerateResult& result);

// Streams must not show text that a stop string later cuts off: this holds
// back any tail that could still grow into a stop string, and at the end
// releases whatever the engine's final text adds to what was sent.
class StopStringHoldback {
public:
    explicit StopStringHoldback(std::vector<std::string> stops);
    // Returns the newly releasable text (possibly empty).
    std::string push(const std::string& piece);
    // Returns what finalText adds to what was already released.
    std::string finish(const std::string& finalText);
    const std::string& released() const { return released_; }

private:
    std::vector<std::string> stops_;
    std::string pending_;   // received, not yet released
    std::string released_;  // sent to the client
    bool stopped_ = false;  // a stop string appeared: release nothing more
};

}  // namespace powerinfer::server
