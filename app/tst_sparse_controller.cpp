#include <qcoro/qcorotask.h>

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "scripted_engine.h"
#include "sparse_controller.h"

using namespace powerinfer::app;
using powerinfer::testing::EngineScript;
using powerinfer::testing::ScriptedEngine;
using namespace std::chrono_literals;

namespace {

struct Harness {
    explicit Harness(EngineScript script = {}) {
        client = std::make_unique<EngineClient>([this, script](const powerinfer::LoadOptions& o) {
            auto e = ScriptedEngine::load(o, script);
            fake = e.get();
            return e;
        });
        sparse = std::make_unique<SparseController>(client.get(), nullptr);
        QObject::connect(client.get(), &EngineClient::piecesReady, sparse.get(),
                         [this](const StreamChunk& c) { sparse->chunkArrived(c); });
    }
    bool load(const QString& model) {
        powerinfer::LoadOptions o;
        o.model_path = model.toStdString();
        o.tuning = sparse->tuningForModel(model);
        const LoadOutcome out = QCoro::waitFor(client->load(o));
        if (out.ok) sparse->modelLoaded(model, out);
        return out.ok;
    }
    std::atomic<ScriptedEngine*> fake{nullptr};
    std::unique_ptr<EngineClient> client;
    std::unique_ptr<SparseController> sparse;
};

GenerationJob job(int maxTokens) {
    GenerationJob j;
    j.messages = {{"user", "hi"}};
    j.maxTokens = maxTokens;
    return j;
}

// Coroutine helpers take parameters, not lambda captures: a capturing
// lambda coroutine's captures die with the temporary lambda.
QCoro::Task<> generateInto(EngineClient* client, GenerationJob j, GenerationOutcome* out,
                           bool* finished) {
    *out = co_await client->generate(std::move(j));
    *finished = true;
}

QCoro::Task<> calibrateInto(SparseController* sparse, bool* ok, bool* done) {
    *ok = co_await sparse->runCalibration("bundled", {}, 0.5);
    *done = true;
}

}  // namespace

class TestSparseController : public QObject {
    Q_OBJECT
private slots:
    void configPathSitsBesideTheModel() {
        QCOMPARE(SparseController::configPathFor("/m/SmolLM2.Q4_1.gguf"),
                 QStringLiteral("/m/SmolLM2.Q4_1.config.json"));
    }

    void configRoundTripKeepsUnknownKeys() {
        QTemporaryDir dir;
        const QString path = dir.filePath("m.config.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"note": "mine", "prefetch_depth": 5, "vram_budget_mb": "auto"})");
        f.close();
        QString error;
        powerinfer::Tuning t = SparseController::readConfig(path, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(t.prefetch_depth, 5);
        QCOMPARE(t.vram_budget_mb, int64_t(-1));
        QCOMPARE(t.hot_neuron_threshold, 0.85);
        t.hot_neuron_threshold = 0.7;
        t.vram_budget_mb = 512;
        t.sparse = false;
        QVERIFY(SparseController::writeConfig(path, t, &error));
        const powerinfer::Tuning back = SparseController::readConfig(path, &error);
        QCOMPARE(back.hot_neuron_threshold, 0.7);
        QCOMPARE(back.vram_budget_mb, int64_t(512));
        QCOMPARE(back.sparse, false);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(f.readAll()).object().value("note").toString(),
                 QStringLiteral("mine"));
    }

    void badConfigValuesKeepDefaultsAndSaySo() {
        QTemporaryDir dir;
        const QString path = dir.filePath("m.config.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"hot_neuron_threshold": 7, "cache_window_size": 3})");
        f.close();
        QString error;
        const powerinfer::Tuning t = SparseController::readConfig(path, &error);
        QCOMPARE(t.hot_neuron_threshold, 0.85);
        QCOMPARE(t.cache_window_size, 3);
        QVERIFY2(error.contains("hot_neuron_threshold"), qPrintable(error));
    }

    void tuningReachesTheEngineMidReplyAndChangesTheMetrics() {
        EngineScript script;
        script.endless = true;
        script.tokenDelay = 4ms;
        Harness h(script);
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        QVERIFY(h.load(model));
        bool finished = false;
        GenerationOutcome out;
        auto task = generateInto(h.client.get(), job(300), &out, &finished);
        QTRY_VERIFY(h.sparse->metrics()->count() >= 5);
        const double before = h.sparse->metrics()->hitRate();
        QCOMPARE(before, 0.9);
        QSignalSpy tuned(h.sparse.get(), &SparseController::tuningChanged);
        h.sparse->setValue("hot_neuron_threshold", 0.5);
        QCOMPARE(tuned.count(), 1);
        QCOMPARE(h.sparse->hotNeuronThreshold(), 0.5);
        // The engine gets it between tokens, while the reply is still running.
        QTRY_VERIFY_WITH_TIMEOUT(!h.fake.load()->tuningCalls().empty(), 2000);
        QVERIFY(!finished);
        QCOMPARE(h.fake.load()->tuningCalls().back().hot_neuron_threshold, 0.5);
        QTRY_VERIFY_WITH_TIMEOUT(finished, 10000);
        QVERIFY(out.ok);
        MetricsModel* m = h.sparse->metrics();
        QCOMPARE(m->hitRateAt(m->count() - 1), 118.0 / 200.0);
        QVERIFY(m->hitRate() < before);
        QCOMPARE(m->layers(), 30);
        // Saved beside the model.
        h.sparse->flushConfig();
        QCOMPARE(SparseController::readConfig(SparseController::configPathFor(model))
                     .hot_neuron_threshold,
                 0.5);
    }

    // Issue 17: every key press on a knob wrote config.json synchronously on
    // the GUI thread. Now a burst is one write, later, off the GUI thread.
    void tuningWritesAreCoalescedAndDeferred() {
        Harness h;
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        QVERIFY(h.load(model));
        const QString config = SparseController::configPathFor(model);
        QVERIFY(!QFile::exists(config));
        for (int i = 1; i <= 20; ++i) h.sparse->setValue("hot_neuron_threshold", 0.5 + i * 0.01);
        QVERIFY2(!QFile::exists(config), "written on the GUI thread, at once");
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(config), 3000);
        QTRY_COMPARE(SparseController::readConfig(config).hot_neuron_threshold, 0.7);
        h.sparse->setValue("cache_window_size", 3);
        h.sparse->flushConfig();
        QCOMPARE(SparseController::readConfig(config).cache_window_size, 3);
    }

    void loadUsesTheSavedConfigAndResetRestoresDefaults() {
        Harness h;
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        powerinfer::Tuning t;
        t.predictor_threshold = 0.3;
        QVERIFY(SparseController::writeConfig(SparseController::configPathFor(model), t));
        QVERIFY(h.load(model));
        QCOMPARE(h.sparse->predictorThreshold(), 0.3);
        QCOMPARE(h.fake.load()->tuning().predictor_threshold, 0.3);
        h.sparse->resetToDefaults();
        QCOMPARE(h.sparse->predictorThreshold(), 0.5);
        QTRY_COMPARE(h.fake.load()->tuning().predictor_threshold, 0.5);
        // The device budget, as everywhere in the engine: -1 auto, 0 nothing
        // on the device, N MiB; anything below -1 is refused.
        h.sparse->setValue("vram_budget_mb", 0);
        QCOMPARE(h.sparse->vramBudgetMb(), 0);
        QTRY_COMPARE(h.fake.load()->tuning().vram_budget_mb, int64_t(0));
        h.sparse->setValue("vram_budget_mb", -5);
        QCOMPARE(h.sparse->vramBudgetMb(), 0);
        h.sparse->setValue("vram_budget_mb", "auto");
        QCOMPARE(h.sparse->vramBudgetMb(), -1);
    }

    void previewComesFromTheEngineThread() {
        Harness h;
        h.client->setPreviewer([](const powerinfer::Engine* e, const std::filesystem::path&,
                                  const powerinfer::Tuning& t) {
            PlacementPreview p;
            p.available = e != nullptr;
            p.totalNeurons = 1000;
            p.hotNeurons = int64_t(t.hot_neuron_threshold * 1000);
            p.deviceBytes = p.hotNeurons * 10;
            return p;
        });
        QTemporaryDir dir;
        QVERIFY(h.load(dir.filePath("m.gguf")));
        QTRY_VERIFY(h.sparse->previewAvailable());
        QCOMPARE(h.sparse->previewHotNeurons(), 850);
        h.sparse->previewValue("hot_neuron_threshold", 0.4);
        QTRY_COMPARE(h.sparse->previewHotNeurons(), 400);
        QCOMPARE(h.sparse->hotNeuronThreshold(), 0.85);  // a preview applies nothing
        QVERIFY(h.fake.load()->tuningCalls().empty());
    }

    // Issue 17, defect 6: the preview stayed stale while a reply streamed
    // (its request waited behind the generation in the command queue).
    void previewFollowsTheSlidersWhileAReplyStreams() {
        EngineScript script;
        script.endless = true;
        script.tokenDelay = 4ms;
        Harness h(script);
        h.client->setPreviewer([](const powerinfer::Engine*, const std::filesystem::path&,
                                  const powerinfer::Tuning& t) {
            PlacementPreview p;
            p.available = true;
            p.totalNeurons = 1000;
            p.hotNeurons = int64_t(t.hot_neuron_threshold * 1000);
            return p;
        });
        QTemporaryDir dir;
        QVERIFY(h.load(dir.filePath("m.gguf")));
        QTRY_COMPARE(h.sparse->previewHotNeurons(), 850);
        bool finished = false;
        GenerationOutcome out;
        auto task = generateInto(h.client.get(), job(2000), &out, &finished);
        QTRY_VERIFY(h.sparse->metrics()->count() >= 3);
        h.sparse->previewValue("hot_neuron_threshold", 0.3);
        QTRY_COMPARE_WITH_TIMEOUT(h.sparse->previewHotNeurons(), 300, 2000);
        QVERIFY2(!finished, "the preview came only after the reply");
        h.client->cancelGeneration();
        QTRY_VERIFY_WITH_TIMEOUT(finished, 5000);
    }

    // ... and the headline said "Running dense" after a load with a sidecar
    // until the first token arrived.
    void aLoadWithASidecarReadsSparseBeforeTheFirstToken() {
        Harness h;
        QTemporaryDir dir;
        QVERIFY(h.load(dir.filePath("m.gguf")));
        QCOMPARE(h.sparse->metrics()->count(), 0);
        QVERIFY(h.sparse->metrics()->hasSidecar());
        QVERIFY(h.sparse->metrics()->sparse());
        h.sparse->setValue("sparse", false);
        QVERIFY(!h.sparse->metrics()->sparse());
        EngineScript dense;
        dense.sidecar = false;
        Harness d(dense);
        QVERIFY(d.load(dir.filePath("n.gguf")));
        QVERIFY(!d.sparse->metrics()->sparse());
    }

    void compareRunsBothPaths() {
        Harness h;
        QTemporaryDir dir;
        QVERIFY(h.load(dir.filePath("m.gguf")));
        QVERIFY(QCoro::waitFor(h.sparse->runCompare(job(32))));
        QCOMPARE(h.sparse->compareAgreement(), 1.0);  // the fake's tokens ignore the path
        QCOMPARE(h.sparse->compareTokens(), 7);
        QCOMPARE(h.sparse->compareCommonPrefix(), 7);
        QVERIFY(h.sparse->compareDenseTps() > 0);
        const auto calls = h.fake.load()->tuningCalls();
        QCOMPARE(calls.size(), size_t(3));  // dense, sparse, restore
        QCOMPARE(calls[0].sparse, false);
        QCOMPARE(calls[1].sparse, true);
    }

    void calibrationReportsProgressAndAsksForAReload() {
        Harness h;
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        std::atomic<bool> sawCorpus{false};
        h.client->setCalibrator([&](const CalibrationRequest& r, const CalibrationProgress& p) {
            QFile corpus(QString::fromStdU16String(r.corpus.u16string()));
            sawCorpus =
                corpus.open(QIODevice::ReadOnly) && corpus.readAll().contains("Frankenstein");
            for (int i = 1; i <= 4; ++i) {
                std::this_thread::sleep_for(10ms);
                if (!p(i / 4.0, 4 - i, "step")) throw powerinfer::LoadCancelled();
            }
            return r.model.parent_path() / "m.powerinfer.gguf";
        });
        QVERIFY(h.load(model));
        QSignalSpy reload(h.sparse.get(), &SparseController::reloadRequested);
        QSignalSpy progress(h.sparse.get(), &SparseController::calibrationChanged);
        QVERIFY(QCoro::waitFor(h.sparse->runCalibration("bundled", {}, 0.6)));
        QVERIFY(sawCorpus);
        QCOMPARE(h.sparse->calibrationProgress(), 1.0);
        QVERIFY(progress.count() >= 4);
        QCOMPARE(reload.count(), 1);
        QCOMPARE(reload.at(0).at(0).toString(), model);
    }

    // Issue 17, defect 8: sparse mode switched itself on after calibration
    // although it was slower; the ETA read 54 s at 33 % of a 323 s run.
    void afterCalibrationTheMeasuredComparisonDecides() {
        EngineScript script;  // the same speed either way (scripted: CI machines are noisy)
        script.denseTokensPerSecond = script.sparseTokensPerSecond = 40;
        Harness h(script);
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        h.client->setCalibrator([](const CalibrationRequest& r, const CalibrationProgress& p) {
            p(1.0, 0, "done");
            return r.model.parent_path() / "m.powerinfer.gguf";
        });
        QVERIFY(h.load(model));
        QSignalSpy reload(h.sparse.get(), &SparseController::reloadRequested);
        QSignalSpy recommended(h.sparse.get(), &SparseController::recommendationChanged);
        h.sparse->setCalibrationTokens(SparseController::kQuickCalibrationTokens);
        QCOMPARE(h.sparse->calibrationTokens(), 2000);
        QVERIFY(QCoro::waitFor(h.sparse->runCalibration("bundled", {}, 0.5)));
        QCOMPARE(reload.count(), 1);
        QVERIFY(h.load(model));  // what ChatController does on reloadRequested
        // Sparse is not faster: it goes off, and the numbers say why.
        QTRY_VERIFY_WITH_TIMEOUT(h.sparse->recommendation().startsWith("Dense recommended"), 5000);
        QVERIFY2(h.sparse->recommendation().contains("tok/s"),
                 qPrintable(h.sparse->recommendation()));
        QVERIFY(!h.sparse->recommendSparse());
        QVERIFY(!h.sparse->sparseEnabled());
        QTRY_VERIFY(!h.fake.load()->tuning().sparse);
        h.sparse->flushConfig();
        QVERIFY(!SparseController::readConfig(SparseController::configPathFor(model)).sparse);
        QVERIFY(recommended.count() >= 2);

        // 33 % after 100 s is about 200 s more, whatever the engine guessed.
        QCOMPARE(SparseController::honestEta(1.0 / 3.0, 100, 54), 200.0);
        QCOMPARE(SparseController::honestEta(0.5, 10, 30), 30.0);
        QCOMPARE(SparseController::honestEta(0.01, 1, -1), -1.0);
    }

    // Issue 30, item 6: "Reset to defaults" turned sparse back on after the
    // comparison had switched it off as slower, and the "Dense recommended"
    // banner still said it was off.
    void resetToDefaultsKeepsTheMeasuredVerdict() {
        EngineScript script;
        script.denseTokensPerSecond = script.sparseTokensPerSecond = 40;
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        {
            Harness h(script);
            h.client->setCalibrator([](const CalibrationRequest& r, const CalibrationProgress& p) {
                p(1.0, 0, "done");
                return r.model.parent_path() / "m.powerinfer.gguf";
            });
            QVERIFY(h.load(model));
            QVERIFY(QCoro::waitFor(h.sparse->runCalibration("bundled", {}, 0.5)));
            QVERIFY(h.load(model));
            QTRY_VERIFY_WITH_TIMEOUT(h.sparse->recommendation().startsWith("Dense recommended"),
                                     5000);
            QVERIFY(!h.sparse->sparseEnabled());
            h.sparse->setValue("hot_neuron_threshold", 0.9);
            h.sparse->resetToDefaults();
            QCOMPARE(h.sparse->hotNeuronThreshold(), powerinfer::Tuning{}.hot_neuron_threshold);
            QVERIFY(!h.sparse->sparseEnabled());
            QTRY_VERIFY(!h.fake.load()->tuning().sparse);
            QVERIFY2(h.sparse->recommendation().contains("switched off"),
                     qPrintable(h.sparse->recommendation()));
            // Switched on by hand, the banner no longer says it is off.
            h.sparse->setValue("sparse", true);
            QVERIFY2(!h.sparse->recommendation().contains("switched off") &&
                         h.sparse->recommendation().startsWith("Dense recommended"),
                     qPrintable(h.sparse->recommendation()));
            h.sparse->resetToDefaults();
            QVERIFY(!h.sparse->sparseEnabled());
            h.sparse->flushConfig();
        }
        // After a restart the verdict still holds.
        Harness again(script);
        QVERIFY(again.load(model));
        again.sparse->setValue("sparse", true);
        again.sparse->resetToDefaults();
        QVERIFY(!again.sparse->sparseEnabled());
        // A model that was never measured resets to the engine's default.
        Harness other(script);
        QVERIFY(other.load(dir.filePath("n.gguf")));
        other.sparse->setValue("sparse", false);
        other.sparse->resetToDefaults();
        QCOMPARE(other.sparse->sparseEnabled(), powerinfer::Tuning{}.sparse);
    }

    void aClearlyFasterSparsePathStaysOn() {
        EngineScript script;
        script.denseTokensPerSecond = 40;
        script.sparseTokensPerSecond = 44;  // 10 % faster, the same tokens
        Harness h(script);
        QTemporaryDir dir;
        const QString model = dir.filePath("m.gguf");
        h.client->setCalibrator([](const CalibrationRequest& r, const CalibrationProgress& p) {
            p(1.0, 0, "done");
            return r.model.parent_path() / "m.powerinfer.gguf";
        });
        QVERIFY(h.load(model));
        QVERIFY(QCoro::waitFor(h.sparse->runCalibration("bundled", {}, 0.5)));
        QVERIFY(h.load(model));
        QTRY_VERIFY_WITH_TIMEOUT(h.sparse->recommendation().startsWith("Sparse recommended"), 5000);
        QVERIFY2(h.sparse->recommendation().contains("sparse 44.0 tok/s, dense 40.0 tok/s"),
                 qPrintable(h.sparse->recommendation()));
        QVERIFY(h.sparse->recommendSparse());
        QVERIFY(h.sparse->sparseEnabled());
    }

    void calibrationCanBeCancelled() {
        Harness h;
        QTemporaryDir dir;
        h.client->setCalibrator([](const CalibrationRequest& r, const CalibrationProgress& p) {
            for (int i = 0; i < 500; ++i) {
                std::this_thread::sleep_for(5ms);
                if (!p(i / 500.0, -1, "step")) throw powerinfer::LoadCancelled();
            }
            return r.model;
        });
        QVERIFY(h.load(dir.filePath("m.gguf")));
        bool done = false, ok = true;
        auto task = calibrateInto(h.sparse.get(), &ok, &done);
        QTRY_VERIFY(h.sparse->calibrationProgress() > 0);
        h.sparse->cancelCalibration();
        QTRY_VERIFY_WITH_TIMEOUT(done, 3000);
        QVERIFY(!ok);
        QVERIFY(!h.sparse->calibrating());
        QVERIFY2(h.sparse->calibrationError().contains("cancelled"),
                 qPrintable(h.sparse->calibrationError()));
    }
};

QTEST_GUILESS_MAIN(TestSparseController)
#include "tst_sparse_controller.moc"
