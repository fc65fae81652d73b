// The downloader over real HTTP on 127.0.0.1 (test_http_file_server.h):
// with and without Range support, throttled, a dropped connection half-way,
// a wrong hash, a redirect with Hugging Face's X-Linked-Etag, 404, a full
// disk, pause/resume, a queue, and the headless --download killed with
// kill -9 mid-file and restarted. Each ends with a verified file in the
// models folder or a clear error and nothing there. The file served is the
// default model when POWERINFER_MODEL is set, else a generated GGUF-headed one.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "model_downloader.h"
#include "test_http_file_server.h"

using powerinfer::app::DownloadSpec;
using powerinfer::app::ModelDownloads;
using powerinfer::test::HttpFileServer;
using State = ModelDownloads::State;

namespace {

QString sha256Of(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    return QString::fromLatin1(h.result().toHex());
}

}  // namespace

class TestModelDownloader : public QObject {
    Q_OBJECT
    QTemporaryDir scratch_;
    // The default model (or a generated file), served whole where the test
    // is about the real file (verify, kill -9) ...
    QString model_, modelSha_;
    qint64 modelSize_ = 0;
    // ... and its first 16 MiB (still GGUF-headed) where the test is about
    // the protocol, to keep the suite fast.
    QString source_;
    QString sha_;
    qint64 size_ = 0;

    // Waits until the row is Done or Failed.
    State finish(ModelDownloads& d, int row, int timeoutMs = 60000) {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            const State s = d.stateAt(row);
            if (s == State::Done || s == State::Failed) return s;
            QTest::qWait(20);
        }
        return d.stateAt(row);
    }
    // Only the verified model in the folder, no partial file or record.
    QStringList folderFiles(const QString& folder) {
        return QDir(folder).entryList(QDir::Files, QDir::Name);
    }
    DownloadSpec spec(const HttpFileServer& server, const QString& path, const QString& sha) {
        DownloadSpec s;
        s.url = QUrl(server.url(path));
        s.fileName = QStringLiteral("model.gguf");
        s.sha256 = sha;
        return s;
    }

private slots:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        const QString model = qEnvironmentVariable("POWERINFER_MODEL");
        if (!model.isEmpty() && QFileInfo::exists(model)) {
            source_ = model;
        } else {
            // 24 MiB of noise behind the GGUF magic: enough for several reads.
            source_ = scratch_.filePath("generated.gguf");
            QFile f(source_);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QByteArray block(1 << 20, Qt::Uninitialized);
            for (int i = 0; i < 24; ++i) {
                QRandomGenerator::global()->fillRange(reinterpret_cast<quint32*>(block.data()),
                                                      block.size() / 4);
                if (i == 0) block.replace(0, 4, "GGUF");
                f.write(block);
            }
            qInfo("POWERINFER_MODEL not set: serving a generated 24 MiB file");
        }
        model_ = source_;
        modelSha_ = sha256Of(model_);
        modelSize_ = QFileInfo(model_).size();
        qInfo("serving %s (%lld bytes, sha256 %s)", qPrintable(model_), modelSize_,
              qPrintable(modelSha_));
        QFile in(model_), out(scratch_.filePath("head.gguf"));
        QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
        out.write(in.read(16 << 20));
        out.close();
        source_ = out.fileName();
        sha_ = sha256Of(source_);
        size_ = QFileInfo(source_).size();
    }

    void downloadsVerifiesAndMovesAtomically() {
        HttpFileServer server(model_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        QSignalSpy done(&d, &ModelDownloads::downloadFinished);
        const int row = d.enqueue(spec(server, "/model.gguf", modelSha_));
        QVERIFY2(row >= 0, qPrintable(d.lastError()));
        // While running, the folder holds only the partial file and its record.
        QVERIFY(!QFileInfo::exists(models.filePath("model.gguf")));
        QCOMPARE(finish(d, row), State::Done);
        QCOMPARE(done.count(), 1);
        QCOMPARE(done.at(0).at(0).toString(), models.filePath("model.gguf"));
        QCOMPARE(sha256Of(models.filePath("model.gguf")), modelSha_);
        QCOMPARE(folderFiles(models.path()), QStringList{"model.gguf"});
        QVERIFY2(d.noteAt(row).contains("SHA-256 verified"), qPrintable(d.noteAt(row)));
        QCOMPARE(server.requests.size(), 1);
        QVERIFY(server.requests[0].range.isEmpty());
    }

    void aWrongHashLeavesNothingInTheFolder() {
        HttpFileServer server(source_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        const QString wrong(64, QLatin1Char('0'));
        const int row = d.enqueue(spec(server, "/model.gguf", wrong));
        QCOMPARE(finish(d, row), State::Failed);
        QVERIFY2(d.errorAt(row).contains("SHA-256 is " + sha_), qPrintable(d.errorAt(row)));
        QVERIFY(d.errorAt(row).contains("expected " + wrong));
        QVERIFY2(folderFiles(models.path()).isEmpty(),
                 qPrintable(folderFiles(models.path()).join(',')));
    }

    void notFoundIsAClearError() {
        HttpFileServer server(source_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        DownloadSpec s = spec(server, "/missing.gguf", sha_);
        s.fileName.clear();  // from the URL
        const int row = d.enqueue(s);
        QCOMPARE(finish(d, row), State::Failed);
        QVERIFY2(d.errorAt(row).contains("Not found (HTTP 404)"), qPrintable(d.errorAt(row)));
        QVERIFY(folderFiles(models.path()).isEmpty());
        QCOMPARE(server.requests.size(), 1);  // no retries for a 404
    }

    void aRedirectIsFollowedAndItsLinkedEtagVerifies() {
        HttpFileServer server(source_);
        server.options.linkedEtag = sha_.toLatin1();
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        const int row =
            d.enqueue(spec(server, "/redirect/model.gguf", QString()));  // no hash given
        QCOMPARE(finish(d, row), State::Done);
        QVERIFY2(d.noteAt(row).contains("SHA-256 verified"), qPrintable(d.noteAt(row)));
        QCOMPARE(server.requests.size(), 2);
        QCOMPARE(server.requests[0].path, QByteArray("/redirect/model.gguf"));
        QCOMPARE(server.requests[1].path, QByteArray("/model.gguf"));
        QCOMPARE(sha256Of(models.filePath("model.gguf")), sha_);
    }

    void aWrongLinkedEtagFailsTheDownload() {
        HttpFileServer server(source_);
        server.options.linkedEtag = QByteArray(64, 'a');
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        const int row = d.enqueue(spec(server, "/redirect/model.gguf", QString()));
        QCOMPARE(finish(d, row), State::Failed);
        QVERIFY2(d.errorAt(row).contains("expected " + QString(64, 'a')),
                 qPrintable(d.errorAt(row)));
        QVERIFY(folderFiles(models.path()).isEmpty());
    }

    void aRedirectLoopEnds() {
        HttpFileServer server(source_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        const int row = d.enqueue(spec(server, "/loop.gguf", sha_));
        QCOMPARE(finish(d, row), State::Failed);
        QVERIFY2(d.errorAt(row).contains("redirected more than"), qPrintable(d.errorAt(row)));
    }

    void aDroppedConnectionResumesWithARangeRequest() {
        HttpFileServer server(source_);
        server.options.dropAfter = size_ / 2;
        QTemporaryDir models;
        ModelDownloads d;
        d.setRetryDelayMs(50);
        d.setFolder(models.path());
        const int row = d.enqueue(spec(server, "/model.gguf", sha_));
        QCOMPARE(finish(d, row), State::Done);
        QCOMPARE(sha256Of(models.filePath("model.gguf")), sha_);
        QCOMPARE(server.requests.size(), 2);
        const QByteArray range = server.requests[1].range;
        QVERIFY2(range.startsWith("bytes=") && range.mid(6).chopped(1).toLongLong() > 0,
                 range.constData());
        QCOMPARE(server.requests[1].ifRange, QByteArray("\"v1\""));
        // Fewer bytes than two whole files went over the wire.
        QVERIFY(server.bodyBytesSent < 2 * size_);
        QCOMPARE(folderFiles(models.path()), QStringList{"model.gguf"});
    }

    void aServerWithoutRangesRestartsFromZeroWithANote() {
        HttpFileServer server(source_);
        server.options.ranges = false;
        server.options.dropAfter = size_ / 2;
        QTemporaryDir models;
        ModelDownloads d;
        d.setRetryDelayMs(50);
        d.setFolder(models.path());
        const int row = d.enqueue(spec(server, "/model.gguf", sha_));
        QCOMPARE(finish(d, row), State::Done);
        QVERIFY2(d.noteAt(row).contains("does not support resuming"), qPrintable(d.noteAt(row)));
        QCOMPARE(sha256Of(models.filePath("model.gguf")), sha_);
        QCOMPARE(server.requests.size(), 2);
        QVERIFY(!server.requests[1].range.isEmpty());  // asked, and got the whole file
    }

    void pauseAndResumeOnASlowServer() {
        HttpFileServer server(source_);
        server.options.bytesPerSecond = 20 << 20;
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        const int row = d.enqueue(spec(server, "/model.gguf", sha_));
        QTRY_VERIFY_WITH_TIMEOUT(d.receivedAt(row) > (1 << 20), 20000);
        QCOMPARE(d.stateAt(row), State::Running);
        QVERIFY(!d.data(d.index(row), ModelDownloads::SpeedTextRole).toString().isEmpty() ||
                d.receivedAt(row) < (20 << 20));
        d.pause(row);
        QTRY_COMPARE_WITH_TIMEOUT(d.stateAt(row), State::Paused, 5000);
        const qint64 paused = QFileInfo(models.filePath("model.gguf.part")).size();
        QVERIFY(paused > 0 && paused < size_);
        QVERIFY(QFileInfo::exists(models.filePath("model.gguf.part.json")));
        server.options.bytesPerSecond = 0;
        d.resume(row);
        QCOMPARE(finish(d, row), State::Done);
        QCOMPARE(sha256Of(models.filePath("model.gguf")), sha_);
        QCOMPARE(server.requests.last().range, "bytes=" + QByteArray::number(paused) + "-");
    }

    // The user picks another models folder while a file downloads: it
    // finishes, verified, where it started; the new folder gets nothing.
    void aFolderChangeMidwayLeavesTheDownloadWhereItStarted() {
        HttpFileServer server(source_);
        server.options.bytesPerSecond = 20 << 20;
        QTemporaryDir first, second;
        ModelDownloads d;
        d.setFolder(first.path());
        QSignalSpy done(&d, &ModelDownloads::downloadFinished);
        const int row = d.enqueue(spec(server, "/model.gguf", sha_));
        QVERIFY2(row >= 0, qPrintable(d.lastError()));
        QTRY_VERIFY_WITH_TIMEOUT(d.receivedAt(row) > (1 << 20), 20000);
        QCOMPARE(d.stateAt(row), State::Running);
        d.setFolder(second.path());
        server.options.bytesPerSecond = 0;
        QCOMPARE(finish(d, row), State::Done);
        QCOMPARE(done.count(), 1);
        QCOMPARE(done.at(0).at(0).toString(), first.filePath("model.gguf"));
        QCOMPARE(sha256Of(first.filePath("model.gguf")), sha_);
        QCOMPARE(folderFiles(first.path()), QStringList{"model.gguf"});
        QCOMPARE(folderFiles(second.path()), QStringList{});
        // A new download goes to the folder chosen now.
        const int next = d.enqueue(spec(server, "/model.gguf", sha_));
        QVERIFY2(next >= 0, qPrintable(d.lastError()));
        QCOMPARE(finish(d, next), State::Done);
        QCOMPARE(folderFiles(second.path()), QStringList{"model.gguf"});
    }

    void aStalledServerTimesOutAndResumes() {
        HttpFileServer server(source_);
        server.options.stallAfter = size_ / 3;
        QTemporaryDir models;
        ModelDownloads d;
        d.setStallTimeoutMs(500);
        d.setRetryDelayMs(50);
        d.setFolder(models.path());
        const int row = d.enqueue(spec(server, "/model.gguf", sha_));
        QTRY_VERIFY_WITH_TIMEOUT(server.requests.size() >= 2, 20000);
        server.options.stallAfter = -1;
        QCOMPARE(finish(d, row), State::Done);
        QVERIFY2(d.noteAt(row).contains("stopped sending data"), qPrintable(d.noteAt(row)));
        QCOMPARE(sha256Of(models.filePath("model.gguf")), sha_);
    }

    void notEnoughDiskSpaceIsRefusedBeforeAsking() {
        HttpFileServer server(source_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        DownloadSpec s = spec(server, "/model.gguf", sha_);
        s.expectedSize = qint64(1) << 60;  // an exabyte
        const int row = d.enqueue(s);
        QCOMPARE(finish(d, row), State::Failed);
        QVERIFY2(d.errorAt(row).startsWith("Not enough disk space"), qPrintable(d.errorAt(row)));
        QCOMPARE(server.requests.size(), 0);
    }

    void downloadsQueueOneAfterAnother() {
        HttpFileServer server(source_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        DownloadSpec a = spec(server, "/model.gguf", sha_);
        DownloadSpec b = a;
        b.fileName = "second.gguf";
        const int ra = d.enqueue(a), rb = d.enqueue(b);
        QVERIFY(ra >= 0 && rb >= 0);
        QCOMPARE(d.stateAt(ra), State::Running);
        QCOMPARE(d.stateAt(rb), State::Queued);
        QCOMPARE(d.enqueue(a), -1);  // the same file twice
        QVERIFY(d.lastError().contains("already being downloaded"));
        QCOMPARE(finish(d, ra), State::Done);
        QCOMPARE(finish(d, rb), State::Done);
        QCOMPARE(server.requests.size(), 2);
        QCOMPARE(folderFiles(models.path()), (QStringList{"model.gguf", "second.gguf"}));
    }

    void badInputIsRefusedWithAMessage() {
        ModelDownloads d;
        QTemporaryDir models;
        d.setFolder(models.path());
        QCOMPARE(d.enqueueUrl("http://example.com/model.gguf"), -1);
        QVERIFY(d.lastError().contains("Only https://"));
        QCOMPARE(d.enqueueUrl("https://example.com/page.html"), -1);
        QVERIFY(d.lastError().contains(".gguf"));
        QCOMPARE(d.enqueueUrl("https://example.com/m.gguf", "xyz"), -1);
        QVERIFY(d.lastError().contains("64 hexadecimal"));
        QCOMPARE(d.enqueueUrl("ftp://example.com/m.gguf"), -1);
    }

    // Issue 30, item 4: a pasted link is named by the server's
    // Content-Disposition (filename* before filename, no folder part) ...
    void aPastedLinkIsNamedByContentDisposition() {
        QCOMPARE(powerinfer::app::fileNameFromContentDisposition(
                     "attachment; filename*=UTF-8''Qwen%202.5%20%C3%A9.gguf; filename=\"q.gguf\""),
                 QStringLiteral("Qwen 2.5 \u00e9.gguf"));
        QCOMPARE(powerinfer::app::fileNameFromContentDisposition(
                     "inline; filename=\"../../etc/evil.gguf\""),
                 QStringLiteral("evil.gguf"));
        QCOMPARE(powerinfer::app::fileNameFromContentDisposition("attachment; filename=x.bin"),
                 QString());
        HttpFileServer server(source_);
        server.options.contentDisposition =
            "attachment; filename=\"SmolLM2-135M-Instruct.Q4_1.gguf\"";
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        const int row = d.enqueueUrl(server.url("/model.gguf"), sha_);
        QVERIFY2(row >= 0, qPrintable(d.lastError()));
        QCOMPARE(finish(d, row), State::Done);
        QCOMPARE(d.pathAt(row), models.filePath("SmolLM2-135M-Instruct.Q4_1.gguf"));
        QCOMPARE(folderFiles(models.path()), QStringList{"SmolLM2-135M-Instruct.Q4_1.gguf"});
    }

    // ... else by the model's own general.name and quantization.
    void aPastedLinkIsNamedAfterTheModel() {
        QCOMPARE(powerinfer::app::fileNameFromModelName("SmolLM2 135M Instruct", "Q4_1"),
                 QStringLiteral("SmolLM2-135M-Instruct-Q4_1.gguf"));
        QCOMPARE(powerinfer::app::fileNameFromModelName("gemma-3-270m-q4_k_m", "Q4_K_M"),
                 QStringLiteral("gemma-3-270m-q4_k_m.gguf"));
        QCOMPARE(powerinfer::app::fileNameFromModelName(" / : ", "Q8_0"), QString());
        HttpFileServer server(source_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        QString inspected;
        d.setInspector([&inspected](const QString& path) {
            inspected = path;
            powerinfer::app::ModelFileInfo info;
            info.generalName = QStringLiteral("SmolLM2 135M Instruct");
            info.quant = QStringLiteral("Q4_1");
            return info;
        });
        const int row = d.enqueueUrl(server.url("/model.gguf"), sha_);
        QVERIFY2(row >= 0, qPrintable(d.lastError()));
        QCOMPARE(finish(d, row), State::Done);
        QCOMPARE(inspected, models.filePath("model.gguf.part"));
        QCOMPARE(folderFiles(models.path()), QStringList{"SmolLM2-135M-Instruct-Q4_1.gguf"});
        QCOMPARE(d.data(d.index(row), ModelDownloads::FileNameRole).toString(),
                 QStringLiteral("SmolLM2-135M-Instruct-Q4_1.gguf"));
    }

    // A second .../model.gguf (another link, or the same file again) is not
    // refused: it downloads beside the first, under a free name.
    void aSecondModelGgufIsKeptBesideTheFirst() {
        HttpFileServer server(source_);
        server.options.bytesPerSecond = 8 << 20;
        QTemporaryDir models;
        {
            QFile first(models.filePath("model.gguf"));
            QVERIFY(first.open(QIODevice::WriteOnly));
            first.write("GGUF earlier");
        }
        ModelDownloads d;
        d.setFolder(models.path());
        const int a = d.enqueueUrl(server.url("/model.gguf"), sha_);
        QVERIFY2(a >= 0, qPrintable(d.lastError()));
        // Another link whose last part is model.gguf too, while the first runs.
        const int b = d.enqueueUrl(server.url("/redirect/model.gguf"), sha_);
        QVERIFY2(b >= 0, qPrintable(d.lastError()));
        QCOMPARE(finish(d, a), State::Done);
        QCOMPARE(finish(d, b), State::Done);
        QCOMPARE(folderFiles(models.path()),
                 (QStringList{"model-2.gguf", "model-3.gguf", "model.gguf"}));
        QCOMPARE(d.pathAt(a), models.filePath("model-2.gguf"));
        QCOMPARE(d.pathAt(b), models.filePath("model-3.gguf"));
        QVERIFY2(d.noteAt(a).contains("model.gguf was already in the models folder: saved as "
                                      "model-2.gguf"),
                 qPrintable(d.noteAt(a)));
        QCOMPARE(sha256Of(models.filePath("model-2.gguf")), sha_);
        QCOMPARE(sha256Of(models.filePath("model-3.gguf")), sha_);
    }

    // The user names the file: a verified one is renamed on disk (with its
    // sidecar and config), a taken name is refused with a free one offered,
    // an unfinished one gets the name when it is verified.
    void theUserRenamesADownload() {
        HttpFileServer server(source_);
        QTemporaryDir models;
        ModelDownloads d;
        d.setFolder(models.path());
        QSignalSpy renamed(&d, &ModelDownloads::fileRenamed);
        const int row = d.enqueueUrl(server.url("/model.gguf"), sha_);
        QVERIFY2(row >= 0, qPrintable(d.lastError()));
        QCOMPARE(d.rename(row, "my model"), QString());  // before the end: the name it gets
        QCOMPARE(d.data(d.index(row), ModelDownloads::TitleRole).toString(),
                 QStringLiteral("my model.gguf"));
        QCOMPARE(finish(d, row), State::Done);
        QCOMPARE(folderFiles(models.path()), QStringList{"my model.gguf"});
        {
            QFile config(models.filePath("my model.config.json")),
                taken(models.filePath("taken.gguf"));
            QVERIFY(config.open(QIODevice::WriteOnly) && taken.open(QIODevice::WriteOnly));
        }
        const QString clash = d.rename(row, "taken.gguf");
        QVERIFY2(clash.contains("taken.gguf is already in the models folder: taken-2.gguf is free"),
                 qPrintable(clash));
        QCOMPARE(d.freeFileName("taken.gguf", row), QStringLiteral("taken-2.gguf"));
        QVERIFY(d.rename(row, "a/b").contains("cannot be a file name"));
        QCOMPARE(d.rename(row, "taken-2"), QString());
        QCOMPARE(folderFiles(models.path()),
                 (QStringList{"taken-2.config.json", "taken-2.gguf", "taken.gguf"}));
        QCOMPARE(sha256Of(models.filePath("taken-2.gguf")), sha_);
        QCOMPARE(d.pathAt(row), models.filePath("taken-2.gguf"));
        QCOMPARE(renamed.count(), 1);
        QCOMPARE(renamed.at(0).at(1).toString(), models.filePath("taken-2.gguf"));
    }

    // The headless mode, killed with SIGKILL mid-file and started again:
    // the second run asks for the rest (Range from the partial file's size)
    // and ends with the right SHA-256.
    void killNineThenRestartResumes() {
#ifdef Q_OS_WIN
        QSKIP("kill -9 is POSIX");
#endif
        HttpFileServer server(model_);
        server.options.stallAfter = modelSize_ / 2;  // the first run gets stuck half-way
        QTemporaryDir data, models;
        const QStringList args = {"--download",   server.url("/model.gguf"),
                                  "--sha256",     modelSha_,
                                  "--data-dir",   data.path(),
                                  "--models-dir", models.path()};
        QProcess first;
        first.start(DESKTOP_DEMO_EXE, args);
        QVERIFY(first.waitForStarted());
        const QString part = models.filePath("model.gguf.part");
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(part).size() >= modelSize_ / 2 - (1 << 20), 30000);
        QTest::qWait(200);
        first.kill();  // SIGKILL on Unix
        QVERIFY(first.waitForFinished(5000));
        QCOMPARE(first.exitStatus(), QProcess::CrashExit);
        const qint64 partial = QFileInfo(part).size();
        QVERIFY(partial > 0 && partial < modelSize_);
        QVERIFY(QFileInfo::exists(models.filePath("model.gguf.part.json")));
        QVERIFY(!QFileInfo::exists(models.filePath("model.gguf")));

        server.options.stallAfter = -1;
        QProcess second;
        second.start(DESKTOP_DEMO_EXE, args);
        QVERIFY(second.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(second.state() == QProcess::NotRunning, 60000);
        const QString out = QString::fromUtf8(second.readAllStandardOutput());
        const QString err = QString::fromUtf8(second.readAllStandardError());
        QVERIFY2(second.exitStatus() == QProcess::NormalExit && second.exitCode() == 0,
                 qPrintable(err));
        QVERIFY2(out.contains("verified: " + models.filePath("model.gguf")), qPrintable(out));
        QVERIFY2(err.contains("resume continues at"), qPrintable(err));
        QCOMPARE(server.requests.size(), 2);
        QCOMPARE(server.requests[1].range, "bytes=" + QByteArray::number(partial) + "-");
        QCOMPARE(sha256Of(models.filePath("model.gguf")), modelSha_);
        QCOMPARE(folderFiles(models.path()), QStringList{"model.gguf"});
    }

    void newcomerGetsTheDefaultModelFromTheCatalog();

    void headlessFailureExitsNonZeroWithTheMessage() {
        HttpFileServer server(source_);
        QTemporaryDir data, models;
        QProcess p;
        p.start(DESKTOP_DEMO_EXE, {"--download", server.url("/gone.gguf"), "--data-dir",
                                   data.path(), "--models-dir", models.path()});
        // The server lives on this thread: wait with its event loop running.
        QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, 30000);
        QCOMPARE(p.exitCode(), 1);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("Not found (HTTP 404)"), qPrintable(err));
        QVERIFY(folderFiles(models.path()).isEmpty());
    }
};

// The newcomer's first minutes, in the app's smoke mode: an empty data
// folder and models folder, the catalog (pointed at this server by
// $POWERINFER_CATALOG) downloads its default entry, verifies it, the model
// loads and answers. On the real engine when it is built (else the demo).
void TestModelDownloader::newcomerGetsTheDefaultModelFromTheCatalog() {
    HttpFileServer server(model_);
    QTemporaryDir data, models;
    const QString catalog = data.filePath("catalog.json");
    {
        QFile f(catalog);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral(R"({"catalog_version": 1, "default": "smollm2",
            "supported_architectures": ["llama"],
            "models": [{"id": "smollm2", "family": "SmolLM2", "name": "SmolLM2 135M Instruct",
              "parameters": "135M", "n_params": 134515008, "quant": "Q4_1",
              "file_name": "SmolLM2-135M-Instruct.Q4_1.gguf", "size_bytes": %1,
              "size_exact": true, "checked": "measured by the test", "url": "%2",
              "sha256": "%3", "licence": "Apache-2.0",
              "kind": "chat", "context_length": 8192, "architecture": "llama",
              "shape": {"n_layers": 30, "n_embd": 576, "n_head": 9, "n_head_kv": 3,
                        "n_ff": 1536, "n_vocab": 49152}}]})")
                    .arg(modelSize_)
                    .arg(server.url("/model.gguf"), modelSha_)
                    .toUtf8());
    }
#ifdef DESKTOP_EXE
    const bool real = !qEnvironmentVariable("POWERINFER_MODEL").isEmpty();
    const QString exe = real ? DESKTOP_EXE : DESKTOP_DEMO_EXE;
#else
    const QString exe = DESKTOP_DEMO_EXE;
#endif
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("POWERINFER_CATALOG", catalog);
    env.insert("POWERINFER_MODEL_DIR", models.path());
    if (!env.contains("QT_QPA_PLATFORM")) env.insert("QT_QPA_PLATFORM", "offscreen");
    p.setProcessEnvironment(env);
    p.start(exe, {"--data-dir", data.path(), "--download-entry", "smollm2", "--wait-download",
                  "--prompt", "Hello", "--quit-after-reply"});
    QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, 120000);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out + err));
    const QString path = models.filePath("SmolLM2-135M-Instruct.Q4_1.gguf");
    QVERIFY2(out.contains("downloaded: " + path + " (SHA-256 verified"), qPrintable(out));
    QVERIFY2(out.contains("reply: "), qPrintable(out));
    QCOMPARE(sha256Of(path), modelSha_);
    QCOMPARE(folderFiles(models.path()), QStringList{"SmolLM2-135M-Instruct.Q4_1.gguf"});
}

QTEST_GUILESS_MAIN(TestModelDownloader)
#include "tst_model_downloader.moc"
