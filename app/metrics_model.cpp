#include "metrics_model.h"

#include <algorithm>

#include "engine_worker.h"

namespace powerinfer::app {

MetricsModel::MetricsModel(int capacity, QObject* parent)
    : QObject(parent), ring_(size_t(std::max(1, capacity))) {}

qint64 MetricsModel::deviceUsed() const {
    return memory_.dense_weights + memory_.hot_neurons + memory_.neuron_cache + memory_.kv_cache +
           memory_.predictors;
}

const MetricsModel::Sample& MetricsModel::at(int i) const {
    const int cap = capacity();
    return ring_[size_t((head_ - count_ + i + cap * 2) % cap)];
}

float MetricsModel::layerHitRateAt(int i, int layer) const {
    const powerinfer::TokenMetrics* m = at(i).metrics();
    if (!m) return -1.0f;
    const auto& v = m->layer_hit_rate;
    return layer >= 0 && size_t(layer) < v.size() ? v[size_t(layer)] : -1.0f;
}

float MetricsModel::layerActiveFractionAt(int i, int layer) const {
    const powerinfer::TokenMetrics* m = at(i).metrics();
    if (!m) return -1.0f;
    const auto& v = m->layer_active_fraction;
    return layer >= 0 && size_t(layer) < v.size() ? v[size_t(layer)] : -1.0f;
}

double MetricsModel::expertShare(int layer, int expert) const {
    if (expertCount_ <= 0 || expert < 0 || expert >= expertCount_ || layer < 0) return -1;
    const size_t i = size_t(layer) * size_t(expertCount_) + size_t(expert);
    return heatmap_ && i < heatmap_->size() ? double((*heatmap_)[i]) : -1.0;
}

QVariantList MetricsModel::hitRateSeries() const {
    QVariantList out;
    out.reserve(count_);
    for (int i = 0; i < count_; ++i)
        out.append(at(i).sparse ? std::max(-1.0, at(i).hitRate) : -1.0);
    return out;
}

void MetricsModel::addSamples(const TokenSamples& samples) {
    if (!samples || samples->empty()) return;
    const int cap = capacity();
    for (size_t k = 0; k < samples->size(); ++k) {
        const powerinfer::TokenMetrics& m = (*samples)[k];
        Sample& s = ring_[size_t(head_)];
        s.sparse = isSparseSample(m);
        // No active neuron (e.g. a token served before the predictors ran):
        // the hit rate is undefined, not 0.
        s.hitRate = m.active > 0 ? m.hit_rate() : -1;
        s.recall = m.recall;
        s.sparsity = m.sparsity();
        s.bytesRatio = m.dense_weight_bytes > 0 ? m.weight_bytes / m.dense_weight_bytes : -1;
        s.tokenMs = m.token_ms;
        s.predictorMs = m.predictor_ms;
        s.deviceMs = m.device_ms;
        s.cpuMs = m.cpu_ms;
        s.batch = samples;
        s.index = k;
        s.expertsRouted = m.experts_routed;
        s.expertHits = m.expert_hits;
        s.expertCacheHits = m.expert_cache_hits;
        if (m.n_expert > 0 && !m.expert_heatmap.empty()) {
            expertCount_ = m.n_expert;
            heatmapBatch_ = samples;
            heatmap_ = &m.expert_heatmap;
        }
        head_ = (head_ + 1) % cap;
        count_ = std::min(count_ + 1, cap);
        ++total_;
    }
    recompute();
    emit updated();
}

void MetricsModel::recompute() {
    int sparseN = 0, hitN = 0, bytesN = 0, n = count_;
    double hit = 0, spars = 0, bytes = 0, pred = 0, dev = 0, cpu = 0, tok = 0;
    int layers = 0;
    bool split = false;
    recall_ = -1;
    for (int i = 0; i < n; ++i) {
        const Sample& s = at(i);
        pred += s.predictorMs;
        dev += s.deviceMs;
        cpu += s.cpuMs;
        tok += s.tokenMs;
        if (const powerinfer::TokenMetrics* m = s.metrics())
            layers = std::max(layers, int(std::max(m->layer_hit_rate.size(),
                                                   m->layer_active_fraction.size())));
        if (s.recall >= 0) recall_ = s.recall;  // the latest validation sample
        if (!s.sparse) continue;
        if (s.hitRate >= 0 && s.hitRate < 1) split = true;
        spars += s.sparsity;
        ++sparseN;
        if (s.bytesRatio >= 0) {
            bytes += s.bytesRatio;
            ++bytesN;
        }
        if (s.hitRate >= 0) {
            hit += s.hitRate;
            ++hitN;
        }
    }
    // Until a token arrives, what the engine said at load (it once read
    // "Running dense" after every load with a sidecar until the first token).
    sparse_ = n > 0 ? at(n - 1).sparse : expectedSparse_;
    hitRate_ = hitN ? hit / hitN : 0;
    hotColdSplit_ = split;
    sparsity_ = sparseN ? spars / sparseN : 0;
    bytesRatio_ = bytesN ? bytes / bytesN : -1;
    predictorMs_ = n ? pred / n : 0;
    deviceMs_ = n ? dev / n : 0;
    cpuMs_ = n ? cpu / n : 0;
    tokenMs_ = n ? tok / n : 0;
    layers_ = layers;
    qint64 routed = 0, hits = 0, cached = 0;
    for (int i = 0; i < n; ++i) {
        routed += at(i).expertsRouted;
        hits += at(i).expertHits;
        cached += at(i).expertCacheHits;
    }
    expertsRouted_ = routed;
    expertHitRate_ = routed ? double(hits) / double(routed) : 0;
    expertCacheShare_ = routed ? double(cached) / double(routed) : 0;
    shareMax_ = !heatmap_ || heatmap_->empty()
                    ? 0
                    : double(*std::max_element(heatmap_->begin(), heatmap_->end()));
}

void MetricsModel::setMemory(const powerinfer::MemoryReport& memory) {
    // Every batch carries a report; the bars rebuild only when it changed.
    const auto& m = memory_;
    if (m.device_name == memory.device_name && m.simulated == memory.simulated &&
        m.budget_bytes == memory.budget_bytes && m.dense_weights == memory.dense_weights &&
        m.hot_neurons == memory.hot_neurons && m.neuron_cache == memory.neuron_cache &&
        m.kv_cache == memory.kv_cache && m.predictors == memory.predictors &&
        m.host_weights == memory.host_weights && m.scratch == memory.scratch)
        return;
    memory_ = memory;
    emit memoryChanged();
}

void MetricsModel::setModel(bool hasSidecar, const QString& sparseStatus) {
    hasSidecar_ = hasSidecar;
    sparseStatus_ = sparseStatus;
    moe_ = sparseStatus.startsWith(QLatin1String("mixture of experts"));
    emit modelChanged();
    setExpectedSparse(hasSidecar && sparseStatus.startsWith(QLatin1String("sparse")));
}

void MetricsModel::setExpectedSparse(bool sparse) {
    expectedSparse_ = sparse;
    const bool before = sparse_;
    recompute();
    if (sparse_ != before) emit updated();
}

void MetricsModel::setSpeeds(double decodeTokensPerSecond, double promptTokensPerSecond) {
    if (decodeTokensPerSecond >= 0) decodeTps_ = decodeTokensPerSecond;
    if (promptTokensPerSecond >= 0) promptTps_ = promptTokensPerSecond;
    emit speedChanged();
}

void MetricsModel::clear() {
    head_ = count_ = 0;
    total_ = 0;
    heatmap_ = nullptr;
    heatmapBatch_.reset();
    expertCount_ = 0;
    recompute();
    emit updated();
}

}  // namespace powerinfer::app
