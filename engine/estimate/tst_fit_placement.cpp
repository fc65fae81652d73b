// The fit estimate with the engine's placement preview, on the default
// model's numbers: a synthetic model of SmolLM2-135M's shape in its quant
// (Q4_1: 30 layers, 576 wide, FFN 1536, vocabulary 49,152) with a sidecar
// (predictors included, as a GPU split needs), previewed on a GPU too small
// for all of it. The hybrid line is the preview's, bytes exact. And the
// decode probe: a real decode whose rate the speed estimate uses.
#include <QTemporaryDir>
#include <QtTest>

#include "powerinfer/fit_estimate.h"
#include "powerinfer/model_file.h"
#include "powerinfer/placement.h"
#include "powerinfer/synthetic.h"

using namespace powerinfer;

class TestFitPlacement : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::filesystem::path model_;

    FitModelShape shape() const {
        const ModelFileInfo info = inspect_model_file(model_);
        FitModelShape s;
        s.weight_bytes = info.file_bytes;
        s.n_params = info.n_params;
        s.n_layers = int(info.n_layers);
        s.n_embd = int(info.n_embd);
        s.n_head = int(info.n_head);
        s.n_head_kv = int(info.n_head_kv);
        s.n_ff = int(info.n_ff);
        s.n_vocab = int(info.n_vocab);
        return s;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = std::filesystem::path(dir_.filePath("smollm2-shape.gguf").toStdString());
        SyntheticModelSpec spec = synthetic_preset("smollm2-135m");
        spec.weight_type = "Q4_1";
        write_synthetic_model(model_, spec);  // and its sidecar beside it
    }

    void theHybridSplitIsTheEnginesPlacement() {
        const FitModelShape s = shape();
        QCOMPARE(s.n_layers, 30);
        QCOMPARE(s.n_ff, 1536);
        LoadOptions o;
        o.model_path = model_;
        o.n_ctx = 2048;
        // A GPU with 130 MB past the reserve: attention first, then part of
        // the hot neurons (the numbers a GPU would report).
        GpuStatus gpu;
        gpu.present = true;
        gpu.description = "test GPU";
        gpu.free_bytes = kFitVramReserveBytes + 130000000;
        gpu.held_bytes = 1 << 20;
        const PlacementPreview p = preview_placement(o, gpu);
        QVERIFY2(p.sparse && p.on_gpu, p.status.c_str());
        QVERIFY(p.hot_neurons > 0 && p.hot_neurons < p.total_neurons);
        QCOMPARE(p.total_neurons, int64_t(30 * 1536));
        QVERIFY(p.wanted_hot_bytes > 0);

        FitMachine m;
        m.ram_total_bytes = int64_t(16) << 30;
        m.ram_available_bytes = int64_t(12) << 30;
        m.host_read_bytes_per_s = 20e9;
        m.gpu = true;
        m.vram_free_bytes = gpu.free_bytes;
        const FitEstimate e = estimate_fit(s, 2048, m, fit_placement(p));
        QCOMPARE(e.verdict, FitVerdict::Hybrid);
        QCOMPARE(e.gpu_bytes, p.device_bytes);
        QCOMPARE(e.ram_bytes, e.total_bytes - p.device_bytes);
        const double hot = std::min(1.0, double(p.hot_neuron_bytes) / double(p.wanted_hot_bytes));
        QCOMPARE(e.gpu_hot_fraction, hot);
        QCOMPARE(e.gpu_ffn_fraction, double(p.hot_neurons) / double(p.total_neurons));
        const QString want =
            QString("hybrid: %1 % of hot neurons on the GPU (%2 of %3 FFN neurons)")
                .arg(qRound(100 * hot))
                .arg(p.hot_neurons)
                .arg(p.total_neurons);
        QVERIFY2(QString::fromStdString(e.summary).startsWith(want), e.summary.c_str());
        // The CPU reads its cold neurons and the attention of its layers.
        const double cpuLayers = 1.0 - double(p.gpu_attention_layers) / 30.0;
        const double cpuRead =
            double(e.ffn_bytes) * (1.0 - e.gpu_ffn_fraction) +
            double(e.weight_bytes - e.ffn_bytes + fit_kv_cache_bytes(s, 512)) * cpuLayers;
        QVERIFY(qAbs(e.tokens_per_s - 20e9 / double(int64_t(cpuRead))) < 1e-6);
        qInfo("%s; %d of 30 attention layers on the GPU; device %lld bytes", e.summary.c_str(),
              p.gpu_attention_layers, static_cast<long long>(p.device_bytes));

        // Without a preview (no sidecar yet) no line speaks of hot neurons.
        const FitEstimate bytes = estimate_fit(s, 2048, m);
        QVERIFY2(!QString::fromStdString(bytes.summary).contains("hot neurons on"),
                 bytes.summary.c_str());
        QCOMPARE(bytes.gpu_hot_fraction, -1.0);
        // A CPU plan (no GPU) is no hybrid split.
        PlacementPreview cpu = preview_placement(o);
        QVERIFY(!fit_placement(cpu).valid);
    }

    void theDecodeProbeMeasuresARealDecode() {
        QTemporaryDir scratch;
        const double rate = measure_decode_rate(scratch.path().toStdString(), 2);
        // A decode streams a 100 MB model at more than 100 MB/s and less than 10 TB/s.
        QVERIFY2(rate > 1e8 && rate < 1e13, qPrintable(QString::number(rate)));
        QVERIFY(QDir(scratch.path()).isEmpty());  // the probe's model is gone
        qInfo("decode probe: %.2f GB/s of weights", rate / 1e9);
    }
};

QTEST_APPLESS_MAIN(TestFitPlacement)
#include "tst_fit_placement.moc"
