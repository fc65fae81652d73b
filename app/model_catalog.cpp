#include "model_catalog.h"

#include <QDir>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLocale>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

namespace powerinfer::app {

QString sidecarPathFor(const QString& modelPath) {
    QString base = modelPath;
    if (base.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) base.chop(5);
    for (const QString& candidate : {base + QStringLiteral(".powerinfer.gguf"),
                                     modelPath + QStringLiteral(".powerinfer.gguf")}) {
        if (QFileInfo::exists(candidate)) return candidate;
    }
    return {};
}

QString formatBytes(qint64 bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

ModelFileInfo basicModelInfo(const QString& path) {
    const QFileInfo fi(path);
    ModelFileInfo m;
    m.path = fi.absoluteFilePath();
    m.fileName = fi.fileName();
    m.name = fi.completeBaseName();
    m.sizeBytes = fi.size();
    m.hasSidecar = !sidecarPathFor(path).isEmpty();
    if (!fi.exists()) m.error = QObject::tr("File not found");
    return m;
}

ModelCatalog::ModelCatalog(ModelInspector inspector, QObject* parent)
    : QAbstractListModel(parent), inspector_(inspector ? std::move(inspector) : basicModelInfo) {}

int ModelCatalog::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant ModelCatalog::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ModelFileInfo& m = rows_[index.row()];
    switch (role) {
        case Qt::DisplayRole:
        case NameRole:
            return m.name;
        case PathRole:
            return m.path;
        case FileNameRole:
            return m.fileName;
        case ArchitectureRole:
            return m.architecture;
        case QuantRole:
            return m.quant;
        case SizeTextRole:
            return formatBytes(m.sizeBytes);
        case HasSidecarRole:
            return m.hasSidecar;
        case ErrorRole:
            return m.error;
        default:
            return {};
    }
}

QHash<int, QByteArray> ModelCatalog::roleNames() const {
    return {{PathRole, "path"},
            {FileNameRole, "fileName"},
            {NameRole, "name"},
            {ArchitectureRole, "architecture"},
            {QuantRole, "quant"},
            {SizeTextRole, "sizeText"},
            {HasSidecarRole, "hasSidecar"},
            {ErrorRole, "error"}};
}

void ModelCatalog::setFolder(const QString& folder) {
    if (folder == folder_) return;
    folder_ = folder;
    emit folderChanged();
    refresh();
}

void ModelCatalog::refresh() {
    const quint64 generation = ++generation_;
    if (!scanning_) {
        scanning_ = true;
        emit scanningChanged();
    }
    const QString folder = folder_;
    const ModelInspector inspector = inspector_;
    // Header reads touch the disk: keep them off the GUI thread.
    QFuture<QList<ModelFileInfo>> future = QtConcurrent::run([folder, inspector] {
        QList<ModelFileInfo> found;
        const QDir dir(folder);
        for (const QFileInfo& fi :
             dir.entryInfoList({QStringLiteral("*.gguf")}, QDir::Files, QDir::Name)) {
            if (fi.fileName().endsWith(QLatin1String(".powerinfer.gguf"))) continue;
            found << inspector(fi.absoluteFilePath());
        }
        return found;
    });
    auto* watcher = new QFutureWatcher<QList<ModelFileInfo>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != generation_) return;  // a newer scan supersedes this one
        beginResetModel();
        rows_ = watcher->result();
        endResetModel();
        scanning_ = false;
        emit scanningChanged();
        emit countChanged();
        emit scanned();
    });
    watcher->setFuture(future);
}

const ModelFileInfo* ModelCatalog::find(const QString& path) const {
    for (const ModelFileInfo& m : rows_)
        if (m.path == path) return &m;
    return nullptr;
}

QString ModelCatalog::errorFor(const QString& path) const {
    for (const ModelFileInfo& m : rows_)
        if (m.path == path) return m.error;
    return {};
}

}  // namespace powerinfer::app
