// The "Local API server" switch end to end: AppSettings -> LocalApiServer ->
// ApiServer -> AppCompletionBackend -> EngineClient -> ScriptedEngine, with real
// HTTP requests to 127.0.0.1.
#include <qcoro/qcorotask.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include "app_settings.h"
#include "engine_worker.h"
#include "scripted_engine.h"
#include "local_api_server.h"

using namespace powerinfer::app;
using powerinfer::testing::EngineScript;
using powerinfer::testing::ScriptedEngine;
using namespace std::chrono_literals;

namespace {

const QString kScripted = QStringLiteral("Hello! How can I help?");

struct Fixture {
    explicit Fixture(EngineScript script = {}, bool load = true)
        : client([this, script](const powerinfer::LoadOptions& o) {
              auto engine = ScriptedEngine::load(o, script);
              fake = engine.get();
              return engine;
          }),
          server(&client, &settings) {
        if (load) {
            powerinfer::LoadOptions o;
            o.model_path = "fake.gguf";
            loaded = QCoro::waitFor(client.load(o)).ok;
        }
        settings.setApiServerPort(0);  // any free port
    }
    QUrl url(const QString& path) const {
        return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(server.port()).arg(path));
    }

    EngineClient client;
    ScriptedEngine* fake = nullptr;  // owned by the engine thread; read after a reply
    bool loaded = false;
    AppSettings settings;
    LocalApiServer server;
};

struct Response {
    int status = 0;
    QByteArray body;
};

QNetworkReply* post(QNetworkAccessManager& nam, const QUrl& url, const QJsonObject& body) {
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
    return nam.post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

Response wait(QNetworkReply* reply) {
    if (!reply->isFinished()) {
        QSignalSpy finished(reply, &QNetworkReply::finished);
        if (!finished.wait(10000)) return {};
    }
    Response r;
    r.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    r.body = reply->readAll();
    reply->deleteLater();
    return r;
}

QJsonObject chatBody(bool stream) {
    return QJsonObject{{"model", "fake"},
                       {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hi"}}}},
                       {"max_tokens", 32},
                       {"stop", QJsonArray{"END"}},
                       {"stream", stream}};
}

QJsonObject getJson(QNetworkAccessManager& nam, const QUrl& url) {
    QNetworkReply* reply = nam.get(QNetworkRequest(url));
    return QJsonDocument::fromJson(wait(reply).body).object();
}

bool portAccepts(quint16 port) {
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    return socket.waitForConnected(2000);
}

}  // namespace

class TestLocalApiServer : public QObject {
    Q_OBJECT
private slots:
    void offByDefault() {
        Fixture f;
        AppSettings defaults;
        QCOMPARE(defaults.apiServerEnabled(), false);
        QCOMPARE(defaults.apiServerPort(), 8080);
        QVERIFY(!f.server.running());
        QCOMPARE(f.server.port(), 0);
        QVERIFY(f.server.url().isEmpty());
    }

    void settingsPersistAndRestore() {
        AppSettings settings;
        QSignalSpy persisted(&settings, &AppSettings::persistRequested);
        settings.setApiServerPort(9123);
        settings.setApiServerEnabled(true);
        QCOMPARE(persisted.count(), 2);
        QCOMPARE(persisted.at(0).at(0).toString(), QStringLiteral("api_server_port"));
        QCOMPARE(persisted.at(0).at(1).toString(), QStringLiteral("9123"));
        QCOMPARE(persisted.at(1).at(0).toString(), QStringLiteral("api_server_enabled"));
        QCOMPARE(persisted.at(1).at(1).toString(), QStringLiteral("true"));

        AppSettings restored;
        restored.restore({{"api_server_port", "9123"}, {"api_server_enabled", "true"}});
        QCOMPARE(restored.apiServerPort(), 9123);
        QVERIFY(restored.apiServerEnabled());
        restored.restore({{"api_server_port", "junk"}});
        QCOMPARE(restored.apiServerPort(), 9123);
    }

    void chatCompletionOverHttp() {
        Fixture f;
        QVERIFY(f.loaded);
        QSignalSpy changed(&f.server, &LocalApiServer::stateChanged);
        f.settings.setApiServerEnabled(true);
        QCOMPARE(changed.count(), 1);
        QVERIFY2(f.server.running(), qPrintable(f.server.error()));
        QVERIFY(f.server.port() > 0);
        QCOMPARE(f.server.url(), QStringLiteral("http://127.0.0.1:%1/v1").arg(f.server.port()));
        QVERIFY(f.server.error().isEmpty());

        QNetworkAccessManager nam;
        const Response r =
            wait(post(nam, f.url(QStringLiteral("/v1/chat/completions")), chatBody(false)));
        QCOMPARE(r.status, 200);
        const QJsonObject o = QJsonDocument::fromJson(r.body).object();
        QCOMPARE(o.value("object").toString(), QStringLiteral("chat.completion"));
        QVERIFY(o.value("id").toString().startsWith(QLatin1String("chatcmpl-")));
        QCOMPARE(o.value("model").toString(), QStringLiteral("fake"));
        const QJsonObject choice = o.value("choices").toArray().at(0).toObject();
        QCOMPARE(choice.value("message").toObject().value("role").toString(),
                 QStringLiteral("assistant"));
        QCOMPARE(choice.value("message").toObject().value("content").toString(), kScripted);
        QCOMPARE(choice.value("finish_reason").toString(), QStringLiteral("stop"));
        QCOMPARE(o.value("usage").toObject().value("completion_tokens").toInt(), 7);

        // The request reached the engine as sent.
        const powerinfer::GenerateRequest& seen = f.fake->lastRequest();
        QCOMPARE(int(seen.messages.size()), 1);
        QCOMPARE(seen.messages[0].content, std::string("hi"));
        QCOMPARE(seen.max_tokens, 32);
        QCOMPARE(seen.stop, std::vector<std::string>{"END"});

        const QJsonObject models = getJson(nam, f.url(QStringLiteral("/v1/models")));
        QCOMPARE(models.value("data").toArray().at(0).toObject().value("id").toString(),
                 QStringLiteral("fake"));
    }

    // Issue 17: the server started from the app had no API-key option.
    void anApiKeyIsRequiredOnceSet() {
        Fixture f;
        QVERIFY(f.loaded);
        f.settings.setApiServerEnabled(true);
        QVERIFY(f.server.running());
        f.settings.setApiServerKey(QStringLiteral("s3cret"));
        QVERIFY2(f.server.running(), qPrintable(f.server.error()));
        QNetworkAccessManager nam;
        const QUrl url = f.url(QStringLiteral("/v1/chat/completions"));
        const Response refused = wait(post(nam, url, chatBody(false)));
        QCOMPARE(refused.status, 401);
        QNetworkRequest request(url);
        request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
        request.setRawHeader("Authorization", "Bearer s3cret");
        const Response ok =
            wait(nam.post(request, QJsonDocument(chatBody(false)).toJson(QJsonDocument::Compact)));
        QCOMPARE(ok.status, 200);
        // Clearing the key opens it again.
        f.settings.setApiServerKey(QString());
        QCOMPARE(
            wait(post(nam, f.url(QStringLiteral("/v1/chat/completions")), chatBody(false))).status,
            200);
    }

    // Issue 17: context overflow answered invalid_request; and the chat's
    // "drop the oldest turns" must not apply to API requests.
    void aPromptLongerThanTheContextIsContextLengthExceeded() {
        Fixture f;
        QVERIFY(f.loaded);
        f.settings.setApiServerEnabled(true);
        QNetworkAccessManager nam;
        const QJsonObject body{
            {"messages",
             QJsonArray{QJsonObject{{"role", "user"}, {"content", QString(1000, QChar('a'))}},
                        QJsonObject{{"role", "assistant"}, {"content", "ok"}},
                        QJsonObject{{"role", "user"}, {"content", QString(1500, QChar('b'))}}}}};
        const Response r = wait(post(nam, f.url(QStringLiteral("/v1/chat/completions")), body));
        QCOMPARE(r.status, 400);
        const QJsonObject e = QJsonDocument::fromJson(r.body).object().value("error").toObject();
        QCOMPARE(e.value("code").toString(), QStringLiteral("context_length_exceeded"));
    }

    void streamedChatEndsWithDone() {
        Fixture f;
        QVERIFY(f.loaded);
        f.settings.setApiServerEnabled(true);
        QVERIFY(f.server.running());
        QNetworkAccessManager nam;
        const Response r =
            wait(post(nam, f.url(QStringLiteral("/v1/chat/completions")), chatBody(true)));
        QCOMPARE(r.status, 200);
        QVERIFY2(r.body.endsWith("data: [DONE]\n\n"), r.body.right(80).constData());
        QString content;
        QString finish;
        for (const QByteArray& event : r.body.split('\n')) {
            if (!event.startsWith("data: {")) continue;
            const QJsonObject o = QJsonDocument::fromJson(event.mid(6)).object();
            QCOMPARE(o.value("object").toString(), QStringLiteral("chat.completion.chunk"));
            const QJsonObject choice = o.value("choices").toArray().at(0).toObject();
            content += choice.value("delta").toObject().value("content").toString();
            if (choice.value("finish_reason").isString())
                finish = choice.value("finish_reason").toString();
        }
        QCOMPARE(content, kScripted);
        QCOMPARE(finish, QStringLiteral("stop"));
    }

    void rawCompletionUsesThePrompt() {
        Fixture f;
        QVERIFY(f.loaded);
        f.settings.setApiServerEnabled(true);
        QNetworkAccessManager nam;
        const Response r = wait(post(nam, f.url(QStringLiteral("/v1/completions")),
                                     QJsonObject{{"prompt", "Once upon"}, {"max_tokens", 3}}));
        QCOMPARE(r.status, 200);
        const QJsonObject o = QJsonDocument::fromJson(r.body).object();
        QCOMPARE(o.value("object").toString(), QStringLiteral("text_completion"));
        const QJsonObject choice = o.value("choices").toArray().at(0).toObject();
        QCOMPARE(choice.value("text").toString(), QStringLiteral("Hello! How"));
        QCOMPARE(choice.value("finish_reason").toString(), QStringLiteral("length"));
        QCOMPARE(f.fake->lastRequest().prompt, std::string("Once upon"));
        QVERIFY(f.fake->lastRequest().messages.empty());
    }

    void noModelAnswers503() {
        Fixture f({}, /*load=*/false);
        f.settings.setApiServerEnabled(true);
        QVERIFY(f.server.running());
        QNetworkAccessManager nam;
        QJsonObject body = chatBody(false);
        body.remove("model");
        const Response r = wait(post(nam, f.url(QStringLiteral("/v1/chat/completions")), body));
        QCOMPARE(r.status, 503);
        const QJsonObject error =
            QJsonDocument::fromJson(r.body).object().value("error").toObject();
        QVERIFY(error.value("message").toString().contains(QLatin1String("No model is loaded")));
    }

    void apiRequestWaitsForTheUsersChat() {
        EngineScript script;
        script.tokenDelay = 40ms;  // the chat reply takes ~280 ms
        Fixture f(script);
        QVERIFY(f.loaded);
        f.settings.setApiServerEnabled(true);
        GenerationJob chat;
        chat.messages = {{"user", "from the chat"}};
        QString chatStreamed;
        connect(&f.client, &EngineClient::piecesReady, this,
                [&](const StreamChunk& c) { chatStreamed += c.text; });
        auto chatReply = f.client.generate(chat);
        QNetworkAccessManager nam;
        QNetworkReply* api =
            post(nam, f.url(QStringLiteral("/v1/chat/completions")), chatBody(false));
        // The API job is queued, not running, while the chat generates.
        QTRY_COMPARE_WITH_TIMEOUT(
            getJson(nam, f.url(QStringLiteral("/health"))).value("queued").toInt(), 1, 5000);
        QCOMPARE(getJson(nam, f.url(QStringLiteral("/health"))).value("running").toInt(), 0);
        const GenerationOutcome chatOut = QCoro::waitFor(std::move(chatReply));
        QVERIFY(chatOut.ok);
        QCOMPARE(chatOut.finish, powerinfer::FinishReason::Stop);
        QCOMPARE(chatOut.text, kScripted);
        const Response r = wait(api);
        QCOMPARE(r.status, 200);
        QCOMPARE(QJsonDocument::fromJson(r.body)
                     .object()
                     .value("choices")
                     .toArray()
                     .at(0)
                     .toObject()
                     .value("message")
                     .toObject()
                     .value("content")
                     .toString(),
                 kScripted);
        // The API's text never reached the chat's stream.
        QCOMPARE(chatStreamed, kScripted);
        QCOMPARE(f.fake->lastRequest().messages[0].content, std::string("hi"));
    }

    void disablingClosesThePort() {
        Fixture f;
        f.settings.setApiServerEnabled(true);
        QVERIFY(f.server.running());
        const quint16 port = quint16(f.server.port());
        QVERIFY(portAccepts(port));
        QSignalSpy changed(&f.server, &LocalApiServer::stateChanged);
        f.settings.setApiServerEnabled(false);
        QCOMPARE(changed.count(), 1);
        QVERIFY(!f.server.running());
        QCOMPARE(f.server.port(), 0);
        QVERIFY(f.server.url().isEmpty());
        QVERIFY(!portAccepts(port));
    }

    void portInUseShowsTheError() {
        QTcpServer squatter;
        QVERIFY(squatter.listen(QHostAddress::LocalHost, 0));
        Fixture f;
        f.settings.setApiServerPort(squatter.serverPort());
        f.settings.setApiServerEnabled(true);
        QVERIFY(!f.server.running());
        QVERIFY(f.server.url().isEmpty());
        QVERIFY2(f.server.error().contains(QString::number(squatter.serverPort())),
                 qPrintable(f.server.error()));
        // Another setting changing does not retry; a new port does.
        f.settings.setTemperature(0.3);
        QVERIFY(!f.server.error().isEmpty());
        f.settings.setApiServerPort(0);
        QVERIFY(f.server.running());
        QVERIFY(f.server.error().isEmpty());
        // Switching off clears the error too.
        f.settings.setApiServerPort(squatter.serverPort());
        QVERIFY(!f.server.error().isEmpty());
        f.settings.setApiServerEnabled(false);
        QVERIFY(f.server.error().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLocalApiServer)
#include "tst_local_api_server.moc"
