#include "conversation_list_model.h"

#include <QLocale>

namespace powerinfer::app {

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QString ConversationListModel::whenLabel(const QDateTime& t, const QDateTime& now) {
    const QDateTime local = t.toLocalTime();
    const qint64 days = local.date().daysTo(now.toLocalTime().date());
    const QLocale locale;
    if (days <= 0) return locale.toString(local.time(), QStringLiteral("HH:mm"));
    if (days == 1) return QObject::tr("Yesterday");
    if (days < 7) return locale.dayName(local.date().dayOfWeek(), QLocale::ShortFormat);
    return locale.toString(local.date(), QLocale::ShortFormat);
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ConversationRecord& c = rows_[index.row()];
    switch (role) {
        case Qt::DisplayRole:
        case TitleRole:
            return c.title;
        case IdRole:
            return c.id;
        case UpdatedAtRole:
            return c.updatedAt;
        case SnippetRole:
            return c.snippet;
        case WhenRole:
            return whenLabel(c.updatedAt, QDateTime::currentDateTime());
        default:
            return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{IdRole, "conversationId"},
            {TitleRole, "title"},
            {UpdatedAtRole, "updatedAt"},
            {SnippetRole, "snippet"},
            {WhenRole, "when"}};
}

void ConversationListModel::setConversations(const QList<ConversationRecord>& conversations) {
    beginResetModel();
    rows_ = conversations;
    endResetModel();
    emit countChanged();
}

void ConversationListModel::prepend(const ConversationRecord& conversation) {
    beginInsertRows({}, 0, 0);
    rows_.prepend(conversation);
    endInsertRows();
    emit countChanged();
}

void ConversationListModel::touch(qint64 id, const QDateTime& when) {
    const int row = indexOfId(id);
    if (row < 0) return;
    rows_[row].updatedAt = when;
    if (row > 0) {
        beginMoveRows({}, row, row, {}, 0);
        rows_.move(row, 0);
        endMoveRows();
    }
    const QModelIndex idx = index(0);
    emit dataChanged(idx, idx, {UpdatedAtRole, WhenRole});
}

void ConversationListModel::rename(qint64 id, const QString& title) {
    const int row = indexOfId(id);
    if (row < 0) return;
    rows_[row].title = title;
    const QModelIndex idx = index(row);
    emit dataChanged(idx, idx, {TitleRole, Qt::DisplayRole});
}

void ConversationListModel::remove(qint64 id) {
    const int row = indexOfId(id);
    if (row < 0) return;
    beginRemoveRows({}, row, row);
    rows_.removeAt(row);
    endRemoveRows();
    emit countChanged();
}

int ConversationListModel::indexOfId(qint64 id) const {
    for (int i = 0; i < rows_.size(); ++i)
        if (rows_[i].id == id) return i;
    return -1;
}

}  // namespace powerinfer::app
