#include "download_catalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
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
    if (measuring_ || !settings_ || settings_->hostReadBandwidth() > 0) return;
    measuring_ = true;
    emit machineChanged();
    auto* watcher = new QFutureWatcher<double>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        measuring_ = false;
        // Through the settings: stored, and measured once per data folder.
        if (settings_) settings_->setHostReadBandwidth(watcher->result());
        emit machineChanged();
    });
    watcher->setFuture(QtConcurrent::run([] { return powerinfer::measure_host_read_bandwidth(); }));
}

powerinfer::FitMachine DownloadCatalog::machine() const {
    powerinfer::FitMachine m;
    m.ram_total_bytes = ramTotal_;
    m.ram_available_bytes = ramAvailable_;
    m.gpu = gpu_;
    m.vram_free_bytes = vramFree_;
    m.host_read_bytes_per_s = settings_ ? settings_->hostReadBandwidth() : 0;
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
                               : tr("about %1").arg(formatBytes(e.sizeBytes));
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
            return verdictName(estimateFor(e.shape).verdict);
        case FitSummaryRole:
            return QString::fromStdString(estimateFor(e.shape).summary);
        case TokensPerSecondRole:
            return estimateFor(e.shape).tokens_per_s;
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
            if (downloads_->stateAt(dl) == ModelDownloads::State::Failed)
                return downloads_->errorAt(dl);
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
            {IsDefaultRole, "isDefault"}};
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

QString DownloadCatalog::fitSummaryForFile(const QString& path) const {
    const ModelFileInfo* info = localModels_ ? localModels_->find(path) : nullptr;
    if (!info || info->nLayers <= 0) return {};
    return QString::fromStdString(estimateFor(shapeOf(*info)).summary);
}

double DownloadCatalog::estimatedTokensPerSecondForFile(const QString& path) const {
    const ModelFileInfo* info = localModels_ ? localModels_->find(path) : nullptr;
    if (!info || info->nLayers <= 0) return 0;
    return estimateFor(shapeOf(*info)).tokens_per_s;
}

}  // namespace powerinfer::app
