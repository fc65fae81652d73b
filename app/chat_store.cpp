#include "chat_store.h"

#include <QDir>
#include <QFileInfo>
#include <QPromise>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QUuid>
#include <atomic>

namespace powerinfer::app {

namespace {

struct SqlFailure {
    QString message;
};

QSqlQuery exec(QSqlDatabase& db, const QString& sql, const QVariantList& binds = {}) {
    QSqlQuery q(db);
    if (!q.prepare(sql)) {
        throw SqlFailure{QStringLiteral("%1 (in: %2)").arg(q.lastError().text(), sql)};
    }
    for (const QVariant& b : binds) q.addBindValue(b);
    if (!q.exec()) {
        throw SqlFailure{QStringLiteral("%1 (in: %2)").arg(q.lastError().text(), sql)};
    }
    return q;
}

// Runs body in a transaction; rolls back on failure.
template <typename F>
void transaction(QSqlDatabase& db, F&& body) {
    if (!db.transaction()) throw SqlFailure{db.lastError().text()};
    try {
        body();
    } catch (...) {
        db.rollback();
        throw;
    }
    if (!db.commit()) {
        const QString err = db.lastError().text();
        db.rollback();
        throw SqlFailure{err};
    }
}

// Each entry migrates from version i to i+1 and runs in one transaction
// together with the user_version bump, so a crash mid-migration leaves the
// previous version intact.
const QList<QStringList>& migrations() {
    static const QList<QStringList> steps = {
        // v0 -> v1: the original schema.
        {
            QStringLiteral("CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT NOT NULL,"
                           " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)"),
            QStringLiteral("CREATE TABLE messages(id INTEGER PRIMARY KEY,"
                           " conversation_id INTEGER NOT NULL REFERENCES conversations(id)"
                           " ON DELETE CASCADE, role TEXT NOT NULL, content TEXT NOT NULL,"
                           " created_at INTEGER NOT NULL)"),
            QStringLiteral(
                "CREATE INDEX messages_by_conversation ON messages(conversation_id, id)"),
            QStringLiteral("CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT)"),
        },
        // v1 -> v2: per-conversation system prompt, message identity for
        // checkpoint upserts, generation statistics, full-text search.
        {
            QStringLiteral("ALTER TABLE conversations ADD COLUMN system_prompt TEXT NOT NULL"
                           " DEFAULT ''"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN uid TEXT"),
            QStringLiteral(
                "UPDATE messages SET uid = lower(hex(randomblob(16))) WHERE uid IS NULL"),
            QStringLiteral("CREATE UNIQUE INDEX messages_uid ON messages(uid)"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT ''"),
            QStringLiteral(
                "ALTER TABLE messages ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN completion_tokens INTEGER NOT NULL"
                           " DEFAULT 0"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN tokens_per_s REAL NOT NULL DEFAULT 0"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN sparsity REAL"),
            QStringLiteral("ALTER TABLE messages ADD COLUMN hit_rate REAL"),
            QStringLiteral(
                "ALTER TABLE messages ADD COLUMN state TEXT NOT NULL DEFAULT 'complete'"),
            QStringLiteral("CREATE VIRTUAL TABLE messages_fts USING fts5(content,"
                           " content='messages', content_rowid='id')"),
            QStringLiteral("CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN"
                           " INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
                           " END"),
            QStringLiteral("CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN"
                           " INSERT INTO messages_fts(messages_fts, rowid, content)"
                           " VALUES('delete', old.id, old.content); END"),
            QStringLiteral(
                "CREATE TRIGGER messages_fts_au AFTER UPDATE OF content ON messages BEGIN"
                " INSERT INTO messages_fts(messages_fts, rowid, content)"
                " VALUES('delete', old.id, old.content);"
                " INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
                " END"),
            QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES('rebuild')"),
        },
        // v2 -> v3: what the chat shows under a reply (why it failed, or that
        // the oldest turns were left out to fit the context).
        {
            QStringLiteral("ALTER TABLE messages ADD COLUMN notice TEXT NOT NULL DEFAULT ''"),
        },
    };
    return steps;
}

// A null QString binds as SQL NULL; NOT NULL text columns want ''.
QString text(const QString& s) { return s.isNull() ? QStringLiteral("") : s; }

qint64 toMs(const QDateTime& t) {
    return (t.isValid() ? t : QDateTime::currentDateTimeUtc()).toMSecsSinceEpoch();
}
QDateTime fromMs(const QVariant& v) {
    return QDateTime::fromMSecsSinceEpoch(v.toLongLong(), Qt::UTC);
}

ConversationRecord conversationFrom(const QSqlQuery& q) {
    ConversationRecord c;
    c.id = q.value(0).toLongLong();
    c.title = q.value(1).toString();
    c.systemPrompt = q.value(2).toString();
    c.createdAt = fromMs(q.value(3));
    c.updatedAt = fromMs(q.value(4));
    return c;
}

const QString kConversationColumns =
    QStringLiteral("c.id, c.title, c.system_prompt, c.created_at, c.updated_at");

std::atomic<int> connectionCounter{0};

}  // namespace

QString ftsQueryFromUserText(const QString& text) {
    static const QRegularExpression ws(QStringLiteral("\\s+"));
    QStringList terms;
    for (QString word : text.split(ws, Qt::SkipEmptyParts)) {
        word.replace(QLatin1Char('"'), QStringLiteral("\"\""));
        terms << QStringLiteral("\"%1\"*").arg(word);
    }
    return terms.join(QLatin1Char(' '));
}

ChatStore::ChatStore(QString databasePath, QObject* parent)
    : QObject(parent),
      path_(std::move(databasePath)),
      connectionName_(QStringLiteral("powerinfer-store-%1").arg(connectionCounter++)) {
    thread_.setObjectName(QStringLiteral("store"));
    context_ = new QObject;
    context_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, context_, &QObject::deleteLater);
    thread_.start();
}

ChatStore::~ChatStore() {
    // Runs after every queued call (FIFO), so pending writes are flushed.
    const QString name = connectionName_;
    QMetaObject::invokeMethod(
        context_,
        [name] {
            {
                QSqlDatabase db = QSqlDatabase::database(name, false);
                if (db.isOpen()) db.close();
            }
            QSqlDatabase::removeDatabase(name);
        },
        Qt::BlockingQueuedConnection);
    thread_.quit();
    thread_.wait();
}

template <typename F>
auto ChatStore::post(F&& f) {
    using R = std::invoke_result_t<F>;
    auto promise = std::make_shared<QPromise<R>>();
    QFuture<R> future = promise->future();
    QMetaObject::invokeMethod(
        context_,
        [promise, f = std::forward<F>(f)]() mutable {
            promise->start();
            promise->addResult(f());
            promise->finish();
        },
        Qt::QueuedConnection);
    return future;
}

template <typename F>
auto ChatStore::run(F&& f) {
    using R = std::invoke_result_t<F, QSqlDatabase&>;
    return post([this, f = std::forward<F>(f)]() mutable -> R {
        QSqlDatabase db = QSqlDatabase::database(connectionName_, false);
        try {
            if (!db.isOpen()) throw SqlFailure{tr("The conversation database is not open.")};
            return f(db);
        } catch (const SqlFailure& e) {
            qWarning("store: %s", qPrintable(e.message));
            emit errorOccurred(tr("Database error: %1").arg(e.message));
            return R{};
        }
    });
}

QFuture<QString> ChatStore::open() {
    return post([this]() -> QString {
        const QFileInfo info(path_);
        if (!QDir().mkpath(info.absolutePath())) {
            return tr("Cannot create the data folder %1. Check its permissions or pass "
                      "--data-dir with a writable folder.")
                .arg(info.absolutePath());
        }
        QSqlDatabase db =
            QSqlDatabase::contains(connectionName_)
                ? QSqlDatabase::database(connectionName_, false)
                : QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connectionName_);
        db.setDatabaseName(path_);
        if (!db.isOpen() && !db.open()) {
            return tr("Cannot open the conversation database %1: %2")
                .arg(path_, db.lastError().text());
        }
        try {
            exec(db, QStringLiteral("PRAGMA journal_mode=WAL"));
            exec(db, QStringLiteral("PRAGMA synchronous=NORMAL"));
            exec(db, QStringLiteral("PRAGMA foreign_keys=ON"));
            exec(db, QStringLiteral("PRAGMA busy_timeout=5000"));
            QSqlQuery v = exec(db, QStringLiteral("PRAGMA user_version"));
            int version = v.next() ? v.value(0).toInt() : 0;
            v.finish();
            if (version > kSchemaVersion) {
                db.close();
                return tr("The conversation database %1 was written by a newer version of "
                          "PowerInfer Desktop (schema %2; this version understands up to %3). "
                          "Update the app, or start it with --data-dir pointing to another "
                          "folder.")
                    .arg(path_)
                    .arg(version)
                    .arg(kSchemaVersion);
            }
            const auto& steps = migrations();
            for (; version < kSchemaVersion; ++version) {
                transaction(db, [&] {
                    for (const QString& sql : steps[version]) exec(db, sql);
                    exec(db, QStringLiteral("PRAGMA user_version=%1").arg(version + 1));
                });
            }
            // Nothing streams before open(): a row still "partial" is a reply
            // cut off by a crash or kill (its last checkpoint).
            exec(db, QStringLiteral(
                         "UPDATE messages SET state = 'interrupted' WHERE state = 'partial'"));
        } catch (const SqlFailure& e) {
            db.close();
            return tr("Cannot prepare the conversation database %1: %2").arg(path_, e.message);
        }
        return {};
    });
}

QFuture<QList<ConversationRecord>> ChatStore::conversations(const QString& search) {
    return run([search](QSqlDatabase& db) {
        QList<ConversationRecord> out;
        const QString fts = ftsQueryFromUserText(search);
        if (fts.isEmpty()) {
            QSqlQuery q = exec(db, QStringLiteral("SELECT %1 FROM conversations c"
                                                  " ORDER BY c.updated_at DESC, c.id DESC")
                                       .arg(kConversationColumns));
            while (q.next()) out << conversationFrom(q);
            return out;
        }
        // Title matches first-class too; message hits carry a snippet.
        QHash<qint64, qsizetype> index;
        QSqlQuery titles = exec(db,
                                QStringLiteral("SELECT %1 FROM conversations c WHERE c.title LIKE ?"
                                               " ESCAPE '\\'")
                                    .arg(kConversationColumns),
                                {QStringLiteral("%%1%").arg(QString(search.trimmed())
                                                                .replace('\\', "\\\\")
                                                                .replace('%', "\\%")
                                                                .replace('_', "\\_"))});
        while (titles.next()) {
            index.insert(titles.value(0).toLongLong(), out.size());
            out << conversationFrom(titles);
        }
        QSqlQuery hits =
            exec(db,
                 QStringLiteral("SELECT %1, snippet(messages_fts, 0, '', '', '…', 10)"
                                " FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid"
                                " JOIN conversations c ON c.id = m.conversation_id"
                                " WHERE messages_fts MATCH ? ORDER BY rank")
                     .arg(kConversationColumns),
                 {fts});
        while (hits.next()) {
            const qint64 id = hits.value(0).toLongLong();
            if (auto it = index.find(id); it != index.end()) {
                if (out[*it].snippet.isEmpty()) out[*it].snippet = hits.value(5).toString();
                continue;
            }
            index.insert(id, out.size());
            ConversationRecord c = conversationFrom(hits);
            c.snippet = hits.value(5).toString();
            out << c;
        }
        std::stable_sort(out.begin(), out.end(),
                         [](const auto& a, const auto& b) { return a.updatedAt > b.updatedAt; });
        return out;
    });
}

QFuture<ConversationRecord> ChatStore::createConversation(const QString& title,
                                                          const QString& systemPrompt) {
    return run([title, systemPrompt](QSqlDatabase& db) {
        ConversationRecord c;
        c.title = title;
        c.systemPrompt = systemPrompt;
        c.createdAt = c.updatedAt = QDateTime::currentDateTimeUtc();
        QSqlQuery q = exec(db,
                           QStringLiteral("INSERT INTO conversations(title, system_prompt,"
                                          " created_at, updated_at) VALUES(?, ?, ?, ?)"),
                           {text(title), text(systemPrompt), toMs(c.createdAt), toMs(c.updatedAt)});
        c.id = q.lastInsertId().toLongLong();
        return c;
    });
}

QFuture<bool> ChatStore::renameConversation(qint64 id, const QString& title) {
    return run([id, title](QSqlDatabase& db) {
        exec(db, QStringLiteral("UPDATE conversations SET title = ? WHERE id = ?"),
             {text(title), id});
        return true;
    });
}

QFuture<bool> ChatStore::setSystemPrompt(qint64 id, const QString& systemPrompt) {
    return run([id, systemPrompt](QSqlDatabase& db) {
        exec(db, QStringLiteral("UPDATE conversations SET system_prompt = ? WHERE id = ?"),
             {text(systemPrompt), id});
        return true;
    });
}

QFuture<bool> ChatStore::deleteConversation(qint64 id) {
    return run([id](QSqlDatabase& db) {
        // Messages go with it (ON DELETE CASCADE; the FTS trigger cleans the index).
        exec(db, QStringLiteral("DELETE FROM conversations WHERE id = ?"), {id});
        return true;
    });
}

QFuture<QList<MessageRecord>> ChatStore::messages(qint64 conversationId) {
    return run([conversationId](QSqlDatabase& db) {
        QList<MessageRecord> out;
        QSqlQuery q = exec(db,
                           QStringLiteral("SELECT id, uid, role, content, created_at, model,"
                                          " prompt_tokens, completion_tokens, tokens_per_s,"
                                          " sparsity, hit_rate, state, notice FROM messages"
                                          " WHERE conversation_id = ? ORDER BY id"),
                           {conversationId});
        while (q.next()) {
            MessageRecord m;
            m.id = q.value(0).toLongLong();
            m.uid = q.value(1).toString();
            m.conversationId = conversationId;
            m.role = q.value(2).toString();
            m.content = q.value(3).toString();
            m.createdAt = fromMs(q.value(4));
            m.model = q.value(5).toString();
            m.promptTokens = q.value(6).toInt();
            m.completionTokens = q.value(7).toInt();
            m.tokensPerSecond = q.value(8).toDouble();
            m.sparsity = q.value(9).isNull() ? -1 : q.value(9).toDouble();
            m.hitRate = q.value(10).isNull() ? -1 : q.value(10).toDouble();
            m.state = q.value(11).toString();
            m.notice = q.value(12).toString();
            out << m;
        }
        return out;
    });
}

QFuture<qint64> ChatStore::saveMessage(const MessageRecord& message) {
    MessageRecord m = message;
    if (m.uid.isEmpty()) m.uid = QUuid::createUuid().toString(QUuid::WithoutBraces);
    return run([m](QSqlDatabase& db) {
        qint64 id = 0;
        const auto optional = [](double v) { return v < 0 ? QVariant() : QVariant(v); };
        transaction(db, [&] {
            exec(db,
                 QStringLiteral(
                     "INSERT INTO messages(uid, conversation_id, role, content, created_at, model,"
                     " prompt_tokens, completion_tokens, tokens_per_s, sparsity, hit_rate, state,"
                     " notice) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                     " ON CONFLICT(uid) DO UPDATE SET content = excluded.content,"
                     " model = excluded.model, prompt_tokens = excluded.prompt_tokens,"
                     " completion_tokens = excluded.completion_tokens,"
                     " tokens_per_s = excluded.tokens_per_s, sparsity = excluded.sparsity,"
                     " hit_rate = excluded.hit_rate, state = excluded.state,"
                     " notice = excluded.notice"),
                 {m.uid, m.conversationId, text(m.role), text(m.content), toMs(m.createdAt),
                  text(m.model), m.promptTokens, m.completionTokens, m.tokensPerSecond,
                  optional(m.sparsity), optional(m.hitRate), text(m.state), text(m.notice)});
            QSqlQuery q =
                exec(db, QStringLiteral("SELECT id FROM messages WHERE uid = ?"), {m.uid});
            if (q.next()) id = q.value(0).toLongLong();
            exec(db, QStringLiteral("UPDATE conversations SET updated_at = ? WHERE id = ?"),
                 {QDateTime::currentMSecsSinceEpoch(), m.conversationId});
        });
        return id;
    });
}

QFuture<bool> ChatStore::deleteMessagesFrom(qint64 conversationId, const QString& uid) {
    return run([conversationId, uid](QSqlDatabase& db) {
        exec(db,
             QStringLiteral("DELETE FROM messages WHERE conversation_id = ? AND id >="
                            " (SELECT id FROM messages WHERE uid = ?)"),
             {conversationId, uid});
        return true;
    });
}

QFuture<QHash<QString, QString>> ChatStore::settings() {
    return run([](QSqlDatabase& db) {
        QHash<QString, QString> out;
        QSqlQuery q = exec(db, QStringLiteral("SELECT key, value FROM settings"));
        while (q.next()) out.insert(q.value(0).toString(), q.value(1).toString());
        return out;
    });
}

QFuture<bool> ChatStore::setSetting(const QString& key, const QString& value) {
    return run([key, value](QSqlDatabase& db) {
        exec(db,
             QStringLiteral("INSERT INTO settings(key, value) VALUES(?, ?)"
                            " ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
             {key, value});
        return true;
    });
}

}  // namespace powerinfer::app
