// SQLite persistence for conversations, messages and settings.
//
// All database work runs on one dedicated QThread that owns the QSqlDatabase
// connection, in call order; every call returns a QFuture the GUI thread can
// co_await, so the GUI never blocks on disk. (Not a QThreadPool: waiting on a
// pool's future may run the task on the waiting thread, and a connection must
// stay on the thread that opened it.)
#pragma once

#include <QFuture>
#include <QHash>
#include <QObject>
#include <QThread>

#include "records.h"

namespace powerinfer::app {

class ChatStore : public QObject {
    Q_OBJECT
public:
    // The schema version this build writes; see migrations in chat_store.cpp.
    static constexpr int kSchemaVersion = 3;

    explicit ChatStore(QString databasePath, QObject* parent = nullptr);
    ~ChatStore() override;

    QString databasePath() const { return path_; }

    // Opens (creating if needed) and migrates. Resolves to an empty string on
    // success, else a message for the user (e.g. a newer schema).
    QFuture<QString> open();

    // Sorted by last activity. A non-empty search runs a full-text query over
    // message bodies (FTS5) plus a title match.
    QFuture<QList<ConversationRecord>> conversations(const QString& search = {});
    QFuture<ConversationRecord> createConversation(const QString& title,
                                                   const QString& systemPrompt);
    QFuture<bool> renameConversation(qint64 id, const QString& title);
    QFuture<bool> setSystemPrompt(qint64 id, const QString& systemPrompt);
    QFuture<bool> deleteConversation(qint64 id);

    QFuture<QList<MessageRecord>> messages(qint64 conversationId);
    // Insert-or-update by uid (so a streaming reply can be checkpointed
    // repeatedly); bumps the conversation's last activity. Resolves to the rowid.
    QFuture<qint64> saveMessage(const MessageRecord& message);
    // Deletes the message with this uid and every later one in its conversation.
    QFuture<bool> deleteMessagesFrom(qint64 conversationId, const QString& uid);

    QFuture<QHash<QString, QString>> settings();
    QFuture<bool> setSetting(const QString& key, const QString& value);

signals:
    // Emitted from the store thread; connect with a receiver on the GUI thread.
    void errorOccurred(const QString& message);

private:
    // Queues f(db) on the store thread; the future resolves with its result.
    template <typename F>
    auto run(F&& f);
    template <typename F>
    auto post(F&& f);

    QString path_;
    QString connectionName_;
    QThread thread_;
    QObject* context_ = nullptr;  // lives on thread_; queued calls run there
};

// Turns what a user types into an FTS5 query: each word quoted (so operators
// and punctuation are literal) and prefix-matched. Empty if nothing to search.
QString ftsQueryFromUserText(const QString& text);

}  // namespace powerinfer::app
