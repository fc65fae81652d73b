// A mixture-of-experts model in the app, on the real engine: a tiny
// Zipf-routed qwen3moe model calibrated through the facade (its
// expert-routing sidecar) with a 1 MiB simulated device budget in its
// config.json. The reply's expert metrics reach the MetricsModel (hit rate,
// heatmap) and the metrics panel shows them; the numbers are the engine's
// own, checked against a second engine on the same prompt. The placement
// preview accounts the expert bytes exactly (against the GGUF's tensors and
// the engine's memory report).
#include <QtQml/qqmlextensionplugin.h>
#include <qcoro/qcorotask.h>

#include <QApplication>
#include <QFile>
#include <QQmlComponent>
#include <QQmlContext>
#include <QQmlEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtTest>
#include <numeric>

#include "app_settings.h"
#include "calibrate/synth_model.h"
#include "chat_controller.h"
#include "chat_store.h"
#include "engine_worker.h"
#include "gguf/gguf.h"
#include "metrics_model.h"
#include "model_catalog.h"
#include "powerinfer/calibration.h"
#include "powerinfer/placement.h"
#include "sparse_controller.h"

Q_IMPORT_QML_PLUGIN(PowerInfer_UiPlugin)
Q_IMPORT_QML_PLUGIN(PowerInfer_AppPlugin)

using namespace powerinfer::app;

// Items by objectName over the visual tree (Repeater delegates are not
// QObject children of the panel).
QQuickItem* findItem(QQuickItem* root, const QString& name) {
    if (!root) return nullptr;
    if (root->objectName() == name) return root;
    for (QQuickItem* child : root->childItems())
        if (QQuickItem* found = findItem(child, name)) return found;
    return nullptr;
}

class TestMoeMetrics : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_;

    powerinfer::LoadOptions options() const {
        powerinfer::LoadOptions o;
        o.model_path = model_.toStdString();
        o.n_threads = 2;
        o.n_ctx = 256;
        o.tuning.vram_budget_mb = 1;
        return o;
    }

private slots:
    void initTestCase() {
        QQuickStyle::setStyle("Basic");
        model_ = dir_.filePath("moe.gguf");
        auto spec = powerinfer::calibrate::synth_moe_preset("tiny-qwen3moe");
        spec.zipf_s = 1.0;
        powerinfer::calibrate::write_synthetic_moe_model(model_.toStdString(), spec);
        powerinfer::CalibrationOptions c;
        c.model_path = model_.toStdString();
        c.corpus_path = POWERINFER_SOURCE_DIR "/tests/data/frankenstein.txt";
        c.tokens = 256;
        c.n_threads = 2;
        powerinfer::calibrate_model(c);
        QVERIFY(QFile::exists(dir_.filePath("moe.powerinfer.gguf")));
        QFile config(SparseController::configPathFor(model_));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(R"({"vram_budget_mb": 1})");
    }

    // The preview's expert bytes: every expert tensor of the file, to the
    // byte; the placed part is what the engine then holds on its device.
    void previewAccountsExpertBytes() {
        const auto file = powerinfer::gguf::GgufFile::open(model_.toStdString());
        int64_t tensors = 0;
        for (const auto& t : file->tensors())
            if (t.name.find("_exps.weight") != std::string::npos)
                tensors += static_cast<int64_t>(t.n_bytes);
        const powerinfer::PlacementPreview p = powerinfer::preview_placement(options());
        QCOMPARE(p.expert_bytes, tensors);
        QCOMPARE(p.total_experts, int64_t(4 * 8));
        QVERIFY2(p.sparse && p.placed_experts > 0 && p.placed_experts < p.total_experts,
                 p.status.c_str());
        const int64_t one = tensors / (4 * 8);
        QCOMPARE(p.placed_expert_bytes, p.placed_experts * one);
        QCOMPARE(p.host_expert_bytes, tensors - p.placed_expert_bytes);
        QCOMPARE(p.expert_scratch_bytes,
                 int64_t(2 * 256 * 256 * 4));  // chunk_size rows of n_embd, in and out
        QCOMPARE(p.placed_expert_bytes + p.expert_cache_bytes + p.expert_scratch_bytes, int64_t(1)
                                                                                            << 20);
        QCOMPARE(p.device_bytes, int64_t(1) << 20);
        // The engine places what the preview says.
        auto engine = powerinfer::Engine::load(options());
        QVERIFY2(engine->info().sparse_status.find(std::to_string(p.placed_experts) +
                                                   " of 32 experts") != std::string::npos,
                 engine->info().sparse_status.c_str());
        const powerinfer::MemoryReport m = engine->memory();
        QCOMPARE(m.hot_neurons, p.placed_expert_bytes);
        QCOMPARE(m.scratch, p.expert_scratch_bytes);
        QCOMPARE(m.budget_bytes, int64_t(1) << 20);
        QVERIFY(m.simulated);
        // A live budget change re-plans before the next token, as the
        // preview plans it.
        powerinfer::Tuning t = engine->tuning();
        t.vram_budget_mb = 2;
        engine->set_tuning(t);
        powerinfer::GenerateRequest r;
        r.prompt = "the";
        r.max_tokens = 2;
        r.sampling.temperature = 0;
        engine->generate(r, nullptr);
        auto two = options();
        two.tuning.vram_budget_mb = 2;
        const powerinfer::PlacementPreview p2 = powerinfer::preview_placement(two);
        const powerinfer::MemoryReport m2 = engine->memory();
        QCOMPARE(m2.budget_bytes, int64_t(2) << 20);
        QVERIFY(p2.placed_expert_bytes > p.placed_expert_bytes);
        QCOMPARE(m2.hot_neurons, p2.placed_expert_bytes);
        // No budget: every expert on the CPU, and said so.
        auto o = options();
        o.tuning.vram_budget_mb = -1;
        const powerinfer::PlacementPreview cpu = powerinfer::preview_placement(o);
        QVERIFY(!cpu.sparse && cpu.placed_expert_bytes == 0 && cpu.host_expert_bytes == tensors);
        QVERIFY2(cpu.status.find("on the CPU") != std::string::npos, cpu.status.c_str());
    }

    void panelShowsExpertMetrics() {
        // The reference: the same greedy reply on an engine of its own.
        const QString prompt = QStringLiteral("the quick brown fox");
        int64_t routed = 0, hits = 0, cached = 0;
        std::vector<float> heatmap;
        {
            auto engine = powerinfer::Engine::load(options());
            powerinfer::GenerateRequest r;
            r.messages = {{"user", prompt.toStdString()}};
            r.max_tokens = 12;
            r.sampling.temperature = 0;
            engine->generate(r, [&](const powerinfer::TokenEvent& ev) {
                routed += ev.metrics.experts_routed;
                hits += ev.metrics.expert_hits;
                cached += ev.metrics.expert_cache_hits;
                if (!ev.metrics.expert_heatmap.empty()) heatmap = ev.metrics.expert_heatmap;
            });
        }
        QVERIFY(routed > 0 && hits > 0 && hits < routed);

        QTemporaryDir data;
        ChatStore store(data.filePath("conversations.sqlite"));
        EngineClient client(
            [](const powerinfer::LoadOptions& o) { return powerinfer::Engine::load(o); });
        ModelCatalog models(nullptr);
        AppSettings settings;
        settings.setTemperature(0);
        settings.setMaxTokens(12);
        settings.setRepeatPenalty(1.0);
        ChatController controller(&store, &client, &models, &settings);
        QVERIFY(QCoro::waitFor(controller.initialize()).isEmpty());
        QVERIFY(QCoro::waitFor(controller.loadModelFile(model_)));
        MetricsModel* metrics = controller.sparse()->metrics();
        QVERIFY(metrics->moe());
        QVERIFY(metrics->expertPlacement());
        controller.newConversation();
        QVERIFY(QCoro::waitFor(controller.sendMessage(prompt)));

        QCOMPARE(metrics->expertsRouted(), qint64(routed));
        QCOMPARE(metrics->expertHitRate(), double(hits) / double(routed));
        QCOMPARE(metrics->expertCacheShare(), double(cached) / double(routed));
        QCOMPARE(metrics->expertLayers(), 4);
        QCOMPARE(metrics->expertCount(), 8);
        for (int l = 0; l < 4; ++l) {
            double sum = 0;
            for (int e = 0; e < 8; ++e) {
                QCOMPARE(metrics->expertShare(l, e), double(heatmap[size_t(l * 8 + e)]));
                sum += metrics->expertShare(l, e);
            }
            QVERIFY(std::abs(sum - 1.0) < 1e-5);
        }

        QQmlEngine qml;
        qml.addImportPath("qrc:/");
        qml.rootContext()->setContextProperty("testController", &controller);
        QQmlComponent component(&qml);
        component.setData(R"(import QtQuick
import PowerInfer.Ui
MetricsPanel { controller: testController; width: 360; height: 1200 })",
                          QUrl());
        std::unique_ptr<QObject> panel(component.create());
        QVERIFY2(panel, qPrintable(component.errorString()));
        auto* root = qobject_cast<QQuickItem*>(panel.get());
        auto* stat = findItem(root, QStringLiteral("expertHitRate"));
        QVERIFY(stat && stat->isVisible());
        const QString shown = QString::number(100.0 * hits / routed, 'f', 1) + "%";
        bool found = false;
        for (QQuickItem* child : stat->childItems())
            found = found || child->property("text").toString() == shown;
        QVERIFY2(found, qPrintable("the panel shows " + shown));
        auto* heat = findItem(root, QStringLiteral("expertHeatmap"));
        QVERIFY(heat && heat->isVisible() && heat->height() >= 48);
    }
};

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    TestMoeMetrics t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_moe_metrics.moc"
