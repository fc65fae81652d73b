// Continuous batching over real HTTP with the real default model
// (--concurrency 4): concurrent streams get, token for token, the greedy
// replies they get alone; 8 clients x 20 requests with disconnects in the
// mix leave no sequence running and the KV memory where it was; a
// conversation past the context length (512 here) shifts its context beside
// a neighbour and gets the reply it gets alone.
// Skips without POWERINFER_MODEL.
#include "server_test_support.h"

using namespace powerinfer::server;
using namespace powerinfer::server::testing;

namespace {

QByteArray body(const QString& prompt, int maxTokens, bool stream) {
    return QStringLiteral(
               R"({"model":"m","messages":[{"role":"user","content":"%1"}],"max_tokens":%2,"temperature":0,"stream":%3})")
        .arg(prompt)
        .arg(maxTokens)
        .arg(stream ? QStringLiteral("true") : QStringLiteral("false"))
        .toUtf8();
}

QString replyText(const Response& r, bool stream) {
    return stream ? parseSse(r.body).text() : r.chatContent();
}

}  // namespace

class TestBatchedServer : public QObject {
    Q_OBJECT
    std::unique_ptr<Harness> h_;

private slots:
    void initTestCase() {
        const QByteArray modelPath = qgetenv("POWERINFER_MODEL");
        if (modelPath.isEmpty())
            QSKIP("POWERINFER_MODEL is not set (scripts/test sets it to the default model)");
        powerinfer::LoadOptions options;
        options.model_path = modelPath.toStdString();
        options.n_ctx = 512;
        options.tuning.sparse = false;
        h_ = std::make_unique<Harness>(powerinfer::Engine::load(options), testConfig(),
                                       QStringLiteral("m"), 4);
        QCOMPARE(h_->backend->concurrency(), 4);
    }

    void concurrentStreamsGetTheirSoloReplies() {
        const QStringList prompts = {"What is the capital of France?",
                                     "Name three fruits.",
                                     "Write one sentence about the sea.",
                                     "Count to five.",
                                     "Who wrote Hamlet?",
                                     "Say hello in Spanish."};
        QNetworkAccessManager nam;
        QStringList solo;
        for (const QString& p : prompts) {
            const Response r = call(nam, h_->url(QStringLiteral("/v1/chat/completions")), "POST",
                                    body(p, 20, false), {}, 60000);
            QCOMPARE(r.status, 200);
            solo << r.chatContent();
        }
        // All at once: four decode together, two join when slots free up.
        std::vector<std::unique_ptr<QNetworkAccessManager>> nams;
        std::vector<Response> replies(size_t(prompts.size()));
        int outstanding = int(prompts.size());
        QEventLoop loop;
        for (int i = 0; i < prompts.size(); ++i) {
            nams.push_back(std::make_unique<QNetworkAccessManager>());
            QNetworkReply* reply =
                send(*nams.back(), h_->url(QStringLiteral("/v1/chat/completions")), "POST",
                     body(prompts[i], 20, i % 2 == 1));
            QObject::connect(reply, &QNetworkReply::finished, [&, i, reply] {
                replies[size_t(i)] = collect(reply);
                if (--outstanding == 0) loop.quit();
            });
        }
        QTimer::singleShot(120000, &loop, &QEventLoop::quit);
        loop.exec();
        QCOMPARE(outstanding, 0);
        for (int i = 0; i < prompts.size(); ++i) {
            QCOMPARE(replies[size_t(i)].status, 200);
            QCOMPARE(replyText(replies[size_t(i)], i % 2 == 1), solo[i]);
        }
    }

    void aConversationPastTheContextGetsItsSoloReply() {
        const QByteArray longer =
            R"({"model":"m","messages":[{"role":"system","content":"You are a helpful assistant."},)"
            R"({"role":"user","content":"Write the numbers from 1 to 300, one per line, as digits and in words."}],)"
            R"("max_tokens":600,"temperature":0})";
        QNetworkAccessManager nam;
        const QUrl url = h_->url(QStringLiteral("/v1/chat/completions"));
        const Response solo = call(nam, url, "POST", longer, {}, 120000);
        QCOMPARE(solo.status, 200);
        const QJsonObject usage = solo.json().value(QLatin1String("usage")).toObject();
        const int prompt = usage.value(QLatin1String("prompt_tokens")).toInt();
        const int completion = usage.value(QLatin1String("completion_tokens")).toInt();
        QVERIFY2(prompt + completion > 512,
                 qPrintable(QString("%1 + %2 tokens: the reply does not fill the context")
                                .arg(prompt)
                                .arg(completion)));
        // Again, beside two neighbours that join while it runs.
        QNetworkAccessManager nam2, nam3;
        QNetworkReply* main = send(nam, url, "POST", longer);
        QNetworkReply* a = send(nam2, url, "POST", body(QStringLiteral("Name three fruits."), 20, true));
        QNetworkReply* b = send(nam3, url, "POST", body(QStringLiteral("Who wrote Hamlet?"), 20, false));
        Response batched, ra, rb;
        int outstanding = 3;
        QEventLoop loop;
        for (auto [reply, out] : {std::pair{main, &batched}, std::pair{a, &ra}, std::pair{b, &rb}})
            QObject::connect(reply, &QNetworkReply::finished, [&, reply, out] {
                *out = collect(reply);
                if (--outstanding == 0) loop.quit();
            });
        QTimer::singleShot(180000, &loop, &QEventLoop::quit);
        loop.exec();
        QCOMPARE(outstanding, 0);
        QCOMPARE(batched.status, 200);
        QCOMPARE(ra.status, 200);
        QCOMPARE(rb.status, 200);
        QCOMPARE(batched.json().value(QLatin1String("usage")).toObject(), usage);
        QCOMPARE(batched.firstChoice().value(QLatin1String("finish_reason")).toString(),
                 solo.firstChoice().value(QLatin1String("finish_reason")).toString());
        QCOMPARE(batched.chatContent(), solo.chatContent());
    }

    void loadWithDisconnectsLeavesNothingBehind() {
        const int64_t kvBefore = h_->backend->status().memory->kv_cache;
        const int clients = 8, perClient = 20;
        std::vector<std::unique_ptr<QNetworkAccessManager>> nams;
        int outstanding = clients * perClient, ok = 0, aborted = 0, bad = 0;
        QEventLoop loop;
        std::function<void(QNetworkAccessManager*, int, int)> next = [&](QNetworkAccessManager* nam,
                                                                         int c, int i) {
            const bool stream = (c + i) % 2 == 0;
            const bool disconnect = (c * perClient + i) % 5 == 0;
            QNetworkReply* reply =
                send(*nam, h_->url(QStringLiteral("/v1/chat/completions")), "POST",
                     body(QStringLiteral("Tell me about number %1.").arg(i), disconnect ? 64 : 4,
                          stream));
            if (disconnect)  // the client goes away mid-request
                QTimer::singleShot(40 + 10 * (i % 4), reply, [reply] { reply->abort(); });
            QObject::connect(reply, &QNetworkReply::finished, [&, nam, c, i, reply, stream] {
                if (reply->error() == QNetworkReply::OperationCanceledError) {
                    reply->deleteLater();
                    ++aborted;
                    if (--outstanding == 0) loop.quit();
                    if (i + 1 < perClient) next(nam, c, i + 1);
                    return;
                }
                const Response r = collect(reply);
                if (r.status == 200 && (!stream || parseSse(r.body).done)) {
                    ++ok;
                } else {
                    ++bad;
                }
                if (--outstanding == 0) loop.quit();
                if (i + 1 < perClient) next(nam, c, i + 1);
            });
        };
        for (int c = 0; c < clients; ++c) {
            nams.push_back(std::make_unique<QNetworkAccessManager>());
            next(nams.back().get(), c, 0);
        }
        QTimer::singleShot(240000, &loop, &QEventLoop::quit);
        loop.exec();
        QCOMPARE(outstanding, 0);
        QCOMPARE(bad, 0);
        QVERIFY2(aborted >= 16, qPrintable(QString::number(aborted)));
        QCOMPARE(ok + aborted, clients * perClient);
        // Every slot is free again and the KV caches were reused, not grown.
        QVERIFY(waitUntil([&] { return h_->backend->status().running == 0; }, 10000));
        QCOMPARE(h_->backend->status().queued, 0);
        QCOMPARE(h_->backend->status().memory->kv_cache, kvBefore);
        // And the server still answers.
        QNetworkAccessManager nam;
        const Response r = call(nam, h_->url(QStringLiteral("/v1/chat/completions")), "POST",
                                body(QStringLiteral("Hi"), 4, false), {}, 60000);
        QCOMPARE(r.status, 200);
    }

    void cleanupTestCase() { h_.reset(); }
};

QTEST_GUILESS_MAIN(TestBatchedServer)
#include "tst_batched_server.moc"
