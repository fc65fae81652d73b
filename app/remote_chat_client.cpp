#include "remote_chat_client.h"

#include <qcoro/qcoronetworkreply.h>
#include <qcoro/qcorotimer.h>

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>

namespace powerinfer::app {

QString remoteErrorMessage(int status, const QByteArray& body, const QUrl& url) {
    const QJsonObject error = QJsonDocument::fromJson(body).object().value("error").toObject();
    QString detail = error.value("message").toString();
    if (detail.isEmpty()) detail = QString::fromUtf8(body.left(300)).trimmed();
    QString hint;
    if (status == 401 || status == 403)
        hint = QObject::tr(" Check the API key in the remote server settings.");
    else if (status == 404)
        hint = QObject::tr(" Check the server address and the model id.");
    return QObject::tr("The server %1 answered HTTP %2: %3%4")
        .arg(url.authority())
        .arg(status)
        .arg(detail.isEmpty() ? QObject::tr("(no message)") : detail, hint);
}

RemoteChatClient::RemoteChatClient(QObject* parent) : QObject(parent) {}

QString RemoteChatClient::urlProblem(const QUrl& url) {
    if (!url.isValid() || url.host().isEmpty() ||
        (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")))
        return tr("Enter the server's address, e.g. http://192.168.1.20:8080/v1.");
    return {};
}

void RemoteChatClient::setBaseUrl(const QUrl& url) {
    QUrl u = url;
    QString path = u.path();
    while (path.endsWith(QLatin1Char('/'))) path.chop(1);
    if (path.endsWith(QLatin1String("/v1"))) path.chop(3);
    u.setPath(path);
    base_ = u;
}

QUrl RemoteChatClient::endpoint(const QString& path) const {
    QUrl u = base_;
    u.setPath(base_.path() + path);
    return u;
}

QNetworkRequest RemoteChatClient::request(const QUrl& url) const {
    QNetworkRequest r(url);
    r.setTransferTimeout(timeoutMs_);
    r.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    if (!apiKey_.isEmpty()) r.setRawHeader("Authorization", "Bearer " + apiKey_.toUtf8());
    return r;
}

QCoro::Task<QStringList> RemoteChatClient::listModels(QString* error) {
    QPointer<RemoteChatClient> self(this);
    const QUrl url = endpoint(QStringLiteral("/v1/models"));
    QNetworkReply* reply = network_.get(request(url));
    co_await reply;
    co_await QCoro::sleepFor(std::chrono::milliseconds(0));  // as in chat()
    reply->deleteLater();
    if (!self) co_return {};
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray body = reply->readAll();
    if (status == 0) {
        *error = tr("Cannot reach %1: %2").arg(url.authority(), reply->errorString());
        co_return {};
    }
    if (status != 200) {
        *error = remoteErrorMessage(status, body, url);
        co_return {};
    }
    QStringList ids;
    for (const QJsonValue& v : QJsonDocument::fromJson(body).object().value("data").toArray())
        ids << v.toObject().value("id").toString();
    ids.removeAll(QString());
    if (ids.isEmpty()) *error = tr("%1 lists no models at /v1/models.").arg(url.authority());
    co_return ids;
}

void RemoteChatClient::stop() {
    stopRequested_ = true;
    // Queued: stop() may be called from onDelta, inside the reply's signal.
    if (reply_) QMetaObject::invokeMethod(reply_, &QNetworkReply::abort, Qt::QueuedConnection);
}

QCoro::Task<RemoteReply> RemoteChatClient::chat(RemoteChatRequest chatRequest,
                                                std::function<void(const QString&)> onDelta) {
    QPointer<RemoteChatClient> self(this);
    RemoteReply out;
    QJsonArray messages;
    for (const RemoteMessage& m : chatRequest.messages)
        messages.append(QJsonObject{{"role", m.role}, {"content", m.content}});
    QJsonObject body{{"messages", messages},
                     {"stream", true},
                     {"stream_options", QJsonObject{{"include_usage", true}}},
                     {"max_tokens", chatRequest.maxTokens},
                     {"temperature", chatRequest.temperature},
                     {"top_p", chatRequest.topP}};
    if (!chatRequest.model.isEmpty()) body.insert("model", chatRequest.model);
    const QUrl url = endpoint(QStringLiteral("/v1/chat/completions"));
    stopRequested_ = false;
    QNetworkReply* reply =
        network_.post(request(url), QJsonDocument(body).toJson(QJsonDocument::Compact));
    reply_ = reply;
    QByteArray buffer, errorBody;
    bool done = false;
    QElapsedTimer clock;
    // Server-sent events: "data: {json}" blocks separated by a blank line.
    const auto consume = [&] {
        for (;;) {
            int end = buffer.indexOf("\n\n");
            int sep = 2;
            if (const int crlf = buffer.indexOf("\r\n\r\n"); crlf >= 0 && (end < 0 || crlf < end)) {
                end = crlf;
                sep = 4;
            }
            if (end < 0) return;
            const QByteArray event = buffer.left(end);
            buffer.remove(0, end + sep);
            for (QByteArray line : event.split('\n')) {
                line = line.trimmed();
                if (!line.startsWith("data:")) continue;
                const QByteArray data = line.mid(5).trimmed();
                if (data == "[DONE]") {
                    done = true;
                    continue;
                }
                const QJsonObject o = QJsonDocument::fromJson(data).object();
                if (o.contains("error")) {
                    out.error = remoteErrorMessage(200, data, url);
                    continue;
                }
                if (const QJsonObject usage = o.value("usage").toObject(); !usage.isEmpty()) {
                    out.promptTokens = usage.value("prompt_tokens").toInt(-1);
                    out.completionTokens = usage.value("completion_tokens").toInt(-1);
                }
                for (const QJsonValue& c : o.value("choices").toArray()) {
                    const QJsonObject choice = c.toObject();
                    const QString piece =
                        choice.value("delta").toObject().value("content").toString();
                    if (!piece.isEmpty()) {
                        if (out.chunks == 0) clock.start();
                        ++out.chunks;
                        out.text += piece;
                        if (onDelta) onDelta(piece);
                    }
                    if (const QString f = choice.value("finish_reason").toString(); !f.isEmpty())
                        out.finishReason = f;
                }
            }
        }
    };
    connect(reply, &QNetworkReply::readyRead, this, [&, reply] {
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (status >= 400) {
            errorBody += reply->readAll();
            return;
        }
        buffer += reply->readAll();
        consume();
    });
    co_await reply;
    // Resumed from inside the reply's finished signal (an abort emits it
    // synchronously): leave that call first, since the caller may delete this
    // client, and with it the reply, as soon as the reply is handed back.
    co_await QCoro::sleepFor(std::chrono::milliseconds(0));
    if (!self) co_return out;
    disconnect(reply, nullptr, this, nullptr);
    reply->deleteLater();
    reply_ = nullptr;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray rest = reply->isOpen() ? reply->readAll() : QByteArray();
    if (status >= 400) {
        out.error = remoteErrorMessage(status, errorBody + rest, url);
        co_return out;
    }
    buffer += rest;
    buffer += "\n\n";
    consume();
    const double seconds = out.chunks > 1 ? double(clock.elapsed()) / 1000.0 : 0;
    if (seconds > 0)
        out.tokensPerSecond =
            double(out.completionTokens > 0 ? out.completionTokens : out.chunks) / seconds;
    if (stopRequested_) {
        out.ok = true;
        out.stopped = true;
        co_return out;
    }
    if (!out.error.isEmpty()) co_return out;
    if (reply->error() != QNetworkReply::NoError || !done) {
        out.error =
            status == 0 && out.chunks == 0
                ? tr("Cannot reach %1: %2").arg(url.authority(), reply->errorString())
                : tr("The connection to %1 was lost mid-reply (%2); the text received so far "
                     "is kept.")
                      .arg(url.authority(), reply->error() != QNetworkReply::NoError
                                                ? reply->errorString()
                                                : tr("the stream ended without [DONE]"));
        co_return out;
    }
    out.ok = true;
    co_return out;
}

}  // namespace powerinfer::app
