#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "conversation_list_model.h"

using namespace powerinfer::app;

namespace {
ConversationRecord conv(qint64 id, const QString& title) {
    ConversationRecord c;
    c.id = id;
    c.title = title;
    c.updatedAt = QDateTime::currentDateTimeUtc().addSecs(-id * 60);
    return c;
}
}  // namespace

class TestConversationListModel : public QObject {
    Q_OBJECT
private slots:
    void operationsKeepTheModelConsistent() {
        ConversationListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setConversations({conv(1, "a"), conv(2, "b"), conv(3, "c")});
        QCOMPARE(model.rowCount(), 3);
        QSignalSpy moved(&model, &QAbstractItemModel::rowsMoved);
        model.touch(3, QDateTime::currentDateTimeUtc());
        QCOMPARE(moved.count(), 1);
        QCOMPARE(model.at(0).id, 3);
        model.touch(3, QDateTime::currentDateTimeUtc());  // already on top: no move
        QCOMPARE(moved.count(), 1);
        model.rename(2, "bee");
        QCOMPARE(model.index(model.indexOfId(2)).data(ConversationListModel::TitleRole).toString(),
                 QStringLiteral("bee"));
        model.prepend(conv(4, "d"));
        QCOMPARE(model.at(0).id, 4);
        model.remove(1);
        model.remove(42);  // unknown: ignored
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.indexOfId(1), -1);
        QCOMPARE(model.roleNames().value(ConversationListModel::IdRole),
                 QByteArray("conversationId"));
    }

    void whenLabels() {
        const QDateTime now = QDateTime::currentDateTime();
        QCOMPARE(ConversationListModel::whenLabel(now.addDays(-1), now),
                 QStringLiteral("Yesterday"));
        QVERIFY(ConversationListModel::whenLabel(now, now).contains(':'));
        QVERIFY(!ConversationListModel::whenLabel(now.addDays(-30), now).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestConversationListModel)
#include "tst_conversation_list_model.moc"
