// The desktop executable end to end, in its headless smoke mode: on the
// scripted engine (testsupport/scripted_engine.h, always), and on the real
// default model when the runtime is built and POWERINFER_MODEL is set.
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

class TestDesktopApp : public QObject {
    Q_OBJECT
private:
    struct Run {
        int exitCode = -1;
        QString out, err;
    };
    Run run(const QString& exe, const QStringList& args, int timeoutMs) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (!env.contains("QT_QPA_PLATFORM")) env.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(env);
        p.start(exe, args);
        if (!p.waitForFinished(timeoutMs)) {
            p.kill();
            p.waitForFinished();
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
                QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }
    // Checks the screenshot and returns the measured GUI stall.
    int checkSmoke(const Run& r, const QString& shot) {
        const QRegularExpression re("^gui_max_stall_ms: (\\d+)$",
                                    QRegularExpression::MultilineOption);
        const auto m = re.match(r.out);
        if (!m.hasMatch()) return -1;
        // Issue 30, item 1: the window opens within the screen (Qt 6.4's
        // offscreen screen is 800x800; it opened at 1280x800).
        const QImage image(shot);
        const bool offscreen = qEnvironmentVariable("QT_QPA_PLATFORM", "offscreen") == "offscreen";
        if (offscreen ? image.size() != QSize(800, 800)
                      : image.width() > 1280 || image.height() > 800)
            return -2;
        return m.captured(1).toInt();
    }

private slots:
    void smokeModeOnTheFakeEngine() {
        QTemporaryDir dir;
        const QString shot = dir.filePath("chat.png");
        const Run r = run(DESKTOP_DEMO_EXE,
                          {"--data-dir", dir.path(), "--model", "demo.gguf", "--prompt",
                           "Explain sparse inference", "--screenshot", shot, "--quit-after-reply",
                           "--theme", "dark"},
                          60000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const int stall = checkSmoke(r, shot);
        QVERIFY2(stall >= 0, qPrintable(r.out + r.err));
        qInfo("fake engine: gui_max_stall_ms %d", stall);
        QVERIFY(QFile::exists(dir.filePath("conversations.sqlite")));
    }

    // Issue 17: a long reply re-split its whole text per batch; at 4,000
    // tokens a batch cost 10x what it cost at the start and the GUI thread
    // stalled for 6-10 s. The bounds leave room for a busy machine (with
    // other builds running: ratio 0.9-2.1, worst stall 14-34 ms).
    void aLongReplyCostsTheSamePerBatchAtItsEnd() {
        QTemporaryDir dir;
        const Run r = run(DESKTOP_DEMO_EXE,
                          {"--data-dir", dir.path(), "--demo-tokens", "4000", "--demo-rate", "500",
                           "--prompt", "Explain sparse inference", "--quit-after-reply"},
                          120000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto ratio = QRegularExpression("batch_cost_ratio: ([0-9.]+)").match(r.out);
        const auto stall = QRegularExpression("gui_max_stall_ms: (\\d+)").match(r.out);
        QVERIFY2(ratio.hasMatch() && stall.hasMatch(), qPrintable(r.out));
        qInfo("4000 tokens at 500/s: batch_cost_ratio %s, gui_max_stall_ms %s",
              qPrintable(ratio.captured(1)), qPrintable(stall.captured(1)));
        QVERIFY2(ratio.captured(1).toDouble() < 3.0, qPrintable(r.out));
        QVERIFY2(stall.captured(1).toInt() < 250, qPrintable(r.out));
        // Leaving the 4,000-token chat and opening it again (165-205 ms of a
        // frozen window when every segment was built at once; 23-34 ms idle
        // with rows created near the viewport only).
        const auto leave = QRegularExpression("gui_leave_chat_stall_ms: (\\d+)").match(r.out);
        const auto open = QRegularExpression("gui_open_chat_stall_ms: (\\d+)").match(r.out);
        QVERIFY2(leave.hasMatch() && open.hasMatch(), qPrintable(r.out));
        qInfo("leaving it: %s ms, opening it: %s ms", qPrintable(leave.captured(1)),
              qPrintable(open.captured(1)));
        QVERIFY2(open.captured(1).toInt() < 250, qPrintable(r.out));
    }

    void tunedSmokeWithThePanelsOnTheFakeEngine() {
        QTemporaryDir dir;
        const QString shot = dir.filePath("tuned.png");
        const QString model = dir.filePath("demo.gguf");
        const Run r =
            run(DESKTOP_DEMO_EXE,
                {"--data-dir", dir.path(), "--model", model, "--prompt", "Explain",
                 "--show-metrics", "--show-tuning", "--tuning", "hot_neuron_threshold=0.6",
                 "--tuning", "cache_window_size=4", "--screenshot", shot,
                 "--screenshot-after-tokens", "10", "--quit-after-reply"},
                60000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(checkSmoke(r, shot) >= 0, qPrintable(r.out + r.err));
        // No QML errors from the panels.
        QVERIFY2(!r.err.contains("qrc:/PowerInfer"), qPrintable(r.err));
        // --tuning is saved like a change in the app: beside the model.
        QFile config(dir.filePath("demo.config.json"));
        QVERIFY(config.open(QIODevice::ReadOnly));
        const QByteArray json = config.readAll();
        QVERIFY2(json.contains("\"hot_neuron_threshold\": 0.6"), json.constData());
        QVERIFY2(json.contains("\"cache_window_size\": 4"), json.constData());
    }

    // Issue 17, defect 9: --help and --version aborted without a display.
    void helpAndVersionNeedNoDisplay() {
        for (const char* flag : {"--help", "--version"}) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove("QT_QPA_PLATFORM");
            env.remove("DISPLAY");
            env.remove("WAYLAND_DISPLAY");
            p.setProcessEnvironment(env);
            p.start(DESKTOP_DEMO_EXE, {flag});
            QVERIFY(p.waitForFinished(20000));
            QCOMPARE(p.exitStatus(), QProcess::NormalExit);
            QCOMPARE(p.exitCode(), 0);
            const QString out = QString::fromUtf8(p.readAllStandardOutput());
            QVERIFY2(out.contains(qstrcmp(flag, "--help") == 0 ? "model.gguf" : "PowerInfer"),
                     qPrintable(out));
        }
    }

    // ... the desktop file's %f (a positional model file) was ignored ...
    void aPositionalModelFileIsLoaded() {
        QTemporaryDir dir;
        const Run r = run(DESKTOP_DEMO_EXE,
                          {"--data-dir", dir.path(), "--prompt", "hi", "--quit-after-reply",
                           dir.filePath("positional.gguf")},
                          60000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("gui_max_stall_ms"), qPrintable(r.out + r.err));
    }

    // ... and a missing QML module crashed; now the app names the package.
    void aMissingQmlModuleIsNamed() {
        QTemporaryDir dir;
        qputenv("POWERINFER_REQUIRE_QML_MODULE", "Qt.Labs.NotInstalled");
        const Run r =
            run(DESKTOP_DEMO_EXE,
                {"--data-dir", dir.path(), "--prompt", "hi", "--quit-after-reply"}, 30000);
        qunsetenv("POWERINFER_REQUIRE_QML_MODULE");
        QCOMPARE(r.exitCode, 4);
        QVERIFY2(r.err.contains("Qt.Labs.NotInstalled") && r.err.contains("install"),
                 qPrintable(r.err));
    }

    // ... and Ctrl+Q, typed into the window after a reply, quits the app
    // cleanly with the conversation saved (the app fails with exit code 5
    // when the keys do nothing).
    void ctrlQQuitsWithTheHistorySaved() {
        QTemporaryDir dir;
        const Run r = run(DESKTOP_DEMO_EXE,
                          {"--data-dir", dir.path(), "--prompt", "Remember this question",
                           "--keys-after-reply", "Ctrl+Q"},
                          60000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("keys typed: Ctrl+Q"), qPrintable(r.out));
        {
            QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "ctrl-q");
            db.setDatabaseName(dir.filePath("conversations.sqlite"));
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec("SELECT role, content FROM messages ORDER BY id"));
            QStringList rows;
            while (q.next()) rows << q.value(0).toString() + ": " + q.value(1).toString();
            QVERIFY2(rows.size() == 2 && rows[0] == "user: Remember this question" &&
                         rows[1].startsWith("assistant: ") && rows[1].size() > 12,
                     qPrintable(rows.join(" | ")));
        }
        QSqlDatabase::removeDatabase("ctrl-q");
        // A key that quits nothing is reported as such.
        const Run other = run(
            DESKTOP_DEMO_EXE,
            {"--data-dir", dir.path(), "--prompt", "hi", "--keys-after-reply", "Ctrl+J"}, 60000);
        QCOMPARE(other.exitCode, 5);
        QVERIFY2(other.err.contains("did not quit"), qPrintable(other.err));
    }

    void refusesANewerDatabase() {
        QTemporaryDir dir;
        {
            QProcess sqlite;  // a database from the future, written without Qt
            sqlite.start("sqlite3",
                         {dir.filePath("conversations.sqlite"), "PRAGMA user_version=42;"});
            if (!sqlite.waitForFinished() || sqlite.exitCode() != 0)
                QSKIP("sqlite3 CLI not available");
        }
        const Run r =
            run(DESKTOP_DEMO_EXE,
                {"--data-dir", dir.path(), "--prompt", "hi", "--quit-after-reply"}, 30000);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("newer version"), qPrintable(r.err));
    }

    // Issue 30, item 9: "powerinfer-desktop /tmp/nonexistent/model.gguf"
    // showed "No model loaded" and printed nothing.
    void aModelPathThatIsNoFileIsSaid() {
#ifndef DESKTOP_EXE
        QSKIP("powerinfer-desktop is not built (the engine runtime pi_runtime is missing)");
#else
        QTemporaryDir dir;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        if (!env.contains("QT_QPA_PLATFORM")) env.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(env);
        const QString missing = dir.filePath("nonexistent/model.gguf");
        p.start(DESKTOP_EXE, {"--data-dir", dir.path(), missing});
        QVERIFY(p.waitForStarted());
        QByteArray err;
        QElapsedTimer t;
        t.start();
        while (!err.contains("There is no file at") && t.elapsed() < 30000 &&
               p.state() == QProcess::Running) {
            p.waitForReadyRead(200);
            err += p.readAllStandardError();
        }
        const bool running = p.state() == QProcess::Running;  // the window stays up
        p.kill();
        p.waitForFinished();
        QVERIFY2(err.contains(QString("There is no file at %1").arg(missing).toUtf8()),
                 err.constData());
        QVERIFY2(running, "the app exited instead of showing the message");
#endif
    }

    void smokeModeOnTheRealModel() {
#ifndef DESKTOP_EXE
        QSKIP("powerinfer-desktop is not built (the engine runtime pi_runtime is missing)");
#else
        const QString model = qEnvironmentVariable("POWERINFER_MODEL");
        if (model.isEmpty()) QSKIP("POWERINFER_MODEL is not set (scripts/test sets it)");
        QTemporaryDir dir;
        const QString shot = dir.filePath("real.png");
        const Run r = run(DESKTOP_EXE,
                          {"--data-dir", dir.path(), "--model", model, "--prompt",
                           "What is the capital of France? Answer in one sentence.", "--screenshot",
                           shot, "--quit-after-reply"},
                          240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const int stall = checkSmoke(r, shot);
        QVERIFY2(stall >= 0, qPrintable(r.out + r.err));
        qInfo("real model: gui_max_stall_ms %d", stall);
        // The target is < 50 ms on an idle machine; under a parallel ctest run
        // the scheduler alone adds tens of ms, so the default bound only
        // catches real blocking (synchronous disk I/O, per-token model resets).
        const int bound = qEnvironmentVariableIntValue("POWERINFER_MAX_GUI_STALL_MS") > 0
                              ? qEnvironmentVariableIntValue("POWERINFER_MAX_GUI_STALL_MS")
                              : 250;
        QVERIFY2(stall < bound, qPrintable(QString("GUI thread stalled %1 ms").arg(stall)));
#endif
    }

    void calibrationFromTheAppOnTheRealModel() {
#ifndef DESKTOP_EXE
        QSKIP("powerinfer-desktop is not built (the engine runtime pi_runtime is missing)");
#else
        const QString model = qEnvironmentVariable("POWERINFER_MODEL");
        if (model.isEmpty()) QSKIP("POWERINFER_MODEL is not set (scripts/test sets it)");
        QTemporaryDir dir;
        // A link in a fresh folder: the sidecar and config land there, not
        // beside the shared model.
        const QString link = dir.filePath("model.gguf");
        QVERIFY(QFile::link(model, link));
        // A tiny corpus run (128 tokens): this checks the wiring (corpus
        // export, engine thread, progress, reload with the sidecar), not quality.
        const Run r = run(DESKTOP_EXE,
                          {"--data-dir", dir.path(), "--model", link, "--calibrate", "bundled",
                           "--calibration-tokens", "128", "--quit-after-reply"},
                          240000);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("calibrated: sidecar in use"), qPrintable(r.out + r.err));
        QVERIFY(QFile::exists(dir.filePath("model.powerinfer.gguf")));
#endif
    }
};

QTEST_GUILESS_MAIN(TestDesktopApp)
#include "tst_desktop_app.moc"
