#include "message_list_model.h"

#include <QRegularExpression>

namespace powerinfer::app {

QList<MessageSegment> splitMessageSegments(const QString& content) {
    QList<MessageSegment> out;
    MessageSegment current;
    bool inCode = false;
    QString fence;
    static const QRegularExpression blankLines(QStringLiteral("\\n[ \\t]*\\n\\s*"));
    const auto push = [&] {
        if (current.kind == MessageSegment::Text) {
            // One segment per paragraph (or list): the view spaces them, which
            // Markdown rendering alone does not do.
            for (const QString& para : current.text.split(blankLines, Qt::SkipEmptyParts)) {
                const QString trimmed = para.trimmed();
                if (!trimmed.isEmpty()) out << MessageSegment{MessageSegment::Text, trimmed, {}};
            }
            return;
        }
        if (current.text.endsWith(QLatin1Char('\n'))) current.text.chop(1);
        out << current;
    };
    const QStringList lines = content.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString& line = lines[i];
        const QString trimmed = line.trimmed();
        const bool isFence =
            trimmed.startsWith(QStringLiteral("```")) || trimmed.startsWith(QStringLiteral("~~~"));
        if (!inCode && isFence) {
            push();
            fence = trimmed.left(3);
            current = {MessageSegment::Code, {}, trimmed.mid(3).trimmed()};
            inCode = true;
            continue;
        }
        if (inCode && isFence && trimmed.startsWith(fence) && trimmed.mid(3).trimmed().isEmpty()) {
            push();
            current = {};
            inCode = false;
            continue;
        }
        current.text += line;
        if (i + 1 < lines.size()) current.text += QLatin1Char('\n');
    }
    push();
    return out;
}

QVariantList MessageListModel::segmentsFor(const QString& content) {
    QVariantList list;
    for (const MessageSegment& s : splitMessageSegments(content)) {
        list << QVariantMap{
            {QStringLiteral("kind"),
             s.kind == MessageSegment::Code ? QStringLiteral("code") : QStringLiteral("text")},
            {QStringLiteral("text"), s.text},
            {QStringLiteral("language"), s.language},
        };
    }
    return list;
}

int MessageListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = rows_[index.row()];
    const MessageRecord& m = row.record;
    switch (role) {
        case Qt::DisplayRole:
        case ContentRole:
            return m.content;
        case UidRole:
            return m.uid;
        case RoleRole:
            return m.role;
        case SegmentsRole:
            return row.segments;
        case StateRole:
            return m.state;
        case ModelRole:
            return m.model;
        case TokensPerSecondRole:
            return m.tokensPerSecond;
        case CompletionTokensRole:
            return m.completionTokens;
        case CreatedAtRole:
            return m.createdAt;
        case NoticeRole:
            return m.notice;
        default:
            return {};
    }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {
        {UidRole, "uid"},
        {RoleRole, "role"},
        {ContentRole, "content"},
        {SegmentsRole, "segments"},
        {StateRole, "state"},
        {ModelRole, "model"},
        {TokensPerSecondRole, "tokensPerSecond"},
        {CompletionTokensRole, "completionTokens"},
        {CreatedAtRole, "createdAt"},
        {NoticeRole, "notice"},
    };
}

void MessageListModel::setMessages(const QList<MessageRecord>& messages) {
    beginResetModel();
    rows_.clear();
    rows_.reserve(messages.size());
    for (const MessageRecord& m : messages) rows_.append({m, segmentsFor(m.content)});
    endResetModel();
    emit countChanged();
}

void MessageListModel::append(const MessageRecord& message) {
    const int row = int(rows_.size());
    beginInsertRows({}, row, row);
    rows_.append({message, segmentsFor(message.content)});
    endInsertRows();
    emit countChanged();
}

void MessageListModel::appendToLast(const QString& text) {
    if (rows_.isEmpty() || text.isEmpty()) return;
    Row& row = rows_.last();
    row.record.content += text;
    row.segments = segmentsFor(row.record.content);
    const QModelIndex idx = index(int(rows_.size()) - 1);
    emit dataChanged(idx, idx, {ContentRole, SegmentsRole, Qt::DisplayRole});
}

void MessageListModel::updateLast(const MessageRecord& message) {
    if (rows_.isEmpty()) return;
    Row& row = rows_.last();
    const bool contentChanged = row.record.content != message.content;
    row.record = message;
    if (contentChanged) row.segments = segmentsFor(message.content);
    const QModelIndex idx = index(int(rows_.size()) - 1);
    emit dataChanged(idx, idx);
}

void MessageListModel::truncateFrom(int row) {
    if (row < 0 || row >= rows_.size()) return;
    beginRemoveRows({}, row, int(rows_.size()) - 1);
    rows_.resize(row);
    endRemoveRows();
    emit countChanged();
}

int MessageListModel::indexOfUid(const QString& uid) const {
    for (int i = 0; i < rows_.size(); ++i)
        if (rows_[i].record.uid == uid) return i;
    return -1;
}

QList<MessageRecord> MessageListModel::records() const {
    QList<MessageRecord> out;
    out.reserve(rows_.size());
    for (const Row& r : rows_) out << r.record;
    return out;
}

}  // namespace powerinfer::app
