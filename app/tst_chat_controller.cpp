#include <qcoro/qcorotask.h>

#include <QCoreApplication>
#include <QGuiApplication>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cstdio>

#include "chat_controller.h"
#include "fake_engine.h"

using namespace powerinfer::app;
using namespace std::chrono_literals;

namespace {

template <typename T>
T await(QFuture<T> future) {
    future.waitForFinished();
    return future.result();
}

// Everything a controller needs, on a fake engine; `engine` points at the
// loaded FakeEngine so tests can see the request it received.
struct Harness {
    explicit Harness(const QString& dir, FakeScript script = {})
        : store(dir + "/conversations.sqlite"),
          client([this, script](const powerinfer::LoadOptions& o) {
              auto e = FakeEngine::load(o, script);
              engine = e.get();
              return e;
          }),
          models(nullptr),
          controller(&store, &client, &models, &settings) {}

    bool start(bool load = true) {
        if (!QCoro::waitFor(controller.initialize()).isEmpty()) return false;
        return !load || QCoro::waitFor(controller.loadModelFile("/models/fake.gguf"));
    }

    ChatStore store;
    EngineClient client;
    AppSettings settings;
    ModelCatalog models;
    ChatController controller;
    FakeEngine* engine = nullptr;
};

QString joined(const FakeScript& s) {
    std::string out;
    for (const auto& t : s.tokens) out += t;
    return QString::fromStdString(out);
}

// The crash-safety helper: streams an endless reply, printing each
// checkpoint, until the parent test kills it.
int runCrashHelper(int argc, char** argv, const QString& dir) {
    QCoreApplication app(argc, argv);
    FakeScript script;
    script.endless = true;
    script.tokenDelay = 3ms;
    script.tokens = {"lorem ", "ipsum ", "dolor "};
    Harness h(dir, script);
    h.controller.setCheckpointInterval(150);
    if (!h.start()) return 2;
    QObject::connect(&h.controller, &ChatController::checkpointSaved,
                     [](const QString& uid, int len) {
                         std::printf("CHECKPOINT %s %d\n", qPrintable(uid), len);
                         std::fflush(stdout);
                     });
    h.settings.setMaxTokens(1'000'000);
    h.controller.send("Tell me everything");
    return app.exec();
}

}  // namespace

class TestChatController : public QObject {
    Q_OBJECT
private slots:
    void init() {
        QVERIFY(dir_.isValid());
        sub_ = dir_.filePath(QString::number(++n_));
    }

    void sendStreamsIntoTheLastRowAndSaves() {
        FakeScript script;
        script.tokens = {"Hi", " there", ",", " friend", "."};
        script.tokenDelay = 30ms;  // slower than the batch interval: several updates
        Harness h(sub_, script);
        QVERIFY(h.start());
        QCOMPARE(h.controller.modelState(), ChatController::ModelState::Ready);
        QCOMPARE(h.controller.device(), QStringLiteral("CPU (fake engine)"));
        // Every core, below normal priority: the GUI thread preempts them.
        QCOMPARE(h.engine->loadedThreads(), std::max(1, QThread::idealThreadCount()));
        QVERIFY(h.engine->loadedLowPriority());

        MessageListModel* messages = h.controller.messages();
        QList<int> changedRows;
        connect(messages, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& a, const QModelIndex& b) {
                    QCOMPARE(a.row(), b.row());
                    changedRows << a.row();
                });
        QSignalSpy resets(messages, &QAbstractItemModel::modelReset);
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("Hello model")));
#if defined(__linux__)
        QCOMPARE(h.engine->generateThreadNice(), 10);  // the engine thread lowered itself
#endif

        QCOMPARE(resets.count(), 0);  // streaming never resets the model
        QVERIFY(changedRows.size() >= 3);
        for (int row : changedRows) QCOMPARE(row, 1);
        QCOMPARE(messages->rowCount(), 2);
        QCOMPARE(messages->at(0).content, QStringLiteral("Hello model"));
        QCOMPARE(messages->at(1).content, joined(script));
        QCOMPARE(messages->at(1).state, QStringLiteral("complete"));
        QCOMPARE(h.controller.currentTitle(), QStringLiteral("Hello model"));
        QCOMPARE(h.controller.conversations()->rowCount(), 1);
        QVERIFY(h.controller.contextUsed() > 0);
        QVERIFY(h.controller.tokensPerSecond() > 0);

        const auto stored = await(h.store.messages(h.controller.currentConversationId()));
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].content, joined(script));
        QCOMPARE(stored[1].completionTokens, 5);
        QCOMPARE(stored[1].model, QStringLiteral("fake"));  // the file's base name
        QVERIFY(stored[1].sparsity > 0);
    }

    // The status bar's "Context used / size" follows the reply while it
    // streams (it once stayed at 0 until the reply ended).
    void contextUseFollowsTheStream() {
        FakeScript script;
        script.tokens = {"One", " two", " three", " four", " five", " six"};
        script.tokenDelay = 30ms;  // slower than the batch interval: several updates
        Harness h(sub_, script);
        QVERIFY(h.start());
        QCOMPARE(h.controller.contextUsed(), 0);
        MessageListModel* messages = h.controller.messages();
        const auto replyStreaming = [&] {
            const int n = messages->rowCount();
            return h.controller.generating() && n > 0 &&
                   messages->at(n - 1).state == QLatin1String("partial");
        };
        QList<int> whileStreaming;
        connect(&h.controller, &ChatController::statsChanged, this, [&] {
            const int used = h.controller.contextUsed();
            if (replyStreaming() && used > 0 &&
                (whileStreaming.isEmpty() || whileStreaming.last() != used))
                whileStreaming << used;
        });
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("Count with me")));
        QVERIFY2(whileStreaming.size() >= 3, "context use must change during the reply");
        for (int i = 1; i < whileStreaming.size(); ++i)
            QVERIFY(whileStreaming[i] > whileStreaming[i - 1]);
        // The prompt counts from the first update on, not only the reply.
        QVERIFY(whileStreaming.first() > int(script.tokens.size()));
        // At the end, the engine's own counts.
        QCOMPARE(h.controller.contextUsed(),
                 int(h.engine->lastRequest().messages.size()) * script.promptTokensPerMessage +
                     int(script.tokens.size()));
    }

    void requestCarriesSystemPromptHistoryAndSampling() {
        Harness h(sub_);
        QVERIFY(h.start());
        h.controller.setSystemPrompt("You are terse.");
        h.settings.setTemperature(0.2);
        h.settings.setTopK(7);
        h.settings.setMaxTokens(3);
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("one")));
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("two")));
        const auto& req = h.engine->lastRequest();
        QCOMPARE(req.messages.size(), size_t(4));
        QCOMPARE(req.messages[0].role, std::string("system"));
        QCOMPARE(req.messages[0].content, std::string("You are terse."));
        QCOMPARE(req.messages[2].role, std::string("assistant"));
        QCOMPARE(req.messages[3].content, std::string("two"));
        QCOMPARE(req.max_tokens, 3);
        QCOMPARE(req.sampling.top_k, 7);
        QCOMPARE(req.sampling.temperature, 0.2f);
        // The system prompt is stored with the conversation.
        QCOMPARE(await(h.store.conversations())[0].systemPrompt, QStringLiteral("You are terse."));
        // Settings are persisted.
        QTRY_COMPARE(await(h.store.settings()).value("top_k"), QStringLiteral("7"));
    }

    void stopKeepsAndSavesThePartialReply() {
        FakeScript script;
        script.endless = true;
        script.tokenDelay = 3ms;
        Harness h(sub_, script);
        QVERIFY(h.start());
        h.settings.setMaxTokens(100000);
        connect(h.controller.messages(), &QAbstractItemModel::dataChanged, &h.controller,
                &ChatController::stop);
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("go")));
        const MessageRecord reply = h.controller.messages()->at(1);
        QCOMPARE(reply.state, QStringLiteral("stopped"));
        QVERIFY(!reply.content.isEmpty());
        QVERIFY(!h.controller.generating());
        const auto stored = await(h.store.messages(h.controller.currentConversationId()));
        QCOMPARE(stored[1].state, QStringLiteral("stopped"));
        QCOMPARE(stored[1].content, reply.content);
    }

    void regenerateReplacesTheLastReply() {
        Harness h(sub_);
        QVERIFY(h.start());
        QVERIFY(!h.controller.canRegenerate());
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("q")));
        const QString firstUid = h.controller.messages()->at(1).uid;
        QVERIFY(h.controller.canRegenerate());
        QVERIFY(QCoro::waitFor(h.controller.regenerateReply()));
        QCOMPARE(h.controller.messages()->rowCount(), 2);
        QVERIFY(h.controller.messages()->at(1).uid != firstUid);
        const auto stored = await(h.store.messages(h.controller.currentConversationId()));
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[1].uid, h.controller.messages()->at(1).uid);
    }

    void editTruncatesAndResends() {
        Harness h(sub_);
        QVERIFY(h.start());
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("first")));
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("second")));
        QCOMPARE(h.controller.messages()->rowCount(), 4);
        const QString uid = h.controller.messages()->at(0).uid;
        QVERIFY(QCoro::waitFor(h.controller.editMessage(uid, "first, edited")));
        QCOMPARE(h.controller.messages()->rowCount(), 2);
        QCOMPARE(h.controller.messages()->at(0).content, QStringLiteral("first, edited"));
        QCOMPARE(h.engine->lastRequest().messages.size(), size_t(1));
        const auto stored = await(h.store.messages(h.controller.currentConversationId()));
        QCOMPARE(stored.size(), 2);
        QCOMPARE(stored[0].content, QStringLiteral("first, edited"));
        // Editing an assistant message is not a thing.
        QVERIFY(!QCoro::waitFor(h.controller.editMessage(stored[1].uid, "x")));
    }

    void failedLoadKeepsTheAppUsable() {
        FakeScript bad;
        bad.loadError = "broken.gguf: tensor data outside the file at offset 1234";
        Harness h(sub_, bad);
        QVERIFY(h.start(false));
        QVERIFY(!QCoro::waitFor(h.controller.loadModelFile("/models/broken.gguf")));
        QCOMPARE(h.controller.modelState(), ChatController::ModelState::Failed);
        QCOMPARE(h.controller.loadError(), QString::fromStdString(bad.loadError));
        QVERIFY(!QCoro::waitFor(h.controller.sendMessage("hello?")));
        QVERIFY(h.controller.notice().contains("Load a model"));
        QCOMPARE(h.controller.messages()->rowCount(), 0);
    }

    void cancelledLoadReturnsToNoModel() {
        FakeScript slow;
        slow.loadSteps.assign(100, 0.1f);
        slow.loadStepDelay = 10ms;
        Harness h(sub_, slow);
        QVERIFY(h.start(false));
        connect(&h.controller, &ChatController::loadProgressChanged, &h.controller,
                &ChatController::cancelLoad);
        QVERIFY(!QCoro::waitFor(h.controller.loadModelFile("/models/slow.gguf")));
        QCOMPARE(h.controller.modelState(), ChatController::ModelState::NoModel);
        QVERIFY(h.controller.loadError().isEmpty());
    }

    void conversationsSearchRenameDeleteExport() {
        Harness h(sub_);
        QVERIFY(h.start());
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("about zebras")));
        const qint64 zebra = h.controller.currentConversationId();
        h.controller.newConversation();
        QCOMPARE(h.controller.messages()->rowCount(), 0);
        QVERIFY(QCoro::waitFor(h.controller.sendMessage("about owls")));
        QCOMPARE(h.controller.conversations()->rowCount(), 2);
        QCOMPARE(h.controller.conversations()->at(0).title, QStringLiteral("about owls"));

        h.controller.setSearchText("zebr");
        QTRY_COMPARE(h.controller.conversations()->rowCount(), 1);
        QCOMPARE(h.controller.conversations()->at(0).id, zebra);
        h.controller.setSearchText("");
        QTRY_COMPARE(h.controller.conversations()->rowCount(), 2);

        QCoro::waitFor(h.controller.openConversationAsync(zebra));
        QCOMPARE(h.controller.messages()->rowCount(), 2);  // loaded lazily on open
        QCOMPARE(h.controller.messages()->at(0).content, QStringLiteral("about zebras"));

        h.controller.renameConversation(zebra, "  Zebra facts ");
        QCOMPARE(h.controller.currentTitle(), QStringLiteral("Zebra facts"));
        QTRY_COMPARE(await(h.store.conversations("Zebra facts")).size(), 1);

        const QString md = QDir(sub_).filePath("out.md");
        const QString json = QDir(sub_).filePath("out.json");
        QVERIFY(QCoro::waitFor(h.controller.exportTo(md, "markdown")));
        QVERIFY(QCoro::waitFor(h.controller.exportTo("file://" + json, "json")));
        QFile f(md);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(QDir(sub_).entryList().join(",")));
        QVERIFY(f.readAll().startsWith("# Zebra facts"));
        QVERIFY(QFile::exists(json));

        h.controller.deleteConversation(zebra);
        QCOMPARE(h.controller.currentConversationId(), 0);
        QCOMPARE(h.controller.conversations()->rowCount(), 1);
        QTRY_COMPARE(await(h.store.conversations()).size(), 1);
    }

    void crashLosesAtMostTheLastCheckpointWindow() {
        QDir().mkpath(sub_);
        QProcess helper;
        helper.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        helper.start(QCoreApplication::applicationFilePath(), {"--crash-helper", sub_});
        QVERIFY(helper.waitForStarted());
        QString uid;
        int checkpoints = 0, length = 0;
        QElapsedTimer t;
        t.start();
        while (checkpoints < 3 && t.elapsed() < 20000) {
            helper.waitForReadyRead(500);
            while (helper.canReadLine()) {
                const QStringList parts = QString::fromUtf8(helper.readLine()).trimmed().split(' ');
                if (parts.size() == 3 && parts[0] == "CHECKPOINT") {
                    uid = parts[1];
                    length = parts[2].toInt();
                    ++checkpoints;
                }
            }
        }
        QCOMPARE(checkpoints, 3);
        helper.kill();  // SIGKILL: no destructors, no final save
        QVERIFY(helper.waitForFinished());

        ChatStore store(sub_ + "/conversations.sqlite");
        QCOMPARE(await(store.open()), QString());
        const auto conversations = await(store.conversations());
        QCOMPARE(conversations.size(), 1);
        const auto rows = await(store.messages(conversations[0].id));
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0].content, QStringLiteral("Tell me everything"));
        QCOMPARE(rows[1].uid, uid);
        QCOMPARE(rows[1].state, QStringLiteral("partial"));
        QVERIFY2(rows[1].content.size() >= length, qPrintable(rows[1].content));
        QVERIFY(rows[1].content.startsWith("lorem ipsum dolor lorem"));
    }

private:
    QTemporaryDir dir_;
    QString sub_;
    int n_ = 0;
};

int main(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; ++i) {
        if (qstrcmp(argv[i], "--crash-helper") == 0)
            return runCrashHelper(argc, argv, QString::fromLocal8Bit(argv[i + 1]));
    }
    QGuiApplication app(argc, argv);  // the clipboard needs a GUI application
    TestChatController test;
    return QTest::qExec(&test, argc, argv);
}
#include "tst_chat_controller.moc"
