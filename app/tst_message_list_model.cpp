#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "chat_rows_model.h"
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

    // The chat view's rows follow every change of the messages: after each
    // step they equal a flattening made from scratch, and the model tester
    // checks every signal on the way (a streamed reply only inserts rows at
    // its end and changes its last segment).
    void chatRowsFollowTheMessages() {
        MessageListModel messages;
        ChatRowsModel rows;
        rows.setMessages(&messages);
        QAbstractItemModelTester tester(&rows,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto expected = [&] {
            QStringList out;
            for (int m = 0; m < messages.rowCount(); ++m) {
                const MessageRecord& r = messages.at(m);
                if (r.role == QLatin1String("user")) {
                    out << QStringLiteral("%1 user").arg(m);
                    continue;
                }
                for (const MessageSegment& seg : splitMessageSegments(r.content))
                    out << QStringLiteral("%1 segment %2").arg(m).arg(seg.text);
                out << QStringLiteral("%1 footer %2").arg(m).arg(r.state);
            }
            return out;
        };
        // What a view knows: rows read when inserted, reset or changed only.
        const auto describe = [&](int i) {
            const QModelIndex idx = rows.index(i);
            const QString kind = rows.data(idx, ChatRowsModel::RowKindRole).toString();
            QString line = QStringLiteral("%1 %2").arg(
                rows.data(idx, ChatRowsModel::MessageIndexRole).toInt()).arg(kind);
            if (kind == QLatin1String("segment"))
                line += QLatin1Char(' ') + rows.data(idx, ChatRowsModel::BodyRole).toString();
            if (kind == QLatin1String("footer"))
                line += QLatin1Char(' ') + rows.data(idx, ChatRowsModel::StateRole).toString();
            return line;
        };
        QStringList view;
        const auto reread = [&] {
            view.clear();
            for (int i = 0; i < rows.rowCount(); ++i) view << describe(i);
        };
        connect(&rows, &QAbstractItemModel::modelReset, this, reread);
        connect(&rows, &QAbstractItemModel::rowsInserted, this,
                [&](const QModelIndex&, int first, int last) {
                    for (int i = first; i <= last; ++i) view.insert(i, describe(i));
                });
        connect(&rows, &QAbstractItemModel::rowsRemoved, this,
                [&](const QModelIndex&, int first, int last) {
                    view.remove(first, last - first + 1);
                });
        connect(&rows, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& a, const QModelIndex& b) {
                    for (int i = a.row(); i <= b.row(); ++i) view[i] = describe(i);
                });
        const auto actual = [&] {
            // Message indices move when rows are inserted above: not by this
            // model's design (rows are added or removed at the end only).
            if (view != [&] {
                    QStringList now;
                    for (int i = 0; i < rows.rowCount(); ++i) now << describe(i);
                    return now;
                }())
                return QStringList{QStringLiteral("a change was not signalled")} + view;
            QStringList out;
            for (int i = 0; i < rows.rowCount(); ++i) {
                const QModelIndex idx = rows.index(i);
                const QString kind = rows.data(idx, ChatRowsModel::RowKindRole).toString();
                const int m = rows.data(idx, ChatRowsModel::MessageIndexRole).toInt();
                if (rows.messageIndexAt(i) != m) return QStringList{QStringLiteral("bad index")};
                QString line = QStringLiteral("%1 %2").arg(m).arg(kind);
                if (kind == QLatin1String("segment"))
                    line += QLatin1Char(' ') + rows.data(idx, ChatRowsModel::BodyRole).toString();
                if (kind == QLatin1String("footer"))
                    line += QLatin1Char(' ') + rows.data(idx, ChatRowsModel::StateRole).toString();
                out << line;
            }
            return out;
        };
        MessageRecord reply = msg("b", "assistant", "Old reply.\n\nSecond part.");
        reply.state = QStringLiteral("complete");
        messages.setMessages({msg("a", "user", "hi"), reply});
        QCOMPARE(actual(), expected());
        QCOMPARE(rows.rowCount(), 4);
        QCOMPARE(rows.firstRowOf(1), 1);

        messages.append(msg("c", "user", "more"));
        MessageRecord live = msg("d", "assistant", "");
        live.state = QStringLiteral("partial");
        messages.append(live);
        QCOMPARE(actual(), expected());
        QCOMPARE(rows.data(rows.index(rows.rowCount() - 1), ChatRowsModel::HasSegmentsRole),
                 QVariant(false));
        QSignalSpy inserted(&rows, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&rows, &QAbstractItemModel::rowsRemoved);
        const QString text = QStringLiteral(
            "Intro words here.\n\n```python\nx = 1\n\ny = 2\n```\nAfter the code.\n\nEnd.");
        for (qsizetype i = 0; i < text.size(); i += 3) {
            messages.appendToLast(text.mid(i, 3));
            QCOMPARE(actual(), expected());
        }
        QCOMPARE(removed.count(), 0);  // streaming only adds rows
        for (const QList<QVariant>& args : inserted)
            QVERIFY(args.at(1).toInt() >= 5);  // and only in the live reply
        QCOMPARE(rows.data(rows.index(rows.rowCount() - 1), ChatRowsModel::HasSegmentsRole),
                 QVariant(true));

        live.content = QStringLiteral("A shorter, final text.");
        live.state = QStringLiteral("complete");
        messages.updateLast(live);  // not a growth: the reply's segments are rebuilt
        QCOMPARE(actual(), expected());
        live.state = QStringLiteral("error");
        messages.updateLast(live);  // the same text: only the footer changes
        QCOMPARE(actual(), expected());

        messages.truncateFrom(2);
        QCOMPARE(actual(), expected());
        QCOMPARE(rows.messageIndexAt(rows.rowCount()), -1);
        QCOMPARE(rows.firstRowOf(2), -1);
        messages.clear();
        QCOMPARE(rows.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestMessageListModel)
#include "tst_message_list_model.moc"
