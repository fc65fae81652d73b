// Qt Quick Test runner for the views. The controller under test runs on a
// FakeEngine and a throw-away database; tests reach it as `testController`.
#include <QtQml/qqmlextensionplugin.h>
#include <qcoro/qcorotask.h>

#include <QApplication>
#include <QQmlContext>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtPlugin>
#include <QtQuickTest>

#include "chat_controller.h"
#include "fake_engine.h"

Q_IMPORT_QML_PLUGIN(PowerInfer_UiPlugin)
Q_IMPORT_QML_PLUGIN(PowerInfer_AppPlugin)

using namespace powerinfer::app;

class Setup : public QObject {
    Q_OBJECT
public:
    Setup() {
        FakeScript script;
        script.tokens = {"Here",  " is",    " **code**", ":\n\n", "```cpp\n", "int main() {}\n",
                         "```\n", "\nDone", "."};
        script.tokenDelay = std::chrono::milliseconds(2);
        store_ = std::make_unique<ChatStore>(dir_.filePath("conversations.sqlite"));
        client_ = std::make_unique<EngineClient>(
            [script](const powerinfer::LoadOptions& o) { return FakeEngine::load(o, script); });
        models_ = std::make_unique<ModelCatalog>(nullptr);
        controller_ = std::make_unique<ChatController>(store_.get(), client_.get(), models_.get(),
                                                       &settings_);
    }

public slots:
    void qmlEngineAvailable(QQmlEngine* engine) {
        QQuickStyle::setStyle("Basic");
        // Static QML modules live in the resources under their URI path.
        engine->addImportPath("qrc:/");
        const QString error = QCoro::waitFor(controller_->initialize());
        if (!error.isEmpty()) qFatal("store: %s", qPrintable(error));
        if (!QCoro::waitFor(controller_->loadModelFile(dir_.filePath("fake.gguf"))))
            qFatal("fake model did not load");
        // Test-only: the views under test get the controller as a context property.
        engine->rootContext()->setContextProperty("testController", controller_.get());
    }

private:
    QTemporaryDir dir_;
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
