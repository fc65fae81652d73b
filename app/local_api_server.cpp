#include "local_api_server.h"

#include <QHostAddress>

#include "api_server.h"

namespace powerinfer::app {

LocalApiServer::LocalApiServer(EngineClient* engine, AppSettings* settings, QObject* parent)
    : QObject(parent), settings_(settings), backend_(engine) {
    connect(settings, &AppSettings::changed, this, &LocalApiServer::sync);
    sync();
}

LocalApiServer::~LocalApiServer() { stop(); }

QString LocalApiServer::url() const {
    if (!server_) return {};
    return QStringLiteral("http://127.0.0.1:%1/v1").arg(port_);
}

void LocalApiServer::stop() {
    // Closes the listener and every open connection (their jobs are cancelled).
    server_.reset();
    port_ = 0;
}

void LocalApiServer::sync() {
    if (!settings_) return;
    const bool want = settings_->apiServerEnabled();
    const int wantPort = settings_->apiServerPort();
    const QString wantKey = settings_->apiServerKey();
    if (!want) {
        const bool changed = server_ || !error_.isEmpty();
        stop();
        attempted_ = false;
        attemptedPort_ = -1;
        error_.clear();
        if (changed) emit stateChanged();
        return;
    }
    // Already running (or failed) with these settings.
    if (attempted_ && attemptedPort_ == wantPort && attemptedKey_ == wantKey) return;
    stop();
    attempted_ = true;
    attemptedPort_ = wantPort;
    attemptedKey_ = wantKey;
    powerinfer::server::ServerConfig config;
    config.apiKey = wantKey;
    auto server = std::make_unique<powerinfer::server::ApiServer>(&backend_, config);
    QString why;
    const quint16 bound = server->start(QHostAddress::LocalHost, quint16(wantPort), &why);
    if (bound == 0) {
        error_ = tr("The local API server could not start: %1. Choose another port.").arg(why);
    } else {
        error_.clear();
        server_ = std::move(server);
        port_ = bound;
    }
    emit stateChanged();
}

}  // namespace powerinfer::app
