// Ordered-list numbers as the Markdown wrote them. Qt 6.4's Markdown import
// has no list start (QTextListFormat::start came in 6.6): "2. Second step"
// after a paragraph, a segment of its own, rendered as "1.", and every item
// of a list with paragraphs between its items read "1.". Attached to a
// prose TextEdit's textDocument from QML, this numbers the items of a list
// that does not start at 1 with their own numbers, hanging in the margin
// where Qt draws its markers.
#pragma once

#include <qqmlintegration.h>

#include <QList>
#include <QObject>
#include <QPointer>
#include <QQuickTextDocument>

class QTextDocument;

namespace powerinfer::app {

// The numbers of the top-level ordered-list items of a Markdown text, in
// order (CommonMark: "N." or "N)" with up to three spaces before it).
QList<int> orderedItemNumbers(const QString& markdown);
// Gives the document's top-level ordered items the numbers of `numbers`
// (as orderedItemNumbers found them) where Qt numbered them differently;
// returns whether anything changed. Idempotent.
bool applyOrderedItemNumbers(QTextDocument* document, const QList<int>& numbers);

class ListNumbering : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QQuickTextDocument* document READ document WRITE setDocument NOTIFY changed)
    // The Markdown the document was made from (the TextEdit's text).
    Q_PROPERTY(QString markdown READ markdown WRITE setMarkdown NOTIFY changed)
public:
    using QObject::QObject;
    QQuickTextDocument* document() const { return document_; }
    void setDocument(QQuickTextDocument* document);
    QString markdown() const { return markdown_; }
    void setMarkdown(const QString& markdown);

signals:
    void changed();

private:
    void update();
    QPointer<QQuickTextDocument> document_;
    QString markdown_;
    bool updating_ = false;
};

}  // namespace powerinfer::app
