// A client of an OpenAI-compatible chat server (vLLM, a llama.cpp server,
// Ollama, or our own powerinfer-server on another machine): the model list
// from /v1/models and streamed chat completions (server-sent events) with
// Stop. GUI thread (or any thread with an event loop); no engine involved.
#pragma once

#include <qcoro/qcorotask.h>

#include <QNetworkAccessManager>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QUrl>
#include <functional>

class QNetworkReply;

namespace powerinfer::app {

struct RemoteMessage {
    QString role;  // "system", "user", "assistant"
    QString content;
};

struct RemoteChatRequest {
    QList<RemoteMessage> messages;
    QString model;
    int maxTokens = 512;
    double temperature = 0.7;
    double topP = 0.95;
};

struct RemoteReply {
    bool ok = false;       // finished (or stopped) without an error
    bool stopped = false;  // stop() ended it; text holds the partial reply
    QString error;         // what went wrong, for the chat
    QString text;
    QString finishReason;                          // "stop", "length", … ("" when stopped or cut)
    int chunks = 0;                                // content deltas received
    int promptTokens = -1, completionTokens = -1;  // from usage, when sent
    double tokensPerSecond = 0;  // completion tokens (or deltas) over the streaming time
};

class RemoteChatClient : public QObject {
    Q_OBJECT
public:
    explicit RemoteChatClient(QObject* parent = nullptr);

    // The server's root or its …/v1 address; a trailing slash is fine.
    void setBaseUrl(const QUrl& url);
    QUrl baseUrl() const { return base_; }
    void setApiKey(const QString& key) { apiKey_ = key; }
    // No answer for this long fails the request.
    void setTimeoutMs(int ms) { timeoutMs_ = ms; }

    // Why this URL cannot be used ("" when it can).
    static QString urlProblem(const QUrl& url);

    // The ids of /v1/models; empty with *error set on failure.
    QCoro::Task<QStringList> listModels(QString* error);
    // Streams one reply; onDelta gets each piece of text as it arrives.
    QCoro::Task<RemoteReply> chat(RemoteChatRequest request,
                                  std::function<void(const QString&)> onDelta);
    // Ends the reply in flight (the partial text is kept).
    void stop();
    bool busy() const { return !reply_.isNull(); }

private:
    QUrl endpoint(const QString& path) const;
    QNetworkRequest request(const QUrl& url) const;

    QNetworkAccessManager network_;
    QUrl base_;
    QString apiKey_;
    int timeoutMs_ = 60000;
    QPointer<QNetworkReply> reply_;
    bool stopRequested_ = false;
};

// The error message of an HTTP failure with an OpenAI-style body
// ({"error":{"message":…}}) or any other body.
QString remoteErrorMessage(int status, const QByteArray& body, const QUrl& url);

}  // namespace powerinfer::app
