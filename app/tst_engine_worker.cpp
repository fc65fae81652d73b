#include <qcoro/qcorotask.h>

#include <QSignalSpy>
#include <type_traits>
#include <QtTest>

#include "engine_worker.h"
#include "metrics_model.h"
#include "scripted_engine.h"

using namespace powerinfer::app;
using powerinfer::testing::EngineScript;
using powerinfer::testing::ScriptedEngine;
using namespace std::chrono_literals;

namespace {

EngineFactory fakeFactory(EngineScript script) {
    return [script](const powerinfer::LoadOptions& o) { return ScriptedEngine::load(o, script); };
}

powerinfer::LoadOptions options() {
    powerinfer::LoadOptions o;
    o.model_path = "fake.gguf";
    return o;
}

GenerationJob job(int maxTokens = 512) {
    GenerationJob j;
    j.messages = {{"user", "hi"}};
    j.maxTokens = maxTokens;
    return j;
}

}  // namespace

class TestEngineWorker : public QObject {
    Q_OBJECT
private slots:
    // Issue 17: each token's metrics were copied about four times on the way
    // to the GUI (into the batch, into the by-value signal argument, into the
    // queued event, into the metrics model's window). Now the worker's
    // push_back is the one copy: every receiver of a batch sees the same
    // shared samples, and the metrics model keeps those very objects.
    void aTokensMetricsAreCopiedOnceOnTheWayToTheGui() {
        static_assert(std::is_same_v<decltype(StreamChunk::samples), TokenSamples>);
        EngineScript script;
        script.tokens.assign(60, "ab");
        script.tokenDelay = 1ms;
        EngineClient client(fakeFactory(script), nullptr, 10ms);
        QVERIFY(QCoro::waitFor(client.load(options())).ok);
        MetricsModel model(256);
        std::vector<TokenSamples> viaPieces, viaGeneration;
        connect(&client, &EngineClient::piecesReady, this, [&](const StreamChunk& c) {
            viaPieces.push_back(c.samples);
            model.addSamples(c.samples);
        });
        connect(&client, &EngineClient::generationPieces, this,
                [&](quint64, const StreamChunk& c) { viaGeneration.push_back(c.samples); });
        QVERIFY(QCoro::waitFor(client.generate(job())).ok);
        QTRY_COMPARE(model.totalTokens(), qint64(60));
        QVERIFY(viaPieces.size() >= 2);
        QCOMPARE(viaGeneration.size(), viaPieces.size());
        int slot = 0;
        for (size_t b = 0; b < viaPieces.size(); ++b) {
            QVERIFY(viaPieces[b]);
            QCOMPARE(viaGeneration[b].get(), viaPieces[b].get());  // one batch, two receivers
            for (const powerinfer::TokenMetrics& m : *viaPieces[b]) {
                QCOMPARE(model.sampleAt(slot), &m);  // the model holds the delivered sample
                QCOMPARE(model.sampleAt(slot)->layer_hit_rate.data(), m.layer_hit_rate.data());
                ++slot;
            }
        }
        QCOMPARE(slot, 60);
        QVERIFY(model.layerHitRateAt(0, 0) >= 0);
    }

    void batchesPiecesAndKeepsAllText() {
        EngineScript script;
        script.tokens.assign(150, "ab");
        script.tokenDelay = 1ms;
        EngineClient client(fakeFactory(script), nullptr, 25ms);
        QVERIFY(QCoro::waitFor(client.load(options())).ok);
        QString streamed;
        int chunks = 0, tokens = 0;
        connect(&client, &EngineClient::piecesReady, this, [&](const StreamChunk& c) {
            streamed += c.text;
            tokens += c.tokens;
            ++chunks;
        });
        const GenerationOutcome out = QCoro::waitFor(client.generate(job()));
        QVERIFY(out.ok);
        QCOMPARE(out.finish, powerinfer::FinishReason::Stop);
        QCOMPARE(out.generatedTokens, 150);
        QCOMPARE(out.text, QString("ab").repeated(150));
        QTRY_COMPARE(tokens, 150);  // pieces are queued before the finish signal
        QCOMPARE(streamed, out.text);
        // 150 tokens over >= 150 ms at one batch per 25 ms: far fewer signals than tokens.
        QVERIFY2(chunks >= 2 && chunks <= 40, qPrintable(QString::number(chunks)));
        QVERIFY(out.sparsity > 0.79 && out.sparsity < 0.81);  // 200 of 1000 active
        QVERIFY(out.hitRate > 0.89 && out.hitRate < 0.91);
    }

    void stopKeepsThePartialReply() {
        EngineScript script;
        script.endless = true;
        script.tokenDelay = 2ms;
        EngineClient client(fakeFactory(script));
        QVERIFY(QCoro::waitFor(client.load(options())).ok);
        QString streamed;
        const auto stopper =
            connect(&client, &EngineClient::piecesReady, this, [&](const StreamChunk& c) {
                streamed += c.text;
                if (streamed.size() > 20) client.cancelGeneration();
            });
        const GenerationOutcome out = QCoro::waitFor(client.generate(job(100000)));
        disconnect(stopper);
        QVERIFY(out.ok);
        QCOMPARE(out.finish, powerinfer::FinishReason::Cancelled);
        QVERIFY(out.generatedTokens > 0 && out.generatedTokens < 100000);
        QVERIFY(out.text.startsWith(streamed.left(20)));
        // The engine stays usable after a stop.
        const GenerationOutcome again = QCoro::waitFor(client.generate(job(3)));
        QVERIFY(again.ok);
        QCOMPARE(again.generatedTokens, 3);
    }

    void cancelDuringLoad() {
        EngineScript script;
        script.loadSteps.assign(50, 0.5f);
        script.loadStepDelay = 20ms;
        EngineClient client(fakeFactory(script));
        QSignalSpy progress(&client, &EngineClient::loadProgress);
        connect(&client, &EngineClient::loadProgress, &client, &EngineClient::cancelLoad);
        QElapsedTimer t;
        t.start();
        const LoadOutcome out = QCoro::waitFor(client.load(options()));
        QVERIFY(!out.ok);
        QVERIFY(out.cancelled);
        QVERIFY(!client.isLoaded());
        QVERIFY2(t.elapsed() < 800, "cancel must not wait for the whole load");
        QVERIFY(progress.count() >= 1);
        const GenerationOutcome gen = QCoro::waitFor(client.generate(job()));
        QVERIFY(!gen.ok);
        QVERIFY(gen.error.contains("No model"));
    }

    void errorDuringLoadIsReported() {
        EngineScript script;
        script.loadError = "model.gguf: not a GGUF file (bad magic) at offset 0";
        EngineClient client(fakeFactory(script));
        QSignalSpy progress(&client, &EngineClient::loadProgress);
        const LoadOutcome out = QCoro::waitFor(client.load(options()));
        QVERIFY(!out.ok);
        QVERIFY(!out.cancelled);
        QCOMPARE(out.error, QString::fromStdString(script.loadError));
        QVERIFY(!client.isLoaded());
        // Progress reached the end before the error (values in order).
        QVERIFY(progress.count() >= 2);
        double last = -1;
        for (const auto& args : progress) {
            QVERIFY(args[0].toDouble() >= last);
            last = args[0].toDouble();
        }
    }

    void loadReportsModelInfo() {
        EngineClient client(fakeFactory({}));
        powerinfer::LoadOptions o = options();
        o.n_ctx = 1024;
        const LoadOutcome out = QCoro::waitFor(client.load(o));
        QVERIFY(out.ok);
        QVERIFY(client.isLoaded());
        QCOMPARE(out.info.n_ctx, 1024);
        QCOMPARE(out.deviceName, QStringLiteral("CPU (fake engine)"));
    }

    // The engine keeps as many conversations' KV caches as 512 MiB hold
    // besides the first (at most 4), where it can keep several.
    void loadAsksForConversationContextsWithinTheMemoryBound() {
        constexpr int64_t MiB = 1 << 20;
        for (const auto& [kv, expected] :
             {std::pair<int64_t, int>{200 * MiB, 3}, {100 * MiB, 4}, {600 * MiB, 1}, {0, 1}}) {
            EngineScript script;
            script.hostKvCacheBytes = kv;
            script.maxConversationContexts = 16;
            EngineClient client(fakeFactory(script));
            const LoadOutcome out = QCoro::waitFor(client.load(options()));
            QVERIFY(out.ok);
            QCOMPARE(out.conversationContexts, expected);
        }
        // An engine that keeps one says so.
        EngineScript one;
        one.hostKvCacheBytes = 10 * MiB;
        EngineClient client(fakeFactory(one));
        QCOMPARE(QCoro::waitFor(client.load(options())).conversationContexts, 1);
    }

    void regenerateRunsAgain() {
        EngineScript script;
        script.tokens = {"x", "y"};
        EngineClient client(fakeFactory(script));
        QVERIFY(QCoro::waitFor(client.load(options())).ok);
        const auto first = QCoro::waitFor(client.generate(job()));
        const auto second = QCoro::waitFor(client.generate(job()));
        QCOMPARE(first.text, QStringLiteral("xy"));
        QCOMPARE(second.text, first.text);
        QCOMPARE(second.promptTokens, 10);
    }
};

QTEST_GUILESS_MAIN(TestEngineWorker)
#include "tst_engine_worker.moc"
