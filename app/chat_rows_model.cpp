#include "chat_rows_model.h"

#include <algorithm>

namespace powerinfer::app {

namespace {

// The message roles a row of this model repeats.
int messageRoleFor(int role) {
    switch (role) {
        case ChatRowsModel::UidRole:
            return MessageListModel::UidRole;
        case ChatRowsModel::RoleRole:
            return MessageListModel::RoleRole;
        case ChatRowsModel::StateRole:
            return MessageListModel::StateRole;
        case ChatRowsModel::TokensPerSecondRole:
            return MessageListModel::TokensPerSecondRole;
        case ChatRowsModel::CompletionTokensRole:
            return MessageListModel::CompletionTokensRole;
        case ChatRowsModel::NoticeRole:
            return MessageListModel::NoticeRole;
        default:
            return -1;
    }
}

}  // namespace

ChatRowsModel::ChatRowsModel(QObject* parent) : QAbstractListModel(parent) { starts_ = {0}; }

void ChatRowsModel::setMessages(MessageListModel* messages) {
    if (messages == source_) return;
    beginResetModel();
    if (source_) disconnect(source_, nullptr, this, nullptr);
    source_ = messages;
    if (source_) {
        connect(source_, &QAbstractItemModel::modelAboutToBeReset, this,
                [this] { beginResetModel(); });
        connect(source_, &QAbstractItemModel::modelReset, this, &ChatRowsModel::sourceReset);
        connect(source_, &QAbstractItemModel::rowsInserted, this,
                [this](const QModelIndex&, int first, int last) { sourceInserted(first, last); });
        connect(source_, &QAbstractItemModel::rowsAboutToBeRemoved, this,
                [this](const QModelIndex&, int first, int last) {
                    sourceAboutToBeRemoved(first, last);
                });
        connect(source_, &QAbstractItemModel::rowsRemoved, this, &ChatRowsModel::sourceRemoved);
        connect(source_, &QAbstractItemModel::dataChanged, this, &ChatRowsModel::sourceChanged);
        connect(source_, &QObject::destroyed, this, [this] {
            beginResetModel();
            entries_.clear();
            restart();
            endResetModel();
        });
    }
    rebuild();
    endResetModel();
    emit messagesChanged();
}

ChatRowsModel::Entry ChatRowsModel::makeEntry(int message) {
    Entry e;
    const QModelIndex idx = source_->index(message);
    if (source_->data(idx, MessageListModel::RoleRole).toString() == QLatin1String("user"))
        return e;
    e.segments = qobject_cast<SegmentListModel*>(
        source_->data(idx, MessageListModel::SegmentModelRole).value<QObject*>());
    if (e.segments) {
        e.segmentCount = e.segments->rowCount();
        watch(e.segments);
    }
    return e;
}

void ChatRowsModel::watch(SegmentListModel* segments) {
    connect(segments, &QAbstractItemModel::rowsInserted, this,
            [this, segments](const QModelIndex&, int first, int last) {
                segmentsInserted(segments, first, last);
            });
    connect(segments, &QAbstractItemModel::rowsAboutToBeRemoved, this,
            [this, segments](const QModelIndex&, int first, int last) {
                segmentsAboutToBeRemoved(segments, first, last);
            });
    connect(segments, &QAbstractItemModel::rowsRemoved, this,
            [this, segments] { segmentsRemoved(segments); });
    connect(segments, &QAbstractItemModel::dataChanged, this,
            [this, segments](const QModelIndex& a, const QModelIndex& b) {
                segmentsChanged(segments, a.row(), b.row());
            });
    connect(segments, &QAbstractItemModel::modelAboutToBeReset, this,
            [this] { beginResetModel(); });
    connect(segments, &QAbstractItemModel::modelReset, this,
            [this, segments] { segmentsReset(segments); });
}

void ChatRowsModel::rebuild() {
    for (const Entry& e : entries_)
        if (e.segments) disconnect(e.segments, nullptr, this, nullptr);
    entries_.clear();
    const int n = source_ ? source_->rowCount() : 0;
    entries_.reserve(n);
    for (int i = 0; i < n; ++i) entries_.append(makeEntry(i));
    restart();
}

void ChatRowsModel::restart() {
    starts_.resize(entries_.size() + 1);
    int row = 0;
    for (qsizetype i = 0; i < entries_.size(); ++i) {
        starts_[i] = row;
        row += entries_[i].rows();
    }
    starts_.last() = row;
}

int ChatRowsModel::entryOf(const QObject* segments) const {
    // Almost always the last message: the reply that streams.
    for (qsizetype i = entries_.size() - 1; i >= 0; --i)
        if (entries_[i].segments == segments) return int(i);
    return -1;
}

int ChatRowsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : starts_.last();
}

int ChatRowsModel::messageIndexAt(int row) const {
    if (row < 0 || row >= starts_.last()) return -1;
    // The last start <= row.
    const auto it = std::upper_bound(starts_.begin(), starts_.end() - 1, row);
    return int(it - starts_.begin()) - 1;
}

int ChatRowsModel::firstRowOf(int message) const {
    return message >= 0 && message < entries_.size() ? starts_[message] : -1;
}

int ChatRowsModel::firstRowContaining(int message, const QString& words) const {
    const int first = firstRowOf(message);
    const Entry* e = first >= 0 ? &entries_[message] : nullptr;
    if (!e || !e->segments) return first;
    const QStringList list = words.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    const QList<MessageSegment>& segments = e->segments->rows();
    for (qsizetype i = 0; i < segments.size() && i < e->segmentCount; ++i)
        for (const QString& w : list)
            if (segments[i].text.contains(w, Qt::CaseInsensitive)) return first + int(i);
    return first;
}

QVariant ChatRowsModel::data(const QModelIndex& index, int role) const {
    if (!source_ ||
        !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int message = messageIndexAt(index.row());
    const Entry& e = entries_[message];
    const int offset = index.row() - starts_[message];
    const bool segmentRow = e.segments && offset < e.segmentCount;
    if (const int r = messageRoleFor(role); r >= 0) return source_->data(source_->index(message), r);
    switch (role) {
        case RowKindRole:
            return !e.segments ? QStringLiteral("user")
                               : segmentRow ? QStringLiteral("segment") : QStringLiteral("footer");
        case MessageIndexRole:
            return message;
        case SegmentIndexRole:
            return segmentRow ? offset : -1;
        case KindRole:
            return segmentRow ? segmentKindName(e.segments->rows()[offset].kind) : QString();
        case Qt::DisplayRole:
        case BodyRole:
            return segmentRow ? e.segments->rows()[offset].text : QString();
        case LanguageRole:
            return segmentRow ? e.segments->rows()[offset].language : QString();
        case HasSegmentsRole:
            return e.segmentCount > 0;
        default:
            return {};
    }
}

QHash<int, QByteArray> ChatRowsModel::roleNames() const {
    return {
        {RowKindRole, "rowKind"},
        {MessageIndexRole, "messageIndex"},
        {UidRole, "uid"},
        {RoleRole, "role"},
        {StateRole, "state"},
        {TokensPerSecondRole, "tokensPerSecond"},
        {CompletionTokensRole, "completionTokens"},
        {NoticeRole, "notice"},
        {SegmentIndexRole, "segmentIndex"},
        {KindRole, "kind"},
        {BodyRole, "body"},
        {LanguageRole, "language"},
        {HasSegmentsRole, "hasSegments"},
    };
}

void ChatRowsModel::sourceReset() {
    rebuild();
    endResetModel();
}

void ChatRowsModel::sourceInserted(int first, int last) {
    // The source has the rows already; this model's own state changes only
    // between its begin and end calls.
    QList<Entry> added;
    int rows = 0;
    for (int i = first; i <= last; ++i) {
        added.append(makeEntry(i));
        rows += added.last().rows();
    }
    const int at = starts_[first];
    beginInsertRows({}, at, at + rows - 1);
    for (int i = 0; i < added.size(); ++i) entries_.insert(first + i, added[i]);
    restart();
    endInsertRows();
}

void ChatRowsModel::sourceAboutToBeRemoved(int first, int last) {
    pendingFirst_ = first;
    pendingLast_ = last;
    beginRemoveRows({}, starts_[first], starts_[last + 1] - 1);
}

void ChatRowsModel::sourceRemoved() {
    if (pendingFirst_ < 0) return;
    for (int i = pendingFirst_; i <= pendingLast_; ++i)
        if (entries_[i].segments) disconnect(entries_[i].segments, nullptr, this, nullptr);
    entries_.remove(pendingFirst_, pendingLast_ - pendingFirst_ + 1);
    pendingFirst_ = pendingLast_ = -1;
    restart();
    endRemoveRows();
}

QVector<int> ChatRowsModel::rolesFor(const QList<int>& messageRoles, bool segmentRow) const {
    // A segment row shows its reply's state (whether it still streams); the
    // other message roles are the footer's (and a user row's).
    QVector<int> out;
    const auto add = [&](int ours) {
        if (segmentRow && ours != StateRole) return;
        out << ours;
    };
    for (int ours : {UidRole, RoleRole, StateRole, TokensPerSecondRole, CompletionTokensRole,
                     NoticeRole})
        if (messageRoles.isEmpty() || messageRoles.contains(messageRoleFor(ours))) add(ours);
    return out;
}

void ChatRowsModel::sourceChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight,
                                  const QList<int>& roles) {
    for (int m = topLeft.row(); m <= bottomRight.row() && m < entries_.size(); ++m) {
        const Entry& e = entries_[m];
        const int last = starts_[m + 1] - 1;
        // The footer (or a user's row): every role it shows.
        if (const QVector<int> r = rolesFor(roles, false); !r.isEmpty())
            emit dataChanged(index(last), index(last), r);
        if (e.segments && e.segmentCount > 0) {
            if (const QVector<int> r = rolesFor(roles, true); !r.isEmpty())
                emit dataChanged(index(starts_[m]), index(last - 1), r);
        }
    }
}

void ChatRowsModel::segmentsInserted(SegmentListModel* segments, int first, int last) {
    const int m = entryOf(segments);
    if (m < 0) return;
    const int at = starts_[m] + first;
    const bool wasEmpty = entries_[m].segmentCount == 0;
    beginInsertRows({}, at, at + (last - first));
    entries_[m].segmentCount += last - first + 1;
    restart();
    endInsertRows();
    if (wasEmpty) {
        const QModelIndex footer = index(starts_[m + 1] - 1);
        emit dataChanged(footer, footer, {HasSegmentsRole});
    }
}

void ChatRowsModel::segmentsAboutToBeRemoved(SegmentListModel* segments, int first, int last) {
    const int m = entryOf(segments);
    if (m < 0) return;
    pendingEntry_ = m;
    pendingFirst_ = first;
    pendingLast_ = last;
    beginRemoveRows({}, starts_[m] + first, starts_[m] + last);
}

void ChatRowsModel::segmentsRemoved(SegmentListModel* segments) {
    if (pendingEntry_ < 0 || entries_[pendingEntry_].segments != segments) return;
    const int m = pendingEntry_;
    entries_[m].segmentCount -= pendingLast_ - pendingFirst_ + 1;
    pendingEntry_ = pendingFirst_ = pendingLast_ = -1;
    restart();
    endRemoveRows();
    if (entries_[m].segmentCount == 0) {
        const QModelIndex footer = index(starts_[m + 1] - 1);
        emit dataChanged(footer, footer, {HasSegmentsRole});
    }
}

void ChatRowsModel::segmentsChanged(SegmentListModel* segments, int first, int last) {
    const int m = entryOf(segments);
    if (m < 0) return;
    emit dataChanged(index(starts_[m] + first), index(starts_[m] + last),
                     {KindRole, BodyRole, LanguageRole, Qt::DisplayRole});
}

void ChatRowsModel::segmentsReset(SegmentListModel* segments) {
    const int m = entryOf(segments);
    if (m >= 0) entries_[m].segmentCount = segments->rowCount();
    restart();
    endResetModel();
}

}  // namespace powerinfer::app
