// Model downloads users can trust: a queue of files fetched over HTTP(S) into
// the models folder. Each file is written to NAME.gguf.part next to a small
// state record (NAME.gguf.part.json: URL, expected SHA-256 and size, the
// server's validator), resumed with an HTTP Range request after a pause, a
// dropped connection, a crash or a restart, verified (SHA-256 over the whole
// file, then the GGUF magic) and only then renamed to NAME.gguf in one atomic
// step: the models folder never holds a partial or corrupt model. GUI thread
// only; hashing runs on a pool thread.
#pragma once

#include <qcoro/qcorotask.h>
#include <qqmlintegration.h>

#include <QAbstractListModel>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QPointer>
#include <QUrl>
#include <memory>

#include "model_catalog.h"  // ModelInspector

class QNetworkReply;

namespace powerinfer::app {

struct DownloadSpec {
    QUrl url;
    // In the models folder. Empty: the file is named when it is verified,
    // from the server's Content-Disposition, else the GGUF's general.name
    // (with its quantization), else the URL's last path part; until then it
    // downloads under the URL's last part (made unique among downloads).
    QString fileName;
    QString sha256;            // lower-case hex; empty: from the server (Hugging Face) or none
    qint64 expectedSize = -1;  // bytes, when known beforehand (the catalog)
    QString title;             // shown in the list; empty: the file name
};

// Why a URL cannot be downloaded ("" when it can): only HTTPS, except plain
// HTTP to this machine (a local mirror, the tests); a file name ending .gguf.
QString downloadUrlProblem(const QUrl& url);

// The file name a Content-Disposition header gives (RFC 6266: filename*
// before filename), without any folder part; "" when it names no .gguf file.
QString fileNameFromContentDisposition(const QByteArray& header);
// A file name made of a model's general.name and quantization
// ("SmolLM2 135M Instruct", "Q4_1" -> "SmolLM2-135M-Instruct-Q4_1.gguf");
// "" when the name has nothing usable.
QString fileNameFromModelName(const QString& generalName, const QString& quant);

class ModelDownloads : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY countChanged)
public:
    enum class State { Queued, Running, Paused, Verifying, Done, Failed };
    Q_ENUM(State)
    enum Role {
        TitleRole = Qt::UserRole + 1,
        FileNameRole,
        UrlRole,
        StateRole,      // State as int
        StateTextRole,  // "Queued", "Downloading", …
        ProgressRole,   // 0..1, -1 when the size is unknown
        ReceivedTextRole,
        SpeedTextRole,
        EtaTextRole,
        ErrorRole,
        NoteRole,
        PathRole,  // the verified file (Done only)
    };

    explicit ModelDownloads(QObject* parent = nullptr);
    ~ModelDownloads() override;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Where files go (created when needed). Lists the downloads a crash or a
    // quit left unfinished there (their state records) as paused.
    // Where new downloads go (and whose unfinished ones are listed); the
    // downloads already listed stay in their own folder.
    void setFolder(const QString& folder);
    QString folder() const { return folder_; }
    // Downloads run one at a time; the rest wait in order.
    void setMaxParallel(int n) { maxParallel_ = std::max(1, n); }
    // A connection that drops after data arrived is resumed this many times
    // (with a Range request) before the download fails.
    void setMaxRetries(int n) { maxRetries_ = n; }
    void setRetryDelayMs(int ms) { retryDelayMs_ = ms; }
    // No byte for this long fails the attempt (then retried as a drop).
    void setStallTimeoutMs(int ms) { stallTimeoutMs_ = ms; }
    // Reads a downloaded file's general.name and quantization (to name it);
    // null: downloads keep the server's or the URL's name.
    void setInspector(ModelInspector inspector) { inspector_ = std::move(inspector); }

    bool busy() const;
    // Queues a download; returns its row, or -1 with the reason in lastError().
    int enqueue(const DownloadSpec& spec);
    Q_INVOKABLE int enqueueUrl(const QString& url, const QString& sha256 = {});
    QString lastError() const { return lastError_; }
    Q_INVOKABLE QString lastErrorText() const { return lastError_; }
    Q_INVOKABLE void pause(int row);
    Q_INVOKABLE void resume(int row);
    // Stops and deletes the partial file and its state record.
    Q_INVOKABLE void cancel(int row);
    // Drops a finished or failed row from the list.
    Q_INVOKABLE void dismiss(int row);
    // The row of a download of this file name (-1: none).
    Q_INVOKABLE int rowOf(const QString& fileName) const;
    // Names the row's file (".gguf" is added when missing): a verified file
    // is renamed in the models folder (its sidecar and config with it), an
    // unfinished one gets that name when it is verified. "" when done, else
    // why not; a name already taken is refused with a free one to use
    // (freeFileName).
    Q_INVOKABLE QString rename(int row, const QString& name);
    // `name`, or NAME-2.gguf, NAME-3.gguf, … : the first that neither the
    // models folder nor another download uses.
    Q_INVOKABLE QString freeFileName(const QString& name, int exceptRow = -1) const;
    State stateAt(int row) const;
    QString errorAt(int row) const;
    QString noteAt(int row) const;
    QString pathAt(int row) const;
    qint64 receivedAt(int row) const;
    qint64 totalAt(int row) const;

signals:
    void countChanged();
    // A file was verified and moved into the models folder.
    void downloadFinished(const QString& path);
    void downloadFailed(const QString& fileName, const QString& error);
    // Any row's progress (at most ~4 times a second per download). Do not
    // co_await it (QCoro's queued signal awaiter breaks on bursts): await ended.
    void progressed(int row);
    // A download became Done or Failed (once per run of it).
    void ended(const QString& fileName);
    // A verified file was renamed (rename()).
    void fileRenamed(const QString& oldPath, const QString& newPath);

private:
    struct Item;
    QCoro::Task<> run(std::shared_ptr<Item> item);
    // One HTTP exchange (redirects included); true when the body is complete.
    QCoro::Task<bool> attempt(std::shared_ptr<Item> item, bool* retryable);
    QCoro::Task<bool> verifyAndMove(std::shared_ptr<Item> item);
    void pump();
    int rowOfItem(const Item* item) const;
    void changed(const Item* item);
    void fail(const std::shared_ptr<Item>& item, const QString& error);
    void writeState(const Item& item) const;
    // The partial file's size and the record's validator, totals and hashes.
    void applyStateRecord(const QJsonObject& record, Item* item) const;
    void removePartial(const Item& item) const;
    QString partPath(const Item& item) const;
    QString statePath(const Item& item) const;
    QString finalPath(const Item& item) const;
    void restoreUnfinished();
    bool nameTaken(const QString& name, const Item* except) const;
    int rowOfUrl(const QUrl& url) const;
    // The URL's last part, or NAME-2.gguf, …: one no other download (in the
    // list or left as a state record for another URL) works under.
    QString freeWorkingName(const DownloadSpec& spec) const;

    QNetworkAccessManager network_;
    QString folder_;
    QList<std::shared_ptr<Item>> items_;
    QString lastError_;
    ModelInspector inspector_;
    int maxParallel_ = 1;
    int maxRetries_ = 5;
    int retryDelayMs_ = 1000;
    int stallTimeoutMs_ = 30000;
};

}  // namespace powerinfer::app
