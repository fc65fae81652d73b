// The OpenAI-compatible HTTP API over a CompletionBackend:
//   POST /v1/chat/completions, POST /v1/completions (JSON or server-sent events)
//   GET /v1/models, GET /v1/models/{id}, GET /health, GET /metrics (Prometheus)
// Qt HTTP Server parses requests; HttpConnection guards each connection and
// writes the responses. Everything runs on the thread that owns the server;
// generation happens wherever the backend puts it.
#pragma once

#include <qcoro/qcorotask.h>

#include <QAbstractHttpServer>
#include <QHostAddress>
#include <QPointer>
#include <functional>
#include <memory>

#include "completion_backend.h"
#include "gpu_utilization.h"
#include "http_connection.h"
#include "openai_protocol.h"
#include "prometheus_metrics.h"

namespace powerinfer::server {

struct ServerConfig {
    QString apiKey;  // empty: no authentication
    ServerLimits limits;
    ParseLimits parse;
    int maxQueuedRequests = 64;  // beyond this, 429
    // One line per request ("POST /v1/chat/completions 200 812 ms 12+40
    // tokens"); null: no log.
    std::function<void(const QString&)> requestLog;
};

class ApiServer final : public QAbstractHttpServer {
    Q_OBJECT
public:
    ApiServer(CompletionBackend* backend, ServerConfig config, QObject* parent = nullptr);
    ~ApiServer() override;

    // Starts listening; returns the bound port (useful with port 0), or 0 with
    // a message in *error.
    quint16 start(const QHostAddress& address, quint16 port, QString* error);

    // Optional: where /metrics reads GPU utilization from.
    void setGpuUtilization(std::unique_ptr<GpuUtilization> gpu) { gpu_ = std::move(gpu); }

    int openConnections() const { return *connections_; }

protected:
    bool handleRequest(const QHttpServerRequest& request, QTcpSocket* socket) override;
    void missingHandler(const QHttpServerRequest& request, QTcpSocket* socket) override;

private:
    void dispatch(HttpConnection* connection, const HttpRequest& request);
    bool authorized(const HttpRequest& request) const;
    void sendError(HttpConnection* connection, const ApiError& error, const HeaderList& extra = {});
    void sendJson(HttpConnection* connection, const QJsonObject& body, int status = 200);
    void handleCompletion(HttpConnection* connection, const HttpRequest& request,
                          Endpoint endpoint);
    QCoro::Task<> runCompletion(QPointer<HttpConnection> connection, CompletionCall call,
                                QString endpointPath);
    bool knowsModel(const QString& name) const;
    QJsonObject modelObject() const;

    QPointer<CompletionBackend> backend_;
    const ServerConfig config_;
    ServerMetrics metrics_;
    std::unique_ptr<GpuUtilization> gpu_;
    std::shared_ptr<int> connections_ = std::make_shared<int>(0);
    const qint64 startedAt_;
};

}  // namespace powerinfer::server
