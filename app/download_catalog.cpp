#include "download_catalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtConcurrent/QtConcurrentRun>

#include "app_settings.h"
#include "model_catalog.h"
#include "model_downloader.h"

namespace powerinfer::app {

namespace {

constexpr int kCatalogVersion = 1;

QString verdictName(powerinfer::FitVerdict v) {
    switch (v) {
        case powerinfer::FitVerdict::Gpu:
            return QStringLiteral("gpu");
        case powerinfer::FitVerdict::Hybrid:
            return QStringLiteral("hybrid");
        case powerinfer::FitVerdict::CpuOnly:
            return QStringLiteral("cpu");
        case powerinfer::FitVerdict::DoesNotFit:
            return QStringLiteral("nofit");
        case powerinfer::FitVerdict::Unknown:
            break;
    }
    return QStringLiteral("unknown");
}

}  // namespace

QString checkText(const CatalogEntry& e) {
    const QString link = e.urlChecked ? QString() : QObject::tr(", link not tested");
    if (!e.checked.isEmpty() && e.sizeExact && !e.sha256.isEmpty())
        return QObject::tr("Size and SHA-256 checked") + link;
    const QString size = e.sizeExact ? QObject::tr("exact size") : QObject::tr("size approximate");
    const QString sha = !e.sha256.isEmpty() ? QObject::tr("SHA-256 in the catalog")
                                            : QObject::tr("SHA-256 from the server at download");
    return QObject::tr("Unverified entry: %1, %2").arg(size, sha) + link;
}

QString catalogSource() {
    const QString env = qEnvironmentVariable("POWERINFER_CATALOG");
    return env.isEmpty() ? QStringLiteral(":/catalog/models.json") : env;
}

CatalogDocument parseCatalog(const QByteArray& json) {
    CatalogDocument doc;
    QJsonParseError error;
    const QJsonObject root = QJsonDocument::fromJson(json, &error).object();
    if (error.error != QJsonParseError::NoError) {
        doc.problems << QObject::tr("The catalog is not valid JSON (%1 at offset %2).")
                            .arg(error.errorString())
                            .arg(error.offset);
        return doc;
    }
    doc.version = root.value("catalog_version").toInt();
    if (doc.version != kCatalogVersion) {
        doc.problems << QObject::tr("The catalog has version %1; this app reads version %2.")
                            .arg(doc.version)
                            .arg(kCatalogVersion);
        return doc;
    }
    doc.defaultId = root.value("default").toString();
    QStringList supported;
    for (const QJsonValue& v : root.value("supported_architectures").toArray())
        supported << v.toString();
    for (const QJsonValue& v : root.value("models").toArray()) {
        const QJsonObject o = v.toObject();
        CatalogEntry e;
        e.id = o.value("id").toString();
        e.family = o.value("family").toString();
        e.name = o.value("name").toString();
        e.parameters = o.value("parameters").toString();
        e.quant = o.value("quant").toString();
        e.fileName = o.value("file_name").toString();
        e.url = o.value("url").toString();
        e.sha256 = o.value("sha256").toString().toLower();
        e.licence = o.value("licence").toString();
        e.kind = o.value("kind").toString();
        e.architecture = o.value("architecture").toString();
        e.note = o.value("note").toString();
        e.sizeBytes = qint64(o.value("size_bytes").toDouble());
        e.sizeExact = o.value("size_exact").toBool();
        e.checked = o.value("checked").toString();
        e.urlChecked = o.value("url_checked").toBool();
        e.contextLength = o.value("context_length").toInt();
        e.supported = supported.contains(e.architecture);
        const QJsonObject shape = o.value("shape").toObject();
        e.shape.weight_bytes = e.sizeBytes;
        e.shape.n_params = qint64(o.value("n_params").toDouble());
        e.shape.n_layers = shape.value("n_layers").toInt();
        e.shape.n_embd = shape.value("n_embd").toInt();
        e.shape.n_head = shape.value("n_head").toInt();
        e.shape.n_head_kv = shape.value("n_head_kv").toInt();
        e.shape.n_ff = shape.value("n_ff").toInt();
        e.shape.n_vocab = shape.value("n_vocab").toInt();
        e.shape.head_dim = shape.value("head_dim").toInt();
        QStringList missing;
        if (e.id.isEmpty()) missing << "id";
        if (e.name.isEmpty()) missing << "name";
        if (!e.fileName.endsWith(QLatin1String(".gguf"))) missing << "file_name";
        if (!downloadUrlProblem(QUrl(e.url)).isEmpty()) missing << "url";
        if (e.sizeBytes <= 0) missing << "size_bytes";
        // An exact size or a SHA-256 must say where it came from.
        if ((e.sizeExact || !e.sha256.isEmpty()) && e.checked.isEmpty()) missing << "checked";
        if (!missing.isEmpty()) {
            doc.problems << QObject::tr("Catalog entry \"%1\" skipped: %2 missing or wrong.")
                                .arg(e.id.isEmpty() ? e.name : e.id, missing.join(", "));
            continue;
        }
        doc.entries << e;
    }
    return doc;
}

powerinfer::FitModelShape shapeOf(const ModelFileInfo& info) {
    powerinfer::FitModelShape s;
    s.weight_bytes = info.sizeBytes;
    s.n_params = info.nParams;
    s.n_layers = info.nLayers;
    s.n_embd = info.nEmbd;
    s.n_head = info.nHead;
    s.n_head_kv = info.nHeadKv;
    s.n_ff = info.nFf;
    s.n_vocab = info.nVocab;
    return s;
}

DownloadCatalog::DownloadCatalog(AppSettings* settings, ModelDownloads* downloads,
                                 ModelCatalog* localModels, QObject* parent)
    : QAbstractListModel(parent),
      settings_(settings),
      downloads_(downloads),
      localModels_(localModels) {
    const powerinfer::HostMemory memory = powerinfer::host_memory();
    ramTotal_ = memory.total_bytes;
    ramAvailable_ = memory.available_bytes;
    // Download states and the context length change what the rows say.
    connect(downloads_, &ModelDownloads::progressed, this, &DownloadCatalog::refreshAll);
    connect(downloads_, &ModelDownloads::countChanged, this, &DownloadCatalog::refreshAll);
    connect(settings_, &AppSettings::changed, this, [this] {
        refreshAll();
        emit machineChanged();
    });
    connect(localModels_, &ModelCatalog::scanned, this, &DownloadCatalog::refreshAll);
}

void DownloadCatalog::load() {
    QFile f(catalogSource());
    if (!f.open(QIODevice::ReadOnly)) {
        beginResetModel();
        entries_.clear();
        problems_ = {
            tr("The model catalog %1 cannot be read: %2").arg(catalogSource(), f.errorString())};
        endResetModel();
        emit countChanged();
        return;
    }
    loadFrom(f.readAll());
}

void DownloadCatalog::loadFrom(const QByteArray& json) {
    const CatalogDocument doc = parseCatalog(json);
    beginResetModel();
    entries_ = doc.entries;
    defaultId_ = doc.defaultId;
    problems_ = doc.problems;
    endResetModel();
    emit countChanged();
}

void DownloadCatalog::setGpu(bool present, qint64 freeBytes, const QString& description) {
    gpu_ = present;
    vramFree_ = freeBytes;
    gpuDescription_ = description;
    refreshAll();
    emit machineChanged();
}

void DownloadCatalog::setRam(qint64 totalBytes, qint64 availableBytes) {
    ramTotal_ = totalBytes;
    ramAvailable_ = availableBytes;
    refreshAll();
    emit machineChanged();
}

void DownloadCatalog::ensureBandwidth() {
    if (measuring_ || !settings_) return;
    const bool bandwidth = settings_->hostReadBandwidth() <= 0;
    const DecodeProbe probe =
        decodeProbe_ && settings_->hostDecodeRate() <= 0 ? decodeProbe_ : DecodeProbe();
    if (!bandwidth && !probe) return;
    measuring_ = true;
    emit machineChanged();
    struct Rates {
        double bandwidth = 0, decode = 0;
        QString error;
    };
    auto* watcher = new QFutureWatcher<Rates>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        measuring_ = false;
        const Rates r = watcher->result();
        probeError_ = r.error;
        // Through the settings: stored, and measured once per data folder.
        if (settings_ && r.bandwidth > 0) settings_->setHostReadBandwidth(r.bandwidth);
        if (settings_ && r.decode > 0) settings_->setHostDecodeRate(r.decode);
        emit machineChanged();
    });
    watcher->setFuture(QtConcurrent::run([bandwidth, probe] {
        Rates r;
        if (bandwidth) r.bandwidth = powerinfer::measure_host_read_bandwidth();
        if (probe) {
            QTemporaryDir scratch;
            try {
                r.decode = probe(scratch.path());
            } catch (const std::exception& e) {
                r.error = QString::fromUtf8(e.what());
            }
        }
        return r;
    }));
}

bool DownloadCatalog::speedIsBound() const {
    return !settings_ || settings_->hostDecodeRate() <= 0;
}

powerinfer::FitMachine DownloadCatalog::machine() const {
    powerinfer::FitMachine m;
    m.ram_total_bytes = ramTotal_;
    m.ram_available_bytes = ramAvailable_;
    m.gpu = gpu_;
    m.vram_free_bytes = vramFree_;
    m.host_read_bytes_per_s = settings_ ? settings_->hostReadBandwidth() : 0;
    m.decode_bytes_per_s = settings_ ? settings_->hostDecodeRate() : 0;
    return m;
}

QString DownloadCatalog::machineText() const {
    QStringList parts;
    if (ramTotal_ > 0)
        parts
            << tr("RAM %1 (%2 available)").arg(formatBytes(ramTotal_), formatBytes(ramAvailable_));
    parts << (gpu_ ? tr("GPU: %1, %2 free").arg(gpuDescription_, formatBytes(vramFree_))
                   : tr("no GPU: models run on the CPU"));
    if (measuring_)
        parts << tr("measuring memory bandwidth…");
    else if (settings_ && settings_->hostReadBandwidth() > 0)
        parts << tr("memory bandwidth %1/s (measured)")
                     .arg(formatBytes(qint64(settings_->hostReadBandwidth())));
    if (!measuring_ && settings_ && settings_->hostDecodeRate() > 0)
        parts << tr("decode %1/s of weights (measured)")
                     .arg(formatBytes(qint64(settings_->hostDecodeRate())));
    else if (!probeError_.isEmpty())
        parts << tr("decode probe failed: %1").arg(probeError_);
    if (settings_) parts << tr("context %1 tokens").arg(settings_->contextLength());
    return parts.join(QStringLiteral(" · "));
}

powerinfer::FitEstimate DownloadCatalog::estimateFor(const powerinfer::FitModelShape& shape) const {
    return powerinfer::estimate_fit(shape, settings_ ? settings_->contextLength() : 2048,
                                    machine());
}

const CatalogEntry* DownloadCatalog::entry(int row) const {
    return row >= 0 && row < entries_.size() ? &entries_[row] : nullptr;
}

QString DownloadCatalog::fileNameAt(int row) const {
    const CatalogEntry* e = entry(row);
    return e ? e->fileName : QString();
}

int DownloadCatalog::defaultRow() const {
    for (int i = 0; i < entries_.size(); ++i)
        if (entries_[i].id == defaultId_) return i;
    return -1;
}

int DownloadCatalog::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(entries_.size());
}

QVariant DownloadCatalog::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const CatalogEntry& e = entries_[index.row()];
    const int dl = downloads_ ? downloads_->rowOf(e.fileName) : -1;
    const QString folder = settings_ ? settings_->modelsFolder() : QString();
    switch (role) {
        case Qt::DisplayRole:
        case NameRole:
            return e.name;
        case EntryIdRole:
            return e.id;
        case FamilyRole:
            return e.family;
        case ParametersRole:
            return e.parameters;
        case QuantRole:
            return e.quant;
        case FileNameRole:
            return e.fileName;
        case SizeTextRole:
            return e.sizeExact ? formatBytes(e.sizeBytes)
                               : tr("about %1 (size approximate)").arg(formatBytes(e.sizeBytes));
        case UrlRole:
            return e.url;
        case Sha256Role:
            return e.sha256;
        case LicenceRole:
            return e.licence;
        case KindRole:
            return e.kind;
        case ContextLengthRole:
            return e.contextLength;
        case ArchitectureRole:
            return e.architecture;
        case SupportedRole:
            return e.supported;
        case NoteRole:
            return e.supported
                       ? e.note
                       : tr("The engine does not run the %1 architecture yet.").arg(e.architecture);
        case FitVerdictRole:
            return verdictName(rowEstimate(e, folder).verdict);
        case FitSummaryRole:
            return QString::fromStdString(rowEstimate(e, folder).summary);
        case TokensPerSecondRole:
            return rowEstimate(e, folder).tokens_per_s;
        case InstalledRole:
            return !folder.isEmpty() && QFileInfo::exists(QDir(folder).filePath(e.fileName));
        case DownloadStateRole:
            return dl >= 0 ? int(downloads_->stateAt(dl)) : -1;
        case DownloadProgressRole:
            return dl >= 0 ? downloads_->data(downloads_->index(dl), ModelDownloads::ProgressRole)
                           : QVariant(-1.0);
        case DownloadTextRole: {
            if (dl < 0) return QString();
            const QModelIndex i = downloads_->index(dl);
            // A failed attempt's error is stale once the file is there (a
            // retry, a copy, a pasted link): it stood beside Load.
            if (downloads_->stateAt(dl) == ModelDownloads::State::Failed)
                return !folder.isEmpty() && QFileInfo::exists(QDir(folder).filePath(e.fileName))
                           ? QString()
                           : downloads_->errorAt(dl);
            QStringList parts{i.data(ModelDownloads::StateTextRole).toString(),
                              i.data(ModelDownloads::ReceivedTextRole).toString()};
            for (int r : {int(ModelDownloads::SpeedTextRole), int(ModelDownloads::EtaTextRole)})
                if (const QString s = i.data(r).toString(); !s.isEmpty()) parts << s;
            if (downloads_->stateAt(dl) == ModelDownloads::State::Done)
                parts = QStringList{downloads_->noteAt(dl)};
            return parts.join(QStringLiteral(" · "));
        }
        case IsDefaultRole:
            return e.id == defaultId_;
        case CheckTextRole:
            return checkText(e);
        case CheckNoteRole:
            return e.checked;
        default:
            return {};
    }
}

QHash<int, QByteArray> DownloadCatalog::roleNames() const {
    return {{EntryIdRole, "entryId"},
            {FamilyRole, "family"},
            {NameRole, "name"},
            {ParametersRole, "parameters"},
            {QuantRole, "quant"},
            {FileNameRole, "fileName"},
            {SizeTextRole, "sizeText"},
            {UrlRole, "url"},
            {Sha256Role, "sha256"},
            {LicenceRole, "licence"},
            {KindRole, "kind"},
            {ContextLengthRole, "contextLength"},
            {ArchitectureRole, "architecture"},
            {SupportedRole, "supported"},
            {NoteRole, "note"},
            {FitVerdictRole, "fitVerdict"},
            {FitSummaryRole, "fitSummary"},
            {TokensPerSecondRole, "tokensPerSecond"},
            {InstalledRole, "installed"},
            {DownloadStateRole, "downloadState"},
            {DownloadProgressRole, "downloadProgress"},
            {DownloadTextRole, "downloadText"},
            {IsDefaultRole, "isDefault"},
            {CheckTextRole, "checkText"},
            {CheckNoteRole, "checkNote"}};
}

void DownloadCatalog::refreshAll() {
    if (!entries_.isEmpty()) emit dataChanged(index(0), index(int(entries_.size()) - 1));
}

QString DownloadCatalog::download(int row) {
    const CatalogEntry* e = entry(row);
    if (!e || !downloads_) return tr("No such catalog entry.");
    DownloadSpec spec;
    spec.url = QUrl(e->url);
    spec.fileName = e->fileName;
    spec.sha256 = e->sha256;
    spec.title = e->name;
    // The disk check before the first request: only with the exact size
    // (the server's Content-Length is checked before the first byte anyway).
    if (e->sizeExact) spec.expectedSize = e->sizeBytes;
    const bool queued = downloads_->enqueue(spec) >= 0;
    refreshAll();
    return queued ? QString() : downloads_->lastError();
}

QString DownloadCatalog::downloadUrl(const QString& url, const QString& sha256) {
    if (!downloads_) return tr("Downloads are not available.");
    if (downloads_->enqueueUrl(url, sha256) < 0) return downloads_->lastError();
    return {};
}

powerinfer::FitPlacement DownloadCatalog::placementFor(const QString& path) const {
    // Only a GPU plan has a hybrid split, and only a sidecar has hot neurons.
    if (!gpu_ || !previewer_) return {};
    const QString sidecar = sidecarPathFor(path);
    if (sidecar.isEmpty()) return {};
    const int nCtx = settings_ ? settings_->contextLength() : 2048;
    const QString key = QStringLiteral("%1|%2|%3|%4")
                            .arg(path)
                            .arg(QFileInfo(sidecar).lastModified().toMSecsSinceEpoch())
                            .arg(nCtx)
                            .arg(vramFree_);
    const auto it = placements_.constFind(key);
    if (it != placements_.constEnd()) return *it;
    powerinfer::FitPlacement p;
    try {
        p = previewer_(path, nCtx);
    } catch (const std::exception&) {
        p = {};  // a model or sidecar the engine refuses: the byte share
    }
    placements_.insert(key, p);
    return p;
}

powerinfer::FitEstimate DownloadCatalog::rowEstimate(const CatalogEntry& e,
                                                     const QString& folder) const {
    // Installed: the file's own placement preview where it has a sidecar.
    if (!folder.isEmpty()) return estimateForFile(QDir(folder).filePath(e.fileName), e.shape);
    return estimateFor(e.shape);
}

powerinfer::FitEstimate DownloadCatalog::estimateForFile(
    const QString& path, const powerinfer::FitModelShape& shape) const {
    return powerinfer::estimate_fit(shape, settings_ ? settings_->contextLength() : 2048, machine(),
                                    placementFor(path));
}

QString DownloadCatalog::fitSummaryForFile(const QString& path) const {
    const ModelFileInfo* info = localModels_ ? localModels_->find(path) : nullptr;
    if (!info || info->nLayers <= 0) return {};
    return QString::fromStdString(estimateForFile(path, shapeOf(*info)).summary);
}

double DownloadCatalog::estimatedTokensPerSecondForFile(const QString& path) const {
    const ModelFileInfo* info = localModels_ ? localModels_->find(path) : nullptr;
    if (!info || info->nLayers <= 0) return 0;
    return estimateForFile(path, shapeOf(*info)).tokens_per_s;
}

}  // namespace powerinfer::app
