// The open conversation's messages, for the chat view. GUI thread only.
// While a reply streams, only the last row changes: appendToLast() emits
// dataChanged for that row (content and segments), never a reset.
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
        SegmentsRole,  // list of {kind: "text"|"code", text, language}
        StateRole,     // "complete", "partial", "stopped", "error"
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
    const MessageRecord& at(int row) const { return rows_[row].record; }
    QList<MessageRecord> records() const;

signals:
    void countChanged();

private:
    struct Row {
        MessageRecord record;
        QVariantList segments;
    };
    static QVariantList segmentsFor(const QString& content);
    QList<Row> rows_;
};

}  // namespace powerinfer::app
