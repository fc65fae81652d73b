// powerinfer-server: serves one local model over an OpenAI-compatible HTTP API
// (see README.md, "Local API server").
#include <QCoreApplication>
#include <QDateTime>
#include <QFileInfo>
#include <QTcpServer>
#include <cstdio>

#include "api_server.h"
#include "engine_thread_backend.h"
#include "powerinfer/model_file.h"
#include "server_options.h"

using namespace powerinfer::server;

namespace {

// The model's header and config, as Engine::load reads them first; "" if
// they are fine.
std::string modelPrecheck(const std::filesystem::path& path) {
    return powerinfer::model_file_problem(path);
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("powerinfer-server"));

    const OptionsOutcome parsed =
        parseServerOptions(app.arguments(), QProcessEnvironment::systemEnvironment());
    if (!parsed.options) {
        std::fprintf(stderr, "powerinfer-server: %s\n", qPrintable(parsed.error));
        return 2;
    }
    ServerOptions options = *parsed.options;
    if (options.showHelp) {
        std::printf("%s", qPrintable(serverUsage()));
        return 0;
    }
    if (options.showVersion) {
        std::printf("powerinfer-server %s\n", powerinfer::version_string().c_str());
        return 0;
    }

    // What can fail before the (long) load fails now: a busy port, a file
    // the engine cannot run (its header is read, not its weights).
    {
        QTcpServer probe;
        if (!probe.listen(options.address, options.port)) {
            std::fprintf(stderr, "powerinfer-server: cannot listen on %s:%u: %s\n",
                         qPrintable(options.address.toString()), unsigned(options.port),
                         qPrintable(probe.errorString()));
            return 1;
        }
    }
    if (const std::string why = modelPrecheck(options.load.model_path); !why.empty()) {
        std::fprintf(stderr, "powerinfer-server: cannot load %s: %s\n",
                     options.load.model_path.string().c_str(), why.c_str());
        return 1;
    }

    int lastDecile = -1;
    options.load.progress = [&lastDecile](float fraction) {
        const int decile = int(fraction * 10);
        if (decile != lastDecile) {
            lastDecile = decile;
            std::fprintf(stderr, "\rloading model: %3d%%", decile * 10);
        }
        return true;
    };
    std::unique_ptr<powerinfer::Engine> engine;
    try {
        engine = powerinfer::Engine::load(options.load);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\npowerinfer-server: cannot load %s: %s\n",
                     options.load.model_path.string().c_str(), e.what());
        return 1;
    }
    std::fprintf(stderr, "\n");

    const QString modelId =
        QFileInfo(QString::fromStdString(options.load.model_path.string())).completeBaseName();
    const powerinfer::ModelInfo info = engine->info();
    EngineThreadBackend backend(std::move(engine), modelId, nullptr, options.concurrency);
    if (!backend.batchingNote().isEmpty())
        std::fprintf(stderr, "powerinfer-server: %s\n", qPrintable(backend.batchingNote()));
    options.server.requestLog = [](const QString& line) {
        std::fprintf(stderr, "%s %s\n",
                     qPrintable(QDateTime::currentDateTime().toString(Qt::ISODate)),
                     qPrintable(line));
    };
    ApiServer server(&backend, options.server);
    int gpuIndex = cudaDeviceIndex(info.device);
    if (gpuIndex < 0) gpuIndex = cudaDeviceIndex(options.load.device);
    server.setGpuUtilization(std::make_unique<GpuUtilization>(gpuIndex));

    QString error;
    const quint16 port = server.start(options.address, options.port, &error);
    if (port == 0) {
        std::fprintf(stderr, "powerinfer-server: %s\n", qPrintable(error));
        return 1;
    }
    const bool v6 = options.address.protocol() == QAbstractSocket::IPv6Protocol;
    std::fprintf(stderr,
                 "powerinfer-server: serving %s (%s, %s; %d request%s at a time) on "
                 "http://%s%s%s:%u/v1%s\n",
                 qPrintable(modelId), info.architecture.c_str(), info.device.c_str(),
                 backend.concurrency(), backend.concurrency() == 1 ? "" : "s", v6 ? "[" : "",
                 qPrintable(options.address.toString()), v6 ? "]" : "", port,
                 options.server.apiKey.isEmpty() ? "" : " (API key required)");
    return app.exec();
}
