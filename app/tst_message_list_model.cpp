#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "message_list_model.h"

using namespace powerinfer::app;

namespace {
MessageRecord msg(const QString& uid, const QString& role, const QString& content) {
    MessageRecord m;
    m.uid = uid;
    m.role = role;
    m.content = content;
    return m;
}
}  // namespace

class TestMessageListModel : public QObject {
    Q_OBJECT
private slots:
    void splitsProseAndCode() {
        const auto s = splitMessageSegments(
            "Intro **bold**\n\n```python\ndef f():\n    return 1\n```\nAfter text");
        QCOMPARE(s.size(), 3);
        QCOMPARE(s[0].kind, MessageSegment::Text);
        QCOMPARE(s[0].text, QStringLiteral("Intro **bold**"));
        QCOMPARE(s[1].kind, MessageSegment::Code);
        QCOMPARE(s[1].language, QStringLiteral("python"));
        QCOMPARE(s[1].text, QStringLiteral("def f():\n    return 1"));
        QCOMPARE(s[2].text, QStringLiteral("After text"));
    }

    void splitsParagraphsButKeepsBlankLinesInCode() {
        const auto s = splitMessageSegments("One\nline two\n\n  \n- a\n- b\n\n```\nx\n\ny\n```");
        QCOMPARE(s.size(), 3);
        QCOMPARE(s[0].text, QStringLiteral("One\nline two"));
        QCOMPARE(s[1].text, QStringLiteral("- a\n- b"));
        QCOMPARE(s[2].kind, MessageSegment::Code);
        QCOMPARE(s[2].text, QStringLiteral("x\n\ny"));
    }

    void unterminatedFenceIsCodeToTheEnd() {
        const auto s = splitMessageSegments("See:\n```\nx = 1\ny");
        QCOMPARE(s.size(), 2);
        QCOMPARE(s[1].kind, MessageSegment::Code);
        QCOMPARE(s[1].text, QStringLiteral("x = 1\ny"));
        QCOMPARE(splitMessageSegments("").size(), 0);
        // A fence with a language inside a code block does not close it.
        const auto nested = splitMessageSegments("```md\n```js\n```");
        QCOMPARE(nested.size(), 1);
        QCOMPARE(nested[0].text, QStringLiteral("```js"));
    }

    void appendToLastChangesOnlyTheLastRow() {
        MessageListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setMessages({msg("a", "user", "hi"), msg("b", "assistant", "")});
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.appendToLast("Hello");
        model.appendToLast(" world\n```c\nint x;");
        QCOMPARE(reset.count(), 0);
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(changed.count(), 2);
        for (const auto& args : changed) {
            QCOMPARE(args[0].toModelIndex().row(), 1);
            QCOMPARE(args[1].toModelIndex().row(), 1);
            const auto roles = args[2].value<QList<int>>();
            QVERIFY(roles.contains(MessageListModel::ContentRole));
        }
        const QModelIndex last = model.index(1);
        QCOMPARE(last.data(MessageListModel::ContentRole).toString(),
                 QStringLiteral("Hello world\n```c\nint x;"));
        const QVariantList segments = last.data(MessageListModel::SegmentsRole).toList();
        QCOMPARE(segments.size(), 2);
        QCOMPARE(segments[1].toMap().value("kind").toString(), QStringLiteral("code"));
        QCOMPARE(segments[1].toMap().value("language").toString(), QStringLiteral("c"));
    }

    // Issue 17: appendToLast re-split the whole reply on every batch
    // (O(n^2) in its length). The incremental split must equal the full one
    // wherever a stream is cut, and touch only the tail.
    void incrementalSegmentsEqualTheFullSplitAtEveryCut() {
        const QString text = QStringLiteral(
            "Intro line\nstill intro\n\n  \n- a\n- b\n\n```py\nx = 1\n\ny = 2\n```\nafter "
            "code\n\n~~~\n```not a close\n~~~\n\nlast ``` words\n\n```md\n```js\n```\nend");
        for (int step : {1, 2, 3, 5, 7, 11}) {
            IncrementalSegmenter seg;
            for (int i = step; i < text.size() + step; i += step) {
                const QString prefix = text.left(i);
                seg.update(prefix);
                QCOMPARE(seg.all(), splitMessageSegments(prefix));
            }
        }
    }

    void aStreamedReplyChangesOnlyItsLastSegments() {
        MessageListModel model;
        model.setMessages({msg("a", "user", "hi"), msg("b", "assistant", "")});
        auto* segments = qobject_cast<SegmentListModel*>(
            model.index(1).data(MessageListModel::SegmentModelRole).value<QObject*>());
        QVERIFY(segments);
        QAbstractItemModelTester tester(segments,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy changed(segments, &QAbstractItemModel::dataChanged);
        QSignalSpy removed(segments, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(segments, &QAbstractItemModel::modelReset);
        for (int i = 0; i < 200; ++i)
            model.appendToLast(QStringLiteral("Paragraph %1.\n\n").arg(i));
        QCOMPARE(segments->rowCount(), 200);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(reset.count(), 0);
        model.appendToLast("Growing");
        changed.clear();
        model.appendToLast(" tail");
        QCOMPARE(changed.count(), 1);  // the last row only
        QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 200);
        QCOMPARE(segments->rows().last().text, QStringLiteral("Growing tail"));
    }

    void appendTruncateUpdate() {
        MessageListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy count(&model, &MessageListModel::countChanged);
        model.append(msg("a", "user", "1"));
        model.append(msg("b", "assistant", "2"));
        model.append(msg("c", "user", "3"));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.indexOfUid("b"), 1);
        QCOMPARE(model.indexOfUid("zz"), -1);
        model.truncateFrom(1);
        QCOMPARE(model.rowCount(), 1);
        MessageRecord done = msg("a", "user", "changed");
        done.state = "stopped";
        model.updateLast(done);
        QCOMPARE(model.index(0).data(MessageListModel::StateRole).toString(),
                 QStringLiteral("stopped"));
        QCOMPARE(model.records().at(0).content, QStringLiteral("changed"));
        model.truncateFrom(5);  // out of range: ignored
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(count.count(), 5);
        QVERIFY(model.roleNames().values().contains("segments"));
    }
};

QTEST_GUILESS_MAIN(TestMessageListModel)
#include "tst_message_list_model.moc"
