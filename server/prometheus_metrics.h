// The server's Prometheus metrics: counters and a latency histogram owned by
// the HTTP thread, plus gauges read from the backend at scrape time. Rendered
// in the text exposition format (version 0.0.4).
#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>
#include <array>
#include <optional>

#include "completion_backend.h"

namespace powerinfer::server {

class ServerMetrics {
public:
    // Upper bounds (seconds) of the duration histogram's buckets.
    static constexpr std::array<double, 12> kDurationBuckets = {0.05, 0.1, 0.25, 0.5, 1,   2.5,
                                                                5,    10,  30,   60,  120, 300};

    // status: the HTTP status sent, or "499" for a client that went away.
    void countRequest(const QString& endpoint, int status);
    void observeDuration(double seconds);
    void addTokens(int64_t prompt, int64_t generated);

    struct Scrape {
        BackendStatus backend;
        QString modelId;
        powerinfer::ModelInfo model;
        std::optional<double> gpuUtilizationPercent;  // omitted when unreadable
    };
    QByteArray render(const Scrape& scrape) const;

private:
    QMap<QPair<QString, int>, qint64> requests_;
    std::array<qint64, kDurationBuckets.size()> bucketCounts_{};
    qint64 durationCount_ = 0;
    double durationSum_ = 0;
    qint64 promptTokens_ = 0;
    qint64 generatedTokens_ = 0;
};

// Escapes a label value per the exposition format (\\, \", \n).
QString prometheusLabelValue(const QString& value);

}  // namespace powerinfer::server
