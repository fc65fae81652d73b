#include <QRegularExpression>
#include <QTest>

#include "prometheus_metrics.h"

using namespace powerinfer::server;

namespace {

// The value of the sample whose name and labels are exactly `series`, or NaN.
double sample(const QByteArray& text, const QString& series) {
    for (const QByteArray& line : text.split('\n')) {
        if (line.startsWith('#')) continue;
        const qsizetype space = line.lastIndexOf(' ');
        if (space > 0 && QString::fromUtf8(line.left(space)) == series)
            return line.mid(space + 1).toDouble();
    }
    return std::nan("");
}

}  // namespace

class TestPrometheusMetrics : public QObject {
    Q_OBJECT
private slots:
    void countsRequestsByEndpointAndStatus() {
        ServerMetrics m;
        m.countRequest(QStringLiteral("/v1/completions"), 200);
        m.countRequest(QStringLiteral("/v1/completions"), 200);
        m.countRequest(QStringLiteral("/v1/completions"), 400);
        m.addTokens(10, 7);
        m.addTokens(5, 3);
        const QByteArray text = m.render({});
        QCOMPARE(
            sample(
                text,
                R"(powerinfer_inference_requests_total{endpoint="/v1/completions",status="200"})"),
            2.0);
        QCOMPARE(
            sample(
                text,
                R"(powerinfer_inference_requests_total{endpoint="/v1/completions",status="400"})"),
            1.0);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_tokens_generated_total")), 10.0);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_prompt_tokens_total")), 15.0);
        QVERIFY(text.contains("# TYPE powerinfer_inference_requests_total counter\n"));
    }

    void histogramBucketsAreCumulative() {
        ServerMetrics m;
        for (double s : {0.01, 0.2, 0.2, 3.0, 1000.0}) m.observeDuration(s);
        const QByteArray text = m.render({});
        const QString b = QStringLiteral("powerinfer_inference_duration_seconds_bucket{le=\"%1\"}");
        QCOMPARE(sample(text, b.arg(QStringLiteral("0.05"))), 1.0);
        QCOMPARE(sample(text, b.arg(QStringLiteral("0.25"))), 3.0);
        QCOMPARE(sample(text, b.arg(QStringLiteral("5"))), 4.0);
        QCOMPARE(sample(text, b.arg(QStringLiteral("300"))), 4.0);
        QCOMPARE(sample(text, b.arg(QStringLiteral("+Inf"))), 5.0);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_inference_duration_seconds_count")), 5.0);
        QVERIFY(qAbs(sample(text, QStringLiteral("powerinfer_inference_duration_seconds_sum")) -
                     1003.41) < 1e-9);
    }

    void reportsBackendGaugesOnlyWhenKnown() {
        ServerMetrics m;
        ServerMetrics::Scrape scrape;
        scrape.backend.queued = 3;
        scrape.backend.running = 1;
        QByteArray text = m.render(scrape);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_queue_depth")), 3.0);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_requests_in_progress")), 1.0);
        QVERIFY(!text.contains("powerinfer_memory_usage_bytes"));
        QVERIFY(!text.contains("powerinfer_hot_neuron_hit_rate"));
        QVERIFY(!text.contains("powerinfer_gpu_utilization_percent"));

        powerinfer::MemoryReport mem;
        mem.simulated = false;
        mem.kv_cache = 123;
        mem.host_weights = 456;
        mem.device_name = "GPU \"X\"";
        powerinfer::MemoryReport cpu = mem;
        cpu.device_name = "CPU device";  // dense on the CPU: not simulated, still not a GPU
        cpu.dense_weights = 456;         // the runtime's dense report: the host weights again
        scrape.backend.memory = cpu;
        text = m.render(scrape);
        QVERIFY(
            text.contains("powerinfer_memory_usage_bytes{device=\"cpu\",kind=\"kv_cache\"} 123\n"));
        // Issue 17: the weights were counted twice on the CPU, the budget read 0.
        QVERIFY2(!text.contains("device=\"cpu\",kind=\"dense_weights\""), qPrintable(text));
        QCOMPARE(sample(text, R"(powerinfer_memory_usage_bytes{device="host",kind="weights"})"),
                 456.0);
        QVERIFY2(!text.contains("powerinfer_memory_budget_bytes"), qPrintable(text));
        powerinfer::TokenMetrics dense;
        dense.ffn_neurons_total = 100;
        dense.active = 100;
        scrape.backend.lastToken = dense;
        text = m.render(scrape);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_ffn_sparsity")), 0.0);
        QVERIFY2(!text.contains("powerinfer_hot_neuron_hit_rate"), "no hit rate for a dense token");
        mem.budget_bytes = 1 << 30;
        scrape.backend.memory = mem;
        powerinfer::TokenMetrics t;
        t.ffn_neurons_total = 100;
        t.active = 20;
        t.hot_hits = 15;
        t.cache_hits = 1;
        scrape.backend.lastToken = t;
        scrape.gpuUtilizationPercent = 42;
        text = m.render(scrape);
        QCOMPARE(sample(text, R"(powerinfer_memory_usage_bytes{device="gpu",kind="kv_cache"})"),
                 123.0);
        QCOMPARE(sample(text, R"(powerinfer_memory_usage_bytes{device="host",kind="weights"})"),
                 456.0);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_hot_neuron_hit_rate")), 0.8);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_ffn_sparsity")), 0.8);
        QCOMPARE(sample(text, QStringLiteral("powerinfer_gpu_utilization_percent")), 42.0);
        QVERIFY(text.contains("name=\"GPU \\\"X\\\"\""));
    }

    void everyLineIsWellFormed() {
        ServerMetrics m;
        m.countRequest(QStringLiteral("/v1/chat/completions"), 200);
        m.observeDuration(0.3);
        const QRegularExpression sampleLine(
            QStringLiteral("^[a-z_]+(\\{([a-z_]+=\"([^\"\\\\]|\\\\.)*\",?)+\\})? [-+0-9.eE]+$"));
        const QRegularExpression commentLine(QStringLiteral("^# (HELP|TYPE) [a-z_]+ .+$"));
        for (const QByteArray& line : m.render({}).split('\n')) {
            if (line.isEmpty()) continue;
            const QString l = QString::fromUtf8(line);
            QVERIFY2(sampleLine.match(l).hasMatch() || commentLine.match(l).hasMatch(),
                     qPrintable(l));
        }
    }

    void escapesLabelValues() {
        QCOMPARE(prometheusLabelValue(QStringLiteral("a\\b\"c\nd")),
                 QStringLiteral("a\\\\b\\\"c\\nd"));
    }
};

QTEST_GUILESS_MAIN(TestPrometheusMetrics)
#include "tst_prometheus_metrics.moc"
