// Qt Quick Test runner for the views. The controller under test runs on a
// ScriptedEngine and a throw-away database; tests reach it as `testController`.
#include <QtQml/qqmlextensionplugin.h>
#include <qcoro/qcorotask.h>

#include <QApplication>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlContext>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QUuid>
#include <QtPlugin>
#include <QtQuickTest>

#include "chat_controller.h"
#include "scripted_engine.h"
#include "test_http_file_server.h"

Q_IMPORT_QML_PLUGIN(PowerInfer_UiPlugin)
Q_IMPORT_QML_PLUGIN(PowerInfer_AppPlugin)

using namespace powerinfer::app;
using powerinfer::testing::EngineScript;
using powerinfer::testing::ScriptedEngine;

// What the ScriptedEngine received, for the tuning tests.
class EngineProbe : public QObject {
    Q_OBJECT
public:
    std::atomic<ScriptedEngine*> engine{nullptr};
    Q_INVOKABLE int tuningCalls() const {
        return engine ? int(engine.load()->tuningCalls().size()) : 0;
    }
    Q_INVOKABLE double lastHotNeuronThreshold() const {
        const auto calls =
            engine ? engine.load()->tuningCalls() : std::vector<powerinfer::Tuning>{};
        return calls.empty() ? -1 : calls.back().hot_neuron_threshold;
    }
};

// Writes conversations straight into the store, as an earlier run left them.
class StoreSeeder : public QObject {
    Q_OBJECT
public:
    ChatStore* store = nullptr;
    ChatController* controller = nullptr;
    // A conversation whose reply was cut off by a crash; returns its id.
    Q_INVOKABLE qint64 seedReply(const QString& question, const QString& reply,
                                 const QString& state) {
        return seedTurns({question, reply}, state);
    }
    // A conversation of turns, user first, alternating; the last reply in
    // `lastState`, the others complete. Returns its id.
    Q_INVOKABLE qint64 seedTurns(const QStringList& turns, const QString& lastState) {
        QFuture<ConversationRecord> created = store->createConversation(turns.value(0), {});
        created.waitForFinished();  // result() alone does not wait for a queued start
        const ConversationRecord c = created.result();
        for (qsizetype i = 0; i < turns.size(); ++i) {
            MessageRecord m;
            m.uid = QUuid::createUuid().toString(QUuid::WithoutBraces);
            m.conversationId = c.id;
            m.role = i % 2 == 0 ? QStringLiteral("user") : QStringLiteral("assistant");
            m.content = turns[i];
            m.state = i + 1 == turns.size() && i % 2 == 1 ? lastState : QStringLiteral("complete");
            store->saveMessage(m).waitForFinished();
        }
        QCoro::waitFor(controller->refreshConversations());
        return c.id;
    }
};

// A pasted-link download that a kill -9 stopped part-way (its .part file and
// state record, as the killed app left them) in a models folder of its own,
// served from 127.0.0.1 (test_http_file_server.h).
class DownloadFixture : public QObject {
    Q_OBJECT
public:
    ChatController* controller = nullptr;
    // Returns the file name; the server sends `bytesPerSecond`.
    Q_INVOKABLE QString interruptedDownload(int bytesPerSecond) {
        dir_ = std::make_unique<QTemporaryDir>();
        const QString source = dir_->filePath("served.gguf");
        QByteArray bytes(4 << 20, 'x');
        bytes.replace(0, 4, "GGUF");
        QFile out(source);
        if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size()) return {};
        out.close();
        server_ = std::make_unique<powerinfer::test::HttpFileServer>(source);
        server_->options.bytesPerSecond = bytesPerSecond;
        const QString folder = dir_->filePath("models");
        QDir().mkpath(folder);
        QFile part(folder + "/model.gguf.part");
        if (!part.open(QIODevice::WriteOnly)) return {};
        part.write(bytes.left(1 << 20));
        QFile record(folder + "/model.gguf.part.json");
        if (!record.open(QIODevice::WriteOnly)) return {};
        // (No raw string literal here: moc 6.4 loses the class after one.)
        const QJsonObject state{{"version", 1},         {"url", server_->url("/model.gguf")},
                                {"file", "model.gguf"}, {"total", double(bytes.size())},
                                {"etag", "\"v1\""},     {"expected_size", -1}};
        record.write(QJsonDocument(state).toJson());
        record.close();
        // Through the settings, as the app sets it (a settings change sets the
        // downloads' folder again); restoreFolder() puts the previous one back.
        previousFolder_ = controller->settings()->modelsFolder();
        controller->settings()->setModelsFolder(folder);
        return QStringLiteral("model.gguf");
    }
    Q_INVOKABLE void restoreFolder() {
        if (!previousFolder_.isEmpty()) controller->settings()->setModelsFolder(previousFolder_);
    }
    Q_INVOKABLE QStringList ranges() const {
        QStringList out;
        if (server_)
            for (const auto& r : server_->requests) out << QString::fromLatin1(r.range);
        return out;
    }
    Q_INVOKABLE void touch(const QString& name) const {
        QFile f(dir_->filePath("models/" + name));
        if (f.open(QIODevice::WriteOnly)) f.write("GGUF");
    }
    Q_INVOKABLE QStringList folderFiles() const {
        return QDir(dir_->filePath("models")).entryList(QDir::Files, QDir::Name);
    }

private:
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<powerinfer::test::HttpFileServer> server_;
    QString previousFolder_;
};

class Setup : public QObject {
    Q_OBJECT
public:
    Setup() {
        EngineScript script;
        script.tokens = {"Here",  " is",    " **code**", ":\n\n", "```cpp\n", "int main() {}\n",
                         "```\n", "\nDone", "."};
        script.tokenDelay = std::chrono::milliseconds(2);
        // A calibrated sidecar's curve (SmolLM2's on the Zen 1 VM,
        // docs/benchmarks.md): timed up to the recommendation, and level 0
        // (the dense FFN with the head's preview) the fastest, so the default;
        // level 0's bytes per token against dense's are SmolLM2's as counted
        // by the Zen 3 VM's calibration (the others not given).
        script.curve.bound = 0.02;
        script.curve.recommended = 0.45;
        script.curve.default_level = 0.0;
        script.curve.points = {{0.0, 0.0, -0.0021, 0.0103, 0.970, 1.031, 0.751},
                               {0.2, 0.199, 0.0009, 0.0114, 0.961, 0.822},
                               {0.3, 0.299, 0.0016, 0.0141, 0.948, 0.838},
                               {0.4, 0.4, 0.0028, 0.0211, 0.923, 0.871},
                               {0.45, 0.449, 0.0114, 0.0282, 0.913, 0.870},
                               {0.5, 0.499, 0.0200, 0.037, 0.884, 0},
                               {0.6, 0.597, 0.0332, 0.0694, 0.836, 0}};
        store_ = std::make_unique<ChatStore>(dir_.filePath("conversations.sqlite"));
        client_ = std::make_unique<EngineClient>([this, script](const powerinfer::LoadOptions& o) {
            // A file named so stands for one without a chat template (the
            // Gemma 3 270M file), as the engine reports it.
            EngineScript loaded = script;
            if (o.model_path.filename() == "no-template.gguf")
                loaded.templateWarning =
                    "The model has no chat template; using Gemma's turn format (its vocabulary "
                    "has <start_of_turn>).";
            // ... and one not calibrated yet (no sidecar).
            if (o.model_path.filename() == "dense.gguf") loaded.sidecar = false;
            auto engine = ScriptedEngine::load(o, loaded);
            probe_.engine = engine.get();
            return engine;
        });
        models_ = std::make_unique<ModelCatalog>(nullptr);
        controller_ = std::make_unique<ChatController>(store_.get(), client_.get(), models_.get(),
                                                       &settings_);
        seeder_.store = store_.get();
        seeder_.controller = controller_.get();
        downloads_.controller = controller_.get();
    }

public slots:
    void qmlEngineAvailable(QQmlEngine* engine) {
        // Static QML modules live in the resources under their URI path.
        engine->addImportPath("qrc:/");
        // Called once per test file (each gets its own engine): set up once.
        if (!initialized_) {
            initialized_ = true;
            QQuickStyle::setStyle("Basic");
            const QString error = QCoro::waitFor(controller_->initialize());
            if (!error.isEmpty()) qFatal("store: %s", qPrintable(error));
            if (!QCoro::waitFor(controller_->loadModelFile(dir_.filePath("fake.gguf"))))
                qFatal("fake model did not load");
        }
        // Test-only: the views under test get the controller as a context property.
        engine->rootContext()->setContextProperty("testController", controller_.get());
        engine->rootContext()->setContextProperty("testEngine", &probe_);
        engine->rootContext()->setContextProperty("testStore", &seeder_);
        engine->rootContext()->setContextProperty("testDownloads", &downloads_);
        // Where tests save screenshots of the views they check (docs/screenshots);
        // empty: none are saved.
        engine->rootContext()->setContextProperty(
            "testScreenshotDir", QString::fromLocal8Bit(qgetenv("PI_SCREENSHOT_DIR")));
        engine->rootContext()->setContextProperty(
            "testScreenshotTheme", QString::fromLocal8Bit(qgetenv("PI_SCREENSHOT_THEME")));
    }

private:
    QTemporaryDir dir_;
    bool initialized_ = false;
    EngineProbe probe_;
    StoreSeeder seeder_;
    DownloadFixture downloads_;
    AppSettings settings_;
    std::unique_ptr<ChatStore> store_;
    std::unique_ptr<EngineClient> client_;
    std::unique_ptr<ModelCatalog> models_;
    std::unique_ptr<ChatController> controller_;
};

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    Setup setup;
    return quick_test_main_with_setup(argc, argv, "tst_ui", QUICK_TEST_SOURCE_DIR, &setup);
}

#include "tst_ui.moc"
