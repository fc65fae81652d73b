// The open conversation's messages, for the chat view. GUI thread only.
// While a reply streams, only the last row changes: appendToLast() emits
// dataChanged for that row's content, never a reset, and its segments
// (a model of their own) change only at the tail: the cost of a batch does
// not grow with the length of the reply.
#pragma once

#include <qqmlintegration.h>

#include <QAbstractListModel>
#include <QVariantList>

#include "records.h"

namespace powerinfer::app {

// A message body split into prose paragraphs (rendered as Markdown) and
// fenced code blocks (rendered monospace with a copy button). An unterminated
// fence (a reply still streaming) yields a code segment up to the end.
struct MessageSegment {
    enum Kind { Text, Code };
    Kind kind = Text;
    QString text;
    QString language;
    bool operator==(const MessageSegment&) const = default;
};
QList<MessageSegment> splitMessageSegments(const QString& content);
// "text" or "code", as the views name a segment's kind.
QString segmentKindName(MessageSegment::Kind kind);

// splitMessageSegments over a text that only grows, without splitting it all
// again: the text before the last block boundary (a blank line outside code,
// or a closing fence) is split once; only the text after it is split again.
// For any text, closed() + tail() equals splitMessageSegments(text).
class IncrementalSegmenter {
public:
    // `content` extends the text of the previous call (else call reset()).
    void update(const QString& content);
    void reset();
    const QList<MessageSegment>& closed() const { return closed_; }
    const QList<MessageSegment>& tail() const { return tail_; }
    QList<MessageSegment> all() const { return closed_ + tail_; }

private:
    qsizetype scanned_ = 0;   // start of the first line not yet scanned
    qsizetype boundary_ = 0;  // text before it is in closed_
    bool inCode_ = false;
    QString fence_;
    QList<MessageSegment> closed_, tail_;
};

// One message's segments for the view's Repeater: rows change only where the
// text changed (normally the last one), so delegates are never rebuilt.
class SegmentListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("a role of MessageListModel")
public:
    enum Role { KindRole = Qt::UserRole + 1, BodyRole, LanguageRole };
    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    // Makes the rows closed + tail; rows before the previous call's closed
    // count are taken as unchanged.
    void sync(const QList<MessageSegment>& closed, const QList<MessageSegment>& tail);
    const QList<MessageSegment>& rows() const { return rows_; }

private:
    QList<MessageSegment> rows_;
    qsizetype stable_ = 0;
};

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role {
        UidRole = Qt::UserRole + 1,
        RoleRole,  // "user" / "assistant"
        ContentRole,
        SegmentsRole,      // list of {kind: "text"|"code", text, language}
        SegmentModelRole,  // the same as a SegmentListModel (what the view uses)
        StateRole,         // "complete", "partial", "stopped", "error"
        ModelRole,
        TokensPerSecondRole,
        CompletionTokensRole,
        CreatedAtRole,
        NoticeRole,  // the error of a failed reply, or the context-trim notice
    };

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setMessages(const QList<MessageRecord>& messages);
    void clear() { setMessages({}); }
    void append(const MessageRecord& message);
    // Appends streamed text to the last message (the reply in progress).
    void appendToLast(const QString& text);
    // Replaces the last message's record (final stats, state).
    void updateLast(const MessageRecord& message);
    // Removes row and every row after it.
    void truncateFrom(int row);

    int indexOfUid(const QString& uid) const;
    // A row's text, read when needed (copy, edit) rather than bound: the view
    // binds no role that grows with the reply, so a batch of a long reply
    // costs the QML engine no copy of the whole text (its strings count
    // towards the JavaScript heap: a 4,000-token reply made it collect
    // garbage mid-stream, the demo's worst stalls).
    Q_INVOKABLE QString contentAt(int row) const {
        return row >= 0 && row < rows_.size() ? rows_[row].record.content : QString();
    }
    const MessageRecord& at(int row) const { return rows_[row].record; }
    QList<MessageRecord> records() const;

signals:
    void countChanged();

private:
    struct Row {
        MessageRecord record;
        IncrementalSegmenter segmenter;
        SegmentListModel* segments = nullptr;  // child of this model
    };
    Row makeRow(const MessageRecord& record);
    static void resegment(Row& row, bool grewOnly);
    void dropRows(qsizetype from);
    QList<Row> rows_;
};

}  // namespace powerinfer::app
