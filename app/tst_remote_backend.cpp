// The remote backend against our own powerinfer-server on 127.0.0.1 with the
// default model: the model list, a streamed reply, Stop mid-reply, the
// server killed mid-reply, a wrong API key, the engine thread's
// RemoteEngine, the chat controller (the reply stored in SQLite, the key
// never in the settings) and the headless --remote mode.
#include <qcoro/qcorotask.h>

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "chat_controller.h"
#include "remote_chat_client.h"
#include "remote_engine.h"

using namespace powerinfer::app;

namespace {

// One powerinfer-server on a free port; stopped (or killed) with the object.
struct Server {
    QProcess process;
    QString url;
    bool start(const QStringList& extra = {}) {
        const QString model = qEnvironmentVariable("POWERINFER_MODEL");
        process.setProcessChannelMode(QProcess::SeparateChannels);
        process.start(SERVER_EXE,
                      QStringList{"--model", model, "--port", "0", "--ctx", "1024"} + extra);
        if (!process.waitForStarted(10000)) return false;
        QByteArray err;
        const QRegularExpression re("on (http://127\\.0\\.0\\.1:\\d+/v1)");
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 60000) {
            process.waitForReadyRead(200);
            err += process.readAllStandardError();
            const auto m = re.match(QString::fromUtf8(err));
            if (m.hasMatch()) {
                url = m.captured(1);
                return true;
            }
            if (process.state() == QProcess::NotRunning) break;
        }
        qWarning("server did not start: %s", err.constData());
        return false;
    }
    ~Server() {
        if (process.state() != QProcess::NotRunning) {
            process.kill();
            process.waitForFinished(5000);
        }
    }
};

template <typename T>
T await(QFuture<T> future) {
    future.waitForFinished();
    return future.result();
}

template <typename T>
T run(QCoro::Task<T> task) {
    return QCoro::waitFor(std::move(task));
}

RemoteChatRequest hello(int maxTokens) {
    RemoteChatRequest r;
    r.maxTokens = maxTokens;
    r.temperature = 0;
    r.messages = {{QStringLiteral("user"), QStringLiteral("Tell me a long story about a cat.")}};
    return r;
}

}  // namespace

class TestRemoteBackend : public QObject {
    Q_OBJECT
    Server server_;

private slots:
    void initTestCase() {
        if (qEnvironmentVariable("POWERINFER_MODEL").isEmpty())
            QSKIP("POWERINFER_MODEL is not set (scripts/test sets it)");
        QVERIFY(server_.start());
    }

    void listsTheServersModels() {
        RemoteChatClient client;
        client.setBaseUrl(QUrl(server_.url));
        QString error;
        const QStringList models = run(client.listModels(&error));
        QVERIFY2(models.contains("SmolLM2-135M-Instruct.Q4_1"), qPrintable(error));
    }

    void streamsAReply() {
        RemoteChatClient client;
        client.setBaseUrl(QUrl(server_.url + "/"));  // a trailing slash is fine
        QStringList pieces;
        const RemoteReply r = run(client.chat(hello(24), [&](const QString& p) { pieces << p; }));
        QVERIFY2(r.ok, qPrintable(r.error));
        QVERIFY(!r.stopped);
        QVERIFY2(pieces.size() > 1, "the reply came in one piece: not streamed");
        QCOMPARE(pieces.join(QString()), r.text);
        QCOMPARE(r.finishReason, QStringLiteral("length"));
        QCOMPARE(r.completionTokens, 24);
        QVERIFY(r.tokensPerSecond > 0);
    }

    void stopEndsTheReplyAndKeepsThePartialText() {
        RemoteChatClient client;
        client.setBaseUrl(QUrl(server_.url));
        int pieces = 0;
        const RemoteReply r = run(client.chat(hello(400), [&](const QString&) {
            if (++pieces == 3) client.stop();
        }));
        QVERIFY2(r.ok && r.stopped, qPrintable(r.error));
        QVERIFY(!r.text.isEmpty());
        QVERIFY2(r.chunks < 100, qPrintable(QString::number(r.chunks)));
        // The server is still there for the next request.
        QString error;
        QVERIFY2(!run(client.listModels(&error)).isEmpty(), qPrintable(error));
    }

    void aServerKilledMidReplyIsAnErrorWithThePartialText() {
        Server doomed;
        QVERIFY(doomed.start());
        RemoteChatClient client;
        client.setBaseUrl(QUrl(doomed.url));
        int pieces = 0;
        const RemoteReply r = run(client.chat(hello(400), [&](const QString&) {
            if (++pieces == 3) doomed.process.kill();
        }));
        QVERIFY(!r.ok);
        QVERIFY2(r.error.contains("was lost mid-reply"), qPrintable(r.error));
        QVERIFY(!r.text.isEmpty());
    }

    void aWrongApiKeyIsRefusedWithTheServersMessage() {
        Server locked;
        QVERIFY(locked.start({"--api-key", "right-key"}));
        RemoteChatClient client;
        client.setBaseUrl(QUrl(locked.url));
        client.setApiKey("wrong-key");
        QString error;
        QVERIFY(run(client.listModels(&error)).isEmpty());
        QVERIFY2(error.contains("HTTP 401") && error.contains("Check the API key"),
                 qPrintable(error));
        client.setApiKey("right-key");
        QVERIFY2(!run(client.listModels(&error)).isEmpty(), qPrintable(error));
    }

    void anUnreachableServerSaysSo() {
        RemoteChatClient client;
        client.setBaseUrl(QUrl("http://127.0.0.1:1/v1"));
        QString error;
        QVERIFY(run(client.listModels(&error)).isEmpty());
        QVERIFY2(error.startsWith("Cannot reach 127.0.0.1:1"), qPrintable(error));
    }

    // The chat as the window runs it: the controller, SQLite, the engine
    // thread with RemoteEngine; streamed pieces, Stop, the stored reply.
    void theChatRunsThroughTheServer() {
        QTemporaryDir dir;
        auto credentials = std::make_shared<RemoteCredentials>();
        ChatStore store(dir.filePath("conversations.sqlite"));
        EngineClient engine([credentials](const powerinfer::LoadOptions& o) {
            return std::unique_ptr<powerinfer::Engine>(
                RemoteEngine::connect(o, credentials->apiKey()));
        });
        AppSettings settings;
        ModelCatalog models(nullptr);
        ChatController controller(&store, &engine, &models, &settings);
        controller.setRemoteCredentials(credentials);
        QVERIFY(run(controller.initialize()).isEmpty());
        const QString key = "secret-key-for-the-test";
        QVERIFY2(
            run(controller.connectRemoteServer(server_.url, "SmolLM2-135M-Instruct.Q4_1", key)),
            qPrintable(controller.remoteStatus() + controller.loadError()));
        QVERIFY(controller.isRemote());
        QVERIFY2(controller.modelName().startsWith("SmolLM2-135M-Instruct.Q4_1 at 127.0.0.1"),
                 qPrintable(controller.modelName()));
        // The key is in the keychain or nowhere, and the UI says which.
        QVERIFY2(controller.keychainStatus().contains("OS keychain"),
                 qPrintable(controller.keychainStatus()));
        qInfo("keychain: %s", qPrintable(controller.keychainStatus()));
        const QHash<QString, QString> stored = await(store.settings());
        for (auto it = stored.begin(); it != stored.end(); ++it)
            QVERIFY2(!it.value().contains(key), qPrintable(it.key()));
        QCOMPARE(stored.value("remote_url"), server_.url);

        settings.setMaxTokens(20);
        settings.setTemperature(0);
        QSignalSpy pieces(&engine, &EngineClient::piecesReady);
        QVERIFY(run(controller.sendMessage("Hello!")));
        QVERIFY(pieces.count() >= 1);
        const QList<MessageRecord> saved =
            await(store.messages(controller.currentConversationId()));
        QCOMPARE(saved.size(), 2);
        QCOMPARE(saved[1].role, QStringLiteral("assistant"));
        QVERIFY(!saved[1].content.isEmpty());

        // Stop mid-reply keeps the partial answer.
        settings.setMaxTokens(400);
        QMetaObject::Connection stopper =
            connect(&engine, &EngineClient::piecesReady, &controller, [&] { controller.stop(); });
        QVERIFY(run(controller.sendMessage("Tell me a long story.")));
        disconnect(stopper);
        const QList<MessageRecord> after =
            await(store.messages(controller.currentConversationId()));
        QCOMPARE(after.size(), 4);
        QVERIFY(!after[3].content.isEmpty());
        QCOMPARE(after[3].state, QStringLiteral("stopped"));
    }

    void headlessRemoteChatPrintsTheReply() {
        QProcess p;
        p.start(DESKTOP_DEMO_EXE,
                {"--remote", server_.url, "--prompt", "Hello", "--max-tokens", "12"});
        QVERIFY(p.waitForFinished(60000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 0, qPrintable(err));
        QVERIFY2(!out.trimmed().isEmpty(), qPrintable(err));
        QVERIFY2(err.contains("finished ("), qPrintable(err));
    }

    void headlessRemoteStop() {
        QProcess p;
        // 50 ms: well inside the reply (the default model tells this story in
        // about 56 tokens, which a fast CPU streams within 300 ms).
        p.start(DESKTOP_DEMO_EXE, {"--remote", server_.url, "--prompt", "Tell me a long story",
                                   "--max-tokens", "2000", "--stop-after-ms", "50"});
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 0, qPrintable(err));
        QVERIFY2(err.contains("stopped:"), qPrintable(err));
    }
};

QTEST_MAIN(TestRemoteBackend)
#include "tst_remote_backend.moc"
