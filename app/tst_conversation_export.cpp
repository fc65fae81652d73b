#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "conversation_export.h"

using namespace powerinfer::app;

class TestConversationExport : public QObject {
    Q_OBJECT
private slots:
    void markdownAndJson() {
        ConversationRecord c;
        c.title = "Primes";
        c.systemPrompt = "Be brief.";
        c.createdAt = QDateTime(QDate(2024, 5, 1), QTime(10, 0), Qt::UTC);
        MessageRecord u;
        u.role = "user";
        u.content = "Is 7 prime?";
        MessageRecord a;
        a.role = "assistant";
        a.content = "Yes.\n\n```python\nprint(7)\n```";
        a.model = "SmolLM2";
        a.completionTokens = 9;
        a.tokensPerSecond = 41.26;
        a.state = "stopped";

        const QString md = conversationToMarkdown(c, {u, a});
        QVERIFY(md.startsWith("# Primes\n"));
        QVERIFY(md.contains("> **System:** Be brief."));
        QVERIFY(md.contains("## You\n\nIs 7 prime?"));
        QVERIFY(md.contains("## Assistant\n\nYes.\n\n```python\nprint(7)\n```"));
        QVERIFY(md.contains("SmolLM2 · 9 tokens · 41.3 tok/s · stopped"));
        QVERIFY(md.indexOf("## You") < md.indexOf("## Assistant"));

        const QJsonObject root = QJsonDocument::fromJson(conversationToJson(c, {u, a})).object();
        QCOMPARE(root["title"].toString(), QStringLiteral("Primes"));
        QCOMPARE(root["system_prompt"].toString(), QStringLiteral("Be brief."));
        const QJsonArray messages = root["messages"].toArray();
        QCOMPARE(messages.size(), 2);
        QCOMPARE(messages[0].toObject()["role"].toString(), QStringLiteral("user"));
        QVERIFY(!messages[0].toObject().contains("model"));
        QCOMPARE(messages[1].toObject()["content"].toString(), a.content);
        QCOMPARE(messages[1].toObject()["completion_tokens"].toInt(), 9);
        QCOMPARE(messages[1].toObject()["state"].toString(), QStringLiteral("stopped"));
    }
};

QTEST_GUILESS_MAIN(TestConversationExport)
#include "tst_conversation_export.moc"
