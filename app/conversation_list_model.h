// The sidebar's conversations, most recent activity first. GUI thread only.
#pragma once

#include <qqmlintegration.h>

#include <QAbstractListModel>

#include "records.h"

namespace powerinfer::app {

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("provided by ChatController")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    enum Role {
        IdRole = Qt::UserRole + 1,
        TitleRole,
        UpdatedAtRole,
        SnippetRole,  // search hit context (empty outside a search)
        WhenRole,     // short human label of the last activity
    };

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setConversations(const QList<ConversationRecord>& conversations);
    void prepend(const ConversationRecord& conversation);
    // Marks activity: updates the time and moves the row to the top.
    void touch(qint64 id, const QDateTime& when);
    void rename(qint64 id, const QString& title);
    void remove(qint64 id);

    int indexOfId(qint64 id) const;
    const ConversationRecord& at(int row) const { return rows_[row]; }

    // "14:05" today, "Yesterday", weekday within a week, else a date.
    static QString whenLabel(const QDateTime& t, const QDateTime& now);

signals:
    void countChanged();

private:
    QList<ConversationRecord> rows_;
};

}  // namespace powerinfer::app
