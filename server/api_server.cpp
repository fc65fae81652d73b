#include "api_server.h"

#include <qcoro/qcoroasyncgenerator.h>
#include <qcoro/qcorosignal.h>

#include <QDateTime>
#include <QElapsedTimer>
#include <QHttpServerRequest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTcpServer>

namespace powerinfer::server {

namespace {

// Creates each connection's HttpConnection before Qt's HTTP server sees the
// socket (so the guard's slots run first), and refuses connections beyond
// the limit outright instead of letting them pile up.
class GuardedTcpServer final : public QTcpServer {
public:
    GuardedTcpServer(const ServerLimits& limits, HttpConnection::Handler handler,
                     std::shared_ptr<int> connections, QObject* parent)
        : QTcpServer(parent),
          limits_(limits),
          handler_(std::move(handler)),
          connections_(std::move(connections)) {}

protected:
    void incomingConnection(qintptr descriptor) override {
        auto* socket = new QTcpSocket(this);
        if (!socket->setSocketDescriptor(descriptor)) {
            delete socket;
            return;
        }
        if (*connections_ >= limits_.maxConnections) {
            ApiError e;
            e.status = 503;
            e.type = QStringLiteral("server_error");
            e.code = QStringLiteral("too_many_connections");
            e.message = QStringLiteral("The server has too many open connections; retry later.");
            const QByteArray body = QJsonDocument(e.toJson()).toJson(QJsonDocument::Compact);
            socket->write(
                "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                "Connection: close\r\nContent-Length: " +
                QByteArray::number(body.size()) + "\r\n\r\n" + body);
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            socket->disconnectFromHost();
            return;
        }
        ++*connections_;
        auto* connection = new HttpConnection(socket, limits_, handler_);
        connect(connection, &QObject::destroyed, [count = connections_] { --*count; });
        addPendingConnection(socket);
    }

private:
    const ServerLimits limits_;
    HttpConnection::Handler handler_;
    std::shared_ptr<int> connections_;
};

bool constantTimeEquals(const QByteArray& a, const QByteArray& b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

QString randomId(const char* prefix) {
    QString id = QLatin1String(prefix);
    for (int i = 0; i < 3; ++i)
        id +=
            QString::number(QRandomGenerator::global()->generate64(), 16).rightJustified(16, u'0');
    return id;
}

QByteArray sseEvent(const QJsonObject& o) {
    return "data: " + QJsonDocument(o).toJson(QJsonDocument::Compact) + "\n\n";
}

ApiError serverError(int status, const QString& message, const QString& code) {
    ApiError e;
    e.status = status;
    e.message = message;
    e.type = QStringLiteral("server_error");
    e.code = code;
    return e;
}

}  // namespace

ApiServer::ApiServer(CompletionBackend* backend, ServerConfig config, QObject* parent)
    : QAbstractHttpServer(parent),
      backend_(backend),
      config_(std::move(config)),
      startedAt_(QDateTime::currentSecsSinceEpoch()) {}

ApiServer::~ApiServer() {
    // Close connections while the sockets are whole: a socket torn down as a
    // child would report its disconnect from inside its own destructor.
    for (QTcpSocket* socket : findChildren<QTcpSocket*>()) socket->abort();
}

quint16 ApiServer::start(const QHostAddress& address, quint16 port, QString* error) {
    QPointer<ApiServer> self(this);
    auto handler = [self](HttpConnection* connection, const HttpRequest& request) {
        if (!self) return;
        if (self->config_.requestLog && !connection->property("pi_logged").toBool()) {
            connection->setProperty("pi_logged", true);
            connect(connection, &HttpConnection::exchangeFinished, self,
                    [log = self->config_.requestLog](const QString& method, const QString& path,
                                                     int status, qint64 ms, const QString& note) {
                        log(QStringLiteral("%1 %2 %3 %4 ms%5")
                                .arg(method, path)
                                .arg(status)
                                .arg(ms)
                                .arg(note.isEmpty() ? QString() : QLatin1Char(' ') + note));
                    });
        }
        self->dispatch(connection, request);
    };
    auto* tcp = new GuardedTcpServer(config_.limits, handler, connections_, this);
    if (!tcp->listen(address, port)) {
        if (error)
            *error = QStringLiteral("cannot listen on %1:%2: %3")
                         .arg(address.toString())
                         .arg(port)
                         .arg(tcp->errorString());
        delete tcp;
        return 0;
    }
    bind(tcp);
    return tcp->serverPort();
}

bool ApiServer::handleRequest(const QHttpServerRequest& request, QTcpSocket* socket) {
    HttpConnection* connection = HttpConnection::of(socket);
    if (!connection) return false;  // not one of our listeners: missingHandler answers
    HttpRequest r;
    r.method = request.method();
    r.path = request.url().path();
    r.body = request.body();
    r.authorization = request.value("authorization");
    r.closeAfter = request.value("connection").toLower().contains("close");
    connection->enqueue(std::move(r));
    return true;
}

void ApiServer::missingHandler(const QHttpServerRequest&, QTcpSocket* socket) {
    // Only reachable for sockets bound by someone else's QTcpServer.
    socket->disconnectFromHost();
}

bool ApiServer::authorized(const HttpRequest& request) const {
    if (config_.apiKey.isEmpty()) return true;
    const QByteArray expected = "Bearer " + config_.apiKey.toUtf8();
    return constantTimeEquals(request.authorization.trimmed(), expected);
}

void ApiServer::sendJson(HttpConnection* connection, const QJsonObject& body, int status) {
    connection->respond(status, "application/json",
                        QJsonDocument(body).toJson(QJsonDocument::Compact));
}

void ApiServer::sendError(HttpConnection* connection, const ApiError& error,
                          const HeaderList& extra) {
    connection->respond(error.status, "application/json",
                        QJsonDocument(error.toJson()).toJson(QJsonDocument::Compact), extra);
}

bool ApiServer::knowsModel(const QString& name) const {
    return name == backend_->modelId() || backend_->modelAliases().contains(name);
}

QJsonObject ApiServer::modelObject() const {
    const auto info = backend_->modelInfo();
    QJsonObject meta;
    meta.insert(QLatin1String("architecture"), QString::fromStdString(info.architecture));
    meta.insert(QLatin1String("quant"), QString::fromStdString(info.quant));
    meta.insert(QLatin1String("n_params"), double(info.n_params));
    meta.insert(QLatin1String("n_ctx"), info.n_ctx);
    meta.insert(QLatin1String("device"), QString::fromStdString(info.device));
    meta.insert(QLatin1String("sparse_status"), QString::fromStdString(info.sparse_status));
    QJsonObject o;
    o.insert(QLatin1String("id"), backend_->modelId());
    o.insert(QLatin1String("object"), QStringLiteral("model"));
    o.insert(QLatin1String("created"), startedAt_);
    o.insert(QLatin1String("owned_by"), QStringLiteral("powerinfer"));
    o.insert(QLatin1String("meta"), meta);
    return o;
}

void ApiServer::dispatch(HttpConnection* connection, const HttpRequest& request) {
    using M = QHttpServerRequest::Method;
    const QString& path = request.path;
    if (!backend_) {
        return sendError(connection, serverError(503, QStringLiteral("No model is being served."),
                                                 QStringLiteral("no_model")));
    }
    const bool isChat = path == QLatin1String("/v1/chat/completions");
    const bool isCompletion = path == QLatin1String("/v1/completions");
    const bool isModels =
        path == QLatin1String("/v1/models") || path.startsWith(QLatin1String("/v1/models/"));
    const bool isMetrics = path == QLatin1String("/metrics");
    const bool isHealth = path == QLatin1String("/health");
    if (!(isChat || isCompletion || isModels || isMetrics || isHealth)) {
        ApiError e;
        e.status = 404;
        e.message = QStringLiteral(
                        "Unknown route %1 %2. Routes: POST /v1/chat/completions, POST "
                        "/v1/completions, GET /v1/models, GET /health, GET /metrics.")
                        .arg(methodName(request.method), path);
        e.code = QStringLiteral("unknown_route");
        return sendError(connection, e);
    }
    const bool inference = isChat || isCompletion;

    if (!isHealth && !authorized(request)) {
        if (inference) metrics_.countRequest(path, 401);
        ApiError e;
        e.status = 401;
        e.message = request.authorization.isEmpty()
                        ? QStringLiteral(
                              "You didn't provide an API key. Send it as "
                              "'Authorization: Bearer KEY'.")
                        : QStringLiteral("Incorrect API key provided.");
        e.code = QStringLiteral("invalid_api_key");
        return sendError(connection, e, {{"WWW-Authenticate", "Bearer"}});
    }

    const M expected = inference ? M::Post : M::Get;
    if (request.method != expected) {
        if (inference) metrics_.countRequest(path, 405);
        ApiError e;
        e.status = 405;
        e.message = QStringLiteral("%1 is not allowed on %2; use %3.")
                        .arg(methodName(request.method), path, methodName(expected));
        e.code = QStringLiteral("method_not_allowed");
        return sendError(connection, e, {{"Allow", methodName(expected).toLatin1()}});
    }

    if (isHealth) {
        const BackendStatus s = backend_->status();
        QJsonObject o;
        o.insert(QLatin1String("status"), QStringLiteral("ok"));
        o.insert(QLatin1String("model"), backend_->modelId());
        o.insert(QLatin1String("queued"), s.queued);
        o.insert(QLatin1String("running"), s.running);
        return sendJson(connection, o);
    }
    if (isMetrics) {
        ServerMetrics::Scrape scrape;
        scrape.backend = backend_->status();
        scrape.modelId = backend_->modelId();
        scrape.model = backend_->modelInfo();
        if (gpu_) scrape.gpuUtilizationPercent = gpu_->percent();
        return connection->respond(200, "text/plain; version=0.0.4; charset=utf-8",
                                   metrics_.render(scrape));
    }
    if (isModels) {
        if (path == QLatin1String("/v1/models")) {
            QJsonObject o;
            o.insert(QLatin1String("object"), QStringLiteral("list"));
            o.insert(QLatin1String("data"), QJsonArray{modelObject()});
            return sendJson(connection, o);
        }
        const QString id = path.mid(int(qstrlen("/v1/models/")));
        if (knowsModel(id)) return sendJson(connection, modelObject());
        ApiError e;
        e.status = 404;
        e.message = QStringLiteral("The model '%1' does not exist; this server serves '%2'.")
                        .arg(id, backend_->modelId());
        e.param = QStringLiteral("model");
        e.code = QStringLiteral("model_not_found");
        return sendError(connection, e);
    }
    handleCompletion(connection, request,
                     isChat ? Endpoint::ChatCompletions : Endpoint::Completions);
}

void ApiServer::handleCompletion(HttpConnection* connection, const HttpRequest& request,
                                 Endpoint endpoint) {
    const QString path = request.path;
    auto fail = [&](const ApiError& e) {
        metrics_.countRequest(path, e.status);
        sendError(connection, e);
    };
    if (request.body.size() > config_.limits.maxBodyBytes) {
        ApiError e;
        e.status = 413;
        e.message = QStringLiteral("The request body exceeds the limit of %1 bytes.")
                        .arg(config_.limits.maxBodyBytes);
        e.code = QStringLiteral("request_too_large");
        return fail(e);
    }
    ParseLimits limits = config_.parse;
    const int nCtx = backend_->modelInfo().n_ctx;
    if (nCtx > 0) limits.maxTokensCap = nCtx;
    ParseOutcome parsed = parseCompletionRequest(endpoint, request.body, limits);
    if (!parsed.call) return fail(parsed.error);
    if (!parsed.call->model.isEmpty() && !knowsModel(parsed.call->model)) {
        ApiError e;
        e.status = 404;
        e.message = QStringLiteral("The model '%1' does not exist; this server serves '%2'.")
                        .arg(parsed.call->model, backend_->modelId());
        e.param = QStringLiteral("model");
        e.code = QStringLiteral("model_not_found");
        return fail(e);
    }
    if (const QString why = backend_->requestProblem(parsed.call->request); !why.isEmpty()) {
        ApiError e;
        e.message = why;
        e.param = parsed.call->request.constraint && parsed.call->parseToolCalls
                      ? QStringLiteral("tools")
                      : QStringLiteral("response_format");
        e.code = QStringLiteral("unsupported_schema");
        return fail(e);
    }
    if (backend_->status().queued >= config_.maxQueuedRequests) {
        ApiError e;
        e.status = 429;
        e.type = QStringLiteral("server_busy");
        e.message = QStringLiteral("%1 requests are already waiting for the model; retry later.")
                        .arg(config_.maxQueuedRequests);
        e.code = QStringLiteral("queue_full");
        return fail(e);
    }
    runCompletion(QPointer<HttpConnection>(connection), std::move(*parsed.call), path);
}

QCoro::Task<> ApiServer::runCompletion(QPointer<HttpConnection> connection, CompletionCall call,
                                       QString endpointPath) {
    QPointer<ApiServer> self(this);
    QElapsedTimer clock;
    clock.start();
    const bool chat = call.endpoint == Endpoint::ChatCompletions;
    const ResponseIdentity who{randomId(chat ? "chatcmpl-" : "cmpl-"),
                               QDateTime::currentSecsSinceEpoch(), backend_->modelId()};

    CompletionJob* job = backend_->submit(call.request);
    const QPointer<CompletionJob> jobGuard(job);
    connection->setActiveJob(job);
    // Listen before anything can be delivered (events are queued to this thread).
    auto events = qCoroSignalListener(job, &CompletionJob::event);

    // With tools offered, a tool call's text is never streamed as content:
    // its tag holds the stream like a stop string, and the calls go out as
    // tool_calls deltas at the end.
    std::vector<std::string> holdAt = call.request.stop;
    if (call.parseToolCalls) holdAt.push_back(kToolCallOpen);
    StopStringHoldback holdback(holdAt);
    if (call.stream) {
        connection->beginStream("text/event-stream");
        if (chat) {
            QJsonObject delta{{QLatin1String("role"), QStringLiteral("assistant")},
                              {QLatin1String("content"), QString()}};
            connection->writeChunk(sseEvent(streamChunk(call.endpoint, who, delta, {})));
        }
    }

    JobEvent terminal;
    bool haveTerminal = false;
    QCORO_FOREACH(const JobEvent& event, events) {
        if (event.kind != JobEvent::Kind::Piece) {
            terminal = event;
            haveTerminal = true;
            break;
        }
        if (!call.stream || !connection || connection->isGone()) continue;
        const std::string text = holdback.push(event.piece);
        if (text.empty()) continue;
        const QJsonObject delta{{QLatin1String("content"), QString::fromStdString(text)}};
        connection->writeChunk(sseEvent(streamChunk(call.endpoint, who, delta, {})));
    }
    if (jobGuard) jobGuard->deleteLater();  // its terminal event has been delivered
    if (!self) co_return;
    if (!haveTerminal) {  // the job vanished without a terminal event: a backend bug
        terminal.kind = JobEvent::Kind::Failed;
        terminal.httpStatus = 500;
        terminal.error = QStringLiteral("the engine dropped the request");
    }

    const bool clientGone = !connection || connection->isGone();
    int status = 200;
    if (terminal.kind == JobEvent::Kind::Finished) {
        metrics_.addTokens(terminal.result.prompt_tokens, terminal.result.generated_tokens);
        if (connection)
            connection->setExchangeNote(QStringLiteral("%1+%2 tokens")
                                            .arg(terminal.result.prompt_tokens)
                                            .arg(terminal.result.generated_tokens));
        if (clientGone) status = 499;
    } else {
        status = clientGone ? 499 : terminal.httpStatus;
    }
    metrics_.countRequest(endpointPath, status);
    metrics_.observeDuration(double(clock.nsecsElapsed()) / 1e9);
    if (clientGone) co_return;

    if (terminal.kind == JobEvent::Kind::Failed) {
        ApiError e;
        e.status = terminal.httpStatus;
        e.message = terminal.error;
        if (e.status >= 500) {
            e.type = QStringLiteral("server_error");
            e.code = QStringLiteral("engine_error");
        } else {
            e.code = QStringLiteral("invalid_request");
        }
        if (!terminal.code.isEmpty()) e.code = terminal.code;
        if (!call.stream) co_return sendError(connection, e);
        connection->writeChunk(sseEvent(e.toJson()));
        connection->writeChunk("data: [DONE]\n\n");
        connection->endStream();
        co_return;
    }

    const auto& result = terminal.result;
    ToolCallReply tools;
    if (call.parseToolCalls)
        tools =
            parseToolCalls(result.text, call.toolNames,
                           QStringLiteral("call_%1_").arg(who.id.mid(int(qstrlen("chatcmpl-")))));
    if (!call.stream)
        co_return sendJson(connection, completionResponse(call.endpoint, who, result, &tools));

    if (!tools.calls.isEmpty()) {
        // The text before the calls, then each call in one delta (id, name
        // and the whole arguments: clients concatenate argument pieces).
        const QString sent = QString::fromStdString(holdback.released());
        if (tools.content.size() > sent.trimmed().size() &&
            tools.content.startsWith(sent.trimmed())) {
            const QJsonObject delta{
                {QLatin1String("content"), tools.content.mid(sent.trimmed().size())}};
            connection->writeChunk(sseEvent(streamChunk(call.endpoint, who, delta, {})));
        }
        for (qsizetype i = 0; i < tools.calls.size(); ++i) {
            QJsonObject c = tools.calls[i].toObject();
            c.insert(QLatin1String("index"), int(i));
            const QJsonObject delta{{QLatin1String("tool_calls"), QJsonArray{c}}};
            connection->writeChunk(sseEvent(streamChunk(call.endpoint, who, delta, {})));
        }
        connection->writeChunk(
            sseEvent(streamChunk(call.endpoint, who, QJsonObject(), QStringLiteral("tool_calls"))));
        if (call.includeUsage)
            connection->writeChunk(sseEvent(usageChunk(call.endpoint, who, result)));
        connection->writeChunk("data: [DONE]\n\n");
        connection->endStream();
        co_return;
    }
    const std::string rest = holdback.finish(result.text);
    if (!rest.empty()) {
        const QJsonObject delta{{QLatin1String("content"), QString::fromStdString(rest)}};
        connection->writeChunk(sseEvent(streamChunk(call.endpoint, who, delta, {})));
    }
    connection->writeChunk(
        sseEvent(streamChunk(call.endpoint, who, QJsonObject(), finishReasonName(result.finish))));
    if (call.includeUsage) connection->writeChunk(sseEvent(usageChunk(call.endpoint, who, result)));
    connection->writeChunk("data: [DONE]\n\n");
    connection->endStream();
}

}  // namespace powerinfer::server
