// Long because one download is one state machine (attempt, redirects,
// resume rules, retries, verification) with a message for each way it ends.
#include "model_downloader.h"

#include <qcoro/qcorofuture.h>
#include <qcoro/qcoronetworkreply.h>
#include <qcoro/qcorotimer.h>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QStorageInfo>
#include <QtConcurrent/QtConcurrentRun>
#include <filesystem>

#include "model_catalog.h"  // formatBytes

namespace powerinfer::app {

namespace {

// Room left on the disk beyond the file itself (the system needs some too).
constexpr qint64 kDiskMargin = qint64(64) << 20;
constexpr int kMaxRedirects = 10;

bool isLocalHost(const QString& host) {
    if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0) return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

QString httpStatusMessage(int status, const QUrl& url) {
    switch (status) {
        case 401:
        case 403:
            return QObject::tr(
                       "Access denied (HTTP %1) by %2: the file needs a login or accepting its "
                       "licence on the website first (gated models on Hugging Face do).")
                .arg(status)
                .arg(url.host());
        case 404:
        case 410:
            return QObject::tr(
                       "Not found (HTTP %1): %2 points to no file. Check the address (on Hugging "
                       "Face use the /resolve/ link of the file).")
                .arg(status)
                .arg(url.toDisplayString());
        case 429:
            return QObject::tr(
                       "%1 limits how often it may be asked (HTTP 429): try again in a "
                       "few minutes.")
                .arg(url.host());
        default:
            break;
    }
    if (status >= 500)
        return QObject::tr("The server %1 failed (HTTP %2): try again later.")
            .arg(url.host())
            .arg(status);
    return QObject::tr("The server %1 answered HTTP %2 instead of the file.")
        .arg(url.host())
        .arg(status);
}

// Network errors worth resuming after: the connection went away mid-file.
bool isDropped(QNetworkReply::NetworkError e) {
    switch (e) {
        case QNetworkReply::RemoteHostClosedError:
        case QNetworkReply::TimeoutError:
        case QNetworkReply::OperationCanceledError:  // the transfer timeout
        case QNetworkReply::TemporaryNetworkFailureError:
        case QNetworkReply::NetworkSessionFailedError:
        case QNetworkReply::ProxyConnectionClosedError:
        case QNetworkReply::UnknownNetworkError:
            return true;
        default:
            return false;
    }
}

QString networkErrorMessage(QNetworkReply* reply, const QUrl& url) {
    const QString host = url.host();
    switch (reply->error()) {
        case QNetworkReply::HostNotFoundError:
            return QObject::tr(
                       "Cannot find the server %1: check the address and the internet "
                       "connection.")
                .arg(host);
        case QNetworkReply::ConnectionRefusedError:
            return QObject::tr(
                       "The server %1 refused the connection: check the address and "
                       "port, or try again later.")
                .arg(host);
        case QNetworkReply::SslHandshakeFailedError:
        case QNetworkReply::InsecureRedirectError:
            return QObject::tr(
                       "The secure connection to %1 failed (%2): its certificate was "
                       "not accepted. Check the system date and the installed CA "
                       "certificates (Debian: ca-certificates).")
                .arg(host, reply->errorString());
        case QNetworkReply::RemoteHostClosedError:
            return QObject::tr("The connection to %1 dropped before the file was complete.")
                .arg(host);
        case QNetworkReply::OperationCanceledError:
        case QNetworkReply::TimeoutError:
            return QObject::tr("The server %1 stopped sending data.").arg(host);
        default:
            return QObject::tr("Downloading from %1 failed: %2").arg(host, reply->errorString());
    }
}

// "bytes START-END/TOTAL" -> START and TOTAL (-1 for "*").
bool parseContentRange(const QByteArray& value, qint64* start, qint64* total) {
    static const QRegularExpression re(QStringLiteral("^bytes (\\d+)-(\\d+)/(\\d+|\\*)$"));
    const auto m = re.match(QString::fromLatin1(value).trimmed());
    if (!m.hasMatch()) return false;
    *start = m.captured(1).toLongLong();
    *total = m.captured(3) == QLatin1String("*") ? -1 : m.captured(3).toLongLong();
    return true;
}

// Hugging Face's resolve URLs name the LFS object's SHA-256 in X-Linked-Etag.
QString sha256FromEtag(const QByteArray& etag) {
    QString v = QString::fromLatin1(etag).trimmed();
    if (v.startsWith(QLatin1String("W/"))) return {};
    v.remove(QLatin1Char('"'));
    static const QRegularExpression hex(QStringLiteral("^[0-9a-fA-F]{64}$"));
    return hex.match(v).hasMatch() ? v.toLower() : QString();
}

struct FileCheck {
    QString sha256;
    QByteArray magic;
    QString error;
};

FileCheck checkFile(const QString& path) {
    FileCheck c;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        c.error = f.errorString();
        return c;
    }
    c.magic = f.peek(4);
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&f)) {
        c.error = f.errorString();
        return c;
    }
    c.sha256 = QString::fromLatin1(hash.result().toHex());
    return c;
}

QString stateText(ModelDownloads::State s) {
    switch (s) {
        case ModelDownloads::State::Queued:
            return QObject::tr("Queued");
        case ModelDownloads::State::Running:
            return QObject::tr("Downloading");
        case ModelDownloads::State::Paused:
            return QObject::tr("Paused");
        case ModelDownloads::State::Verifying:
            return QObject::tr("Verifying");
        case ModelDownloads::State::Done:
            return QObject::tr("Verified");
        case ModelDownloads::State::Failed:
            return QObject::tr("Failed");
    }
    return {};
}

QString durationText(double seconds) {
    if (seconds < 0) return {};
    const qint64 s = qint64(seconds + 0.5);
    if (s < 60) return QObject::tr("%1 s left").arg(s);
    if (s < 3600) return QObject::tr("%1 min %2 s left").arg(s / 60).arg(s % 60);
    return QObject::tr("%1 h %2 min left").arg(s / 3600).arg((s % 3600) / 60);
}

// Lets a name from a server or a model header be a file name here: no
// folder part, no control characters or characters Windows refuses, no
// leading dots or spaces.
QString sanitizedFileName(QString name) {
    name = name.mid(
        std::max(name.lastIndexOf(QLatin1Char('/')), name.lastIndexOf(QLatin1Char('\\'))) + 1);
    QString out;
    for (const QChar c : std::as_const(name)) {
        if (c.category() == QChar::Other_Control || QStringLiteral("<>:\"|?*").contains(c))
            out += QLatin1Char('-');
        else
            out += c;
    }
    while (out.startsWith(QLatin1Char('.')) || out.startsWith(QLatin1Char(' '))) out.remove(0, 1);
    out = out.trimmed();
    if (!out.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive) ||
        out.size() <= int(qstrlen(".gguf")))
        return {};
    return out;
}

}  // namespace

QString fileNameFromContentDisposition(const QByteArray& header) {
    const QString value = QString::fromUtf8(header);
    static const QRegularExpression extended(QStringLiteral("filename\\*\\s*=\\s*([^;]+)"),
                                             QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression plain(
        QStringLiteral("filename\\s*=\\s*(?:\"([^\"]*)\"|([^;]*))"),
        QRegularExpression::CaseInsensitiveOption);
    QString name;
    if (const auto m = extended.match(value); m.hasMatch()) {
        // charset'language'percent-encoded bytes (UTF-8 in practice).
        const QString encoded = m.captured(1).trimmed();
        const int quote = encoded.lastIndexOf(QLatin1Char('\''));
        name =
            QString::fromUtf8(QByteArray::fromPercentEncoding(encoded.mid(quote + 1).toLatin1()));
    }
    if (name.isEmpty())
        if (const auto m = plain.match(value); m.hasMatch())
            name = m.captured(1).isNull() ? m.captured(2).trimmed() : m.captured(1);
    return sanitizedFileName(name);
}

QString fileNameFromModelName(const QString& generalName, const QString& quant) {
    QString base;
    for (const QChar c : generalName)
        base += c.isLetterOrNumber() || c == QLatin1Char('.') || c == QLatin1Char('_')
                    ? c
                    : QLatin1Char('-');
    static const QRegularExpression dashes(QStringLiteral("-{2,}"));
    base.replace(dashes, QStringLiteral("-"));
    while (!base.isEmpty() &&
           (base.front() == QLatin1Char('-') || base.front() == QLatin1Char('.')))
        base.remove(0, 1);
    while (!base.isEmpty() && (base.back() == QLatin1Char('-') || base.back() == QLatin1Char('.')))
        base.chop(1);
    base.truncate(96);
    if (base.isEmpty()) return {};
    if (!quant.isEmpty() && !base.contains(quant, Qt::CaseInsensitive))
        base += QLatin1Char('-') + sanitizedFileName(quant + QStringLiteral(".gguf")).chopped(5);
    return base + QStringLiteral(".gguf");
}

QString downloadUrlProblem(const QUrl& url) {
    if (!url.isValid() || url.host().isEmpty())
        return QObject::tr("This is not a web address: paste an https:// link to a .gguf file.");
    const QString scheme = url.scheme().toLower();
    if (scheme == QLatin1String("http") && !isLocalHost(url.host()))
        return QObject::tr(
            "Only https:// downloads are allowed (plain http only from this "
            "computer): a model fetched over http could be altered on the way.");
    if (scheme != QLatin1String("https") && scheme != QLatin1String("http"))
        return QObject::tr("Only https:// links can be downloaded (this one is %1:).").arg(scheme);
    return {};
}

struct ModelDownloads::Item {
    DownloadSpec spec;
    // Where its partial file, record and verified file live: the models
    // folder when it was enqueued or found. Choosing another models folder
    // later does not move a download; it finishes where it started.
    QString folder;
    State state = State::Queued;
    qint64 received = 0;  // bytes in the .part file
    qint64 total = -1;    // the whole file, when known
    QString error, note, path;
    QString etag, lastModified;  // the server's validator, for If-Range
    QString serverSha;           // from X-Linked-Etag
    // Naming (DownloadSpec::fileName): spec.fileName is the working name
    // (of the .part file) until the file is verified.
    bool nameFromServer = false;  // no name was given: it is chosen at the end
    QString serverName;           // from Content-Disposition
    QString wantedName;           // the user's (rename() before the end)
    QPointer<QNetworkReply> reply;
    bool active = false;  // a run() coroutine owns it
    bool pauseRequested = false;
    bool cancelRequested = false;
    QString attemptError;
    // What happened on the way that the user should still read once the
    // file is verified (a restart from zero, dropped connections).
    QStringList events;
    void event(const QString& text) {
        note = text;
        if (!events.contains(text)) events << text;
    }
    // Speed: bytes over the last second, smoothed.
    QElapsedTimer speedClock, emitClock;
    qint64 speedBytes = 0;
    double speed = 0;  // bytes per second
};

ModelDownloads::ModelDownloads(QObject* parent) : QAbstractListModel(parent) {
    network_.setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
}

// Unfinished files stay as .part with their state record and are resumed
// later. Nothing is aborted here: an abort would resume the coroutines into
// an object being destroyed; the network manager deletes its replies.
ModelDownloads::~ModelDownloads() = default;

int ModelDownloads::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(items_.size());
}

QVariant ModelDownloads::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Item& it = *items_[index.row()];
    switch (role) {
        case Qt::DisplayRole:
        case TitleRole:
            return !it.spec.title.isEmpty()   ? it.spec.title
                   : !it.wantedName.isEmpty() ? it.wantedName
                                              : it.spec.fileName;
        case FileNameRole:
            return it.spec.fileName;
        case UrlRole:
            return it.spec.url.toDisplayString();
        case StateRole:
            return int(it.state);
        case StateTextRole:
            return stateText(it.state);
        case ProgressRole:
            return it.total > 0 ? double(it.received) / double(it.total) : -1.0;
        case ReceivedTextRole:
            return it.total > 0
                       ? tr("%1 of %2").arg(formatBytes(it.received), formatBytes(it.total))
                       : formatBytes(it.received);
        case SpeedTextRole:
            return it.state == State::Running && it.speed > 0
                       ? tr("%1/s").arg(formatBytes(qint64(it.speed)))
                       : QString();
        case EtaTextRole:
            return it.state == State::Running && it.speed > 0 && it.total > 0
                       ? durationText(double(it.total - it.received) / it.speed)
                       : QString();
        case ErrorRole:
            return it.error;
        case NoteRole:
            return it.note;
        case PathRole:
            return it.path;
        default:
            return {};
    }
}

QHash<int, QByteArray> ModelDownloads::roleNames() const {
    return {{TitleRole, "title"},
            {FileNameRole, "fileName"},
            {UrlRole, "url"},
            {StateRole, "stateCode"},
            {StateTextRole, "stateText"},
            {ProgressRole, "progress"},
            {ReceivedTextRole, "receivedText"},
            {SpeedTextRole, "speedText"},
            {EtaTextRole, "etaText"},
            {ErrorRole, "error"},
            {NoteRole, "note"},
            {PathRole, "path"}};
}

bool ModelDownloads::busy() const {
    for (const auto& item : items_)
        if (item->state == State::Queued || item->state == State::Running ||
            item->state == State::Verifying)
            return true;
    return false;
}

QString ModelDownloads::partPath(const Item& item) const {
    return QDir(item.folder).filePath(item.spec.fileName + QStringLiteral(".part"));
}
QString ModelDownloads::statePath(const Item& item) const {
    return QDir(item.folder).filePath(item.spec.fileName + QStringLiteral(".part.json"));
}
QString ModelDownloads::finalPath(const Item& item) const {
    return QDir(item.folder).filePath(item.spec.fileName);
}

void ModelDownloads::writeState(const Item& item) const {
    QJsonObject o{{QStringLiteral("version"), 1},
                  {QStringLiteral("url"), item.spec.url.toString()},
                  {QStringLiteral("file"), item.spec.fileName},
                  {QStringLiteral("title"), item.spec.title},
                  {QStringLiteral("sha256"), item.spec.sha256},
                  {QStringLiteral("server_sha256"), item.serverSha},
                  {QStringLiteral("expected_size"), double(item.spec.expectedSize)},
                  {QStringLiteral("total"), double(item.total)},
                  {QStringLiteral("etag"), item.etag},
                  {QStringLiteral("last_modified"), item.lastModified},
                  {QStringLiteral("name_from_server"), item.nameFromServer},
                  {QStringLiteral("server_name"), item.serverName},
                  {QStringLiteral("wanted_name"), item.wantedName}};
    QFile f(statePath(item));
    if (f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        f.write(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

void ModelDownloads::applyStateRecord(const QJsonObject& o, Item* item) const {
    item->received = QFileInfo(partPath(*item)).size();
    item->etag = o.value(QStringLiteral("etag")).toString();
    item->lastModified = o.value(QStringLiteral("last_modified")).toString();
    item->serverSha = o.value(QStringLiteral("server_sha256")).toString();
    item->total = qint64(o.value(QStringLiteral("total")).toDouble(-1));
    item->serverName = o.value(QStringLiteral("server_name")).toString();
    if (item->wantedName.isEmpty())
        item->wantedName = o.value(QStringLiteral("wanted_name")).toString();
    if (item->spec.sha256.isEmpty())
        item->spec.sha256 = o.value(QStringLiteral("sha256")).toString();
}

void ModelDownloads::removePartial(const Item& item) const {
    QFile::remove(partPath(item));
    QFile::remove(statePath(item));
}

void ModelDownloads::setFolder(const QString& folder) {
    if (folder == folder_) return;
    folder_ = folder;
    restoreUnfinished();
}

void ModelDownloads::restoreUnfinished() {
    const QDir dir(folder_);
    const QStringList records =
        dir.entryList({QStringLiteral("*.gguf.part.json")}, QDir::Files, QDir::Name);
    for (const QString& name : records) {
        QFile f(dir.filePath(name));
        if (!f.open(QIODevice::ReadOnly)) continue;
        const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
        auto item = std::make_shared<Item>();
        item->folder = folder_;
        item->spec.url = QUrl(o.value(QStringLiteral("url")).toString());
        item->spec.fileName = o.value(QStringLiteral("file")).toString();
        if (item->spec.fileName + QStringLiteral(".part.json") != name ||
            !downloadUrlProblem(item->spec.url).isEmpty() || rowOf(item->spec.fileName) >= 0)
            continue;
        item->spec.title = o.value(QStringLiteral("title")).toString();
        item->spec.expectedSize = qint64(o.value(QStringLiteral("expected_size")).toDouble(-1));
        item->nameFromServer = o.value(QStringLiteral("name_from_server")).toBool();
        applyStateRecord(o, item.get());
        item->state = State::Paused;
        item->note = tr("Unfinished from last time: resume continues at %1.")
                         .arg(formatBytes(item->received));
        beginInsertRows({}, int(items_.size()), int(items_.size()));
        items_.append(item);
        endInsertRows();
        emit countChanged();
    }
}

int ModelDownloads::rowOf(const QString& fileName) const {
    for (int i = 0; i < items_.size(); ++i)
        if (items_[i]->spec.fileName == fileName) return i;
    return -1;
}

int ModelDownloads::rowOfUrl(const QUrl& url) const {
    for (int i = 0; i < items_.size(); ++i)
        if (items_[i]->spec.url == url) return i;
    return -1;
}

bool ModelDownloads::nameTaken(const QString& name, const Item* except) const {
    // In the download's own folder (a new one's: the models folder).
    const QString folder = except ? except->folder : folder_;
    if (QFileInfo::exists(QDir(folder).filePath(name))) return true;
    // Another download keeps a name given to it (the catalog's, the user's);
    // one that is still to be named at its end holds none yet.
    for (const auto& item : items_) {
        if (item.get() == except || item->folder != folder) continue;
        if ((!item->nameFromServer &&
             item->spec.fileName.compare(name, Qt::CaseInsensitive) == 0) ||
            item->wantedName.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

QString ModelDownloads::freeFileName(const QString& name, int exceptRow) const {
    const Item* except = items_.value(exceptRow).get();
    if (!nameTaken(name, except)) return name;
    const QString base =
        name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive) ? name.chopped(5) : name;
    for (int n = 2;; ++n) {
        const QString candidate = QStringLiteral("%1-%2.gguf").arg(base).arg(n);
        if (!nameTaken(candidate, except)) return candidate;
    }
}

QString ModelDownloads::freeWorkingName(const DownloadSpec& spec) const {
    const QString base = spec.fileName.chopped(5);  // ".gguf"
    for (int n = 1;; ++n) {
        const QString candidate =
            n == 1 ? spec.fileName : QStringLiteral("%1-%2.gguf").arg(base).arg(n);
        if (rowOf(candidate) >= 0) continue;
        QFile record(QDir(folder_).filePath(candidate + QStringLiteral(".part.json")));
        if (record.open(QIODevice::ReadOnly) && QUrl(QJsonDocument::fromJson(record.readAll())
                                                         .object()
                                                         .value(QStringLiteral("url"))
                                                         .toString()) != spec.url)
            continue;
        return candidate;
    }
}

QString ModelDownloads::rename(int row, const QString& nameIn) {
    if (row < 0 || row >= items_.size()) return tr("There is no such download.");
    Item& it = *items_[row];
    QString name = nameIn.trimmed();
    if (!name.isEmpty() && !name.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive))
        name += QStringLiteral(".gguf");
    if (sanitizedFileName(name) != name)
        return tr("\"%1\" cannot be a file name: use letters, digits, spaces, dots and dashes, "
                  "without / \\ : * ? \" < > |.")
            .arg(nameIn.trimmed());
    const QString current = it.state == State::Done    ? it.spec.fileName
                            : !it.wantedName.isEmpty() ? it.wantedName
                                                       : it.spec.fileName;
    if (name == current) return {};
    // A verified file may change the case of its own name.
    const bool ownFile =
        it.state == State::Done && name.compare(it.spec.fileName, Qt::CaseInsensitive) == 0;
    if (!ownFile && nameTaken(name, &it))
        return tr("%1 is already in the models folder: %2 is free.")
            .arg(name, freeFileName(name, row));
    if (it.state != State::Done) {
        it.wantedName = name;
        writeState(it);
        changed(&it);
        return {};
    }
    const QString oldPath = it.path;
    const QString newPath = QDir(it.folder).filePath(name);
    if (!QFile::rename(oldPath, newPath))
        return tr("Cannot rename %1 to %2 in %3: check that the folder is writable.")
            .arg(it.spec.fileName, name, it.folder);
    // What belongs to the model goes with it (MODEL.powerinfer.gguf, MODEL.config.json).
    const QString oldBase = oldPath.chopped(5), newBase = newPath.chopped(5);
    for (const QString& suffix :
         {QStringLiteral(".powerinfer.gguf"), QStringLiteral(".config.json")})
        if (QFileInfo::exists(oldBase + suffix)) QFile::rename(oldBase + suffix, newBase + suffix);
    it.spec.fileName = name;
    it.path = newPath;
    it.note = tr("Renamed to %1.").arg(name);
    changed(&it);
    emit fileRenamed(oldPath, newPath);
    return {};
}

int ModelDownloads::rowOfItem(const Item* item) const {
    for (int i = 0; i < items_.size(); ++i)
        if (items_[i].get() == item) return i;
    return -1;
}

void ModelDownloads::changed(const Item* item) {
    const int row = rowOfItem(item);
    if (row < 0) return;
    emit dataChanged(index(row), index(row));
    emit progressed(row);
}

ModelDownloads::State ModelDownloads::stateAt(int row) const {
    return items_.value(row) ? items_[row]->state : State::Failed;
}
QString ModelDownloads::errorAt(int row) const {
    return items_.value(row) ? items_[row]->error : QString();
}
QString ModelDownloads::noteAt(int row) const {
    return items_.value(row) ? items_[row]->note : QString();
}
QString ModelDownloads::pathAt(int row) const {
    return items_.value(row) ? items_[row]->path : QString();
}
qint64 ModelDownloads::receivedAt(int row) const {
    return items_.value(row) ? items_[row]->received : 0;
}
qint64 ModelDownloads::totalAt(int row) const {
    return items_.value(row) ? items_[row]->total : -1;
}

int ModelDownloads::enqueueUrl(const QString& url, const QString& sha256) {
    DownloadSpec spec;
    spec.url = QUrl::fromUserInput(url.trimmed());
    spec.sha256 = sha256.trimmed().toLower();
    return enqueue(spec);
}

int ModelDownloads::enqueue(const DownloadSpec& specIn) {
    DownloadSpec spec = specIn;
    lastError_.clear();
    if (const QString problem = downloadUrlProblem(spec.url); !problem.isEmpty()) {
        lastError_ = problem;
        return -1;
    }
    const bool nameFromServer = spec.fileName.isEmpty();
    if (nameFromServer) spec.fileName = spec.url.fileName();
    if (spec.fileName.isEmpty() || spec.fileName.contains(QLatin1Char('/')) ||
        spec.fileName.contains(QLatin1Char('\\')) ||
        !spec.fileName.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) {
        lastError_ = tr("The link does not end in a .gguf file name (%1): paste the link of the "
                        "model file itself.")
                         .arg(spec.url.toDisplayString());
        return -1;
    }
    static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{64}$"));
    spec.sha256 = spec.sha256.toLower();
    if (!spec.sha256.isEmpty() && !hex.match(spec.sha256).hasMatch()) {
        lastError_ = tr("The SHA-256 must be 64 hexadecimal digits (got \"%1\").").arg(spec.sha256);
        return -1;
    }
    if (folder_.isEmpty() || !QDir().mkpath(folder_)) {
        lastError_ = tr("The models folder %1 cannot be created: choose another one.").arg(folder_);
        return -1;
    }
    if (nameFromServer) {
        // The same link again: a paused or failed download resumes; another
        // link whose file has the same last part downloads beside it.
        if (const int row = rowOfUrl(spec.url); row >= 0) {
            Item& it = *items_[row];
            if (it.state == State::Paused || it.state == State::Failed) {
                if (!spec.sha256.isEmpty()) it.spec.sha256 = spec.sha256;
                resume(row);
                return row;
            }
            if (it.state != State::Done) {
                lastError_ = tr("%1 is already being downloaded.").arg(spec.url.toDisplayString());
                return -1;
            }
            dismiss(row);
        }
        spec.fileName = freeWorkingName(spec);
    } else if (const int row = rowOf(spec.fileName); row >= 0) {
        Item& it = *items_[row];
        // The same file again: a paused or failed one is resumed.
        if (it.spec.url == spec.url && (it.state == State::Paused || it.state == State::Failed)) {
            if (!spec.sha256.isEmpty()) it.spec.sha256 = spec.sha256;
            resume(row);
            return row;
        }
        if (it.state != State::Done && it.state != State::Failed) {
            lastError_ = tr("%1 is already being downloaded.").arg(spec.fileName);
            return -1;
        }
        dismiss(row);
    }
    auto item = std::make_shared<Item>();
    item->spec = spec;
    item->folder = folder_;
    item->nameFromServer = nameFromServer;
    if (!nameFromServer && QFileInfo::exists(finalPath(*item))) {
        lastError_ = tr("%1 is already in the models folder (%2): delete it there first to "
                        "download it again.")
                         .arg(spec.fileName, folder_);
        return -1;
    }
    // A partial file is only trusted with its state record for the same URL.
    QFile record(statePath(*item));
    if (record.open(QIODevice::ReadOnly)) {
        const QJsonObject o = QJsonDocument::fromJson(record.readAll()).object();
        record.close();
        const bool same =
            QUrl(o.value(QStringLiteral("url")).toString()) == spec.url &&
            (spec.sha256.isEmpty() || o.value(QStringLiteral("sha256")).toString().isEmpty() ||
             o.value(QStringLiteral("sha256")).toString() == spec.sha256);
        if (same) {
            applyStateRecord(o, item.get());
            if (item->received > 0)
                item->note = tr("Resuming at %1.").arg(formatBytes(item->received));
        } else {
            removePartial(*item);
        }
    } else {
        QFile::remove(partPath(*item));
    }
    writeState(*item);
    beginInsertRows({}, int(items_.size()), int(items_.size()));
    items_.append(item);
    endInsertRows();
    emit countChanged();
    pump();
    return rowOfItem(item.get());
}

void ModelDownloads::pump() {
    int running = 0;
    for (const auto& item : items_)
        if (item->active) ++running;
    for (const auto& item : items_) {
        if (running >= maxParallel_) break;
        if (item->state == State::Queued && !item->active) {
            ++running;
            run(item);
        }
    }
}

void ModelDownloads::pause(int row) {
    if (row < 0 || row >= items_.size()) return;
    Item& it = *items_[row];
    if (it.state == State::Queued && !it.active) {
        it.state = State::Paused;
        changed(&it);
    } else if (it.state == State::Running) {
        it.pauseRequested = true;
        if (it.reply) it.reply->abort();
    }
}

void ModelDownloads::resume(int row) {
    if (row < 0 || row >= items_.size()) return;
    Item& it = *items_[row];
    if (it.state != State::Paused && it.state != State::Failed) return;
    it.state = State::Queued;
    it.error.clear();
    it.received = QFileInfo(partPath(it)).size();
    changed(&it);
    emit countChanged();  // busy
    pump();
}

void ModelDownloads::cancel(int row) {
    if (row < 0 || row >= items_.size()) return;
    const std::shared_ptr<Item> it = items_[row];
    if (it->state == State::Done) return;
    const bool wasActive = it->active;
    it->cancelRequested = true;
    // A running download removes its files and row when its attempt ends.
    if (it->reply) it->reply->abort();
    if (!wasActive) {
        removePartial(*it);
        dismiss(row);
    }
}

void ModelDownloads::dismiss(int row) {
    if (row < 0 || row >= items_.size() || items_[row]->active) return;
    beginRemoveRows({}, row, row);
    items_.removeAt(row);
    endRemoveRows();
    emit countChanged();
}

void ModelDownloads::fail(const std::shared_ptr<Item>& item, const QString& error) {
    // Nothing received: no partial file worth keeping for a resume.
    if (QFileInfo(partPath(*item)).size() == 0) removePartial(*item);
    item->state = State::Failed;
    item->error = error;
    changed(item.get());
    emit countChanged();
    emit downloadFailed(item->spec.fileName, error);
    emit ended(item->spec.fileName);
}

QCoro::Task<> ModelDownloads::run(std::shared_ptr<Item> item) {
    QPointer<ModelDownloads> self(this);
    item->active = true;
    item->pauseRequested = item->cancelRequested = false;
    item->state = State::Running;
    item->speed = 0;
    changed(item.get());
    int retries = 0;
    bool finished = false;
    for (;;) {
        // Before asking the server: is there room for what is still missing?
        const qint64 size = item->total > 0 ? item->total : item->spec.expectedSize;
        if (size > 0) {
            const qint64 need = size - item->received;
            const qint64 free = QStorageInfo(item->folder).bytesAvailable();
            if (free >= 0 && need + kDiskMargin > free) {
                fail(item, tr("Not enough disk space in %1: %2 still to download, %3 free. Free "
                              "some space or choose another models folder.")
                               .arg(item->folder, formatBytes(need), formatBytes(free)));
                break;
            }
        }
        bool retryable = false;
        const qint64 before = item->received;
        const bool complete = co_await attempt(item, &retryable);
        if (!self) co_return;
        if (item->cancelRequested) break;
        if (item->pauseRequested) {
            item->state = State::Paused;
            item->note = tr("Paused at %1.").arg(formatBytes(item->received));
            changed(item.get());
            emit countChanged();
            break;
        }
        if (complete) {
            finished = true;
            break;
        }
        if (item->received > before) retries = 0;  // progress: a fresh set of retries
        if (retryable && retries < maxRetries_) {
            ++retries;
            item->note = tr("%1 Resuming at %2 (try %3 of %4).")
                             .arg(item->attemptError, formatBytes(item->received))
                             .arg(retries)
                             .arg(maxRetries_);
            if (!item->events.contains(item->attemptError)) item->events << item->attemptError;
            changed(item.get());
            co_await QCoro::sleepFor(std::chrono::milliseconds(retryDelayMs_));
            if (!self) co_return;
            if (item->cancelRequested) break;
            if (item->pauseRequested) {
                item->state = State::Paused;
                changed(item.get());
                break;
            }
            continue;
        }
        fail(item, item->attemptError);
        break;
    }
    if (finished) co_await verifyAndMove(item);
    if (!self) co_return;
    item->active = false;
    if (item->cancelRequested) {
        removePartial(*item);
        if (const int row = rowOfItem(item.get()); row >= 0) dismiss(row);
    }
    pump();
}

QCoro::Task<bool> ModelDownloads::attempt(std::shared_ptr<Item> item, bool* retryable) {
    QPointer<ModelDownloads> self(this);
    *retryable = false;
    item->attemptError.clear();
    QFile part(partPath(*item));
    if (!part.open(QIODevice::ReadWrite)) {
        item->attemptError = tr("Cannot write %1: %2. Choose another models folder.")
                                 .arg(part.fileName(), part.errorString());
        co_return false;
    }
    item->received = part.size();
    part.seek(item->received);
    // Already whole (stopped while verifying): nothing left to ask for.
    if (item->total > 0 && item->received == item->total) co_return true;
    QUrl url = item->spec.url;
    for (int hop = 0; hop <= kMaxRedirects; ++hop) {
        QNetworkRequest request(url);
        request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                             QNetworkRequest::ManualRedirectPolicy);
        request.setTransferTimeout(stallTimeoutMs_);
        request.setHeader(
            QNetworkRequest::UserAgentHeader,
            QStringLiteral("PowerInfer-Desktop/%1").arg(QCoreApplication::applicationVersion()));
        // Ranges count bytes of the file itself, never of a compressed body.
        request.setRawHeader("Accept-Encoding", "identity");
        const qint64 offset = item->received;
        if (offset > 0) {
            request.setRawHeader("Range", "bytes=" + QByteArray::number(offset) + "-");
            // The server sends the rest only if the file is unchanged, else all of it.
            if (!item->etag.isEmpty() && !item->etag.startsWith(QLatin1String("W/")))
                request.setRawHeader("If-Range", item->etag.toLatin1());
            else if (!item->lastModified.isEmpty())
                request.setRawHeader("If-Range", item->lastModified.toLatin1());
        }
        QNetworkReply* reply = network_.get(request);
        item->reply = reply;
        bool headersSeen = false, redirect = false, writing = false, rejected = false;
        // Aborting inside a reply's own signal would resume this coroutine
        // from within the handler: the abort is queued instead.
        const auto abortLater = [reply] {
            QMetaObject::invokeMethod(reply, &QNetworkReply::abort, Qt::QueuedConnection);
        };
        const auto onHeaders = [&, reply]() {
            headersSeen = true;
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (const QString sha = sha256FromEtag(reply->rawHeader("X-Linked-Etag"));
                !sha.isEmpty())
                item->serverSha = sha;
            if (status >= 300 && status < 400 && status != 304) {
                redirect = true;
                return;
            }
            if (status != 200 && status != 206) {
                item->attemptError = httpStatusMessage(status, url);
                *retryable = status == 408 || status == 502 || status == 503 || status == 504;
                rejected = true;
                abortLater();
                return;
            }
            const qint64 length =
                reply->header(QNetworkRequest::ContentLengthHeader).isValid()
                    ? reply->header(QNetworkRequest::ContentLengthHeader).toLongLong()
                    : -1;
            if (status == 206) {
                qint64 start = -1, total = -1;
                if (!parseContentRange(reply->rawHeader("Content-Range"), &start, &total) ||
                    start != offset) {
                    // Not the part asked for: start over rather than splice.
                    item->attemptError =
                        tr("The server sent another part of the file than "
                           "asked for.");
                    item->event(
                        tr("The server's partial answer did not match: the download "
                           "restarted from zero."));
                    part.resize(0);
                    item->received = 0;
                    *retryable = true;
                    rejected = true;
                    abortLater();
                    return;
                }
                item->total = total;
            } else {
                if (offset > 0) {
                    item->event(
                        tr("The server does not support resuming (or the file changed "
                           "there): the download restarted from zero."));
                    part.resize(0);
                    part.seek(0);
                    item->received = 0;
                }
                item->total = length;
            }
            if (const QString named =
                    fileNameFromContentDisposition(reply->rawHeader("Content-Disposition"));
                !named.isEmpty())
                item->serverName = named;
            item->etag = QString::fromLatin1(reply->rawHeader("ETag"));
            item->lastModified = QString::fromLatin1(reply->rawHeader("Last-Modified"));
            writeState(*item);
            if (item->total > 0) {
                const qint64 need = item->total - item->received;
                const qint64 free = QStorageInfo(item->folder).bytesAvailable();
                if (free >= 0 && need + kDiskMargin > free) {
                    item->attemptError =
                        tr("Not enough disk space in %1: %2 still to download, %3 free. Free "
                           "some space or choose another models folder.")
                            .arg(item->folder, formatBytes(need), formatBytes(free));
                    rejected = true;
                    abortLater();
                    return;
                }
            }
            writing = true;
            item->speedClock.start();
            item->emitClock.start();
            item->speedBytes = 0;
        };
        QObject::connect(reply, &QNetworkReply::readyRead, this, [&, reply] {
            if (!headersSeen) onHeaders();
            if (rejected || !writing) {
                reply->readAll();  // a redirect's body
                return;
            }
            const QByteArray bytes = reply->readAll();
            if (part.write(bytes) != bytes.size()) {
                item->attemptError =
                    tr("Writing %1 failed: %2 (is the disk full?). Free some space and resume.")
                        .arg(part.fileName(), part.errorString());
                writing = false;
                rejected = true;
                abortLater();
                return;
            }
            item->received += bytes.size();
            item->speedBytes += bytes.size();
            if (const qint64 ms = item->speedClock.elapsed(); ms >= 1000) {
                const double now = double(item->speedBytes) * 1000.0 / double(ms);
                item->speed = item->speed > 0 ? 0.5 * item->speed + 0.5 * now : now;
                item->speedBytes = 0;
                item->speedClock.restart();
            }
            if (item->emitClock.elapsed() >= 250) {
                item->emitClock.restart();
                changed(item.get());
            }
        });
        co_await reply;
        if (!self) co_return false;
        QObject::disconnect(reply, nullptr, this, nullptr);
        if (!headersSeen && reply->error() == QNetworkReply::NoError) onHeaders();
        part.flush();
        item->reply = nullptr;
        reply->deleteLater();
        if (item->pauseRequested || item->cancelRequested) co_return false;
        if (rejected) co_return false;
        if (redirect) {
            const QUrl target =
                url.resolved(reply->attribute(QNetworkRequest::RedirectionTargetAttribute).toUrl());
            if (url.scheme() == QLatin1String("https") &&
                target.scheme() != QLatin1String("https")) {
                item->attemptError = tr("%1 redirected to a plain http address (%2): refused, the "
                                        "file could be altered on the way.")
                                         .arg(url.host(), target.toDisplayString());
                co_return false;
            }
            url = target;
            continue;
        }
        if (reply->error() != QNetworkReply::NoError) {
            item->attemptError = networkErrorMessage(reply, url);
            *retryable = isDropped(reply->error());
            co_return false;
        }
        if (item->total > 0 && item->received < item->total) {
            item->attemptError =
                tr("The connection to %1 dropped before the file was complete.").arg(url.host());
            *retryable = true;
            co_return false;
        }
        if (item->total < 0) item->total = item->received;
        changed(item.get());
        co_return true;
    }
    item->attemptError = tr("%1 redirected more than %2 times: giving up.")
                             .arg(item->spec.url.host())
                             .arg(kMaxRedirects);
    co_return false;
}

QCoro::Task<bool> ModelDownloads::verifyAndMove(std::shared_ptr<Item> item) {
    QPointer<ModelDownloads> self(this);
    item->state = State::Verifying;
    changed(item.get());
    const QString part = partPath(*item);
    const FileCheck check = co_await QtConcurrent::run(checkFile, part);
    if (!self) co_return false;
    if (!check.error.isEmpty()) {
        fail(item, tr("Cannot read the downloaded file %1: %2").arg(part, check.error));
        co_return false;
    }
    const QString expected = !item->spec.sha256.isEmpty() ? item->spec.sha256 : item->serverSha;
    if (!expected.isEmpty() && check.sha256 != expected) {
        removePartial(*item);
        fail(item, tr("The downloaded file is damaged or not the one expected: its SHA-256 is "
                      "%1, expected %2. It was deleted: download it again, or check the "
                      "checksum.")
                       .arg(check.sha256, expected));
        co_return false;
    }
    if (check.magic != "GGUF") {
        removePartial(*item);
        fail(item, tr("The downloaded file is not a GGUF model (it does not start with \"GGUF\"), "
                      "so it was deleted. Check that the link points to the .gguf file itself "
                      "(on Hugging Face the /resolve/ link, not the /blob/ page)."));
        co_return false;
    }
    // The name: the user's, else (for a pasted link) the server's, else the
    // model's own general.name, else the working name; never over a file
    // already there.
    QString wanted = item->wantedName;
    if (wanted.isEmpty() && item->nameFromServer) {
        wanted = item->serverName;
        if (wanted.isEmpty() && inspector_) {
            // A named future: GCC 12 destroys a lambda temporary inside a
            // co_await expression twice (its QString captures were freed early).
            QFuture<ModelFileInfo> reading = QtConcurrent::run(inspector_, part);
            const ModelFileInfo info = co_await reading;
            if (!self) co_return false;
            wanted = fileNameFromModelName(info.generalName, info.quant);
        }
    }
    // The link's last part, not the working name (model-2.gguf beside another download).
    if (wanted.isEmpty())
        wanted = item->nameFromServer ? item->spec.url.fileName() : item->spec.fileName;
    const QString finalName = freeFileName(wanted, rowOfItem(item.get()));
    if (finalName != wanted)
        item->events << tr("%1 was already in the models folder: saved as %2 (rename it here).")
                            .arg(wanted, finalName);
    const QString finalFile = QDir(item->folder).filePath(finalName);
    // One rename on the same file system: the model appears whole or not at all.
    std::error_code ec;
    std::filesystem::rename(std::filesystem::path(part.toStdWString()),
                            std::filesystem::path(finalFile.toStdWString()), ec);
    if (ec) {
        fail(item, tr("Cannot move the verified file into %1: %2")
                       .arg(item->folder, QString::fromStdString(ec.message())));
        co_return false;
    }
    QFile::remove(statePath(*item));
    item->spec.fileName = finalName;
    item->wantedName.clear();
    item->path = finalFile;
    item->state = State::Done;
    const QString verified =
        expected.isEmpty()
            ? tr("No SHA-256 was known for this file: it is a GGUF file but could not be "
                 "verified (SHA-256 %1).")
                  .arg(check.sha256)
            : tr("SHA-256 verified (%1).").arg(check.sha256);
    item->note = (item->events + QStringList{verified}).join(QLatin1Char(' '));
    changed(item.get());
    emit countChanged();
    emit downloadFinished(item->path);
    emit ended(item->spec.fileName);
    co_return true;
}

}  // namespace powerinfer::app
