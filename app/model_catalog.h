// The model picker's list: the .gguf files of a models folder with what their
// headers say (architecture, quant type, size, whether a PowerInfer sidecar
// exists). Scanning runs off the GUI thread.
#pragma once

#include <qqmlintegration.h>

#include <QAbstractListModel>
#include <functional>

namespace powerinfer::app {

struct ModelFileInfo {
    QString path;
    QString fileName;
    QString name;          // general.name, else the file name
    QString generalName;   // general.name as the header says it; "" when it says none
    QString architecture;  // empty if unknown
    QString quant;         // what general.file_type says ("Q4_K_M"), else the dominant weight type
    qint64 sizeBytes = 0;
    bool hasSidecar = false;
    QString error;  // why the header could not be read
    // The shape the fit estimate needs (0 where the header does not say).
    qint64 nParams = 0;
    int nLayers = 0, nEmbd = 0, nHead = 0, nHeadKv = 0, nFf = 0, nVocab = 0;
};

// Reads what it can about a model file. The executable injects one that
// parses the GGUF header; basicModelInfo only looks at the file system.
using ModelInspector = std::function<ModelFileInfo(const QString& path)>;
ModelFileInfo basicModelInfo(const QString& path);
// MODEL.powerinfer.gguf next to MODEL.gguf, if present; else empty.
QString sidecarPathFor(const QString& modelPath);
QString formatBytes(qint64 bytes);

class ModelCatalog : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(QString folder READ folder WRITE setFolder NOTIFY folderChanged)
    Q_PROPERTY(bool scanning READ scanning NOTIFY scanningChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role {
        PathRole = Qt::UserRole + 1,
        FileNameRole,
        NameRole,
        ArchitectureRole,
        QuantRole,
        SizeTextRole,
        HasSidecarRole,
        ErrorRole,
    };

    explicit ModelCatalog(ModelInspector inspector, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    QString folder() const { return folder_; }
    void setFolder(const QString& folder);
    bool scanning() const { return scanning_; }

    Q_INVOKABLE void refresh();
    // Header facts about one file (for a file picked outside the folder).
    ModelFileInfo inspect(const QString& path) const { return inspector_(path); }
    // Why a listed file cannot be read (shown in red in the picker); empty
    // for a good file or one not listed.
    QString errorFor(const QString& path) const;
    // The row of a listed file (nullptr when not listed).
    const ModelFileInfo* find(const QString& path) const;

signals:
    void folderChanged();
    void scanningChanged();
    void countChanged();
    void scanned();

private:
    ModelInspector inspector_;
    QString folder_;
    bool scanning_ = false;
    quint64 generation_ = 0;
    QList<ModelFileInfo> rows_;
};

}  // namespace powerinfer::app
