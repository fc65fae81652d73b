#include "code_highlighter.h"

#include <QHash>
#include <QTextDocument>

namespace powerinfer::app {

namespace {

QRegularExpression words(const char* list) {
    const QStringList w = QString::fromLatin1(list).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    return QRegularExpression(QStringLiteral("\\b(?:%1)\\b").arg(w.join(QLatin1Char('|'))));
}

const QRegularExpression& numberPattern() {
    static const QRegularExpression re(QStringLiteral(
        "\\b(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)"
        "[uUlLfF]*\\b"));
    return re;
}

}  // namespace

HighlightRules HighlightRules::forLanguage(const QString& language) {
    const QString l = language.trimmed().toLower();
    HighlightRules r;
    r.known = true;
    if (l == "c" || l == "cpp" || l == "c++" || l == "cc" || l == "cxx" || l == "h" || l == "hpp" ||
        l == "cuda" || l == "objc") {
        r.keywords = words(
            "alignas alignof auto bool break case catch char char8_t char16_t char32_t class "
            "co_await co_return co_yield concept const consteval constexpr constinit const_cast "
            "continue decltype default delete do double dynamic_cast else enum explicit export "
            "extern false float for friend goto if inline int long mutable namespace new "
            "noexcept nullptr operator override private protected public register "
            "reinterpret_cast requires return short signed sizeof static static_assert "
            "static_cast struct switch template this thread_local throw true try typedef typeid "
            "typename union unsigned using virtual void volatile wchar_t while final "
            "size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std");
        r.lineComment = QStringLiteral("//");
        r.blockComments = true;
    } else if (l == "python" || l == "py" || l == "python3") {
        r.keywords = words(
            "False None True and as assert async await break class continue def del elif else "
            "except finally for from global if import in is lambda nonlocal not or pass raise "
            "return try while with yield self print len range");
        r.lineComment = QStringLiteral("#");
    } else if (l == "javascript" || l == "js" || l == "typescript" || l == "ts" || l == "jsx" ||
               l == "tsx" || l == "node") {
        r.keywords = words(
            "async await break case catch class const continue debugger default delete do else "
            "export extends false finally for from function if import in instanceof let new "
            "null of return static super switch this throw true try typeof undefined var void "
            "while with yield interface type enum implements private public readonly");
        r.lineComment = QStringLiteral("//");
        r.blockComments = true;
    } else if (l == "rust" || l == "rs") {
        r.keywords = words(
            "as async await break const continue crate dyn else enum extern false fn for if impl "
            "in let loop match mod move mut pub ref return self Self static struct super trait "
            "true type unsafe use where while i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 "
            "usize f32 f64 bool char str String Vec Option Some None Result Ok Err");
        r.lineComment = QStringLiteral("//");
        r.blockComments = true;
        r.singleQuoteStrings = false;  // lifetimes: 'a
    } else if (l == "go" || l == "golang") {
        r.keywords = words(
            "break case chan const continue default defer else fallthrough for func go goto if "
            "import interface map package range return select struct switch type var nil true "
            "false int int64 int32 uint string bool byte rune error float64 float32");
        r.lineComment = QStringLiteral("//");
        r.blockComments = true;
    } else if (l == "java" || l == "kotlin" || l == "kt" || l == "cs" || l == "csharp" ||
               l == "c#" || l == "swift" || l == "scala") {
        r.keywords = words(
            "abstract as boolean break byte case catch char class const continue default do "
            "double else enum extends final finally float for fun if implements import in "
            "instanceof int interface internal is let long namespace new null object override "
            "package private protected public return sealed short static string super switch "
            "this throw throws true false try using val var void volatile when while");
        r.lineComment = QStringLiteral("//");
        r.blockComments = true;
    } else if (l == "bash" || l == "sh" || l == "shell" || l == "zsh" || l == "console" ||
               l == "shell-session") {
        r.keywords = words(
            "if then else elif fi case esac for while until do done in function return local "
            "export readonly set unset echo exit source cd sudo apt pip git cmake make");
        r.lineComment = QStringLiteral("#");
    } else if (l == "sql" || l == "sqlite" || l == "postgres" || l == "mysql") {
        r.keywords = QRegularExpression(
            QStringLiteral("\\b(?:select|from|where|insert|into|values|update|set|delete|create|"
                           "table|index|view|drop|alter|join|left|right|inner|outer|on|group|"
                           "by|order|having|limit|offset|and|or|not|null|is|in|as|distinct|"
                           "union|primary|key|foreign|references|default|integer|text|real|"
                           "blob|begin|commit|rollback|with|case|when|then|else|end)\\b"),
            QRegularExpression::CaseInsensitiveOption);
        r.lineComment = QStringLiteral("--");
        r.blockComments = true;
    } else if (l == "json" || l == "jsonc") {
        r.keywords = words("true false null");
        r.singleQuoteStrings = false;
    } else {
        r.known = false;
    }
    return r;
}

CodeSyntaxHighlighter::CodeSyntaxHighlighter(QTextDocument* document, HighlightRules rules)
    : QSyntaxHighlighter(document), rules_(std::move(rules)) {}

void CodeSyntaxHighlighter::setColors(const QColor& keyword, const QColor& string,
                                      const QColor& comment, const QColor& number) {
    colors_[Keyword] = keyword;
    colors_[String] = string;
    colors_[Comment] = comment;
    colors_[Number] = number;
    rehighlight();
}

void CodeSyntaxHighlighter::setRules(HighlightRules rules) {
    rules_ = std::move(rules);
    rehighlight();
}

void CodeSyntaxHighlighter::mark(int start, int length, Kind kind) {
    QTextCharFormat f;
    if (colors_[kind].isValid()) f.setForeground(colors_[kind]);
    if (kind == Comment) f.setFontItalic(true);
    f.setProperty(QTextFormat::UserProperty, int(kind));
    setFormat(start, length, f);
}

void CodeSyntaxHighlighter::highlightBlock(const QString& text) {
    // One pass left to right: comments and strings hide what they contain;
    // keywords and numbers are matched in the code between them.
    const int n = int(text.size());
    QVector<bool> taken(n, false);
    const auto take = [&](int start, int length, Kind kind) {
        mark(start, length, kind);
        for (int k = start; k < start + length && k < n; ++k) taken[k] = true;
    };
    int i = 0;
    setCurrentBlockState(0);
    if (rules_.blockComments && previousBlockState() == 1) {
        const int end = int(text.indexOf(QLatin1String("*/")));
        if (end < 0) {
            take(0, n, Comment);
            setCurrentBlockState(1);
            return;
        }
        take(0, end + 2, Comment);
        i = end + 2;
    }
    while (i < n) {
        const QChar c = text[i];
        if (!rules_.lineComment.isEmpty() &&
            QStringView(text).mid(i).startsWith(rules_.lineComment)) {
            take(i, n - i, Comment);
            break;
        }
        if (rules_.blockComments && QStringView(text).mid(i).startsWith(QLatin1String("/*"))) {
            const int end = int(text.indexOf(QLatin1String("*/"), i + 2));
            if (end < 0) {
                take(i, n - i, Comment);
                setCurrentBlockState(1);
                break;
            }
            take(i, end + 2 - i, Comment);
            i = end + 2;
            continue;
        }
        if (c == QLatin1Char('"') || c == QLatin1Char('`') ||
            (c == QLatin1Char('\'') && rules_.singleQuoteStrings)) {
            int j = i + 1;
            while (j < n && text[j] != c) j += text[j] == QLatin1Char('\\') ? 2 : 1;
            const int end = std::min(n, j + 1);
            take(i, end - i, String);
            i = end;
            continue;
        }
        ++i;
    }
    const auto matchOutside = [&](const QRegularExpression& re, Kind kind) {
        if (!re.isValid() || re.pattern().isEmpty()) return;
        for (auto it = re.globalMatch(text); it.hasNext();) {
            const auto m = it.next();
            const int s = int(m.capturedStart());
            if (s < n && !taken[s]) mark(s, int(m.capturedLength()), kind);
        }
    };
    if (rules_.known) matchOutside(rules_.keywords, Keyword);
    matchOutside(numberPattern(), Number);
}

CodeSyntaxHighlighter::Kind CodeSyntaxHighlighter::kindAt(int position) const {
    const QTextBlock block = document()->findBlock(position);
    if (!block.isValid()) return Plain;
    const int offset = position - block.position();
    for (const QTextLayout::FormatRange& r : block.layout()->formats())
        if (offset >= r.start && offset < r.start + r.length)
            return Kind(r.format.property(QTextFormat::UserProperty).toInt());
    return Plain;
}

void CodeHighlighter::setDocument(QQuickTextDocument* document) {
    if (document_ == document) return;
    delete highlighter_.data();
    document_ = document;
    update();
    emit changed();
}

void CodeHighlighter::setLanguage(const QString& language) {
    if (language_ == language) return;
    language_ = language;
    if (highlighter_) highlighter_->setRules(HighlightRules::forLanguage(language_));
    emit changed();
}

void CodeHighlighter::setKeywordColor(const QColor& c) {
    keywordColor_ = c;
    update();
    emit changed();
}
void CodeHighlighter::setStringColor(const QColor& c) {
    stringColor_ = c;
    update();
    emit changed();
}
void CodeHighlighter::setCommentColor(const QColor& c) {
    commentColor_ = c;
    update();
    emit changed();
}
void CodeHighlighter::setNumberColor(const QColor& c) {
    numberColor_ = c;
    update();
    emit changed();
}

void CodeHighlighter::update() {
    if (!document_ || !document_->textDocument()) return;
    if (!highlighter_)
        highlighter_ = new CodeSyntaxHighlighter(document_->textDocument(),
                                                 HighlightRules::forLanguage(language_));
    highlighter_->setColors(keywordColor_, stringColor_, commentColor_, numberColor_);
}

QString CodeHighlighter::kindAt(int position) const {
    if (!highlighter_) return {};
    switch (highlighter_->kindAt(position)) {
        case CodeSyntaxHighlighter::Keyword:
            return QStringLiteral("keyword");
        case CodeSyntaxHighlighter::String:
            return QStringLiteral("string");
        case CodeSyntaxHighlighter::Comment:
            return QStringLiteral("comment");
        case CodeSyntaxHighlighter::Number:
            return QStringLiteral("number");
        case CodeSyntaxHighlighter::Plain:
            break;
    }
    return {};
}

}  // namespace powerinfer::app
