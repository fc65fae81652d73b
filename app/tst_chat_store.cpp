#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include "chat_store.h"

using namespace powerinfer::app;

namespace {

template <typename T>
T await(QFuture<T> future) {
    future.waitForFinished();
    return future.result();
}

// Runs raw SQL on a database file through a private connection (fixtures).
void runSql(const QString& path, const QStringList& statements) {
    const QString name = QStringLiteral("fixture-%1").arg(QRandomGenerator::global()->generate());
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery q(db);
        for (const QString& s : statements) QVERIFY2(q.exec(s), qPrintable(s));
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
}

int userVersion(const QString& path) {
    const QString name = QStringLiteral("probe-%1").arg(QRandomGenerator::global()->generate());
    int v = -1;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(QStringLiteral("PRAGMA user_version")) && q.next()) v = q.value(0).toInt();
            db.close();
        }
    }
    QSqlDatabase::removeDatabase(name);
    return v;
}

MessageRecord message(qint64 conversation, const QString& role, const QString& content) {
    MessageRecord m;
    m.uid = QUuid::createUuid().toString(QUuid::WithoutBraces);
    m.conversationId = conversation;
    m.role = role;
    m.content = content;
    m.createdAt = QDateTime::currentDateTimeUtc();
    return m;
}

}  // namespace

class TestChatStore : public QObject {
    Q_OBJECT
private slots:
    void init() {
        QVERIFY(dir_.isValid());
        path_ = dir_.filePath(QStringLiteral("t%1.sqlite").arg(++n_));
    }

    void createsSchemaAndListsByLastActivity() {
        ChatStore store(path_);
        QCOMPARE(await(store.open()), QString());
        QCOMPARE(userVersion(path_), ChatStore::kSchemaVersion);
        const auto a = await(store.createConversation("first", ""));
        QTest::qWait(5);
        const auto b = await(store.createConversation("second", "be brief"));
        QVERIFY(a.id > 0 && b.id > a.id);
        auto list = await(store.conversations());
        QCOMPARE(list.size(), 2);
        QCOMPARE(list[0].title, QStringLiteral("second"));
        QCOMPARE(list[0].systemPrompt, QStringLiteral("be brief"));
        QTest::qWait(5);
        QVERIFY(await(store.saveMessage(message(a.id, "user", "hello"))) > 0);
        list = await(store.conversations());
        QCOMPARE(list[0].id, a.id);  // activity moved it to the top
    }

    void upsertKeepsOneRowPerUid() {
        ChatStore store(path_);
        QCOMPARE(await(store.open()), QString());
        const auto c = await(store.createConversation("c", ""));
        MessageRecord m = message(c.id, "assistant", "partial");
        m.state = "partial";
        const qint64 id1 = await(store.saveMessage(m));
        m.content = "partial and then complete";
        m.state = "complete";
        m.completionTokens = 7;
        m.tokensPerSecond = 12.5;
        m.sparsity = 0.8;
        const qint64 id2 = await(store.saveMessage(m));
        QCOMPARE(id1, id2);
        const auto rows = await(store.messages(c.id));
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].content, m.content);
        QCOMPARE(rows[0].state, QStringLiteral("complete"));
        QCOMPARE(rows[0].completionTokens, 7);
        QCOMPARE(rows[0].tokensPerSecond, 12.5);
        QCOMPARE(rows[0].sparsity, 0.8);
        QCOMPARE(rows[0].hitRate, -1.0);
    }

    void aReplyLeftPartialByACrashOpensAsInterrupted() {
        qint64 conversation = 0;
        MessageRecord m;
        {
            ChatStore store(path_);
            QCOMPARE(await(store.open()), QString());
            conversation = await(store.createConversation("c", "")).id;
            m = message(conversation, "assistant", "First paragraph.\n\nSecond, cut off mid");
            m.state = "partial";  // the last checkpoint before a kill -9
            QVERIFY(await(store.saveMessage(m)) > 0);
        }
        ChatStore reopened(path_);
        QCOMPARE(await(reopened.open()), QString());
        const auto rows = await(reopened.messages(conversation));
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].state, QStringLiteral("interrupted"));
        QCOMPARE(rows[0].content, m.content);
    }

    void fullTextSearchFindsMessagesAndTitles() {
        ChatStore store(path_);
        QCOMPARE(await(store.open()), QString());
        const auto a = await(store.createConversation("Cooking", ""));
        const auto b = await(store.createConversation("Physics", ""));
        await(store.saveMessage(message(a.id, "user", "How long do I boil an egg?")));
        await(store.saveMessage(message(b.id, "assistant", "Neutrons are neutral particles.")));
        auto hits = await(store.conversations("neutr"));  // prefix match
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits[0].id, b.id);
        QVERIFY2(hits[0].snippet.contains("Neutrons"), qPrintable(hits[0].snippet));
        hits = await(store.conversations("cook"));  // title match
        QCOMPARE(hits.size(), 1);
        QCOMPARE(hits[0].id, a.id);
        // FTS operators and quotes typed by the user are literal, never a syntax error.
        QSignalSpy errors(&store, &ChatStore::errorOccurred);
        hits = await(store.conversations("\"egg AND ( NEAR"));
        QCOMPARE(errors.count(), 0);
        QCOMPARE(hits.size(), 0);
        QCOMPARE(ftsQueryFromUserText("  a \"b "), QStringLiteral("\"a\"* \"\"\"b\"*"));
    }

    void deletesCascadeAndTruncate() {
        ChatStore store(path_);
        QCOMPARE(await(store.open()), QString());
        const auto c = await(store.createConversation("c", ""));
        const auto m1 = message(c.id, "user", "one zebra");
        const auto m2 = message(c.id, "assistant", "two");
        const auto m3 = message(c.id, "user", "three");
        for (const auto& m : {m1, m2, m3}) await(store.saveMessage(m));
        QVERIFY(await(store.deleteMessagesFrom(c.id, m2.uid)));
        auto rows = await(store.messages(c.id));
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].uid, m1.uid);
        QVERIFY(await(store.renameConversation(c.id, "renamed")));
        QVERIFY(await(store.setSystemPrompt(c.id, "sys")));
        QCOMPARE(await(store.conversations())[0].title, QStringLiteral("renamed"));
        QCOMPARE(await(store.conversations())[0].systemPrompt, QStringLiteral("sys"));
        QVERIFY(await(store.deleteConversation(c.id)));
        QCOMPARE(await(store.messages(c.id)).size(), 0);
        QCOMPARE(await(store.conversations("zebra")).size(), 0);  // FTS index cleaned too
    }

    void settingsRoundTrip() {
        {
            ChatStore store(path_);
            QCOMPARE(await(store.open()), QString());
            QVERIFY(await(store.setSetting("theme", "dark")));
            QVERIFY(await(store.setSetting("theme", "light")));
        }
        ChatStore store(path_);
        QCOMPARE(await(store.open()), QString());
        QCOMPARE(await(store.settings()).value("theme"), QStringLiteral("light"));
    }

    void migratesVersion1Database() {
        // The schema as the first release wrote it, with data.
        runSql(path_,
               {
                   "CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT NOT NULL,"
                   " created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
                   "CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL"
                   " REFERENCES conversations(id) ON DELETE CASCADE, role TEXT NOT NULL,"
                   " content TEXT NOT NULL, created_at INTEGER NOT NULL)",
                   "CREATE INDEX messages_by_conversation ON messages(conversation_id, id)",
                   "CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT)",
                   "INSERT INTO conversations VALUES(1, 'Old chat', 1000, 2000)",
                   "INSERT INTO messages VALUES(1, 1, 'user', 'what is a quasar', 1000)",
                   "INSERT INTO messages VALUES(2, 1, 'assistant', 'A very bright galactic "
                   "nucleus.', 1500)",
                   "INSERT INTO settings VALUES('theme', 'dark')",
                   "PRAGMA user_version=1",
               });
        ChatStore store(path_);
        QCOMPARE(await(store.open()), QString());
        QCOMPARE(userVersion(path_), ChatStore::kSchemaVersion);
        const auto list = await(store.conversations());
        QCOMPARE(list.size(), 1);
        QCOMPARE(list[0].title, QStringLiteral("Old chat"));
        QCOMPARE(list[0].systemPrompt, QString());
        const auto rows = await(store.messages(1));
        QCOMPARE(rows.size(), 2);
        QVERIFY(!rows[0].uid.isEmpty() && rows[0].uid != rows[1].uid);
        QCOMPARE(rows[1].state, QStringLiteral("complete"));
        QCOMPARE(await(store.settings()).value("theme"), QStringLiteral("dark"));
        // Old messages are indexed for search by the migration.
        QCOMPARE(await(store.conversations("galactic")).size(), 1);
        // Migrated uids work for upserts.
        MessageRecord m = rows[1];
        m.content = "edited";
        await(store.saveMessage(m));
        QCOMPARE(await(store.messages(1))[1].content, QStringLiteral("edited"));
    }

    void refusesNewerSchema() {
        runSql(path_, {"CREATE TABLE future(x)", "PRAGMA user_version=99"});
        ChatStore store(path_);
        const QString error = await(store.open());
        QVERIFY2(error.contains("newer version"), qPrintable(error));
        QVERIFY(error.contains("--data-dir"));
        QCOMPARE(userVersion(path_), 99);  // untouched
        // Calls on a store that did not open report an error instead of crashing.
        QSignalSpy errors(&store, &ChatStore::errorOccurred);
        QCOMPARE(await(store.conversations()).size(), 0);
        QTRY_COMPARE(errors.count(), 1);
    }

    void usesWalAndForeignKeys() {
        ChatStore store(path_);
        QCOMPARE(await(store.open()), QString());
        await(store.createConversation("c", ""));
        QVERIFY(QFile::exists(path_ + "-wal"));
    }

private:
    QTemporaryDir dir_;
    QString path_;
    int n_ = 0;
};

QTEST_GUILESS_MAIN(TestChatStore)
#include "tst_chat_store.moc"
