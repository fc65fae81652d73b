// End-to-end tests of the HTTP API: real HTTP over 127.0.0.1 (QNetworkAccessManager
// and raw sockets) against the server running on a scripted engine.
#include "server_test_support.h"

using namespace powerinfer::server;
using namespace powerinfer::server::testing;

class TestApiServer : public QObject {
    Q_OBJECT
private slots:
    void servesHealthAndModels() {
        Harness h(scripted(), testConfig());
        QNetworkAccessManager nam;
        Response r = call(nam, h.url(QStringLiteral("/health")), "GET");
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value(QLatin1String("status")).toString(), QStringLiteral("ok"));
        r = call(nam, h.url(QStringLiteral("/v1/models")), "GET");
        QCOMPARE(r.status, 200);
        const QJsonArray data = r.json().value(QLatin1String("data")).toArray();
        QCOMPARE(data.size(), 1);
        QCOMPARE(data.at(0).toObject().value(QLatin1String("id")).toString(),
                 QStringLiteral("scripted-model"));
        QCOMPARE(data.at(0).toObject().value(QLatin1String("object")).toString(),
                 QStringLiteral("model"));
        QCOMPARE(call(nam, h.url(QStringLiteral("/v1/models/scripted-model")), "GET").status, 200);
        r = call(nam, h.url(QStringLiteral("/v1/models/other")), "GET");
        QCOMPARE(r.status, 404);
        QCOMPARE(r.error().value(QLatin1String("code")).toString(),
                 QStringLiteral("model_not_found"));
    }

    void completesAChat() {
        Harness h(scripted(), testConfig());
        QNetworkAccessManager nam;
        const Response r =
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(5));
        QCOMPARE(r.status, 200);
        QVERIFY(r.contentType.startsWith("application/json"));
        const QJsonObject o = r.json();
        verifyChatCompletion(o, QStringLiteral("scripted-model"));
        const QJsonObject c = o.value(QLatin1String("choices")).toArray().at(0).toObject();
        QCOMPARE(c.value(QLatin1String("finish_reason")).toString(), QStringLiteral("length"));
        QCOMPARE(o.value(QLatin1String("usage"))
                     .toObject()
                     .value(QLatin1String("completion_tokens"))
                     .toInt(),
                 5);
        const QString content =
            c.value(QLatin1String("message")).toObject().value(QLatin1String("content")).toString();
        QCOMPARE(content.split(QLatin1Char(' '), Qt::SkipEmptyParts).size(),
                 5);  // one word per token
    }

    void completesAPrompt() {
        Harness h(scripted(), testConfig());
        QNetworkAccessManager nam;
        const Response r = call(nam, h.url(QStringLiteral("/v1/completions")), "POST",
                                R"({"prompt":"Once upon a time","max_tokens":3,"temperature":0})");
        QCOMPARE(r.status, 200);
        const QJsonObject o = r.json();
        QCOMPARE(o.value(QLatin1String("object")).toString(), QStringLiteral("text_completion"));
        QVERIFY(o.value(QLatin1String("id")).toString().startsWith(QLatin1String("cmpl-")));
        const QJsonObject c = o.value(QLatin1String("choices")).toArray().at(0).toObject();
        QCOMPARE(c.value(QLatin1String("text"))
                     .toString()
                     .split(QLatin1Char(' '), Qt::SkipEmptyParts)
                     .size(),
                 3);
        QCOMPARE(o.value(QLatin1String("usage"))
                     .toObject()
                     .value(QLatin1String("prompt_tokens"))
                     .toInt(),
                 5);  // BOS + 4 words
    }

    void streamsTheSameTextAsServerSentEvents() {
        Harness h(scripted(), testConfig());
        QNetworkAccessManager nam;
        const QString whole =
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(12))
                .chatContent();
        const Response r =
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST",
                 chatBody(12, true, QStringLiteral(R"(,"stream_options":{"include_usage":true})")));
        QCOMPARE(r.status, 200);
        QVERIFY(r.contentType.startsWith("text/event-stream"));
        const SseStream s = parseSse(r.body);
        QVERIFY2(s.wellFormed, r.body.constData());
        QVERIFY(s.done);
        QVERIFY(s.events.size() >= 12);
        const QJsonObject first =
            s.events.first().value(QLatin1String("choices")).toArray().at(0).toObject();
        QCOMPARE(
            first.value(QLatin1String("delta")).toObject().value(QLatin1String("role")).toString(),
            QStringLiteral("assistant"));
        QString id;
        for (const auto& e : s.events) {
            QCOMPARE(e.value(QLatin1String("object")).toString(),
                     QStringLiteral("chat.completion.chunk"));
            if (id.isEmpty()) id = e.value(QLatin1String("id")).toString();
            QCOMPARE(e.value(QLatin1String("id")).toString(), id);  // one id per stream
        }
        QCOMPARE(s.text(), whole);
        // The finish chunk, then the usage chunk (no choices).
        const QJsonObject last = s.events.at(s.events.size() - 2);
        QCOMPARE(last.value(QLatin1String("choices"))
                     .toArray()
                     .at(0)
                     .toObject()
                     .value(QLatin1String("finish_reason"))
                     .toString(),
                 QStringLiteral("length"));
        const QJsonObject usage = s.events.last();
        QVERIFY(usage.value(QLatin1String("choices")).toArray().isEmpty());
        QCOMPARE(usage.value(QLatin1String("usage"))
                     .toObject()
                     .value(QLatin1String("completion_tokens"))
                     .toInt(),
                 12);

        const Response p = call(nam, h.url(QStringLiteral("/v1/completions")), "POST",
                                R"({"prompt":"x","max_tokens":4,"temperature":0,"stream":true})");
        const SseStream ps = parseSse(p.body);
        QVERIFY(ps.wellFormed && ps.done);
        QCOMPARE(ps.events.first().value(QLatin1String("object")).toString(),
                 QStringLiteral("text_completion"));
        QCOMPARE(ps.text().split(QLatin1Char(' '), Qt::SkipEmptyParts).size(), 4);
    }

    void honoursStopStringsAndSeeds() {
        Harness h(scripted(), testConfig());
        QNetworkAccessManager nam;
        auto content = [](const Response& r) { return r.chatContent(); };
        const QString full =
            content(call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(20)));
        const QStringList words = full.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        QVERIFY(words.size() == 20);
        const QString stop = words.at(6);
        const QString expected = full.left(full.indexOf(stop));
        const QString extra = QStringLiteral(R"(,"stop":["%1","never appears"])").arg(stop);
        Response r = call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST",
                          chatBody(20, false, extra));
        QCOMPARE(content(r), expected);
        QCOMPARE(r.firstChoice().value(QLatin1String("finish_reason")).toString(),
                 QStringLiteral("stop"));
        r = call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST",
                 chatBody(20, true, extra));
        const SseStream s = parseSse(r.body);
        QCOMPARE(s.text(), expected);  // nothing of the stop string leaked into the stream

        const QByteArray seeded =
            R"({"messages":[{"role":"user","content":"x"}],"max_tokens":6,"temperature":1,"seed":1234})";
        QCOMPARE(content(call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", seeded)),
                 content(call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", seeded)));
    }

    void exposesLiveMetrics() {
        Harness h(scripted(), testConfig());
        QNetworkAccessManager nam;
        Response m = call(nam, h.url(QStringLiteral("/metrics")), "GET");
        QCOMPARE(m.status, 200);
        QVERIFY(m.contentType.startsWith("text/plain"));
        const double kvBefore =
            metricValue(m.body, R"(powerinfer_memory_usage_bytes{device="cpu",kind="kv_cache"})");
        QVERIFY(!m.body.contains("powerinfer_hot_neuron_hit_rate"));  // no token yet
        for (int i = 0; i < 3; ++i)
            QCOMPARE(call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(4))
                         .status,
                     200);
        QCOMPARE(call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", "{").status, 400);
        m = call(nam, h.url(QStringLiteral("/metrics")), "GET");
        const QByteArray& t = m.body;
        QCOMPARE(
            metricValue(
                t,
                R"(powerinfer_inference_requests_total{endpoint="/v1/chat/completions",status="200"})"),
            3.0);
        QCOMPARE(
            metricValue(
                t,
                R"(powerinfer_inference_requests_total{endpoint="/v1/chat/completions",status="400"})"),
            1.0);
        QCOMPARE(metricValue(t, QStringLiteral("powerinfer_tokens_generated_total")), 12.0);
        QCOMPARE(metricValue(t, QStringLiteral("powerinfer_inference_duration_seconds_count")),
                 3.0);
        QCOMPARE(metricValue(t, R"(powerinfer_inference_duration_seconds_bucket{le="+Inf"})"), 3.0);
        QCOMPARE(metricValue(t, QStringLiteral("powerinfer_queue_depth")), 0.0);
        const double kvAfter =
            metricValue(t, R"(powerinfer_memory_usage_bytes{device="cpu",kind="kv_cache"})");
        QVERIFY2(kvAfter > kvBefore, "memory must be read from the engine, not fixed");
        const double hit = metricValue(t, QStringLiteral("powerinfer_hot_neuron_hit_rate"));
        QVERIFY(hit > 0 && hit <= 1);
        const double sparsity = metricValue(t, QStringLiteral("powerinfer_ffn_sparsity"));
        QVERIFY(sparsity > 0 && sparsity < 1);
        QVERIFY2(!t.contains("powerinfer_gpu_utilization_percent"),
                 "no GPU here: the metric must be absent");
    }

    void reportsQueueDepth() {
        Harness h(scripted(std::chrono::milliseconds(15)), testConfig());
        QNetworkAccessManager nam;
        QList<QNetworkReply*> replies;
        for (int i = 0; i < 4; ++i)
            replies << send(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST",
                            chatBody(10));
        double maxQueued = 0;
        QVERIFY(waitUntil(
            [&] {
                QNetworkAccessManager probe;
                const Response m = call(probe, h.url(QStringLiteral("/metrics")), "GET");
                maxQueued = std::max(maxQueued,
                                     metricValue(m.body, QStringLiteral("powerinfer_queue_depth")));
                return maxQueued >= 2;
            },
            5000));
        QVERIFY(waitUntil(
            [&] {
                return std::all_of(replies.begin(), replies.end(),
                                   [](QNetworkReply* r) { return r->isFinished(); });
            },
            10000));
        for (QNetworkReply* r : replies) QCOMPARE(collect(r).status, 200);
        QCOMPARE(h.backend->status().queued, 0);
    }

    // Issue 17: no per-request log line.
    void logsOneLinePerRequest() {
        ServerConfig config = testConfig();
        QStringList lines;
        config.requestLog = [&lines](const QString& line) { lines << line; };
        Harness h(scripted(), config);
        QNetworkAccessManager nam;
        QCOMPARE(
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(2)).status,
            200);
        QCOMPARE(call(nam, h.url(QStringLiteral("/v1/models")), "GET").status, 200);
        QCOMPARE(call(nam, h.url(QStringLiteral("/nowhere")), "GET").status, 404);
        QTRY_COMPARE(lines.size(), 3);
        QVERIFY2(QRegularExpression(R"(^POST /v1/chat/completions 200 \d+ ms \d+\+2 tokens$)")
                     .match(lines[0])
                     .hasMatch(),
                 qPrintable(lines[0]));
        QVERIFY2(lines[1].startsWith("GET /v1/models 200 "), qPrintable(lines[1]));
        QVERIFY2(lines[2].startsWith("GET /nowhere 404 "), qPrintable(lines[2]));
    }

    void enforcesTheApiKey() {
        ServerConfig config = testConfig();
        config.apiKey = QStringLiteral("s3cret");
        Harness h(scripted(), config);
        QNetworkAccessManager nam;
        Response r = call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(2));
        QCOMPARE(r.status, 401);
        QCOMPARE(r.error().value(QLatin1String("code")).toString(),
                 QStringLiteral("invalid_api_key"));
        QCOMPARE(r.error().value(QLatin1String("type")).toString(),
                 QStringLiteral("invalid_request_error"));
        QCOMPARE(
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(2), "wrong")
                .status,
            401);
        QCOMPARE(call(nam, h.url(QStringLiteral("/v1/models")), "GET", {}, "s3cre").status, 401);
        QCOMPARE(call(nam, h.url(QStringLiteral("/metrics")), "GET").status, 401);
        QCOMPARE(
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(2), "s3cret")
                .status,
            200);
        QCOMPARE(call(nam, h.url(QStringLiteral("/metrics")), "GET", {}, "s3cret").status, 200);
        QCOMPARE(call(nam, h.url(QStringLiteral("/health")), "GET").status,
                 200);  // probes need no key
    }

    void rejectsMalformedRequests_data() {
        QTest::addColumn<QByteArray>("method");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("code");
        const QString chat = QStringLiteral("/v1/chat/completions");
        QTest::newRow("bad json") << QByteArray("POST") << chat
                                  << QByteArray(R"({"messages":[{"role":)") << 400
                                  << "invalid_json";
        QTest::newRow("empty body")
            << QByteArray("POST") << chat << QByteArray() << 400 << "invalid_json";
        QTest::newRow("array body")
            << QByteArray("POST") << chat << QByteArray("[]") << 400 << "invalid_json";
        QTest::newRow("missing messages")
            << QByteArray("POST") << chat << QByteArray(R"({"model":"scripted-model"})") << 400
            << "missing_required_parameter";
        QTest::newRow("messages wrong type")
            << QByteArray("POST") << chat << QByteArray(R"({"messages":{"role":"user"}})") << 400
            << "invalid_type";
        QTest::newRow("max_tokens string")
            << QByteArray("POST") << chat
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"9"})") << 400
            << "invalid_type";
        QTest::newRow("negative max_tokens")
            << QByteArray("POST") << chat
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":-1})") << 400
            << "invalid_value";
        QTest::newRow("temperature object")
            << QByteArray("POST") << chat
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}],"temperature":{}})") << 400
            << "invalid_type";
        QTest::newRow("unknown model")
            << QByteArray("POST") << chat
            << QByteArray(R"({"model":"gpt-4","messages":[{"role":"user","content":"x"}]})") << 404
            << "model_not_found";
        QTest::newRow("GET on completions")
            << QByteArray("GET") << chat << QByteArray() << 405 << "method_not_allowed";
        QTest::newRow("DELETE on models") << QByteArray("DELETE") << QStringLiteral("/v1/models")
                                          << QByteArray() << 405 << "method_not_allowed";
        QTest::newRow("unknown route") << QByteArray("GET") << QStringLiteral("/v1/embeddings")
                                       << QByteArray() << 404 << "unknown_route";
        QTest::newRow("root") << QByteArray("GET") << QStringLiteral("/") << QByteArray() << 404
                              << "unknown_route";
        QTest::newRow("huge body")
            << QByteArray("POST") << chat << QByteArray(2 << 20, 'x') << 413 << "request_too_large";
        QTest::newRow("engine rejects")
            << QByteArray("POST") << chat
            << QByteArray(R"({"messages":[{"role":"user","content":"<<reject>>"}]})") << 400
            << "invalid_request";
        // Issue 17: OpenAI's code for a prompt the context cannot hold.
        QTest::newRow("prompt longer than the context")
            << QByteArray("POST") << chat
            << (R"({"messages":[{"role":"user","content":")" + QByteArray("w ").repeated(2100) +
                R"("}]})")
            << 400 << "context_length_exceeded";
        QTest::newRow("tools") << QByteArray("POST") << chat
                               << QByteArray(R"({"messages":[{"role":"user","content":"x"}],)"
                                             R"("tools":[{"type":"function"}]})")
                               << 400 << "invalid_type";
        QTest::newRow("engine fails")
            << QByteArray("POST") << chat
            << QByteArray(R"({"messages":[{"role":"user","content":"<<crash>>"}]})") << 500
            << "engine_error";
    }
    void rejectsMalformedRequests() {
        QFETCH(QByteArray, method);
        QFETCH(QString, path);
        QFETCH(QByteArray, body);
        QFETCH(int, status);
        QFETCH(QString, code);
        Harness h(scripted(), testConfig());
        QNetworkAccessManager nam;
        const Response r = call(nam, h.url(path), method, body);
        QCOMPARE(r.status, status);
        const QJsonObject e = r.error();
        QVERIFY2(e.value(QLatin1String("message")).isString() &&
                     !e.value(QLatin1String("message")).toString().isEmpty(),
                 r.body.constData());
        QVERIFY(e.value(QLatin1String("type")).isString());
        QVERIFY(e.contains(QLatin1String("param")));
        QCOMPARE(e.value(QLatin1String("code")).toString(), code);
        // Still serving.
        QCOMPARE(
            call(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(2)).status,
            200);
    }

    void survivesHostileConnections() {
        Harness h(scripted(), testConfig());
        // Not HTTP at all: 400, and the connection is closed.
        RawResult r = rawExchange(h.port, "HELLO THERE\r\n\r\n", 3000);
        QCOMPARE(statusOf(r.received), 400);
        QVERIFY(r.closedByServer);
        // A declared body over the limit is refused before it is sent.
        r = rawExchange(
            h.port, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
            3000);
        QCOMPARE(statusOf(r.received), 413);
        QVERIFY(r.closedByServer);
        // Oversized headers.
        r = rawExchange(h.port, "GET /health HTTP/1.1\r\nX-Junk: " + QByteArray(100 << 10, 'a'),
                        3000);
        QCOMPARE(statusOf(r.received), 431);
        // A client that stops half-way through its request times out (408).
        r = rawExchange(
            h.port, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{\"pro",
            5000);
        QCOMPARE(statusOf(r.received), 408);
        QVERIFY(r.closedByServer);
        QVERIFY(r.elapsedMs < 4000);
        // A connection that sends nothing is closed after the idle timeout.
        r = rawExchange(h.port, QByteArray(), 6000);
        QVERIFY(r.closedByServer);
        QVERIFY(r.received.isEmpty());
        // Binary garbage.
        QByteArray noise(4096, '\0');
        for (int i = 0; i < noise.size(); ++i) noise[i] = char((i * 7919) & 0xff);
        r = rawExchange(h.port, noise, 3000);
        QVERIFY(r.closedByServer);
        // Keep-alive: two requests on one connection, answered in order.
        r = rawExchange(h.port,
                        "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: "
                        "x\r\nConnection: close\r\n\r\n",
                        3000);
        QCOMPARE(r.received.count("HTTP/1.1 200 OK"), 2);
        QVERIFY(r.received.indexOf("\"status\":\"ok\"") <
                r.received.indexOf("\"object\":\"list\""));

        QNetworkAccessManager nam;
        QCOMPARE(call(nam, h.url(QStringLiteral("/health")), "GET").status, 200);
        QVERIFY(waitUntil([&] { return h.server->openConnections() <= 1; }, 5000));
    }

    // A body refused by its Content-Length (413) is read to its end before
    // the connection closes: closing with the client's last bytes still
    // arriving makes the kernel reset the connection, and the client can lose
    // the 413 (seen as status 0 from QNetworkAccessManager).
    void drainsARefusedBodyBeforeClosing() {
        Harness h(scripted(), testConfig());
        const qint64 declared = 2 << 20;
        QTcpSocket socket;
        socket.connectToHost(QHostAddress(QHostAddress::LocalHost), h.port);
        QVERIFY(socket.waitForConnected(3000));
        QByteArray received;
        bool closed = false;
        QObject::connect(&socket, &QTcpSocket::readyRead, [&] { received += socket.readAll(); });
        QObject::connect(&socket, &QTcpSocket::disconnected, [&] { closed = true; });
        socket.write("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                     QByteArray::number(declared) + "\r\n\r\n");
        QVERIFY(waitUntil([&] { return statusOf(received) == 413; }, 3000));
        const qint64 held = 16;  // sent only after a pause
        socket.write(QByteArray(declared - held, 'x'));
        QVERIFY(waitUntil([&] { return socket.bytesToWrite() == 0; }, 5000));
        QTest::qWait(300);
        QVERIFY2(!closed, "the server closed before the body ended");
        socket.write(QByteArray(held, 'x'));
        QVERIFY(waitUntil([&] { return closed; }, 3000));
        QCOMPARE(statusOf(received), 413);
    }

    void cancelsWhenTheClientDisconnects() {
        Harness h(scripted(std::chrono::milliseconds(20)), testConfig());
        QNetworkAccessManager nam;
        QNetworkReply* reply =
            send(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(1000, true));
        QVERIFY(
            waitUntil([&] { return reply->bytesAvailable() > 0; }, 5000));  // streaming has begun
        QElapsedTimer clock;
        clock.start();
        reply->abort();
        reply->deleteLater();
        // 1000 tokens would take 20 s; cancellation frees the engine at once.
        QVERIFY(waitUntil([&] { return h.backend->status().running == 0; }, 3000));
        QVERIFY(clock.elapsed() < 3000);
        // A queued request whose client left never runs.
        QNetworkReply* first =
            send(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(30));
        QNetworkReply* second =
            send(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(1000));
        QVERIFY(waitUntil([&] { return h.backend->status().queued == 1; }, 3000));
        second->abort();
        second->deleteLater();
        QVERIFY(waitUntil([&] { return first->isFinished(); }, 5000));
        QCOMPARE(collect(first).status, 200);
        QVERIFY(waitUntil(
            [&] { return h.backend->status().running == 0 && h.backend->status().queued == 0; },
            2000));
        const Response m = call(nam, h.url(QStringLiteral("/metrics")), "GET");
        QCOMPARE(
            metricValue(
                m.body,
                R"(powerinfer_inference_requests_total{endpoint="/v1/chat/completions",status="499"})"),
            2.0);
    }

    void refusesWhenTheQueueIsFull() {
        ServerConfig config = testConfig();
        config.maxQueuedRequests = 1;
        Harness h(scripted(std::chrono::milliseconds(10)), config);
        QNetworkAccessManager nam;
        QNetworkReply* running =
            send(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(40));
        QVERIFY(waitUntil([&] { return h.backend->status().running == 1; }, 3000));
        QNetworkReply* queued =
            send(nam, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(2));
        QVERIFY(waitUntil([&] { return h.backend->status().queued == 1; }, 3000));
        QNetworkAccessManager other;
        const Response refused =
            call(other, h.url(QStringLiteral("/v1/chat/completions")), "POST", chatBody(2));
        QCOMPARE(refused.status, 429);
        QCOMPARE(refused.error().value(QLatin1String("code")).toString(),
                 QStringLiteral("queue_full"));
        QVERIFY(waitUntil([&] { return running->isFinished() && queued->isFinished(); }, 5000));
        QCOMPARE(collect(running).status, 200);
        QCOMPARE(collect(queued).status, 200);
    }

    void staysUpUnderLoad() {
        Harness h(scripted(std::chrono::milliseconds(1)), testConfig());
        const LoadStats s = runLoad(h, 8, 20, 8, QStringLiteral("scripted-model"));
        qInfo(
            "scripted engine, 8 clients x 20 requests (max_tokens 8): %d ok, %d malformed, %.1f "
            "req/s, "
            "p50 %.1f ms, p95 %.1f ms",
            s.ok, s.malformed, (s.ok + s.malformed) / s.seconds, s.percentile(0.5),
            s.percentile(0.95));
        QCOMPARE(s.ok, 160);
        QCOMPARE(s.malformed, 0);
        QNetworkAccessManager nam;
        QCOMPARE(call(nam, h.url(QStringLiteral("/health")), "GET").status, 200);
        const Response m = call(nam, h.url(QStringLiteral("/metrics")), "GET");
        QCOMPARE(
            metricValue(
                m.body,
                R"(powerinfer_inference_requests_total{endpoint="/v1/chat/completions",status="200"})"),
            160.0);
    }
};

QTEST_GUILESS_MAIN(TestApiServer)
#include "tst_api_server.moc"
