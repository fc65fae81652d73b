#include "sparse_controller.h"

#include <qcoro/qcorofuture.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QThread>
#include <QUrl>
#include <cmath>

#include "chat_store.h"

namespace powerinfer::app {

namespace {

std::filesystem::path fsPath(const QString& p) { return std::filesystem::path(p.toStdU16String()); }

}  // namespace

SparseController::SparseController(EngineClient* engine, ChatStore* store, QObject* parent)
    : QObject(parent), engine_(engine), store_(store) {
    writer_.setMaxThreadCount(1);
    saveTimer_.setSingleShot(true);
    saveTimer_.setInterval(300);
    connect(&saveTimer_, &QTimer::timeout, this, &SparseController::saveNow);
    connect(engine_, &EngineClient::tuningApplied, this,
            [this](const powerinfer::Tuning&, const powerinfer::MemoryReport& memory) {
                metrics_.setMemory(memory);
            });
    connect(engine_, &EngineClient::previewReady, this,
            [this](quint64 id, const PlacementPreview& p) {
                if (id != pendingPreview_) return;  // superseded by a newer request
                preview_ = p;
                emit previewChanged();
            });
    connect(engine_, &EngineClient::calibrationProgress, this,
            [this](double f, double eta, const QString& line) {
                calibrationProgress_ = f;
                calibrationEta_ = honestEta(f, calibrationClock_.elapsed() / 1000.0, eta);
                calibrationLine_ = line;
                emit calibrationChanged();
            });
}

double SparseController::honestEta(double fraction, double elapsedSeconds, double engineEta) {
    if (fraction <= 0.02 || elapsedSeconds <= 0) return engineEta;  // too early to say
    const double fromClock = elapsedSeconds * (1.0 - fraction) / fraction;
    return std::max(engineEta, fromClock);
}

SparseController::~SparseController() { flushConfig(); }

void SparseController::flushConfig() {
    if (saveTimer_.isActive()) {
        saveTimer_.stop();
        saveNow();
    }
    writer_.waitForDone();
}

void SparseController::saveNow() {
    if (configPath_.isEmpty()) return;
    const QString path = configPath_;
    const powerinfer::Tuning tuning = tuning_;
    const std::optional<bool> verdict = sparseVerdict_;
    QPointer<SparseController> self(this);
    writer_.start([self, path, tuning, verdict] {
        QString error;
        writeConfig(path, tuning, &error, verdict);
        // Back on the GUI thread: the panel shows a failed save.
        QMetaObject::invokeMethod(
            qApp,
            [self, error] {
                if (!self || self->configError_ == error) return;
                self->configError_ = error;
                emit self->tuningChanged();
            },
            Qt::QueuedConnection);
    });
}

QString SparseController::configPathFor(const QString& modelPath) {
    if (modelPath.isEmpty()) return {};
    const QFileInfo fi(modelPath);
    QString base = fi.fileName();
    if (base.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) base.chop(5);
    return fi.dir().filePath(base + QStringLiteral(".config.json"));
}

bool SparseController::assign(powerinfer::Tuning& t, const QString& key, const QVariant& v) {
    bool ok = false;
    if (key == QLatin1String("hot_neuron_threshold")) {
        const double d = v.toDouble(&ok);
        if (!ok || d < 0 || d > 1) return false;
        t.hot_neuron_threshold = d;
    } else if (key == QLatin1String("predictor_threshold")) {
        const double d = v.toDouble(&ok);
        if (!ok || d < 0 || d > 1) return false;
        t.predictor_threshold = d;
    } else if (key == QLatin1String("cache_window_size")) {
        const int i = v.toInt(&ok);
        if (!ok || i < 0 || i > (1 << 20)) return false;
        t.cache_window_size = i;
    } else if (key == QLatin1String("prefetch_depth")) {
        const int i = v.toInt(&ok);
        if (!ok || i < 0 || i > 1024) return false;
        t.prefetch_depth = i;
    } else if (key == QLatin1String("activation_sparsity")) {
        const double d = v.toDouble(&ok);
        if (!ok || d < -1 || d > 0.99) return false;  // -1: the sidecar's calibrated level
        t.activation_sparsity = d;
    } else if (key == QLatin1String("head_candidates")) {
        const int i = v.toInt(&ok);
        if (!ok || i < -1 || i > (1 << 24)) return false;  // -1: the default, 0: dense head
        t.head_candidates = i;
    } else if (key == QLatin1String("chunk_size")) {
        const int i = v.toInt(&ok);
        if (!ok || i < 1 || i > (1 << 16)) return false;
        t.chunk_size = i;
    } else if (key == QLatin1String("vram_budget_mb")) {
        if (v.toString() == QLatin1String("auto")) {
            t.vram_budget_mb = -1;
            return true;
        }
        const qint64 mb = v.toLongLong(&ok);
        if (!ok || mb < -1) return false;  // -1 auto, 0 nothing on the device
        t.vram_budget_mb = mb;
    } else if (key == QLatin1String("sparse")) {
        if (v.typeId() != QMetaType::Bool && v.toString() != QLatin1String("true") &&
            v.toString() != QLatin1String("false"))
            return false;
        t.sparse =
            v.typeId() == QMetaType::Bool ? v.toBool() : v.toString() == QLatin1String("true");
    } else {
        return false;
    }
    return true;
}

powerinfer::Tuning SparseController::readConfig(const QString& path, QString* error) {
    powerinfer::Tuning t;
    QFile f(path);
    if (!f.exists()) return t;
    if (!f.open(QIODevice::ReadOnly)) {
        if (error) *error = tr("%1 cannot be read: %2").arg(path, f.errorString());
        return t;
    }
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
    if (!doc.isObject()) {
        if (error)
            *error =
                tr("%1 is not a JSON object (%2); defaults are used").arg(path, pe.errorString());
        return t;
    }
    const QJsonObject o = doc.object();
    QStringList bad;
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == QLatin1String("force_full_precision_layers")) {
            t.force_full_precision_layers.clear();
            for (const auto& v : it.value().toArray())
                t.force_full_precision_layers.push_back(v.toInt());
            continue;
        }
        powerinfer::Tuning probe = t;
        if (!assign(probe, it.key(), it.value().toVariant())) {
            static const QStringList known = {"hot_neuron_threshold", "predictor_threshold",
                                              "cache_window_size",    "prefetch_depth",
                                              "chunk_size",           "activation_sparsity",
                                              "vram_budget_mb",       "sparse",
                                              "head_candidates"};
            if (known.contains(it.key())) bad << it.key();
            continue;  // unknown keys belong to other tools
        }
        t = probe;
    }
    if (!bad.isEmpty() && error)
        *error = tr("%1: invalid values for %2 (defaults used)")
                     .arg(path, bad.join(QStringLiteral(", ")));
    return t;
}

std::optional<bool> SparseController::readSparseVerdict(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return std::nullopt;
    const QJsonValue v = QJsonDocument::fromJson(f.readAll())
                             .object()
                             .value(QLatin1String("measured_sparse_faster"));
    if (!v.isBool()) return std::nullopt;
    return v.toBool();
}

bool SparseController::writeConfig(const QString& path, const powerinfer::Tuning& t, QString* error,
                                   std::optional<bool> sparseFaster) {
    QJsonObject o;
    QFile in(path);
    if (in.open(QIODevice::ReadOnly)) o = QJsonDocument::fromJson(in.readAll()).object();
    in.close();
    o[QStringLiteral("hot_neuron_threshold")] = t.hot_neuron_threshold;
    o[QStringLiteral("predictor_threshold")] = t.predictor_threshold;
    o[QStringLiteral("cache_window_size")] = t.cache_window_size;
    o[QStringLiteral("prefetch_depth")] = t.prefetch_depth;
    o[QStringLiteral("chunk_size")] = t.chunk_size;
    o[QStringLiteral("activation_sparsity")] = t.activation_sparsity;
    o[QStringLiteral("head_candidates")] = t.head_candidates;
    QJsonArray layers;
    for (int l : t.force_full_precision_layers) layers.append(l);
    o[QStringLiteral("force_full_precision_layers")] = layers;
    o[QStringLiteral("vram_budget_mb")] = t.vram_budget_mb < 0
                                              ? QJsonValue(QStringLiteral("auto"))
                                              : QJsonValue(qint64(t.vram_budget_mb));
    o[QStringLiteral("sparse")] = t.sparse;
    if (sparseFaster) o[QStringLiteral("measured_sparse_faster")] = *sparseFaster;
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(QJsonDocument(o).toJson()) < 0 ||
        !out.commit()) {
        if (error) *error = tr("cannot save %1: %2").arg(path, out.errorString());
        return false;
    }
    return true;
}

powerinfer::Tuning SparseController::tuningForModel(const QString& modelPath) {
    if (modelPath != modelPath_ && !recommendation_.isEmpty()) {
        recommendation_.clear();  // it was another model's
        recommendationNumbers_.clear();
        emit recommendationChanged();
    }
    modelPath_ = modelPath;
    configPath_ = configPathFor(modelPath);
    configError_.clear();
    tuning_ = readConfig(configPath_, &configError_);
    sparseVerdict_ = readSparseVerdict(configPath_);
    emit tuningChanged();
    return tuning_;
}

QVariantList SparseController::curve() const {
    QVariantList out;
    for (const powerinfer::SparsityCurvePoint& p : curve_.points)
        out.append(QVariantMap{{QStringLiteral("level"), p.level},
                               {QStringLiteral("delivered"), p.delivered},
                               {QStringLiteral("pplRise"), p.ppl_rise},
                               {QStringLiteral("meanKl"), p.mean_kl},
                               {QStringLiteral("top1"), p.top1},
                               {QStringLiteral("speed"), p.speed},
                               {QStringLiteral("bytes"), p.bytes}});
    return out;
}

void SparseController::modelLoaded(const QString& modelPath, const LoadOutcome& outcome) {
    flushConfig();  // a change for the previous model lands in its own file
    // Speeds measured for another model (or before a recalibration) do not
    // belong on this curve.
    if (modelPath != modelPath_ || compareAfterLoad_) speedPoints_.clear();
    curve_ = outcome.info.has_sidecar ? outcome.info.sparsity_curve : powerinfer::SparsityCurve{};
    emit curveChanged();
    modelPath_ = modelPath;
    configPath_ = configPathFor(modelPath);
    sparseVerdict_ = readSparseVerdict(configPath_);
    tuning_ = outcome.tuning;
    emit tuningChanged();
    metrics_.clear();
    metrics_.setModel(outcome.info.has_sidecar, QString::fromStdString(outcome.info.sparse_status));
    metrics_.setMemory(outcome.memory);
    metrics_.setSpeeds(0, 0);
    previewTuning(tuning_);
    if (compareAfterLoad_ && outcome.info.has_sidecar) {
        compareAfterLoad_ = false;
        recommendFromCompare();
    }
}

QCoro::Task<> SparseController::recommendFromCompare() {
    QPointer<SparseController> self(this);
    recommendationNumbers_.clear();
    recommendation_ = tr("Comparing dense and sparse on this machine…");
    emit recommendationChanged();
    GenerationJob job;
    job.messages = {{"user", "Explain in three sentences how a plant makes its food."}};
    job.maxTokens = 48;
    const bool ok = co_await runCompare(std::move(job));
    if (!self) co_return;
    if (!ok) {
        recommendation_ = tr("The dense/sparse comparison failed: %1").arg(compare_.error);
        recommendSparse_ = false;
        recommendationNumbers_.clear();
    } else {
        // On: clearly faster (5 %) and close to dense. Otherwise off, saying why.
        const double dense = compare_.denseTokensPerSecond, sparse = compare_.sparseTokensPerSecond;
        recommendSparse_ = sparse > dense * 1.05 && compare_.agreement >= 0.9;
        recommendationNumbers_ = tr("sparse %1 tok/s, dense %2 tok/s, %3 % of the tokens the same")
                                     .arg(sparse, 0, 'f', 1)
                                     .arg(dense, 0, 'f', 1)
                                     .arg(compare_.agreement * 100, 0, 'f', 0);
        // Measured: the switch's default from now on (saved with the knobs).
        sparseVerdict_ = recommendSparse_;
    }
    // Slower (or failed to compare): it does not stay on by itself.
    if (!recommendSparse_ && tuning_.sparse) setValue(QStringLiteral("sparse"), false);
    if (ok) updateRecommendationText();
    emit recommendationChanged();
}

void SparseController::updateRecommendationText() {
    if (recommendationNumbers_.isEmpty()) return;
    if (recommendSparse_)
        recommendation_ = tuning_.sparse
                              ? tr("Sparse recommended and on: %1.").arg(recommendationNumbers_)
                              : tr("Sparse recommended: %1. It is off; the switch above turns "
                                   "it on.")
                                    .arg(recommendationNumbers_);
    else
        recommendation_ = tuning_.sparse
                              ? tr("Dense recommended: %1. Sparse is on by your choice.")
                                    .arg(recommendationNumbers_)
                              : tr("Dense recommended: %1. Sparse was switched off; the tuning "
                                   "panel switches it back on.")
                                    .arg(recommendationNumbers_);
}

void SparseController::modelUnloaded() {
    metrics_.clear();
    metrics_.setModel(false, QString());
    metrics_.setMemory({});
}

void SparseController::chunkArrived(const StreamChunk& chunk) {
    metrics_.addSamples(chunk.samples);
    metrics_.setMemory(chunk.memory);
    metrics_.setSpeeds(chunk.tokensPerSecond, -1);
}

void SparseController::replyFinished(const GenerationOutcome& outcome) {
    if (outcome.ok) metrics_.setSpeeds(outcome.tokensPerSecond, outcome.promptTokensPerSecond);
}

void SparseController::apply() {
    if (engine_) engine_->setTuning(tuning_);
    // The banner says what the switch is now, not what it was.
    const QString before = recommendation_;
    updateRecommendationText();
    if (recommendation_ != before) emit recommendationChanged();
    // The headline follows the switch at once; samples confirm it.
    metrics_.setExpectedSparse(tuning_.sparse && metrics_.hasSidecar());
    // Saved shortly after, off the GUI thread (a key press no longer waits
    // for the disk); a burst of changes is one write.
    saveTimer_.start();
    emit tuningChanged();
    emit curveChanged();  // currentSparsity follows the knob
    previewTuning(tuning_);
}

void SparseController::setValue(const QString& key, const QVariant& value) {
    powerinfer::Tuning t = tuning_;
    if (!assign(t, key, value)) return;
    tuning_ = t;
    apply();
}

void SparseController::previewValue(const QString& key, const QVariant& value) {
    powerinfer::Tuning t = tuning_;
    if (assign(t, key, value)) previewTuning(t);
}

void SparseController::resetToDefaults() {
    tuning_ = powerinfer::Tuning{};
    // The switch's default is what was measured on this machine.
    if (sparseVerdict_) tuning_.sparse = *sparseVerdict_;
    apply();
}

void SparseController::previewTuning(const powerinfer::Tuning& tuning) {
    if (engine_ && engine_->isLoaded()) pendingPreview_ = engine_->requestPreview(tuning);
}

QCoro::Task<bool> SparseController::runCompare(GenerationJob job) {
    QPointer<SparseController> self(this);
    if (comparing_ || !engine_) co_return false;
    comparing_ = true;
    compare_ = CompareOutcome{};
    emit compareChanged();
    const CompareOutcome out = co_await engine_->compare(std::move(job));
    if (!self) co_return false;
    compare_ = out;
    comparing_ = false;
    if (out.ok && out.denseTokensPerSecond > 0 && currentSparsity() >= 0 && tuning_.sparse) {
        // One speed per level: the latest run replaces an older one.
        const double level = currentSparsity();
        for (qsizetype i = speedPoints_.size() - 1; i >= 0; --i)
            if (std::fabs(speedPoints_[i].toMap().value(QStringLiteral("level")).toDouble() -
                          level) < 1e-6)
                speedPoints_.removeAt(i);
        speedPoints_.append(QVariantMap{
            {QStringLiteral("level"), level},
            {QStringLiteral("ratio"), out.sparseTokensPerSecond / out.denseTokensPerSecond}});
        emit curveChanged();
    }
    emit compareChanged();
    co_return out.ok;
}

QCoro::Task<QString> SparseController::corpusFile(QString source, QString file) {
    QPointer<SparseController> self(this);
    if (source == QLatin1String("file")) {
        if (file.startsWith(QLatin1String("file:"))) file = QUrl(file).toLocalFile();
        co_return file;
    }
    QByteArray text;
    if (source == QLatin1String("conversations")) {
        if (!store_) co_return QString();
        const QList<ConversationRecord> list = co_await store_->conversations();
        if (!self) co_return QString();
        for (const ConversationRecord& c : list) {
            const QList<MessageRecord> messages = co_await store_->messages(c.id);
            if (!self) co_return QString();
            for (const MessageRecord& m : messages) text += m.content.toUtf8() + "\n\n";
        }
    } else {
        QFile bundled(QStringLiteral(":/corpus/frankenstein-excerpt.txt"));
        if (bundled.open(QIODevice::ReadOnly)) text = bundled.readAll();
    }
    const QString path = QDir::temp().filePath(
        QStringLiteral("powerinfer-corpus-%1.txt").arg(QCoreApplication::applicationPid()));
    QFile out(path);
    if (text.isEmpty() || !out.open(QIODevice::WriteOnly) || out.write(text) != text.size())
        co_return QString();
    co_return path;
}

QCoro::Task<bool> SparseController::runCalibration(QString source, QString file,
                                                   double targetSparsity) {
    QPointer<SparseController> self(this);
    if (calibrating_ || !engine_ || modelPath_.isEmpty()) co_return false;
    calibrating_ = true;
    calibrationProgress_ = 0;
    calibrationEta_ = -1;
    calibrationLine_ = tr("Preparing the corpus…");
    calibrationError_.clear();
    emit calibrationChanged();
    const QString corpus = co_await corpusFile(source, file);
    if (!self) co_return false;
    CalibrationOutcome out;
    if (corpus.isEmpty()) {
        out.error = source == QLatin1String("conversations")
                        ? tr("There are no conversations to calibrate on yet.")
                        : tr("The corpus could not be prepared.");
    } else {
        CalibrationRequest request;
        request.model = fsPath(modelPath_);
        request.corpus = fsPath(corpus);
        request.targetSparsity = targetSparsity;
        request.tokens = calibrationTokens_;
        request.threads = std::max(1, QThread::idealThreadCount() - 1);
        calibrationClock_.start();
        out = co_await engine_->calibrate(request);
        if (!self) co_return false;
        if (source != QLatin1String("file")) QFile::remove(corpus);
    }
    calibrating_ = false;
    calibrationError_ = out.ok ? QString() : out.error;
    if (out.ok) calibrationProgress_ = 1;
    emit calibrationChanged();
    if (out.ok) {
        // The reload comes back sparse (the engine builds its sparse path only
        // at load); the comparison then decides whether it stays on.
        compareAfterLoad_ = true;
        recommendation_.clear();
        emit recommendationChanged();
    }
    // The engine let go of the model to calibrate: load it again, now with its sidecar.
    if (!corpus.isEmpty()) emit reloadRequested(modelPath_);
    co_return out.ok;
}

void SparseController::calibrate(const QString& source, const QUrl& fileUrl,
                                 double targetSparsity) {
    runCalibration(source, fileUrl.isLocalFile() ? fileUrl.toLocalFile() : fileUrl.toString(),
                   targetSparsity);
}

void SparseController::cancelCalibration() {
    if (engine_) engine_->cancelCalibration();
}

}  // namespace powerinfer::app
