// ChatController's conversation files: export of the open conversation
// (Markdown or JSON) and of the whole store, import of a JSON export, and
// the file dialogs that pick them. Files are written atomically off the GUI
// thread; a failure is a notice and leaves the store as it was.
#include <qcoro/qcorofuture.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUuid>
#include <QtConcurrent/QtConcurrentRun>

#include "chat_controller.h"
#include "conversation_export.h"

namespace powerinfer::app {

namespace {

// Returns an error message, or an empty string on success.
QString writeFileAtomically(const QString& path, const QByteArray& bytes) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
        return file.errorString();
    return {};
}

}  // namespace

QCoro::Task<bool> ChatController::exportTo(QString path, QString format) {
    QPointer<ChatController> self(this);
    if (path.startsWith(QLatin1String("file:"))) path = QUrl(path).toLocalFile();
    QByteArray bytes;
    if (format == QLatin1String("json"))
        bytes = conversationToJson(current_, messages_.records());
    else
        bytes = conversationToMarkdown(current_, messages_.records()).toUtf8();
    // A folder that does not exist yet (e.g. ~/Documents) is created.
    QDir().mkpath(QFileInfo(path).absolutePath());
    // The future is built outside the co_await expression: GCC 12 destroys
    // temporaries of a co_await operand (here a lambda's captures) twice.
    const QFuture<QString> written = QtConcurrent::run(writeFileAtomically, path, bytes);
    const QString error = co_await written;
    if (!self) co_return false;
    QString message;
    if (error.isEmpty())
        message = tr("Exported to %1").arg(QFileInfo(path).fileName());
    else
        message = tr("Could not export to %1: %2").arg(path, error);
    showNotice(message);
    emit exportFinished(error.isEmpty(), message);
    co_return error.isEmpty();
}

void ChatController::exportConversation(const QUrl& file, const QString& format) {
    exportTo(file.isLocalFile() ? file.toLocalFile() : file.toString(), format);
}

QString ChatController::defaultExportFolder() const {
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (!documents.isEmpty() && QDir().mkpath(documents)) return documents;
    return QDir::homePath();
}

void ChatController::exportInteractive(const QString& format) {
    if (!fileChooser_ || messages_.rowCount() == 0) return;
    QString base = current_.title.isEmpty() ? QStringLiteral("conversation") : current_.title;
    static const QRegularExpression unsafe(QStringLiteral("[^\\w\\- ]+"));
    base = base.remove(unsafe).simplified().replace(QLatin1Char(' '), QLatin1Char('-'));
    if (base.isEmpty()) base = QStringLiteral("conversation");
    const bool json = format == QLatin1String("json");
    const QString path =
        fileChooser_(FileDialogKind::Save, tr("Export conversation"),
                     QDir(defaultExportFolder()).filePath(base + (json ? ".json" : ".md")),
                     json ? tr("JSON (*.json)") : tr("Markdown (*.md)"));
    if (!path.isEmpty()) exportTo(path, format);
}

void ChatController::exportAllInteractive() {
    if (!fileChooser_) return;
    const QString path = fileChooser_(
        FileDialogKind::Save, tr("Export all conversations"),
        QDir(defaultExportFolder()).filePath(QStringLiteral("powerinfer-conversations.json")),
        tr("JSON (*.json)"));
    if (!path.isEmpty()) exportAllTo(path);
}

void ChatController::importInteractive() {
    if (!fileChooser_) return;
    const QString path = fileChooser_(FileDialogKind::Open, tr("Import conversations"),
                                      defaultExportFolder(), tr("JSON exports (*.json)"));
    if (!path.isEmpty()) importFrom(path);
}

QCoro::Task<bool> ChatController::exportAllTo(QString path) {
    QPointer<ChatController> self(this);
    QList<ExportedConversation> all;
    // The whole store, not the (possibly filtered) sidebar list.
    const QList<ConversationRecord> list = co_await store_->conversations(QString());
    if (!self) co_return false;
    for (const ConversationRecord& c : list) {
        const QList<MessageRecord> messages = co_await store_->messages(c.id);
        if (!self) co_return false;
        all.append({c, messages});
    }
    const QByteArray bytes = conversationsToJson(all);
    const QFuture<QString> written = QtConcurrent::run(writeFileAtomically, path, bytes);
    const QString error = co_await written;
    if (!self) co_return false;
    const QString message = error.isEmpty()
                                ? tr("Exported %n conversation(s) to %1", nullptr, int(all.size()))
                                      .arg(QFileInfo(path).fileName())
                                : tr("Could not export to %1: %2").arg(path, error);
    showNotice(message);
    emit exportFinished(error.isEmpty(), message);
    co_return error.isEmpty();
}

QCoro::Task<int> ChatController::importFrom(QString path) {
    QPointer<ChatController> self(this);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        showNotice(tr("Could not import %1: %2").arg(path, file.errorString()));
        co_return 0;
    }
    QString error;
    const QList<ExportedConversation> all = conversationsFromJson(file.readAll(), &error);
    if (all.isEmpty()) {
        showNotice(tr("Could not import %1: %2").arg(QFileInfo(path).fileName(), error));
        co_return 0;
    }
    for (const ExportedConversation& c : all) {
        const ConversationRecord created =
            co_await store_->createConversation(c.conversation.title, c.conversation.systemPrompt);
        if (!self) co_return 0;
        if (created.id == 0) co_return 0;  // the store reported why
        for (MessageRecord m : c.messages) {
            m.uid = QUuid::createUuid().toString(QUuid::WithoutBraces);
            m.conversationId = created.id;
            co_await store_->saveMessage(m);
            if (!self) co_return 0;
        }
    }
    co_await refreshConversations();
    if (!self) co_return 0;
    showNotice(tr("Imported %n conversation(s)", nullptr, int(all.size())));
    co_return int(all.size());
}

}  // namespace powerinfer::app
