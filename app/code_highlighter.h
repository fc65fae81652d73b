// Syntax colouring for a reply's code blocks: keywords, strings, comments
// and numbers of the common languages (C/C++, Python, JavaScript/TypeScript,
// Rust, Go, Java/Kotlin/C#, shell, SQL, JSON), by the fence's language name;
// an unknown language gets strings and numbers only. Attached to a
// TextEdit's textDocument from QML; colours come from the theme.
#pragma once

#include <qqmlintegration.h>

#include <QColor>
#include <QObject>
#include <QPointer>
#include <QQuickTextDocument>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextBlock>
#include <QTextLayout>
#include <QVector>

namespace powerinfer::app {

// The rules for one language (exposed for tests).
struct HighlightRules {
    QRegularExpression keywords;  // whole words (invalid: none)
    QString lineComment;          // "//", "#", "--" or empty
    bool blockComments = false;   // /* ... */
    bool singleQuoteStrings = true;
    bool known = false;  // a language this highlighter knows
    static HighlightRules forLanguage(const QString& language);
};

class CodeSyntaxHighlighter : public QSyntaxHighlighter {
public:
    enum Kind { Plain, Keyword, String, Comment, Number };
    CodeSyntaxHighlighter(QTextDocument* document, HighlightRules rules);
    void setColors(const QColor& keyword, const QColor& string, const QColor& comment,
                   const QColor& number);
    void setRules(HighlightRules rules);
    // The kind of the character at `position` of the document (Plain if none).
    Kind kindAt(int position) const;

protected:
    void highlightBlock(const QString& text) override;

private:
    void mark(int start, int length, Kind kind);
    HighlightRules rules_;
    QColor colors_[5];
};

class CodeHighlighter : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QQuickTextDocument* document READ document WRITE setDocument NOTIFY changed)
    Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY changed)
    Q_PROPERTY(QColor keywordColor READ keywordColor WRITE setKeywordColor NOTIFY changed)
    Q_PROPERTY(QColor stringColor READ stringColor WRITE setStringColor NOTIFY changed)
    Q_PROPERTY(QColor commentColor READ commentColor WRITE setCommentColor NOTIFY changed)
    Q_PROPERTY(QColor numberColor READ numberColor WRITE setNumberColor NOTIFY changed)
    // Whether the language is one the highlighter knows (keywords, comments).
    Q_PROPERTY(bool knownLanguage READ knownLanguage NOTIFY changed)
public:
    using QObject::QObject;
    QQuickTextDocument* document() const { return document_; }
    void setDocument(QQuickTextDocument* document);
    QString language() const { return language_; }
    void setLanguage(const QString& language);
    QColor keywordColor() const { return keywordColor_; }
    void setKeywordColor(const QColor& c);
    QColor stringColor() const { return stringColor_; }
    void setStringColor(const QColor& c);
    QColor commentColor() const { return commentColor_; }
    void setCommentColor(const QColor& c);
    QColor numberColor() const { return numberColor_; }
    void setNumberColor(const QColor& c);
    bool knownLanguage() const { return HighlightRules::forLanguage(language_).known; }
    // "keyword", "string", "comment", "number" or "" for the character at
    // `position` of the document (tests and accessibility).
    Q_INVOKABLE QString kindAt(int position) const;

signals:
    void changed();

private:
    void update();
    QPointer<QQuickTextDocument> document_;
    QString language_;
    QColor keywordColor_, stringColor_, commentColor_, numberColor_;
    QPointer<CodeSyntaxHighlighter> highlighter_;  // owned by the document
};

}  // namespace powerinfer::app
