#include "desktop_app.h"

#include <qcoro/qcorosignal.h>
#include <qcoro/qcorotimer.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QIcon>
#include <QLibraryInfo>
#include <QMessageBox>
#include <QQmlApplicationEngine>
#include <QQmlComponent>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QStandardPaths>
#include <QTimer>
#include <QTranslator>
#include <cstdio>

#include "app_settings.h"
#include "chat_controller.h"
#include "chat_store.h"
#include "headless_modes.h"
#include "smoke_mode.h"

namespace powerinfer::app {

namespace {

bool asksForHeadlessMode(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--download" || a.startsWith("--download=") || a == "--remote" ||
            a.startsWith("--remote="))
            return true;
    }
    return false;
}

bool asksForHelpOrVersion(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--help" || a == "-h" || a == "--help-all" || a == "--version" || a == "-v" ||
            a == "-?")
            return true;
    }
    return false;
}

// The QML modules the window imports, with the Debian package of each: a
// missing one made "Open file…" crash; now the app says what to install.
QStringList missingQmlModules(QQmlEngine& engine) {
    struct Module {
        const char* uri;
        const char* package;
    };
    QList<Module> required = {
        {"QtQuick", "qml6-module-qtquick"},
        {"QtQuick.Window", "qml6-module-qtquick-window"},
        {"QtQuick.Controls", "qml6-module-qtquick-controls"},
        {"QtQuick.Templates", "qml6-module-qtquick-templates"},
        {"QtQuick.Layouts", "qml6-module-qtquick-layouts"},
    };
    // For tests: one more module that must be present (e.g. a missing one).
    const QByteArray extra = qgetenv("POWERINFER_REQUIRE_QML_MODULE");
    if (!extra.isEmpty()) required.append(Module{extra.constData(), "(test module)"});
    QStringList missing;
    for (const Module& m : required) {
        QQmlComponent probe(&engine);
        probe.setData(QByteArray("import ") + m.uri + "\nimport QtQml\nQtObject {}\n",
                      QUrl(QStringLiteral("qrc:/module-check.qml")));
        if (probe.isError())
            missing << QStringLiteral("%1 (Debian/Ubuntu: apt install %2)")
                           .arg(QLatin1String(m.uri), QLatin1String(m.package));
    }
    return missing;
}

QString chooseFile(FileDialogKind kind, const QString& title, const QString& start,
                   const QString& filter) {
    switch (kind) {
        case FileDialogKind::Save:
            return QFileDialog::getSaveFileName(nullptr, title, start, filter);
        case FileDialogKind::Open:
            return QFileDialog::getOpenFileName(nullptr, title, start, filter);
        case FileDialogKind::Folder:
            return QFileDialog::getExistingDirectory(nullptr, title, start);
    }
    return {};
}

// Takes a QCoreApplication so that --help and --version work without a
// display (a QApplication aborts when no display can be opened).
DesktopOptions parseOptions(const QCoreApplication& app) {
    DesktopOptions o;
    QCommandLineParser p;
    p.setApplicationDescription(
        QApplication::translate("main",
                                "Chat with local language models using sparse hybrid "
                                "GPU/CPU inference."));
    p.addHelpOption();
    p.addVersionOption();
    const QCommandLineOption dataDir(
        "data-dir", QApplication::translate("main", "Folder for conversations and settings."),
        "dir");
    const QCommandLineOption model(
        "model", QApplication::translate("main", "GGUF model to load at start."), "file");
    const QCommandLineOption prompt(
        "prompt", QApplication::translate("main", "Send this prompt in a new conversation."),
        "text");
    const QCommandLineOption screenshot(
        "screenshot", QApplication::translate("main", "Save a window screenshot after the reply."),
        "file.png");
    const QCommandLineOption quit(
        "quit-after-reply", QApplication::translate("main", "Exit once the reply is complete."));
    const QCommandLineOption theme(
        "theme", QApplication::translate("main", "Colour theme: system, light or dark."), "mode");
    const QCommandLineOption sparseEngine(
        "sparse-engine",
        QApplication::translate("main",
                                "Sparse engine of a calibrated model: v2 (FFN neurons, the "
                                "default) or v3 (input sparsity on every matrix, opt-in)."),
        "v2|v3");
    const QCommandLineOption tuning(
        "tuning",
        QApplication::translate("main",
                                "Set a sparse-engine knob after loading (repeatable), e.g. "
                                "hot_neuron_threshold=0.7; saved in the model's config.json."),
        "key=value");
    const QCommandLineOption showMetrics(
        "show-metrics", QApplication::translate("main", "Show the metrics panel."));
    const QCommandLineOption showSettings(
        "show-settings", QApplication::translate("main", "Open the chat settings."));
    const QCommandLineOption showTuning("show-tuning",
                                        QApplication::translate("main", "Open the tuning panel."));
    const QCommandLineOption afterTokens(
        "screenshot-after-tokens",
        QApplication::translate("main", "Take the --screenshot mid-reply, after N tokens."), "N");
    const QCommandLineOption calibrate(
        "calibrate",
        QApplication::translate("main",
                                "Calibrate the --model first (writes its sidecar): on the bundled "
                                "text, your conversations, or a text file."),
        "bundled|conversations|file.txt");
    const QCommandLineOption calibrationTokens(
        "calibration-tokens",
        QApplication::translate("main", "Corpus tokens for --calibrate (default 20000)."), "N");
    const QCommandLineOption compare(
        "compare-with-dense",
        QApplication::translate("main",
                                "After the reply, replay the prompt through the dense and the "
                                "sparse path and print the token agreement and speeds."));
    const QCommandLineOption windowSize(
        "window-size", QApplication::translate("main", "Initial window size, e.g. 800x600."),
        "WxH");
    const QCommandLineOption download(
        "download",
        QApplication::translate("main",
                                "Download a .gguf into the models folder without a window "
                                "(resumes an unfinished one), verify it, and exit."),
        "url");
    const QCommandLineOption sha256(
        "sha256", QApplication::translate("main", "Expected SHA-256 of the --download."), "hex");
    const QCommandLineOption modelsDir(
        "models-dir",
        QApplication::translate("main", "Models folder for --download (default: the app's)."),
        "dir");
    const QCommandLineOption remote(
        "remote",
        QApplication::translate("main",
                                "Chat with --prompt through an OpenAI-compatible server at this "
                                "URL, without a window; the reply goes to stdout."),
        "url");
    const QCommandLineOption apiKey(
        "api-key", QApplication::translate("main", "API key for --remote."), "key");
    const QCommandLineOption remoteModel(
        "remote-model",
        QApplication::translate("main", "Model id for --remote (default: the server's first)."),
        "id");
    const QCommandLineOption maxTokens(
        "max-tokens", QApplication::translate("main", "Reply length limit for --remote."), "N");
    const QCommandLineOption stopAfter(
        "stop-after-ms",
        QApplication::translate("main", "Press Stop this long into the --remote reply."), "ms");
    const QCommandLineOption showCatalog(
        "show-catalog", QApplication::translate("main", "Open the model catalog (Get a model)."));
    const QCommandLineOption downloadEntry(
        "download-entry",
        QApplication::translate("main", "Start downloading this catalog entry (its id)."), "id");
    const QCommandLineOption waitDownload(
        "wait-download",
        QApplication::translate("main",
                                "Smoke mode: wait until the downloads end before the screenshot "
                                "(exit 1 if one failed)."));
    const QCommandLineOption keysAfterReply(
        "keys-after-reply",
        QApplication::translate("main",
                                "Smoke mode: type this key sequence into the window after the "
                                "reply (e.g. Ctrl+Q), then fail unless the app quits."),
        "keys");
    const QCommandLineOption screenshotDelay(
        "screenshot-delay-ms",
        QApplication::translate("main", "Smoke mode: wait this long before the screenshot."), "ms");
    const QCommandLineOption calibrateBackground(
        "calibrate-background",
        QApplication::translate("main",
                                "Smoke mode: calibrate the model in the background (bundled text) "
                                "while the --prompt is answered, then wait for it."));
    p.addOptions({calibrateBackground,
                  dataDir,
                  model,
                  prompt,
                  screenshot,
                  quit,
                  theme,
                  sparseEngine,
                  tuning,
                  showMetrics,
                  showTuning,
                  showSettings,
                  afterTokens,
                  calibrate,
                  calibrationTokens,
                  compare,
                  windowSize,
                  download,
                  sha256,
                  modelsDir,
                  remote,
                  apiKey,
                  remoteModel,
                  maxTokens,
                  stopAfter,
                  showCatalog,
                  downloadEntry,
                  waitDownload,
                  screenshotDelay,
                  keysAfterReply});
    // The desktop file passes a model as %f.
    p.addPositionalArgument(
        "model.gguf", QApplication::translate("main", "A GGUF model to load (same as --model)."),
        "[model.gguf]");
    p.process(app);
    const QStringList size = p.value(windowSize).split(QLatin1Char('x'));
    if (size.size() == 2) o.windowSize = QSize(size[0].toInt(), size[1].toInt());
    o.tuning = p.values(tuning);
    o.showMetrics = p.isSet(showMetrics);
    o.showTuning = p.isSet(showTuning);
    o.showSettings = p.isSet(showSettings);
    o.screenshotAfterTokens = p.value(afterTokens).toInt();
    o.calibrate = p.value(calibrate);
    o.calibrationTokens = p.value(calibrationTokens).toInt();
    o.compare = p.isSet(compare);
    o.dataDir = p.value(dataDir);
    o.model = p.value(model);
    if (o.model.isEmpty() && !p.positionalArguments().isEmpty()) {
        const QString arg = p.positionalArguments().constFirst();
        o.model = arg.startsWith(QLatin1String("file:")) ? QUrl(arg).toLocalFile() : arg;
        o.model = QFileInfo(o.model).absoluteFilePath();
    }
    o.prompt = p.value(prompt);
    o.screenshot = p.value(screenshot);
    o.theme = p.value(theme);
    o.sparseEngine = p.value(sparseEngine);
    o.quitAfterReply = p.isSet(quit);
    o.keysAfterReply = p.value(keysAfterReply);
    o.showCatalog = p.isSet(showCatalog);
    o.calibrateBackground = p.isSet(calibrateBackground);
    o.downloadEntry = p.value(downloadEntry);
    o.waitDownload = p.isSet(waitDownload);
    if (p.isSet(screenshotDelay)) o.screenshotDelayMs = p.value(screenshotDelay).toInt();
    o.download.url = p.value(download);
    o.download.sha256 = p.value(sha256);
    o.download.modelsDir = p.value(modelsDir);
    o.download.dataDir = !o.dataDir.isEmpty()
                             ? o.dataDir
                             : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    o.remote.url = p.value(remote);
    o.remote.apiKey = !p.value(apiKey).isEmpty()
                          ? p.value(apiKey)
                          : QString::fromLocal8Bit(qgetenv("POWERINFER_API_KEY"));
    o.remote.model = p.value(remoteModel);
    o.remote.prompt = o.prompt;
    if (p.isSet(maxTokens)) o.remote.maxTokens = p.value(maxTokens).toInt();
    if (p.isSet(stopAfter)) o.remote.stopAfterMs = p.value(stopAfter).toInt();
    return o;
}

QCoro::Task<> startUp(ChatController* controller, QQmlApplicationEngine* qml,
                      DesktopOptions options) {
    const QString error = co_await controller->initialize();
    if (!error.isEmpty()) {
        printFailure(error);
        if (!options.quitAfterReply)
            QMessageBox::critical(nullptr, QStringLiteral("PowerInfer"), error);
        QCoreApplication::exit(2);
        co_return;
    }
    if (!options.theme.isEmpty())  // a one-off override, not stored
        controller->settings()->restore({{QStringLiteral("theme"), options.theme}});

    if (!options.sparseEngine.isEmpty()) {
        if (options.sparseEngine != QLatin1String("v2") &&
            options.sparseEngine != QLatin1String("v3")) {
            printFailure(QStringLiteral("--sparse-engine takes v2 or v3, not '%1'")
                             .arg(options.sparseEngine));
            QCoreApplication::exit(2);
            co_return;
        }
        // A one-off override, not stored.
        controller->settings()->restore(
            {{QStringLiteral("sparse_engine"), options.sparseEngine.mid(1)}});
    }
    if (options.showMetrics)  // a one-off override, not stored
        controller->settings()->restore({{QStringLiteral("show_metrics"), QStringLiteral("true")}});
    // The fit estimates' speeds need the host's bandwidth: measured once
    // (kept in the settings), not in plain smoke runs.
    const bool smokeRun = options.quitAfterReply || !options.screenshot.isEmpty();
    if (!smokeRun || options.showCatalog || !options.downloadEntry.isEmpty() ||
        options.waitDownload)
        controller->catalog()->ensureBandwidth();
    if (!options.downloadEntry.isEmpty()) {
        DownloadCatalog* catalog = controller->catalog();
        int row = -1;
        for (int r = 0; r < catalog->rowCount(); ++r)
            if (catalog->entry(r)->id == options.downloadEntry) row = r;
        const QString error = row < 0 ? QStringLiteral("no catalog entry \"%1\" in %2")
                                            .arg(options.downloadEntry, catalogSource())
                                      : catalog->download(row);
        if (!error.isEmpty()) {
            printFailure(error);
            QCoreApplication::exit(1);
            co_return;
        }
    }
    // A newcomer (no model in the models folder, none asked for) starts in
    // the catalog.
    if (controller->models()->scanning())
        co_await qCoro(controller->models(), &ModelCatalog::scanned);
    const bool newcomer = options.model.isEmpty() && controller->models()->rowCount() == 0 &&
                          controller->settings()->lastModelPath().isEmpty() &&
                          options.prompt.isEmpty();
    qml->setInitialProperties(
        {{QStringLiteral("controller"), QVariant::fromValue(controller)},
         {QStringLiteral("openTuningAtStart"), options.showTuning},
         {QStringLiteral("openSettingsAtStart"), options.showSettings},
         {QStringLiteral("openCatalogAtStart"), options.showCatalog || newcomer}});
    if (const QStringList missing = missingQmlModules(*qml); !missing.isEmpty()) {
        const QString message = QStringLiteral("Qt Quick modules are missing: %1")
                                    .arg(missing.join(QStringLiteral("; ")));
        printFailure(message);
        if (!options.quitAfterReply)
            QMessageBox::critical(nullptr, QStringLiteral("PowerInfer"), message);
        QCoreApplication::exit(4);
        co_return;
    }
    qml->load(QUrl(QStringLiteral("qrc:/PowerInfer/Ui/Main.qml")));
    if (qml->rootObjects().isEmpty()) {
        printFailure(QStringLiteral("the user interface failed to load (see the messages above)"));
        QCoreApplication::exit(3);
        co_return;
    }
    if (options.windowSize.isValid()) {
        if (auto* window = qobject_cast<QQuickWindow*>(qml->rootObjects().value(0)))
            window->resize(options.windowSize);
    }
    const bool smoke = options.quitAfterReply || !options.prompt.isEmpty() ||
                       !options.screenshot.isEmpty() || !options.calibrate.isEmpty() ||
                       options.waitDownload;
    if (smoke) {
        co_await runSmoke(controller, qml, options);
        co_return;
    }
    if (!options.model.isEmpty() && !options.modelMustExist) {
        controller->loadModel(options.model);
    } else if (!options.model.isEmpty()) {
        // Asked for by name: a wrong path is said, on stderr and in the window.
        const QString error = controller->loadModelFromCommandLine(options.model);
        if (!error.isEmpty()) printFailure(error);
    } else {
        // The last model may have been moved or deleted since: then none loads.
        const QString last = controller->settings()->lastModelPath();
        if (!last.isEmpty() && QFileInfo::exists(last)) controller->loadModel(last);
    }
}

}  // namespace

int runDesktopApp(int argc, char** argv, DesktopServices services) {
    QApplication::setOrganizationName(QStringLiteral("PowerInfer"));
    QApplication::setApplicationName(QStringLiteral("PowerInfer Desktop"));
    QApplication::setApplicationVersion(QStringLiteral(POWERINFER_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.powerinfer.Desktop"));
    if (asksForHelpOrVersion(argc, argv)) {
        QCoreApplication core(argc, argv);
        parseOptions(core);  // prints and exits
        return 0;
    }
    if (asksForHeadlessMode(argc, argv)) {
        // No display needed: a QCoreApplication and the same downloader and
        // remote client as the window.
        QCoreApplication core(argc, argv);
        const DesktopOptions options = parseOptions(core);
        const auto headless = [](DesktopOptions o) -> QCoro::Task<> {
            const int code = !o.download.url.isEmpty() ? co_await runHeadlessDownload(o.download)
                                                       : co_await runHeadlessRemote(o.remote);
            QCoreApplication::exit(code);
        };
        QTimer::singleShot(0, &core, [&] { headless(options); });
        return core.exec();
    }
    // Charts in the metrics panel need a QApplication rather than a QGuiApplication.
    QApplication app(argc, argv);
    app.setWindowIcon(QIcon(QStringLiteral(":/icons/powerinfer-desktop.svg")));
    QQuickStyle::setStyle(QStringLiteral("Basic"));

    QTranslator translator;
    if (translator.load(QLocale(), QStringLiteral("powerinfer"), QStringLiteral("_"),
                        QStringLiteral(":/i18n")))
        app.installTranslator(&translator);

    DesktopOptions options = parseOptions(app);
    options.modelMustExist = services.modelMustExist;
    const QString dataDir = !options.dataDir.isEmpty()
                                ? options.dataDir
                                : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);

    ChatStore store(QDir(dataDir).filePath(QStringLiteral("conversations.sqlite")));
    // Remote servers ("remote:URL#model") through RemoteEngine, files through
    // the injected engine; the key comes from the keychain via the controller.
    auto credentials = std::make_shared<RemoteCredentials>();
    EngineClient engine(
        [local = std::move(services.engineFactory),
         credentials](const powerinfer::LoadOptions& o) -> std::unique_ptr<powerinfer::Engine> {
            if (isRemoteModelPath(QString::fromStdU16String(o.model_path.u16string())))
                return RemoteEngine::connect(o, credentials->apiKey());
            return local(o);
        });
    const Calibrator backgroundCalibrator = services.calibrator;
    if (services.calibrator) engine.setCalibrator(std::move(services.calibrator));
    if (services.previewer) engine.setPreviewer(std::move(services.previewer));
    AppSettings settings;
    ModelCatalog models(std::move(services.modelInspector));
    ChatController controller(&store, &engine, &models, &settings);
    controller.setFileChooser(chooseFile);
    controller.setRemoteCredentials(credentials);
    if (backgroundCalibrator)
        controller.backgroundCalibration()->setCalibrator(backgroundCalibrator);
    if (options.calibrationTokens > 0)
        controller.backgroundCalibration()->setTokens(options.calibrationTokens);
    if (services.gpuProbe) {
        const GpuFacts gpu = services.gpuProbe();
        controller.catalog()->setGpu(gpu.present, gpu.freeBytes, gpu.description);
    }
    if (services.decodeProbe) controller.catalog()->setDecodeProbe(services.decodeProbe);
    if (services.fitPreviewer) controller.catalog()->setPlacementPreviewer(services.fitPreviewer);
    QQmlApplicationEngine qml;
    // Static QML modules live in the resources under their URI path.
    qml.addImportPath(QStringLiteral("qrc:/"));

    startUp(&controller, &qml, options);
    return app.exec();
}

}  // namespace powerinfer::app
