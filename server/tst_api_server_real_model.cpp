// The HTTP API over the real engine and the default model: a chat turn, the
// same turn streamed, and a small concurrent load (numbers printed for the
// record). Skips without POWERINFER_MODEL.
#include <QProcess>
#include <QTcpServer>
#include <QTemporaryDir>

#include "server_test_support.h"

using namespace powerinfer::server;
using namespace powerinfer::server::testing;

class TestApiServerRealModel : public QObject {
    Q_OBJECT
private slots:
    // Issue 17: a busy port or a file the engine cannot run was reported only
    // after the model had loaded.
    void theExecutableChecksThePortAndTheFileBeforeLoading() {
        const QByteArray modelPath = qgetenv("POWERINFER_MODEL");
        if (modelPath.isEmpty())
            QSKIP("POWERINFER_MODEL is not set (scripts/test sets it to the default model)");
        QTcpServer busy;
        QVERIFY(busy.listen(QHostAddress::LocalHost, 0));
        const auto runServer = [](const QStringList& args) {
            QProcess p;
            p.start(SERVER_EXE, args);
            p.waitForFinished(60000);
            return std::pair{p.exitCode(), QString::fromUtf8(p.readAllStandardError())};
        };
        auto [code, err] = runServer({"-m", QString::fromLocal8Bit(modelPath), "--port",
                                      QString::number(busy.serverPort())});
        QCOMPARE(code, 1);
        QVERIFY2(err.contains("cannot listen") && !err.contains("loading model"), qPrintable(err));
        QTemporaryDir dir;
        QFile junk(dir.filePath("junk.gguf"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write(QByteArray(4096, 'x'));
        junk.close();
        std::tie(code, err) = runServer({"-m", junk.fileName(), "--port", "0"});
        QCOMPARE(code, 1);
        QVERIFY2(err.contains("cannot load") && !err.contains("loading model"), qPrintable(err));
    }

    void servesTheRealModel() {
        const QByteArray modelPath = qgetenv("POWERINFER_MODEL");
        if (modelPath.isEmpty())
            QSKIP("POWERINFER_MODEL is not set (scripts/test sets it to the default model)");
        powerinfer::LoadOptions options;
        options.model_path = modelPath.toStdString();
        options.n_ctx = 1024;
        Harness h(powerinfer::Engine::load(options), testConfig(), QStringLiteral("real"));
        QNetworkAccessManager nam;
        const QByteArray body =
            R"({"model":"real","messages":[{"role":"user","content":"What is the capital of France?"}],"max_tokens":16,"temperature":0})";
        Response r =
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", body, {}, 120000);
        QCOMPARE(r.status, 200);
        verifyChatCompletion(r.json(), QStringLiteral("real"));
        const QString content = r.chatContent();
        QVERIFY(!content.trimmed().isEmpty());
        r = call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST",
                 QByteArray(body).replace("\"temperature\":0", "\"temperature\":0,\"stream\":true"),
                 {}, 120000);
        const SseStream s = parseSse(r.body);
        QVERIFY(s.wellFormed && s.done);
        QCOMPARE(s.text(), content);  // greedy: the same text streamed
        const LoadStats load = runLoad(h, 4, 5, 8, QStringLiteral("real"));
        qInfo(
            "real model, 4 clients x 5 requests (max_tokens 8): %d ok, %.2f req/s, p50 %.0f ms, "
            "p95 %.0f ms",
            load.ok, load.ok / load.seconds, load.percentile(0.5), load.percentile(0.95));
        QCOMPARE(load.ok, 20);
        const Response m = call(nam, h.url(QStringLiteral("/metrics")), "GET");
        QVERIFY(metricValue(m.body, QStringLiteral("powerinfer_tokens_generated_total")) >= 16);
        QVERIFY(m.body.contains("powerinfer_memory_usage_bytes{"));
    }
};

QTEST_GUILESS_MAIN(TestApiServerRealModel)
#include "tst_api_server_real_model.moc"
