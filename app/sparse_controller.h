// The sparse engine's controls for QML: the live knobs (applied between
// tokens, persisted per model in MODEL.config.json), the placement preview,
// "Compare with dense", and calibration (sidecar creation) from the GUI.
// GUI thread only; the work runs on the engine thread via EngineClient.
#pragma once

#include <qcoro/qcorotask.h>
#include <qqmlintegration.h>

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QThreadPool>
#include <QTimer>
#include <QVariant>
#include <functional>
#include <optional>

#include "engine_worker.h"
#include "metrics_model.h"

namespace powerinfer::app {

class ChatStore;

class SparseController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(MetricsModel* metrics READ metrics CONSTANT)
    Q_PROPERTY(double hotNeuronThreshold READ hotNeuronThreshold NOTIFY tuningChanged)
    Q_PROPERTY(double predictorThreshold READ predictorThreshold NOTIFY tuningChanged)
    Q_PROPERTY(int cacheWindowSize READ cacheWindowSize NOTIFY tuningChanged)
    Q_PROPERTY(int prefetchDepth READ prefetchDepth NOTIFY tuningChanged)
    Q_PROPERTY(double activationSparsity READ activationSparsity NOTIFY tuningChanged)
    Q_PROPERTY(int vramBudgetMb READ vramBudgetMb NOTIFY tuningChanged)
    Q_PROPERTY(bool sparseEnabled READ sparseEnabled NOTIFY tuningChanged)
    Q_PROPERTY(QString configPath READ configPath NOTIFY tuningChanged)
    Q_PROPERTY(QString configError READ configError NOTIFY tuningChanged)

    Q_PROPERTY(bool previewAvailable READ previewAvailable NOTIFY previewChanged)
    Q_PROPERTY(qint64 previewHotNeurons READ previewHotNeurons NOTIFY previewChanged)
    Q_PROPERTY(qint64 previewTotalNeurons READ previewTotalNeurons NOTIFY previewChanged)
    Q_PROPERTY(qint64 previewDeviceBytes READ previewDeviceBytes NOTIFY previewChanged)
    Q_PROPERTY(bool previewBudgetLimited READ previewBudgetLimited NOTIFY previewChanged)
    Q_PROPERTY(QString previewNote READ previewNote NOTIFY previewChanged)

    Q_PROPERTY(bool comparing READ comparing NOTIFY compareChanged)
    Q_PROPERTY(bool compareDone READ compareDone NOTIFY compareChanged)
    Q_PROPERTY(double compareAgreement READ compareAgreement NOTIFY compareChanged)
    Q_PROPERTY(int compareTokens READ compareTokens NOTIFY compareChanged)
    Q_PROPERTY(int compareCommonPrefix READ compareCommonPrefix NOTIFY compareChanged)
    Q_PROPERTY(double compareDenseTps READ compareDenseTps NOTIFY compareChanged)
    Q_PROPERTY(double compareSparseTps READ compareSparseTps NOTIFY compareChanged)
    Q_PROPERTY(QString compareError READ compareError NOTIFY compareChanged)

    Q_PROPERTY(bool calibrating READ calibrating NOTIFY calibrationChanged)
    Q_PROPERTY(double calibrationProgress READ calibrationProgress NOTIFY calibrationChanged)
    Q_PROPERTY(double calibrationEta READ calibrationEta NOTIFY calibrationChanged)
    Q_PROPERTY(QString calibrationLine READ calibrationLine NOTIFY calibrationChanged)
    Q_PROPERTY(QString calibrationError READ calibrationError NOTIFY calibrationChanged)
    Q_PROPERTY(int calibrationTokens READ calibrationTokens WRITE setCalibrationTokens NOTIFY
                   calibrationChanged)
    // After a calibration: the dense/sparse comparison's verdict, with its
    // numbers ("" until it ran). The switch stays as it was until the user
    // follows it.
    Q_PROPERTY(QString recommendation READ recommendation NOTIFY recommendationChanged)
    Q_PROPERTY(bool recommendSparse READ recommendSparse NOTIFY recommendationChanged)
    // The sidecar's measured sparsity curve (powerinfer-calibrate: held-out
    // perplexity rise per level), one map per point: level, delivered,
    // pplRise, meanKl, top1 (fractions). Empty: an older sidecar or none.
    Q_PROPERTY(QVariantList curve READ curve NOTIFY curveChanged)
    Q_PROPERTY(double curveBound READ curveBound NOTIFY curveChanged)
    Q_PROPERTY(double recommendedSparsity READ recommendedSparsity NOTIFY curveChanged)
    // What activation_sparsity -1 runs at (-1: unknown).
    Q_PROPERTY(double defaultSparsity READ defaultSparsity NOTIFY curveChanged)
    // The level the engine runs at now: the knob, or the default for -1.
    Q_PROPERTY(double currentSparsity READ currentSparsity NOTIFY curveChanged)
    // Measured speeds: per "Compare with dense" run of this model, one map
    // (level, ratio = sparse / dense tok/s).
    Q_PROPERTY(QVariantList speedPoints READ speedPoints NOTIFY curveChanged)

public:
    SparseController(EngineClient* engine, ChatStore* store, QObject* parent = nullptr);
    ~SparseController() override;
    // Writes a pending config.json change now and waits for it (tests, exit).
    void flushConfig();

    MetricsModel* metrics() { return &metrics_; }
    double hotNeuronThreshold() const { return tuning_.hot_neuron_threshold; }
    double predictorThreshold() const { return tuning_.predictor_threshold; }
    int cacheWindowSize() const { return tuning_.cache_window_size; }
    int prefetchDepth() const { return tuning_.prefetch_depth; }
    double activationSparsity() const { return tuning_.activation_sparsity; }
    int vramBudgetMb() const { return int(tuning_.vram_budget_mb); }
    bool sparseEnabled() const { return tuning_.sparse; }
    QString configPath() const { return configPath_; }
    QString configError() const { return configError_; }
    const powerinfer::Tuning& tuning() const { return tuning_; }

    bool previewAvailable() const { return preview_.available; }
    qint64 previewHotNeurons() const { return preview_.hotNeurons; }
    qint64 previewTotalNeurons() const { return preview_.totalNeurons; }
    qint64 previewDeviceBytes() const { return preview_.deviceBytes; }
    bool previewBudgetLimited() const { return preview_.budgetLimited; }
    QString previewNote() const { return preview_.note; }

    bool comparing() const { return comparing_; }
    bool compareDone() const { return compare_.ok; }
    double compareAgreement() const { return compare_.agreement; }
    int compareTokens() const { return compare_.tokens; }
    int compareCommonPrefix() const { return compare_.commonPrefix; }
    double compareDenseTps() const { return compare_.denseTokensPerSecond; }
    double compareSparseTps() const { return compare_.sparseTokensPerSecond; }
    QString compareError() const { return compare_.error; }

    bool calibrating() const { return calibrating_; }
    double calibrationProgress() const { return calibrationProgress_; }
    double calibrationEta() const { return calibrationEta_; }
    QString calibrationLine() const { return calibrationLine_; }
    QString calibrationError() const { return calibrationError_; }
    int calibrationTokens() const { return int(calibrationTokens_); }
    QString recommendation() const { return recommendation_; }
    bool recommendSparse() const { return recommendSparse_; }
    QVariantList curve() const;
    double curveBound() const { return curve_.bound; }
    double recommendedSparsity() const { return curve_.recommended; }
    double defaultSparsity() const { return curve_.default_level; }
    double currentSparsity() const {
        return tuning_.activation_sparsity >= 0 ? tuning_.activation_sparsity
                                                : curve_.default_level;
    }
    QVariantList speedPoints() const { return speedPoints_; }
    // The corpus a quick calibration reads (the full one reads 8192).
    static constexpr int kQuickCalibrationTokens = 2000;
    // ETA from the app's own clock (elapsed * (1 - f) / f), never below the
    // engine's: the engine's estimate extrapolated its fast first phase.
    static double honestEta(double fraction, double elapsedSeconds, double engineEta);

    // "dir/name.gguf" -> "dir/name.config.json" (beside the sidecar
    // "dir/name.powerinfer.gguf").
    static QString configPathFor(const QString& modelPath);
    // Same keys and ranges as the engine's config.json; unknown keys are kept
    // on save. Missing file: defaults. Bad JSON: defaults and an error text.
    static powerinfer::Tuning readConfig(const QString& path, QString* error = nullptr);
    // sparseFaster: the dense/sparse comparison's verdict after a
    // calibration ("measured_sparse_faster"), kept when not given.
    static bool writeConfig(const QString& path, const powerinfer::Tuning& tuning,
                            QString* error = nullptr,
                            std::optional<bool> sparseFaster = std::nullopt);
    // That verdict, if this model was measured on this machine.
    static std::optional<bool> readSparseVerdict(const QString& path);

    // The tuning a model should load with (its config.json).
    powerinfer::Tuning tuningForModel(const QString& modelPath);
    // After a load: the engine's state for the panels.
    void modelLoaded(const QString& modelPath, const LoadOutcome& outcome);
    void modelUnloaded();
    // A batch of streamed tokens / a finished reply (from ChatController).
    void chunkArrived(const StreamChunk& chunk);
    void replyFinished(const GenerationOutcome& outcome);

    // Sets one knob by its config.json key, applies it live, saves it.
    Q_INVOKABLE void setValue(const QString& key, const QVariant& value);
    // Placement for the current knobs with one changed, without applying.
    Q_INVOKABLE void previewValue(const QString& key, const QVariant& value);
    Q_INVOKABLE void resetToDefaults();
    // source: "bundled", "file" (fileUrl) or "conversations".
    Q_INVOKABLE void calibrate(const QString& source, const QUrl& fileUrl, double targetSparsity);
    Q_INVOKABLE void cancelCalibration();

    void previewTuning(const powerinfer::Tuning& tuning);
    QCoro::Task<bool> runCalibration(QString source, QString file, double targetSparsity);
    // Corpus tokens a calibration runs (the engine's default: 8192).
    void setCalibrationTokens(int tokens) {
        calibrationTokens_ = std::max(128, tokens);
        emit calibrationChanged();
    }
    QCoro::Task<bool> runCompare(GenerationJob job);

signals:
    void tuningChanged();
    void previewChanged();
    void compareChanged();
    void calibrationChanged();
    void recommendationChanged();
    void curveChanged();
    // Calibration wrote a sidecar: reload the model so that it is used.
    void reloadRequested(const QString& modelPath);

private:
    static bool assign(powerinfer::Tuning& t, const QString& key, const QVariant& value);
    void apply();
    QCoro::Task<QString> corpusFile(QString source, QString file);

    QPointer<EngineClient> engine_;
    QPointer<ChatStore> store_;
    MetricsModel metrics_;
    powerinfer::Tuning tuning_;
    QString modelPath_, configPath_, configError_;
    PlacementPreview preview_;
    quint64 pendingPreview_ = 0;
    bool comparing_ = false;
    CompareOutcome compare_;
    bool calibrating_ = false;
    double calibrationProgress_ = 0, calibrationEta_ = -1;
    QString calibrationLine_, calibrationError_;
    int64_t calibrationTokens_ = 8192;
    QElapsedTimer calibrationClock_;
    // config.json writes: coalesced (a slider's key presses make one write)
    // and done off the GUI thread, one at a time, in order.
    QTimer saveTimer_;
    QThreadPool writer_;
    void saveNow();
    // Set by a successful calibration: the next load runs the comparison.
    bool compareAfterLoad_ = false;
    QString recommendation_;
    bool recommendSparse_ = false;
    // The comparison's numbers, for the banner as the switch changes.
    QString recommendationNumbers_;
    // What "Reset to defaults" puts the switch to: the measured verdict
    // (calibration switched a slower sparse path off; reset turned it on).
    std::optional<bool> sparseVerdict_;
    void updateRecommendationText();
    powerinfer::SparsityCurve curve_;
    QVariantList speedPoints_;
    QCoro::Task<> recommendFromCompare();
};

}  // namespace powerinfer::app
