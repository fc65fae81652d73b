// The OpenAI wire format: validating request bodies into a GenerateRequest,
// and building response, chunk and error objects. Pure functions (no I/O), so
// each rule is unit-tested without a socket.
#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>
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
    // Tools were offered (tool_choice not "none"): the reply's <tool_call>
    // blocks become tool_calls. The names are those of the tools offered.
    bool parseToolCalls = false;
    QStringList toolNames;
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

// The tag a tool call starts with in the model's reply (both tool formats,
// powerinfer::ModelInfo::tool_call_format, ask the model for it).
inline constexpr const char* kToolCallOpen = "<tool_call>";

// A reply split into its text and its tool calls: each
// <tool_call>{"name": ..., "arguments": {...}}</tool_call> block naming one of
// `toolNames` becomes {"id", "type": "function", "function": {"name",
// "arguments": JSON text}}; ids are idPrefix + index. A block that is not
// such JSON leaves the whole reply as text (no calls).
struct ToolCallReply {
    QString content;  // the text before the first call (trimmed), or the whole reply
    QJsonArray calls;
};
ToolCallReply parseToolCalls(const std::string& text, const QStringList& toolNames,
                             const QString& idPrefix);

struct ResponseIdentity {
    QString id;  // "chatcmpl-..." or "cmpl-..."
    qint64 created = 0;
    QString model;
};

QJsonObject usageJson(const powerinfer::GenerateResult& result);
// With `tools` holding calls, the message carries tool_calls (content null
// when there is no text) and finish_reason is "tool_calls".
QJsonObject completionResponse(Endpoint endpoint, const ResponseIdentity& who,
                               const powerinfer::GenerateResult& result,
                               const ToolCallReply* tools = nullptr);
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
