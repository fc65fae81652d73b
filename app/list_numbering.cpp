#include "list_numbering.h"

#include <QFontMetricsF>
#include <QRegularExpression>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextList>

namespace powerinfer::app {

QList<int> orderedItemNumbers(const QString& markdown) {
    static const QRegularExpression item(QStringLiteral("^ {0,3}(\\d{1,9})[.)](?:[ \\t]|$)"));
    static const QRegularExpression fence(QStringLiteral("^ {0,3}(```|~~~)"));
    QList<int> numbers;
    bool inCode = false;
    for (const QString& line : markdown.split(QLatin1Char('\n'))) {
        if (fence.match(line).hasMatch()) inCode = !inCode;
        if (inCode) continue;
        if (const auto m = item.match(line); m.hasMatch()) numbers << m.captured(1).toInt();
    }
    return numbers;
}

namespace {

// A list numbered by hand carries this property (a second pass leaves it).
constexpr int kNumberedByHand = QTextFormat::UserProperty + 1;

bool isTopLevelOrdered(const QTextList* list) {
    if (!list) return false;
    const QTextListFormat f = list->format();
    const auto style = f.style();
    const bool ordered =
        style == QTextListFormat::ListDecimal || style == QTextListFormat::ListLowerAlpha ||
        style == QTextListFormat::ListUpperAlpha || style == QTextListFormat::ListLowerRoman ||
        style == QTextListFormat::ListUpperRoman || f.hasProperty(kNumberedByHand);
    return ordered && f.indent() <= 1;
}

}  // namespace

bool applyOrderedItemNumbers(QTextDocument* document, const QList<int>& numbers) {
    if (!document || numbers.isEmpty()) return false;
    // The top-level ordered lists, in document order.
    QList<QTextList*> lists;
    for (QTextBlock b = document->begin(); b.isValid(); b = b.next()) {
        QTextList* list = b.textList();
        if (isTopLevelOrdered(list) && !lists.contains(list)) lists << list;
    }
    qsizetype next = 0;  // the source number of the list's first item
    bool changed = false;
    for (QTextList* list : lists) {
        const int count = list->count();
        if (next + count > numbers.size()) break;  // the source does not match
        bool same = true;
        for (int i = 0; i < count; ++i) same = same && numbers[next + i] == i + 1;
        if (same || list->format().hasProperty(kNumberedByHand)) {
            next += count;
            continue;
        }
        // Qt draws no marker for an undefined style but keeps the indent:
        // the number goes into the text, hanging left of it.
        QList<QTextBlock> items;
        for (int i = 0; i < count; ++i) items << list->item(i);
        QTextListFormat format = list->format();
        format.setStyle(QTextListFormat::ListStyleUndefined);
        format.setProperty(kNumberedByHand, true);
        list->setFormat(format);
        QTextCursor cursor(document);
        cursor.beginEditBlock();
        for (int i = 0; i < count; ++i) {
            const QString label = QStringLiteral("%1. ").arg(numbers[next + i]);
            cursor.setPosition(items[i].position());
            QTextBlockFormat block = items[i].blockFormat();
            const QFontMetricsF metrics(items[i].charFormat().font());
            block.setTextIndent(-metrics.horizontalAdvance(label));
            cursor.setBlockFormat(block);
            cursor.insertText(label);
        }
        cursor.endEditBlock();
        next += count;
        changed = true;
    }
    return changed;
}

void ListNumbering::setDocument(QQuickTextDocument* document) {
    if (document_ == document) return;
    if (document_ && document_->textDocument())
        disconnect(document_->textDocument(), nullptr, this, nullptr);
    document_ = document;
    // The TextEdit rebuilds the document when its text changes.
    if (document_ && document_->textDocument())
        connect(document_->textDocument(), &QTextDocument::contentsChanged, this,
                &ListNumbering::update, Qt::QueuedConnection);
    emit changed();
    update();
}

void ListNumbering::setMarkdown(const QString& markdown) {
    if (markdown_ == markdown) return;
    markdown_ = markdown;
    emit changed();
    update();
}

void ListNumbering::update() {
    if (updating_ || !document_ || !document_->textDocument()) return;
    updating_ = true;
    applyOrderedItemNumbers(document_->textDocument(), orderedItemNumbers(markdown_));
    updating_ = false;
}

}  // namespace powerinfer::app
