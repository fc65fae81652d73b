// Helpers shared by the HTTP tests: a server on an ephemeral port, a
// blocking HTTP call over QNetworkAccessManager, an SSE parser, raw-socket
// exchanges and a concurrent load generator that checks every answer.
#pragma once

#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <functional>

#include "api_server.h"
#include "engine_thread_backend.h"
#include "scripted_engine.h"

namespace powerinfer::server::testing {

using ::powerinfer::testing::EngineScript;
using ::powerinfer::testing::ScriptedEngine;

struct Response {
    int status = 0;
    QByteArray body;
    QByteArray contentType;
    bool finished = false;
    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
    QJsonObject error() const { return json().value(QLatin1String("error")).toObject(); }
    QJsonObject firstChoice() const {
        return json().value(QLatin1String("choices")).toArray().at(0).toObject();
    }
    // choices[0].message.content of a chat completion.
    QString chatContent() const {
        return firstChoice()
            .value(QLatin1String("message"))
            .toObject()
            .value(QLatin1String("content"))
            .toString();
    }
};

// A server on an ephemeral port over a scripted (or real) engine.
struct Harness {
    std::unique_ptr<EngineThreadBackend> backend;
    std::unique_ptr<ApiServer> server;
    quint16 port = 0;

    Harness(std::unique_ptr<powerinfer::Engine> engine, ServerConfig config,
            QString modelId = QStringLiteral("scripted-model"), int concurrency = 1) {
        backend =
            std::make_unique<EngineThreadBackend>(std::move(engine), modelId, nullptr, concurrency);
        server = std::make_unique<ApiServer>(backend.get(), std::move(config));
        QString error;
        port = server->start(QHostAddress(QHostAddress::LocalHost), 0, &error);
        if (port == 0) qFatal("cannot start the server: %s", qPrintable(error));
    }
    ~Harness() {
        server.reset();
        backend.reset();
    }
    QUrl url(const QString& path) const {
        return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(path));
    }
};

inline std::unique_ptr<ScriptedEngine> scripted(
    std::chrono::milliseconds delay = std::chrono::milliseconds(1)) {
    EngineScript s = EngineScript::words();
    s.tokenDelay = delay;
    return std::make_unique<ScriptedEngine>(s);
}

inline ServerConfig testConfig() {
    ServerConfig c;
    c.limits.requestTimeoutMs = 1000;
    c.limits.idleTimeoutMs = 3000;
    return c;
}

inline QNetworkReply* send(QNetworkAccessManager& nam, const QUrl& url, const QByteArray& method,
                           const QByteArray& body, const QByteArray& apiKey = {}) {
    QNetworkRequest req(url);
    req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
    if (!apiKey.isEmpty()) req.setRawHeader("Authorization", "Bearer " + apiKey);
    return method == "GET" && body.isEmpty() ? nam.get(req)
                                             : nam.sendCustomRequest(req, method, body);
}

inline Response collect(QNetworkReply* reply) {
    Response r;
    r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    r.body = reply->readAll();
    r.contentType = reply->header(QNetworkRequest::ContentTypeHeader).toByteArray();
    r.finished = true;
    reply->deleteLater();
    return r;
}

inline Response call(QNetworkAccessManager& nam, const QUrl& url, const QByteArray& method,
                     const QByteArray& body = {}, const QByteArray& apiKey = {},
                     int timeoutMs = 20000) {
    QNetworkReply* reply = send(nam, url, method, body, apiKey);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    loop.exec();
    if (!reply->isFinished()) {
        reply->abort();
        reply->deleteLater();
        return {};
    }
    return collect(reply);
}

inline QByteArray chatBody(int maxTokens, bool stream = false, const QString& extra = {}) {
    return QStringLiteral(
               R"({"model":"scripted-model","messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":%1,"temperature":0,"stream":%2%3})")
        .arg(maxTokens)
        .arg(stream ? QStringLiteral("true") : QStringLiteral("false"), extra)
        .toUtf8();
}

// The JSON events of an SSE body, and whether it ended with [DONE].
struct SseStream {
    QList<QJsonObject> events;
    bool done = false;
    bool wellFormed = true;
    QString text(const char* field = "content") const {
        QString t;
        for (const auto& e : events) {
            const QJsonObject c = e.value(QLatin1String("choices")).toArray().at(0).toObject();
            t += c.contains(QLatin1String("delta")) ? c.value(QLatin1String("delta"))
                                                          .toObject()
                                                          .value(QLatin1String(field))
                                                          .toString()
                                                    : c.value(QLatin1String("text")).toString();
        }
        return t;
    }
};

inline SseStream parseSse(const QByteArray& body) {
    SseStream s;
    for (const QByteArray& block : body.split('\n')) {
        if (block.isEmpty()) continue;
        if (!block.startsWith("data: ") || s.done) {
            s.wellFormed = false;
            continue;
        }
        const QByteArray payload = block.mid(6);
        if (payload == "[DONE]") {
            s.done = true;
            continue;
        }
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(payload, &err);
        if (err.error != QJsonParseError::NoError || !doc.isObject()) s.wellFormed = false;
        s.events.append(doc.object());
    }
    if (!body.endsWith("\n\n")) s.wellFormed = false;
    return s;
}

// Sends raw bytes; returns what the server sent until it closed or timeoutMs passed.
struct RawResult {
    QByteArray received;
    bool closedByServer = false;
    qint64 elapsedMs = 0;
};
inline RawResult rawExchange(quint16 port, const QByteArray& data, int timeoutMs) {
    RawResult r;
    QTcpSocket socket;
    socket.connectToHost(QHostAddress(QHostAddress::LocalHost), port);
    if (!socket.waitForConnected(3000)) return r;
    QElapsedTimer clock;
    clock.start();
    socket.write(data);
    QEventLoop loop;
    QObject::connect(&socket, &QTcpSocket::readyRead, [&] { r.received += socket.readAll(); });
    QObject::connect(&socket, &QTcpSocket::disconnected, [&] {
        r.closedByServer = true;
        loop.quit();
    });
    QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    if (socket.state() == QAbstractSocket::ConnectedState) loop.exec();
    r.received += socket.readAll();
    r.elapsedMs = clock.elapsed();
    return r;
}

inline int statusOf(const QByteArray& rawResponse) {
    const QList<QByteArray> parts = rawResponse.left(rawResponse.indexOf("\r\n")).split(' ');
    return parts.size() >= 2 ? parts[1].toInt() : 0;
}

inline double metricValue(const QByteArray& text, const QString& series) {
    for (const QByteArray& line : text.split('\n')) {
        const qsizetype space = line.lastIndexOf(' ');
        if (!line.startsWith('#') && space > 0 && QString::fromUtf8(line.left(space)) == series)
            return line.mid(space + 1).toDouble();
    }
    return std::nan("");
}

inline bool waitUntil(const std::function<bool()>& condition, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    while (!condition()) {
        if (clock.elapsed() > timeoutMs) return false;
        QTest::qWait(10);
    }
    return true;
}

inline void verifyChatCompletion(const QJsonObject& o, const QString& model) {
    QVERIFY(o.value(QLatin1String("id")).toString().startsWith(QLatin1String("chatcmpl-")));
    QCOMPARE(o.value(QLatin1String("object")).toString(), QStringLiteral("chat.completion"));
    QCOMPARE(o.value(QLatin1String("model")).toString(), model);
    QVERIFY(qAbs(o.value(QLatin1String("created")).toInteger() -
                 QDateTime::currentSecsSinceEpoch()) < 60);
    const QJsonArray choices = o.value(QLatin1String("choices")).toArray();
    QCOMPARE(choices.size(), 1);
    const QJsonObject c = choices.at(0).toObject();
    QCOMPARE(c.value(QLatin1String("index")).toInt(-1), 0);
    QCOMPARE(c.value(QLatin1String("message")).toObject().value(QLatin1String("role")).toString(),
             QStringLiteral("assistant"));
    QVERIFY(
        c.value(QLatin1String("message")).toObject().value(QLatin1String("content")).isString());
    QVERIFY(c.value(QLatin1String("finish_reason")).isString());
    const QJsonObject u = o.value(QLatin1String("usage")).toObject();
    QVERIFY(u.value(QLatin1String("prompt_tokens")).toInt() > 0);
    QCOMPARE(u.value(QLatin1String("total_tokens")).toInt(),
             u.value(QLatin1String("prompt_tokens")).toInt() +
                 u.value(QLatin1String("completion_tokens")).toInt());
}

struct LoadStats {
    int ok = 0;
    int malformed = 0;
    double seconds = 0;
    std::vector<double> latenciesMs;
    double percentile(double p) const {
        if (latenciesMs.empty()) return 0;
        auto v = latenciesMs;
        std::sort(v.begin(), v.end());
        return v[size_t(
            std::min<double>(double(v.size() - 1), std::ceil(p * double(v.size())) - 1))];
    }
};

// `clients` concurrent clients, each sending `perClient` requests back to
// back (alternating streaming and non-streaming); checks every answer.
inline LoadStats runLoad(const Harness& h, int clients, int perClient, int maxTokens,
                         const QString& model) {
    LoadStats stats;
    std::vector<std::unique_ptr<QNetworkAccessManager>> nams;
    int outstanding = clients * perClient;
    QEventLoop loop;
    QElapsedTimer wall;
    wall.start();
    std::function<void(QNetworkAccessManager*, int)> next = [&](QNetworkAccessManager* nam, int i) {
        const bool stream = i % 2 == 1;
        const QByteArray body =
            QStringLiteral(
                R"({"model":"%1","messages":[{"role":"user","content":"Say something, number %2."}],"max_tokens":%3,"stream":%4})")
                .arg(model)
                .arg(i)
                .arg(maxTokens)
                .arg(stream ? QStringLiteral("true") : QStringLiteral("false"))
                .toUtf8();
        auto started = std::make_shared<QElapsedTimer>();
        started->start();
        QNetworkReply* reply =
            send(*nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", body);
        QObject::connect(reply, &QNetworkReply::finished, [&, nam, i, stream, reply, started] {
            stats.latenciesMs.push_back(double(started->nsecsElapsed()) / 1e6);
            const Response r = collect(reply);
            bool good = r.status == 200;
            if (good && stream) {
                const SseStream s = parseSse(r.body);
                good = s.wellFormed && s.done && s.events.size() >= 2;
            } else if (good) {
                const QJsonObject o = r.json();
                good = o.value(QLatin1String("object")).toString() ==
                           QLatin1String("chat.completion") &&
                       o.value(QLatin1String("usage"))
                               .toObject()
                               .value(QLatin1String("completion_tokens"))
                               .toInt() > 0;
            }
            good ? ++stats.ok : ++stats.malformed;
            if (--outstanding == 0) loop.quit();
            if (i + 1 < perClient) next(nam, i + 1);
        });
    };
    for (int c = 0; c < clients; ++c) {
        nams.push_back(std::make_unique<QNetworkAccessManager>());
        next(nams.back().get(), 0);
    }
    QTimer::singleShot(180000, &loop, &QEventLoop::quit);
    loop.exec();
    stats.seconds = double(wall.nsecsElapsed()) / 1e9;
    return stats;
}

}  // namespace powerinfer::server::testing
