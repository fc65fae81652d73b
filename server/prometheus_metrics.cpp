#include "prometheus_metrics.h"

namespace powerinfer::server {

namespace {

class Writer {
public:
    void header(const char* name, const char* type, const char* help) {
        out_ += QStringLiteral("# HELP %1 %2\n# TYPE %1 %3\n")
                    .arg(QLatin1String(name), QLatin1String(help), QLatin1String(type));
    }
    void sample(const QString& name, const QString& labels, double value) {
        out_ += name;
        if (!labels.isEmpty()) out_ += QLatin1Char('{') + labels + QLatin1Char('}');
        out_ += QLatin1Char(' ') + QString::number(value, 'g', 17) + QLatin1Char('\n');
    }
    QByteArray bytes() const { return out_.toUtf8(); }

private:
    QString out_;
};

QString label(const char* key, const QString& value) {
    return QStringLiteral("%1=\"%2\"").arg(QLatin1String(key), prometheusLabelValue(value));
}

}  // namespace

QString prometheusLabelValue(const QString& value) {
    QString v = value;
    v.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    v.replace(QLatin1Char('"'), QLatin1String("\\\""));
    v.replace(QLatin1Char('\n'), QLatin1String("\\n"));
    return v;
}

void ServerMetrics::countRequest(const QString& endpoint, int status) {
    ++requests_[qMakePair(endpoint, status)];
}

void ServerMetrics::observeDuration(double seconds) {
    for (size_t i = 0; i < kDurationBuckets.size(); ++i)
        if (seconds <= kDurationBuckets[i]) ++bucketCounts_[i];
    ++durationCount_;
    durationSum_ += seconds;
}

void ServerMetrics::addTokens(int64_t prompt, int64_t generated) {
    promptTokens_ += prompt;
    generatedTokens_ += generated;
}

QByteArray ServerMetrics::render(const Scrape& scrape) const {
    Writer w;
    const auto& model = scrape.model;
    w.header("powerinfer_model_info", "gauge", "The served model (value is always 1).");
    w.sample(QStringLiteral("powerinfer_model_info"),
             QStringList{label("model", scrape.modelId),
                         label("architecture", QString::fromStdString(model.architecture)),
                         label("quant", QString::fromStdString(model.quant)),
                         label("device", QString::fromStdString(model.device))}
                 .join(QLatin1Char(',')),
             1);

    w.header("powerinfer_inference_requests_total", "counter",
             "Completion requests by endpoint and HTTP status (499: client went away).");
    for (auto it = requests_.cbegin(); it != requests_.cend(); ++it)
        w.sample(QStringLiteral("powerinfer_inference_requests_total"),
                 label("endpoint", it.key().first) + QLatin1Char(',') +
                     label("status", QString::number(it.key().second)),
                 double(it.value()));

    w.header("powerinfer_inference_duration_seconds", "histogram",
             "Time from accepting a completion request to its last byte, queueing included.");
    for (size_t i = 0; i < kDurationBuckets.size(); ++i)
        w.sample(QStringLiteral("powerinfer_inference_duration_seconds_bucket"),
                 label("le", QString::number(kDurationBuckets[i])), double(bucketCounts_[i]));
    w.sample(QStringLiteral("powerinfer_inference_duration_seconds_bucket"),
             label("le", QStringLiteral("+Inf")), double(durationCount_));
    w.sample(QStringLiteral("powerinfer_inference_duration_seconds_sum"), {}, durationSum_);
    w.sample(QStringLiteral("powerinfer_inference_duration_seconds_count"), {},
             double(durationCount_));

    w.header("powerinfer_tokens_generated_total", "counter", "Tokens generated for clients.");
    w.sample(QStringLiteral("powerinfer_tokens_generated_total"), {}, double(generatedTokens_));
    w.header("powerinfer_prompt_tokens_total", "counter", "Prompt tokens of finished requests.");
    w.sample(QStringLiteral("powerinfer_prompt_tokens_total"), {}, double(promptTokens_));

    w.header("powerinfer_queue_depth", "gauge", "Requests accepted and waiting for the engine.");
    w.sample(QStringLiteral("powerinfer_queue_depth"), {}, scrape.backend.queued);
    w.header("powerinfer_requests_in_progress", "gauge", "Requests the engine is generating now.");
    w.sample(QStringLiteral("powerinfer_requests_in_progress"), {}, scrape.backend.running);

    if (const auto& mem = scrape.backend.memory) {
        // "gpu": memory on a real GPU; "cpu": the CPU backend (its accounted
        // budget, or everything when the model runs dense on the CPU);
        // "host": weights that stay in RAM.
        const bool onGpu =
            !mem->simulated && !QString::fromStdString(mem->device_name)
                                    .startsWith(QLatin1String("CPU"), Qt::CaseInsensitive);
        const QString device = onGpu ? QStringLiteral("gpu") : QStringLiteral("cpu");
        w.header("powerinfer_memory_usage_bytes", "gauge", "Memory used, by device and category.");
        const std::pair<const char*, int64_t> kinds[] = {{"dense_weights", mem->dense_weights},
                                                         {"hot_neurons", mem->hot_neurons},
                                                         {"neuron_cache", mem->neuron_cache},
                                                         {"kv_cache", mem->kv_cache},
                                                         {"predictors", mem->predictors}};
        for (const auto& [kind, bytes] : kinds) {
            // Without a GPU the "device" weights are the host's weights: the
            // same RAM, once, under device="host" (it was counted twice).
            if (!onGpu && qstrcmp(kind, "dense_weights") == 0) continue;
            w.sample(
                QStringLiteral("powerinfer_memory_usage_bytes"),
                label("device", device) + QLatin1Char(',') + label("kind", QLatin1String(kind)),
                double(bytes));
        }
        w.sample(QStringLiteral("powerinfer_memory_usage_bytes"),
                 label("device", QStringLiteral("host")) + QLatin1Char(',') +
                     label("kind", QStringLiteral("weights")),
                 double(mem->host_weights));
        // A budget only where one applies: dense on the CPU has none (it read 0).
        if (mem->budget_bytes > 0) {
            w.header("powerinfer_memory_budget_bytes", "gauge",
                     "Device memory the placement may use.");
            w.sample(QStringLiteral("powerinfer_memory_budget_bytes"),
                     label("device", device) + QLatin1Char(',') +
                         label("name", QString::fromStdString(mem->device_name)),
                     double(mem->budget_bytes));
        }
    }

    // Only once a token has been generated with FFN accounting; the hit rate
    // only when it ran sparse (a dense token has no hot/cold split).
    if (const auto& t = scrape.backend.lastToken; t && t->ffn_neurons_total > 0) {
        if (t->hot_hits + t->cache_hits + t->cold_misses > 0) {
            w.header("powerinfer_hot_neuron_hit_rate", "gauge",
                     "Share of predicted-active FFN neurons found on the device (last token).");
            w.sample(QStringLiteral("powerinfer_hot_neuron_hit_rate"), {}, t->hit_rate());
        }
        w.header("powerinfer_ffn_sparsity", "gauge", "Share of FFN neurons skipped (last token).");
        w.sample(QStringLiteral("powerinfer_ffn_sparsity"), {}, t->sparsity());
        w.header("powerinfer_last_token_seconds", "gauge", "Wall time of the last token.");
        w.sample(QStringLiteral("powerinfer_last_token_seconds"), {}, t->token_ms / 1000.0);
    }

    if (scrape.gpuUtilizationPercent) {
        w.header("powerinfer_gpu_utilization_percent", "gauge",
                 "GPU busy percentage reported by the driver (NVML).");
        w.sample(QStringLiteral("powerinfer_gpu_utilization_percent"), {},
                 *scrape.gpuUtilizationPercent);
    }
    return w.bytes();
}

}  // namespace powerinfer::server
