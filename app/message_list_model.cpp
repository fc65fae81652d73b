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

namespace {

bool isFenceLine(const QString& trimmed) {
    return trimmed.startsWith(QStringLiteral("```")) || trimmed.startsWith(QStringLiteral("~~~"));
}

// A line of spaces and tabs only: what splitMessageSegments splits prose on.
bool isBlankLine(QStringView line) {
    for (QChar c : line)
        if (c != QLatin1Char(' ') && c != QLatin1Char('\t')) return false;
    return true;
}

}  // namespace

void IncrementalSegmenter::reset() { *this = IncrementalSegmenter{}; }

void IncrementalSegmenter::update(const QString& content) {
    // Scan the complete lines that arrived, tracking fences the way
    // splitMessageSegments does, and remember the last block boundary.
    qsizetype boundary = boundary_;
    for (;;) {
        const qsizetype end = content.indexOf(QLatin1Char('\n'), scanned_);
        if (end < 0) break;
        const QStringView line = QStringView(content).mid(scanned_, end - scanned_);
        const QString trimmed = line.trimmed().toString();
        if (!inCode_ && isFenceLine(trimmed)) {
            inCode_ = true;
            fence_ = trimmed.left(3);
        } else if (inCode_ && isFenceLine(trimmed) && trimmed.startsWith(fence_) &&
                   trimmed.mid(3).trimmed().isEmpty()) {
            inCode_ = false;
            boundary = end + 1;
        } else if (!inCode_ && isBlankLine(line)) {
            boundary = end + 1;
        }
        scanned_ = end + 1;
    }
    if (boundary > boundary_) {
        closed_ += splitMessageSegments(content.mid(boundary_, boundary - boundary_));
        boundary_ = boundary;
    }
    tail_ = splitMessageSegments(content.mid(boundary_));
}

QString segmentKindName(MessageSegment::Kind kind) {
    return kind == MessageSegment::Code ? QStringLiteral("code") : QStringLiteral("text");
}

int SegmentListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant SegmentListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const MessageSegment& s = rows_[index.row()];
    switch (role) {
        case KindRole:
            return segmentKindName(s.kind);
        case Qt::DisplayRole:
        case BodyRole:
            return s.text;
        case LanguageRole:
            return s.language;
        default:
            return {};
    }
}

QHash<int, QByteArray> SegmentListModel::roleNames() const {
    return {{KindRole, "kind"}, {BodyRole, "body"}, {LanguageRole, "language"}};
}

void SegmentListModel::sync(const QList<MessageSegment>& closed,
                            const QList<MessageSegment>& tail) {
    const qsizetype n = closed.size() + tail.size();
    const auto wanted = [&](qsizetype i) -> const MessageSegment& {
        return i < closed.size() ? closed[i] : tail[i - closed.size()];
    };
    const qsizetype common = std::min<qsizetype>(rows_.size(), n);
    for (qsizetype i = std::min(stable_, common); i < common; ++i) {
        if (rows_[i] == wanted(i)) continue;
        rows_[i] = wanted(i);
        emit dataChanged(index(int(i)), index(int(i)));
    }
    if (n > rows_.size()) {
        beginInsertRows({}, int(rows_.size()), int(n - 1));
        for (qsizetype i = rows_.size(); i < n; ++i) rows_.append(wanted(i));
        endInsertRows();
    } else if (n < rows_.size()) {
        beginRemoveRows({}, int(n), int(rows_.size() - 1));
        rows_.resize(n);
        endRemoveRows();
    }
    stable_ = closed.size();
}

MessageListModel::Row MessageListModel::makeRow(const MessageRecord& record) {
    Row row{record, {}, new SegmentListModel(this)};
    resegment(row, false);
    return row;
}

void MessageListModel::resegment(Row& row, bool grewOnly) {
    if (!grewOnly) row.segmenter.reset();
    row.segmenter.update(row.record.content);
    if (!grewOnly) {
        // A new text: rebuild (rows before the closed count are not checked).
        row.segments->sync({}, {});
    }
    row.segments->sync(row.segmenter.closed(), row.segmenter.tail());
}

void MessageListModel::dropRows(qsizetype from) {
    for (qsizetype i = from; i < rows_.size(); ++i) rows_[i].segments->deleteLater();
    rows_.resize(from);
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
        case SegmentsRole: {
            QVariantList list;
            for (const MessageSegment& s : row.segments->rows())
                list << QVariantMap{{QStringLiteral("kind"), segmentKindName(s.kind)},
                                    {QStringLiteral("text"), s.text},
                                    {QStringLiteral("language"), s.language}};
            return list;
        }
        case SegmentModelRole:
            return QVariant::fromValue(static_cast<QObject*>(row.segments));
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
        {SegmentModelRole, "segmentModel"},
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
    dropRows(0);
    rows_.reserve(messages.size());
    for (const MessageRecord& m : messages) rows_.append(makeRow(m));
    endResetModel();
    emit countChanged();
}

void MessageListModel::append(const MessageRecord& message) {
    const int row = int(rows_.size());
    beginInsertRows({}, row, row);
    rows_.append(makeRow(message));
    endInsertRows();
    emit countChanged();
}

void MessageListModel::appendToLast(const QString& text) {
    if (rows_.isEmpty() || text.isEmpty()) return;
    Row& row = rows_.last();
    row.record.content += text;
    resegment(row, true);  // the segment model signals its own (tail) changes
    const QModelIndex idx = index(int(rows_.size()) - 1);
    emit dataChanged(idx, idx, {ContentRole, Qt::DisplayRole});
}

void MessageListModel::updateLast(const MessageRecord& message) {
    if (rows_.isEmpty()) return;
    Row& row = rows_.last();
    const bool contentChanged = row.record.content != message.content;
    const bool grew = message.content.startsWith(row.record.content);
    row.record = message;
    if (contentChanged) resegment(row, grew);
    const QModelIndex idx = index(int(rows_.size()) - 1);
    emit dataChanged(idx, idx);
}

void MessageListModel::truncateFrom(int row) {
    if (row < 0 || row >= rows_.size()) return;
    beginRemoveRows({}, row, int(rows_.size()) - 1);
    dropRows(row);
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
