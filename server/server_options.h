// Command line of powerinfer-server, parsed without side effects (no exit(),
// no printing) so that the safety rules are unit-tested.
#pragma once

#include <QHostAddress>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <optional>

#include "api_server.h"
#include "powerinfer/engine.h"

namespace powerinfer::server {

struct ServerOptions {
    powerinfer::LoadOptions load;  // model path, threads, context, device, knobs
    QString host = QStringLiteral("127.0.0.1");
    QHostAddress address = QHostAddress(QHostAddress::LocalHost);
    quint16 port = 8080;
    bool insecure = false;
    // Requests decoded together (continuous batching); 1 = one at a time.
    int concurrency = 1;
    ServerConfig server;  // API key, limits
    bool showVersion = false;
    bool showHelp = false;
};

struct OptionsOutcome {
    std::optional<ServerOptions> options;
    QString error;  // set when options is empty: what is wrong and how to fix it
};

// args include the program name (as QCoreApplication::arguments()). The API
// key may also come from POWERINFER_API_KEY, which keeps it out of `ps`.
OptionsOutcome parseServerOptions(const QStringList& args, const QProcessEnvironment& env);
QString serverUsage();

// Non-empty when listening on `address` would expose the model without a key
// and the user did not say --insecure.
QString exposureError(const QHostAddress& address, const QString& host, bool haveApiKey,
                      bool insecure);

}  // namespace powerinfer::server
