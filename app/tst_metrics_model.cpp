#include <QSignalSpy>
#include <QtTest>

#include "metrics_model.h"

using namespace powerinfer::app;

namespace {

powerinfer::TokenMetrics sample(int64_t i, int64_t hot, int layers = 3) {
    powerinfer::TokenMetrics m;
    m.token_index = i;
    m.token_ms = 10;
    m.predictor_ms = 1;
    m.device_ms = 6;
    m.cpu_ms = 3;
    m.ffn_neurons_total = 100;
    m.active = 20;
    m.hot_hits = hot;
    m.cache_hits = 0;
    m.cold_misses = 20 - hot;
    for (int l = 0; l < layers; ++l) {
        m.layer_hit_rate.push_back(float(l) / 10.0f + float(i) / 1000.0f);
        m.layer_active_fraction.push_back(0.2f);
    }
    return m;
}

}  // namespace

class TestMetricsModel : public QObject {
    Q_OBJECT
private slots:
    void ringBufferKeepsTheLatestInOrder() {
        MetricsModel model(4);
        QSignalSpy updated(&model, &MetricsModel::updated);
        std::vector<powerinfer::TokenMetrics> batch;
        for (int i = 0; i < 6; ++i) batch.push_back(sample(i, i % 2 ? 20 : 10));
        model.addSamples(batch);
        QCOMPARE(updated.count(), 1);  // one signal per batch, not per token
        QCOMPARE(model.capacity(), 4);
        QCOMPARE(model.count(), 4);
        QCOMPARE(model.totalTokens(), 6);
        // Tokens 2..5 remain, oldest first: hit rates 0.5, 1, 0.5, 1.
        QCOMPARE(model.hitRateAt(0), 0.5);
        QCOMPARE(model.hitRateAt(1), 1.0);
        QCOMPARE(model.hitRateSeries(), (QVariantList{0.5, 1.0, 0.5, 1.0}));
        QCOMPARE(model.layerHitRateAt(0, 2), 0.2f + 0.002f);
        QCOMPARE(model.layerHitRateAt(3, 2), 0.2f + 0.005f);
        QCOMPARE(model.layerHitRateAt(0, 3), -1.0f);  // no such layer
        QCOMPARE(model.layers(), 3);
        QCOMPARE(model.hitRate(), 0.75);
        QCOMPARE(model.sparsity(), 0.8);
        QCOMPARE(model.weightBytesRatio(), -1.0);  // not measured by these samples
        QCOMPARE(model.deviceMs(), 6.0);
        QVERIFY(model.sparse());

        model.addSamples({sample(6, 0)});
        QCOMPARE(model.count(), 4);
        QCOMPARE(model.hitRateAt(3), 0.0);
        QCOMPARE(model.hitRateAt(0), 1.0);  // token 3
        QCOMPARE(updated.count(), 2);
    }

    // Sparse engine v3's weight bytes per token against dense's, averaged
    // over the sparse tokens shown; dense tokens do not count.
    void weightBytesReadAgainstDense() {
        MetricsModel model(8);
        std::vector<powerinfer::TokenMetrics> batch;
        for (int i = 0; i < 4; ++i) {
            auto m = sample(i, 10);
            m.weight_bytes = i % 2 ? 80.0 : 70.0;
            m.dense_weight_bytes = 100.0;
            batch.push_back(m);
        }
        model.addSamples(batch);
        QVERIFY(model.sparse());
        QCOMPARE(model.weightBytesRatio(), 0.75);
    }

    // Issue 17, defect 7: the time split did not add up to ms/token, and a
    // hit rate of 100 % at every threshold (no GPU) read as a real figure.
    void thePartsOfATokenAddUpAndAllHitsIsNoSplit() {
        MetricsModel model(8);
        std::vector<powerinfer::TokenMetrics> batch;
        for (int i = 0; i < 4; ++i) {
            auto m = sample(i, 20);  // every active neuron a hit
            m.token_ms = 70;         // attention, head, sampling: not in the FFN parts
            batch.push_back(m);
        }
        model.addSamples(batch);
        QVERIFY(model.sparse());
        QVERIFY(!model.hotColdSplit());
        QCOMPARE(model.otherMs(), 60.0);
        QCOMPARE(model.predictorMs() + model.deviceMs() + model.cpuMs() + model.otherMs(),
                 model.tokenMs());
        model.addSamples({sample(5, 12)});
        QVERIFY(model.hotColdSplit());
    }

    void denseSamplesAreNotSparse() {
        MetricsModel model(8);
        model.addSamples({sample(0, 20)});
        // What the runtime's dense path reports: every neuron active, no hits.
        powerinfer::TokenMetrics dense;
        dense.token_ms = 5;
        dense.cpu_ms = 5;
        dense.ffn_neurons_total = dense.active = 1000;
        model.addSamples({dense});
        QVERIFY(!model.sparse());
        QCOMPARE(model.hitRate(), 1.0);  // means cover the sparse samples only
        QCOMPARE(model.hitRateSeries(), (QVariantList{1.0, -1.0}));
        QCOMPARE(model.recall(), -1.0);
    }

    void nothingActiveHasNoHitRate() {
        MetricsModel model(8);
        auto idle = sample(0, 0);
        idle.active = idle.cold_misses = 0;
        idle.cache_hits = 1;  // a sparse token (it counted), but nothing was predicted active
        idle.active = 0;
        model.addSamples({sample(1, 20), idle});
        QVERIFY(model.sparse());
        QCOMPARE(model.hitRateSeries(), (QVariantList{1.0, -1.0}));
        QCOMPARE(model.hitRate(), 1.0);
    }

    void recallIsTheLatestValidationSample() {
        MetricsModel model(8);
        auto a = sample(0, 10);
        a.recall = 0.9;
        auto b = sample(1, 10);
        model.addSamples({a, b});
        QCOMPARE(model.recall(), 0.9);
        QCOMPARE(model.recallAt(1), -1.0);
    }

    void memoryAndClear() {
        MetricsModel model(8);
        QSignalSpy memory(&model, &MetricsModel::memoryChanged);
        powerinfer::MemoryReport m;
        m.simulated = true;
        m.budget_bytes = 1000;
        m.dense_weights = 100;
        m.hot_neurons = 200;
        m.neuron_cache = 30;
        m.kv_cache = 40;
        m.predictors = 5;
        model.setMemory(m);
        QCOMPARE(memory.count(), 1);
        model.setMemory(m);  // unchanged: no signal, the bars are not rebuilt
        QCOMPARE(memory.count(), 1);
        QCOMPARE(model.deviceUsed(), 375);
        QVERIFY(model.simulated());
        model.addSamples({sample(0, 10), sample(1, 10)});
        model.clear();
        QCOMPARE(model.count(), 0);
        QCOMPARE(model.totalTokens(), 0);
        QVERIFY(!model.sparse());
        QCOMPARE(model.hitRateSeries(), QVariantList{});
    }
};

QTEST_GUILESS_MAIN(TestMetricsModel)
#include "tst_metrics_model.moc"
