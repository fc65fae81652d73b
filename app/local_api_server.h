// The "Local API server" switch: follows AppSettings (apiServerEnabled,
// apiServerPort) and runs the OpenAI-compatible ApiServer over the app's
// engine, bound to 127.0.0.1 only; with AppSettings::apiServerKey set,
// clients must send it ("Authorization: Bearer KEY"), so that other local
// users' programs cannot use the model. GUI thread only.
#pragma once

#include <qqmlintegration.h>

#include <QObject>
#include <QPointer>
#include <memory>

#include "app_completion_backend.h"
#include "app_settings.h"

namespace powerinfer::server {
class ApiServer;
}

namespace powerinfer::app {

class LocalApiServer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(bool running READ running NOTIFY stateChanged)
    // The bound port (0 while stopped).
    Q_PROPERTY(int port READ port NOTIFY stateChanged)
    // http://127.0.0.1:PORT/v1 while running.
    Q_PROPERTY(QString url READ url NOTIFY stateChanged)
    // Why it could not start (e.g. the port is in use); empty otherwise.
    Q_PROPERTY(QString error READ error NOTIFY stateChanged)
public:
    LocalApiServer(EngineClient* engine, AppSettings* settings, QObject* parent = nullptr);
    ~LocalApiServer() override;

    bool running() const { return server_ != nullptr; }
    int port() const { return port_; }
    QString url() const;
    QString error() const { return error_; }

signals:
    void stateChanged();

private:
    // Starts, stops or restarts to match the settings.
    void sync();
    void stop();

    QPointer<AppSettings> settings_;
    AppCompletionBackend backend_;
    std::unique_ptr<powerinfer::server::ApiServer> server_;
    int port_ = 0;
    // What the last start attempt asked for: a failed start is retried only
    // when the switch or the port changes, not on every settings change.
    bool attempted_ = false;
    int attemptedPort_ = -1;
    QString attemptedKey_;
    QString error_;
};

}  // namespace powerinfer::app
