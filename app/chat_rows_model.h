// The chat view's rows: the open conversation's messages flattened so that
// every part of a reply is a row of its own. A user's message is one row; an
// assistant's reply is one row per segment (a paragraph or a code block) and
// a footer row (its state, notice and actions). The ListView then creates
// only the rows near the viewport: opening or leaving a conversation with a
// 4,000-token reply builds and tears down a screenful of items, not the
// reply's hundreds of segments, and the QML heap the garbage collector marks
// no longer grows with the conversation. GUI thread only.
#pragma once

#include <qqmlintegration.h>

#include <QAbstractListModel>
#include <QPointer>

#include "message_list_model.h"

namespace powerinfer::app {

class ChatRowsModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(MessageListModel* messages READ messages WRITE setMessages NOTIFY messagesChanged)
public:
    enum Role {
        RowKindRole = Qt::UserRole + 1,  // "user", "segment", "footer"
        MessageIndexRole,                // the row in `messages`
        UidRole,
        RoleRole,  // "user" / "assistant"
        StateRole,
        TokensPerSecondRole,
        CompletionTokensRole,
        NoticeRole,
        SegmentIndexRole,  // a segment row's index in its reply, else -1
        KindRole,          // a segment's "text" / "code", else ""
        BodyRole,
        LanguageRole,
        HasSegmentsRole,  // a footer row: the reply has text yet
    };

    explicit ChatRowsModel(QObject* parent = nullptr);

    MessageListModel* messages() const { return source_; }
    void setMessages(MessageListModel* messages);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // The message a row belongs to (-1 outside the rows), and the first row
    // of a message (-1 when there is none).
    Q_INVOKABLE int messageIndexAt(int row) const;
    Q_INVOKABLE int firstRowOf(int message) const;
    // The first row of a message that has one of the words (a search's,
    // split at spaces; case-insensitive): for a search hit deep in a long
    // reply, its paragraph. The message's first row when none has.
    Q_INVOKABLE int firstRowContaining(int message, const QString& words) const;

signals:
    void messagesChanged();

private:
    struct Entry {
        QPointer<SegmentListModel> segments;  // an assistant's reply, else null
        int segmentCount = 0;
        int rows() const { return segments ? segmentCount + 1 : 1; }
    };
    Entry makeEntry(int message);
    void watch(SegmentListModel* segments);
    void rebuild();
    void restart();  // recomputes starts_ from entries_
    int entryOf(const QObject* segments) const;
    QVector<int> rolesFor(const QList<int>& messageRoles, bool segmentRow) const;

    void sourceReset();
    void sourceInserted(int first, int last);
    void sourceAboutToBeRemoved(int first, int last);
    void sourceRemoved();
    void sourceChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight,
                       const QList<int>& roles);
    void segmentsInserted(SegmentListModel* segments, int first, int last);
    void segmentsAboutToBeRemoved(SegmentListModel* segments, int first, int last);
    void segmentsRemoved(SegmentListModel* segments);
    void segmentsChanged(SegmentListModel* segments, int first, int last);
    void segmentsReset(SegmentListModel* segments);

    QPointer<MessageListModel> source_;
    QList<Entry> entries_;
    QList<int> starts_;  // first row of each entry; starts_.last() = rowCount
    // A removal in progress: applied to entries_ when the source has done it.
    int pendingFirst_ = -1, pendingLast_ = -1;
    int pendingEntry_ = -1;
};

}  // namespace powerinfer::app
