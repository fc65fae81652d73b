#include "headless_modes.h"

#include <qcoro/qcorofuture.h>
#include <qcoro/qcorosignal.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>
#include <cstdio>

#include "app_settings.h"
#include "chat_store.h"
#include "model_downloader.h"
#include "remote_chat_client.h"

namespace powerinfer::app {

namespace {

void printErr(const QString& text) {
    std::fprintf(stderr, "%s\n", qPrintable(text));
    std::fflush(stderr);
}

// The models folder the app would use with this data folder: the stored
// setting, else the default ($POWERINFER_MODEL_DIR, ~/.cache/powerinfer/models).
QCoro::Task<QString> storedModelsFolder(QString dataDir, QString* error) {
    ChatStore store(QDir(dataDir).filePath(QStringLiteral("conversations.sqlite")));
    const QString openError = co_await store.open();
    if (!openError.isEmpty()) {
        *error = openError;
        co_return QString();
    }
    AppSettings settings;
    settings.restore(co_await store.settings());
    co_return settings.modelsFolder();
}

}  // namespace

QCoro::Task<int> runHeadlessDownload(HeadlessDownload request) {
    QString folder = request.modelsDir;
    if (folder.isEmpty()) {
        QString error;
        folder = co_await storedModelsFolder(request.dataDir, &error);
        if (folder.isEmpty()) {
            printErr(QStringLiteral("powerinfer-desktop: %1").arg(error));
            co_return 1;
        }
    }
    ModelDownloads downloads;
    downloads.setFolder(folder);
    const int row = downloads.enqueueUrl(request.url, request.sha256);
    if (row < 0) {
        printErr(QStringLiteral("powerinfer-desktop: %1").arg(downloads.lastError()));
        co_return 1;
    }
    const QString fileName =
        downloads.data(downloads.index(row), ModelDownloads::FileNameRole).toString();
    printErr(QStringLiteral("downloading %1 into %2").arg(fileName, folder));
    QElapsedTimer sincePrint;
    sincePrint.start();
    QString lastNote;
    // The row stays (one download); its file name can change when it is verified.
    const auto report = [&](int r) {
        if (r != row) return;
        const QModelIndex i = downloads.index(r);
        const QString note = downloads.noteAt(r);
        if (!note.isEmpty() && note != lastNote) {
            lastNote = note;
            printErr(note);
        }
        if (sincePrint.elapsed() < 1000) return;
        sincePrint.restart();
        const double p = i.data(ModelDownloads::ProgressRole).toDouble();
        QString line =
            QStringLiteral("%1: %2").arg(i.data(ModelDownloads::StateTextRole).toString(),
                                         i.data(ModelDownloads::ReceivedTextRole).toString());
        if (p >= 0) line += QStringLiteral(" (%1 %)").arg(int(p * 100));
        for (int role : {ModelDownloads::SpeedTextRole, ModelDownloads::EtaTextRole}) {
            const QString extra = i.data(role).toString();
            if (!extra.isEmpty()) line += QStringLiteral(", ") + extra;
        }
        printErr(line);
    };
    QObject::connect(&downloads, &ModelDownloads::progressed, &downloads, report);
    for (;;) {
        const int r = row < downloads.rowCount() ? row : -1;
        const ModelDownloads::State state = downloads.stateAt(r);
        if (state == ModelDownloads::State::Done) {
            if (downloads.noteAt(r) != lastNote) printErr(downloads.noteAt(r));
            std::printf("verified: %s\n", qPrintable(downloads.pathAt(r)));
            std::fflush(stdout);
            co_return 0;
        }
        if (state == ModelDownloads::State::Failed || r < 0) {
            printErr(QStringLiteral("powerinfer-desktop: %1").arg(downloads.errorAt(r)));
            co_return 1;
        }
        co_await qCoro(&downloads, &ModelDownloads::ended);
    }
}

QCoro::Task<int> runHeadlessRemote(HeadlessRemote request) {
    const QUrl url = QUrl::fromUserInput(request.url);
    if (const QString problem = RemoteChatClient::urlProblem(url); !problem.isEmpty()) {
        printErr(QStringLiteral("powerinfer-desktop: %1").arg(problem));
        co_return 1;
    }
    if (request.prompt.isEmpty()) {
        printErr(QStringLiteral("powerinfer-desktop: --remote needs --prompt TEXT"));
        co_return 1;
    }
    RemoteChatClient client;
    client.setBaseUrl(url);
    client.setApiKey(request.apiKey);
    QString model = request.model;
    if (model.isEmpty()) {
        QString error;
        const QStringList models = co_await client.listModels(&error);
        if (models.isEmpty()) {
            printErr(QStringLiteral("powerinfer-desktop: %1").arg(error));
            co_return 1;
        }
        model = models.constFirst();
    }
    printErr(
        QStringLiteral("remote model: %1 at %2").arg(model, client.baseUrl().toDisplayString()));
    RemoteChatRequest chat;
    chat.model = model;
    chat.maxTokens = request.maxTokens;
    chat.messages = {{QStringLiteral("user"), request.prompt}};
    QTimer stopTimer;
    stopTimer.setSingleShot(true);
    if (request.stopAfterMs >= 0) {
        QObject::connect(&stopTimer, &QTimer::timeout, &client, [&client] { client.stop(); });
        stopTimer.start(request.stopAfterMs);
    }
    const RemoteReply reply = co_await client.chat(chat, [](const QString& piece) {
        std::fputs(piece.toUtf8().constData(), stdout);
        std::fflush(stdout);
    });
    std::printf("\n");
    std::fflush(stdout);
    if (!reply.ok) {
        printErr(QStringLiteral("powerinfer-desktop: %1").arg(reply.error));
        co_return 1;
    }
    printErr(QStringLiteral("%1: %2 chunks, %3 tokens/s")
                 .arg(reply.stopped ? QStringLiteral("stopped")
                                    : QStringLiteral("finished (%1)").arg(reply.finishReason))
                 .arg(reply.chunks)
                 .arg(reply.tokensPerSecond, 0, 'f', 1));
    co_return 0;
}

}  // namespace powerinfer::app
