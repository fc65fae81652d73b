// The model catalog: a curated list of GGUF models (resources/catalog/
// models.json, versioned) with what each needs and whether the engine runs
// its architecture, the "will it fit" estimate for this machine (RAM, free
// VRAM, the host's measured memory bandwidth, measured once and kept in the
// settings), and download buttons through ModelDownloads. GUI thread only.
#pragma once

#include <qqmlintegration.h>

#include <QAbstractListModel>
#include <QHash>
#include <QPointer>
#include <QStringList>
#include <functional>

#include "powerinfer/fit_estimate.h"

namespace powerinfer::app {

class AppSettings;
class ModelCatalog;
class ModelDownloads;
struct ModelFileInfo;

struct CatalogEntry {
    QString id, family, name, parameters, quant, fileName, url, sha256, licence, kind, architecture,
        note;
    qint64 sizeBytes = 0;
    bool sizeExact = false;
    // How the size and SHA-256 were established ("" : not checked, the size
    // is approximate and the SHA-256 comes from the server), and whether the
    // link itself was fetched and served these bytes.
    QString checked;
    bool urlChecked = false;
    int contextLength = 0;
    bool supported = false;
    powerinfer::FitModelShape shape;
};

struct CatalogDocument {
    int version = 0;
    QString defaultId;
    QList<CatalogEntry> entries;
    QStringList problems;  // entries skipped and why; a bad file says so here
};
// Parses a catalog; entries missing a required field are skipped with a note.
CatalogDocument parseCatalog(const QByteArray& json);
// What the UI says about how far an entry was checked.
QString checkText(const CatalogEntry& e);
// The catalog the app ships (:/catalog/models.json), or $POWERINFER_CATALOG.
QString catalogSource();

class DownloadCatalog : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(QString machineText READ machineText NOTIFY machineChanged)
    Q_PROPERTY(bool measuringBandwidth READ measuringBandwidth NOTIFY machineChanged)
    // The speeds are read-bandwidth bounds ("up to"): no decode probe rate yet.
    Q_PROPERTY(bool speedIsBound READ speedIsBound NOTIFY machineChanged)
    Q_PROPERTY(QString problems READ problems NOTIFY countChanged)
    Q_PROPERTY(int defaultRow READ defaultRow NOTIFY countChanged)
public:
    enum Role {
        EntryIdRole = Qt::UserRole + 1,
        FamilyRole,
        NameRole,
        ParametersRole,
        QuantRole,
        FileNameRole,
        SizeTextRole,
        UrlRole,
        Sha256Role,
        LicenceRole,
        KindRole,
        ContextLengthRole,
        ArchitectureRole,
        SupportedRole,
        NoteRole,
        FitVerdictRole,  // "gpu", "hybrid", "cpu", "nofit", "unknown"
        FitSummaryRole,
        TokensPerSecondRole,
        InstalledRole,
        DownloadStateRole,  // ModelDownloads::State as int, -1: none
        DownloadProgressRole,
        DownloadTextRole,  // "45 MB of 98 MB · 12 MB/s · 4 s left", or the error
        IsDefaultRole,
        CheckTextRole,  // "size and SHA-256 checked" / "unverified entry: size approximate, …"
        CheckNoteRole,    // the catalog's note on how it was checked ("" : not checked)
    };

    DownloadCatalog(AppSettings* settings, ModelDownloads* downloads, ModelCatalog* localModels,
                    QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Loads the catalog (the shipped one or $POWERINFER_CATALOG).
    void load();
    void loadFrom(const QByteArray& json);
    // The GPU the engine found (the executable probes it once).
    void setGpu(bool present, qint64 freeBytes, const QString& description);
    // Overrides the host's RAM (tests); else host_memory().
    void setRam(qint64 totalBytes, qint64 availableBytes);
    // The decode probe (powerinfer::measure_decode_rate with a scratch
    // folder; the executable injects it, it needs the engine): run once by
    // ensureBandwidth() on a pool thread, its rate kept in the settings.
    using DecodeProbe = std::function<double(const QString& scratchDir)>;
    void setDecodeProbe(DecodeProbe probe) { decodeProbe_ = std::move(probe); }
    // The engine's placement preview for a model with a sidecar on this
    // machine's GPU (the executable injects it); the hybrid split of a local
    // file's estimate comes from it. Only asked when there is a GPU.
    using PlacementPreviewer =
        std::function<powerinfer::FitPlacement(const QString& modelPath, int nCtx)>;
    void setPlacementPreviewer(PlacementPreviewer previewer) { previewer_ = std::move(previewer); }
    // Measures the host's read bandwidth (and runs the decode probe) on a
    // pool thread unless the settings already hold them; the estimates gain
    // their tok/s when they arrive.
    Q_INVOKABLE void ensureBandwidth();
    bool measuringBandwidth() const { return measuring_; }
    bool speedIsBound() const;
    QString machineText() const;
    QString problems() const { return problems_.join(QLatin1Char('\n')); }
    int defaultRow() const;

    // "" when it was queued, else why not.
    Q_INVOKABLE QString download(int row);
    // A pasted link; "" when it was queued, else why not.
    Q_INVOKABLE QString downloadUrl(const QString& url, const QString& sha256 = {});

    powerinfer::FitMachine machine() const;
    powerinfer::FitEstimate estimateFor(const powerinfer::FitModelShape& shape) const;
    const CatalogEntry* entry(int row) const;
    Q_INVOKABLE QString fileNameAt(int row) const;
    // The estimate for a file of the models folder (its header's shape):
    // a line for the model list / status bar, and its tok/s (0: unknown).
    Q_INVOKABLE QString fitSummaryForFile(const QString& path) const;
    Q_INVOKABLE double estimatedTokensPerSecondForFile(const QString& path) const;

signals:
    void countChanged();
    void machineChanged();

private:
    void refreshAll();
    // The preview for a local file (cached by file, sidecar time and context).
    powerinfer::FitPlacement placementFor(const QString& path) const;
    powerinfer::FitEstimate rowEstimate(const CatalogEntry& e, const QString& folder) const;
    powerinfer::FitEstimate estimateForFile(const QString& path,
                                            const powerinfer::FitModelShape& shape) const;

    QPointer<AppSettings> settings_;
    QPointer<ModelDownloads> downloads_;
    QPointer<ModelCatalog> localModels_;
    QList<CatalogEntry> entries_;
    QString defaultId_;
    QStringList problems_;
    bool gpu_ = false;
    qint64 vramFree_ = 0;
    QString gpuDescription_;
    qint64 ramTotal_ = -1, ramAvailable_ = -1;
    bool measuring_ = false;
    QString probeError_;
    DecodeProbe decodeProbe_;
    PlacementPreviewer previewer_;
    mutable QHash<QString, powerinfer::FitPlacement> placements_;
};

// The fit shape of a local file, from what its header said.
powerinfer::FitModelShape shapeOf(const ModelFileInfo& info);

}  // namespace powerinfer::app
