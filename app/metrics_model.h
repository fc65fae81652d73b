// The metrics panel's data: ring buffers of the engine's per-token samples
// (hit rate, recall, per-layer arrays), window means, the memory report and
// the speeds. GUI thread only; fed in batches (one StreamChunk = one
// `updated` signal), so a 40 Hz stream costs the UI 40 repaints at most.
#pragma once

#include <qqmlintegration.h>

#include <QObject>
#include <QVariantList>
#include <algorithm>
#include <memory>
#include <vector>

#include "powerinfer/engine.h"

namespace powerinfer::app {

// A batch of the engine's per-token samples, shared read-only between the
// engine thread that filled it and every GUI-thread reader: the one copy of
// a token's metrics on the way to the GUI is the engine worker's, when the
// token arrives (the engine's event is transient); the queued signal, the
// metrics model and the API backend keep this pointer, not copies.
using TokenSamples = std::shared_ptr<const std::vector<powerinfer::TokenMetrics>>;

class MetricsModel : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(int capacity READ capacity CONSTANT)
    Q_PROPERTY(int count READ count NOTIFY updated)
    Q_PROPERTY(int layers READ layers NOTIFY updated)
    Q_PROPERTY(qint64 totalTokens READ totalTokens NOTIFY updated)
    Q_PROPERTY(bool sparse READ sparse NOTIFY updated)
    Q_PROPERTY(double hitRate READ hitRate NOTIFY updated)
    // False while every active neuron was a hit (no GPU: nothing is cold,
    // so the hit rate reads 100 % at any threshold and says nothing).
    Q_PROPERTY(bool hotColdSplit READ hotColdSplit NOTIFY updated)
    // ms per token not in the predictor, device or CPU FFN parts (attention,
    // norms, the output head, sampling): the parts add up to tokenMs.
    Q_PROPERTY(double otherMs READ otherMs NOTIFY updated)
    Q_PROPERTY(double recall READ recall NOTIFY updated)
    Q_PROPERTY(double sparsity READ sparsity NOTIFY updated)
    // Weight bytes read per token against dense's (sparse engine v3's input
    // sparsity; -1: not measured, e.g. dense or the FFN-only engine).
    Q_PROPERTY(double weightBytesRatio READ weightBytesRatio NOTIFY updated)
    Q_PROPERTY(double predictorMs READ predictorMs NOTIFY updated)
    Q_PROPERTY(double deviceMs READ deviceMs NOTIFY updated)
    Q_PROPERTY(double cpuMs READ cpuMs NOTIFY updated)
    Q_PROPERTY(double tokenMs READ tokenMs NOTIFY updated)
    Q_PROPERTY(double decodeTokensPerSecond READ decodeTokensPerSecond NOTIFY speedChanged)
    Q_PROPERTY(double promptTokensPerSecond READ promptTokensPerSecond NOTIFY speedChanged)
    Q_PROPERTY(QString deviceName READ deviceName NOTIFY memoryChanged)
    Q_PROPERTY(bool simulated READ simulated NOTIFY memoryChanged)
    Q_PROPERTY(qint64 budgetBytes READ budgetBytes NOTIFY memoryChanged)
    Q_PROPERTY(qint64 denseWeights READ denseWeights NOTIFY memoryChanged)
    Q_PROPERTY(qint64 hotNeurons READ hotNeurons NOTIFY memoryChanged)
    Q_PROPERTY(qint64 neuronCache READ neuronCache NOTIFY memoryChanged)
    Q_PROPERTY(qint64 kvCache READ kvCache NOTIFY memoryChanged)
    Q_PROPERTY(qint64 predictors READ predictors NOTIFY memoryChanged)
    Q_PROPERTY(qint64 hostWeights READ hostWeights NOTIFY memoryChanged)
    Q_PROPERTY(qint64 deviceUsed READ deviceUsed NOTIFY memoryChanged)
    // Mixture-of-experts models: the window's expert hit rate (routings a
    // device expert served, placed or cached), whether experts are placed at
    // all (else every expert runs on the CPU), and the heatmap's shape.
    Q_PROPERTY(bool moe READ moe NOTIFY updated)
    Q_PROPERTY(bool expertPlacement READ expertPlacement NOTIFY memoryChanged)
    Q_PROPERTY(double expertHitRate READ expertHitRate NOTIFY updated)
    Q_PROPERTY(double expertCacheShare READ expertCacheShare NOTIFY updated)
    Q_PROPERTY(qint64 expertsRouted READ expertsRouted NOTIFY updated)
    Q_PROPERTY(int expertLayers READ expertLayers NOTIFY updated)
    Q_PROPERTY(int expertCount READ expertCount NOTIFY updated)
    Q_PROPERTY(double expertShareMax READ expertShareMax NOTIFY updated)
    Q_PROPERTY(bool hasSidecar READ hasSidecar NOTIFY modelChanged)
    Q_PROPERTY(QString sparseStatus READ sparseStatus NOTIFY modelChanged)

public:
    explicit MetricsModel(int capacity = 128, QObject* parent = nullptr);

    int capacity() const { return int(ring_.size()); }
    int count() const { return count_; }
    int layers() const { return layers_; }
    qint64 totalTokens() const { return total_; }
    bool sparse() const { return sparse_; }
    bool hotColdSplit() const { return hotColdSplit_; }
    double otherMs() const { return std::max(0.0, tokenMs_ - predictorMs_ - deviceMs_ - cpuMs_); }
    double hitRate() const { return hitRate_; }
    double recall() const { return recall_; }
    double sparsity() const { return sparsity_; }
    double weightBytesRatio() const { return bytesRatio_; }
    double predictorMs() const { return predictorMs_; }
    double deviceMs() const { return deviceMs_; }
    double cpuMs() const { return cpuMs_; }
    double tokenMs() const { return tokenMs_; }
    double decodeTokensPerSecond() const { return decodeTps_; }
    double promptTokensPerSecond() const { return promptTps_; }
    QString deviceName() const { return QString::fromStdString(memory_.device_name); }
    bool simulated() const { return memory_.simulated; }
    qint64 budgetBytes() const { return memory_.budget_bytes; }
    qint64 denseWeights() const { return memory_.dense_weights; }
    qint64 hotNeurons() const { return memory_.hot_neurons; }
    qint64 neuronCache() const { return memory_.neuron_cache; }
    qint64 kvCache() const { return memory_.kv_cache; }
    qint64 predictors() const { return memory_.predictors; }
    qint64 hostWeights() const { return memory_.host_weights; }
    qint64 deviceUsed() const;
    bool moe() const { return moe_ || expertCount_ > 0; }
    bool expertPlacement() const {
        return moe() && memory_.hot_neurons + memory_.neuron_cache + memory_.scratch > 0;
    }
    double expertHitRate() const { return expertHitRate_; }
    // Of the window's routings, the share the expert cache served.
    double expertCacheShare() const { return expertCacheShare_; }
    qint64 expertsRouted() const { return expertsRouted_; }
    int expertLayers() const { return expertCount_ ? (heatmap_ ? int(heatmap_->size()) : 0) / expertCount_ : 0; }
    int expertCount() const { return expertCount_; }
    double expertShareMax() const { return shareMax_; }
    // The latest heatmap: share of the layer's routings expert e took (-1
    // outside it).
    Q_INVOKABLE double expertShare(int layer, int expert) const;
    bool hasSidecar() const { return hasSidecar_; }
    QString sparseStatus() const { return sparseStatus_; }

    // One batch of samples (oldest first): one `updated` signal. The window
    // keeps the batch (no copy of its samples).
    void addSamples(const TokenSamples& samples);
    // Tests' convenience: wraps the vector into a batch.
    void addSamples(std::vector<powerinfer::TokenMetrics> samples) {
        addSamples(std::make_shared<const std::vector<powerinfer::TokenMetrics>>(std::move(samples)));
    }
    // The engine's sample behind window slot i (0 = oldest), as delivered:
    // the tests compare its address with the batch's.
    const powerinfer::TokenMetrics* sampleAt(int i) const {
        return i >= 0 && i < count_ ? at(i).metrics() : nullptr;
    }
    void setMemory(const powerinfer::MemoryReport& memory);
    void setModel(bool hasSidecar, const QString& sparseStatus);
    // Whether the engine runs sparse before any token says so (after a load
    // or a switch): the load's sparse_status, then the tuning's switch.
    void setExpectedSparse(bool sparse);
    void setSpeeds(double decodeTokensPerSecond, double promptTokensPerSecond);
    Q_INVOKABLE void clear();

    // Sample i of the window, 0 = oldest (for the painted items and tests).
    bool sparseAt(int i) const { return at(i).sparse; }
    double hitRateAt(int i) const { return at(i).hitRate; }
    double recallAt(int i) const { return at(i).recall; }
    // Per-layer value of sample i, or -1 when it has none for that layer.
    float layerHitRateAt(int i, int layer) const;
    float layerActiveFractionAt(int i, int layer) const;
    Q_INVOKABLE QVariantList hitRateSeries() const;

signals:
    void updated();
    void memoryChanged();
    void speedChanged();
    void modelChanged();

private:
    struct Sample {
        bool sparse = false;
        double hitRate = 0, recall = -1, sparsity = 0, bytesRatio = -1;
        double tokenMs = 0, predictorMs = 0, deviceMs = 0, cpuMs = 0;
        qint64 expertsRouted = 0, expertHits = 0, expertCacheHits = 0;
        // The per-layer arrays stay in the engine's sample, in its batch.
        TokenSamples batch;
        size_t index = 0;
        const powerinfer::TokenMetrics* metrics() const {
            return batch && index < batch->size() ? &(*batch)[index] : nullptr;
        }
    };
    const Sample& at(int i) const;
    void recompute();

    std::vector<Sample> ring_;
    int head_ = 0;  // next slot to write
    int count_ = 0;
    qint64 total_ = 0;
    int layers_ = 0;
    bool sparse_ = false;
    bool expectedSparse_ = false;
    bool hotColdSplit_ = false;
    double hitRate_ = 0, recall_ = -1, sparsity_ = 0, bytesRatio_ = -1;
    double predictorMs_ = 0, deviceMs_ = 0, cpuMs_ = 0, tokenMs_ = 0;
    double decodeTps_ = 0, promptTps_ = 0;
    powerinfer::MemoryReport memory_;
    bool hasSidecar_ = false;
    QString sparseStatus_;
    bool moe_ = false;
    double expertHitRate_ = 0, expertCacheShare_ = 0, shareMax_ = 0;
    qint64 expertsRouted_ = 0;
    int expertCount_ = 0;
    // The latest expert heatmap, in its sample (MetricsModel::expertShare).
    TokenSamples heatmapBatch_;
    const std::vector<float>* heatmap_ = nullptr;
};

}  // namespace powerinfer::app
