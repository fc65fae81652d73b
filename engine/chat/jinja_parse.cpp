// Long (about 1,400 lines): a line-by-line port of two jinja2 modules;
// keeping their order makes it checkable against them.
// Lexer and parser: a port of jinja2's lexer.py and parser.py (3.1) with
// trim_blocks and lstrip_blocks on, so that whitespace comes out the same.
#include <algorithm>
#include <charconv>
#include <cmath>

#include "chat/jinja_internal.h"

namespace powerinfer::jinja {
namespace {

enum class Tok : uint8_t {
    Data,
    VarBegin,
    VarEnd,
    BlockBegin,
    BlockEnd,
    Name,
    String,
    Integer,
    Float,
    Op,
    Eof,
};

struct Token {
    Tok type;
    size_t pos;        // byte offset in the normalized source
    std::string text;  // data, name, operator, or the string's value
    Value number;      // Integer, Float
};

// Line and column (1-based, in code points) of a byte offset.
class Locator {
public:
    explicit Locator(std::string_view s) : s_(s) {
        starts_.push_back(0);
        for (size_t i = 0; i < s.size(); ++i)
            if (s[i] == '\n') starts_.push_back(i + 1);
    }
    std::pair<int, int> at(size_t pos) const {
        pos = std::min(pos, s_.size());
        const auto it = std::upper_bound(starts_.begin(), starts_.end(), pos) - 1;
        const size_t start = *it;
        return {static_cast<int>(it - starts_.begin()) + 1,
                static_cast<int>(utf8::length(s_.substr(start, pos - start))) + 1};
    }

private:
    std::string_view s_;
    std::vector<size_t> starts_;
};

bool space_at(std::string_view s, size_t i, size_t* len) {
    size_t j = i;
    const char32_t c = utf8::next(s, j);
    if (!utf8::is_space(c)) return false;
    *len = j - i;
    return true;
}

size_t skip_spaces(std::string_view s, size_t i) {
    size_t len = 0;
    while (i < s.size() && space_at(s, i, &len)) i += len;
    return i;
}

// Python's str.rstrip() (Unicode whitespace).
std::string_view rstrip(std::string_view s) {
    const auto offs = utf8::offsets(s);
    size_t end = offs.size() - 1;
    while (end > 0) {
        size_t j = offs[end - 1];
        if (!utf8::is_space(utf8::next(s, j))) break;
        --end;
    }
    return s.substr(0, offs[end]);
}

bool all_space(std::string_view s) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size();) {
        if (!utf8::is_space(utf8::next(s, i))) return false;
    }
    return true;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Lexer {
public:
    Lexer(std::string_view src, const Locator& loc) : s_(src), loc_(loc) {}

    std::vector<Token> run() {
        size_t pos = 0;
        while (pos < s_.size()) {
            const size_t tag = find_tag(pos);
            if (tag == std::string_view::npos) {
                data(pos, s_.substr(pos));
                break;
            }
            const char kind = s_[tag + 1];
            const char sign =
                tag + 2 < s_.size() && (s_[tag + 2] == '-' || s_[tag + 2] == '+') ? s_[tag + 2] : 0;
            size_t raw_end = 0;
            const bool raw = kind == '%' && raw_begin(tag, &raw_end);
            data(pos, strip_before(s_.substr(pos, tag - pos), sign, kind != '{'));
            line_starting_ = false;
            if (raw) {
                pos = lex_raw(raw_end);
            } else if (kind == '#') {
                pos = lex_comment(tag + 2 + (sign ? 1 : 0), tag);
            } else {
                tokens_.push_back({kind == '{' ? Tok::VarBegin : Tok::BlockBegin, tag, {}, {}});
                pos = lex_tag(tag + 2 + (sign ? 1 : 0), kind == '%');
            }
        }
        tokens_.push_back({Tok::Eof, s_.size(), {}, {}});
        return std::move(tokens_);
    }

private:
    [[noreturn]] void fail(size_t pos, const std::string& message) const {
        const auto [line, col] = loc_.at(pos);
        throw TemplateError(message, line, col);
    }

    size_t find_tag(size_t from) const {
        for (size_t i = s_.find('{', from); i != std::string_view::npos; i = s_.find('{', i + 1)) {
            if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#'))
                return i;
        }
        return std::string_view::npos;
    }

    void data(size_t pos, std::string_view text) {
        if (!text.empty()) tokens_.push_back({Tok::Data, pos, std::string(text), {}});
    }

    // jinja2's OptionalLStrip: "-" strips all whitespace before the tag;
    // lstrip_blocks strips spaces and tabs from the start of the line before
    // a block or comment tag (not before {{ }}, not with "+").
    std::string_view strip_before(std::string_view text, char sign, bool lstrip) const {
        if (sign == '-') return rstrip(text);
        if (sign != '+' && lstrip) {
            const size_t nl = text.rfind('\n');
            const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
            if ((l_pos > 0 || line_starting_) && all_space(text.substr(l_pos)))
                return text.substr(0, l_pos);
        }
        return text;
    }

    // {%[-+]? raw [-]?%} at `tag`; sets *end past it.
    bool raw_begin(size_t tag, size_t* end) const {
        size_t i = tag + 2;
        if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) ++i;
        i = skip_spaces(s_, i);
        if (s_.substr(i, 3) != "raw") return false;
        i = skip_spaces(s_, i + 3);
        if (s_.substr(i, 3) == "-%}") {
            *end = skip_spaces(s_, i + 3);
            return true;
        }
        if (s_.substr(i, 2) == "%}") {
            *end = i + 2;
            return true;
        }
        return false;
    }

    // Block end at i (trim_blocks: one newline after %} goes); returns the
    // position after it, or npos.
    size_t end_block(size_t i, const char* close) const {
        const std::string_view c(close);
        if (i < s_.size() && s_[i] == '+' && s_.substr(i + 1, c.size()) == c)
            return i + 1 + c.size();
        if (i < s_.size() && s_[i] == '-' && s_.substr(i + 1, c.size()) == c)
            return skip_spaces(s_, i + 1 + c.size());
        if (s_.substr(i, c.size()) == c) {
            size_t j = i + c.size();
            if (j < s_.size() && s_[j] == '\n') ++j;
            return j;
        }
        return std::string_view::npos;
    }

    size_t lex_raw(size_t from) {
        line_starting_ = from > 0 && s_[from - 1] == '\n';
        for (size_t j = s_.find("{%", from); j != std::string_view::npos;
             j = s_.find("{%", j + 1)) {
            size_t i = j + 2;
            char sign = 0;
            if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) sign = s_[i++];
            i = skip_spaces(s_, i);
            if (s_.substr(i, 6) != "endraw") continue;
            i = skip_spaces(s_, i + 6);
            const size_t end = end_block(i, "%}");
            if (end == std::string_view::npos) continue;
            data(from, strip_before(s_.substr(from, j - from), sign, true));
            line_starting_ = s_[end - 1] == '\n';
            return end;
        }
        fail(from, "Missing end of raw directive");
    }

    size_t lex_comment(size_t from, size_t tag) {
        for (size_t p = from; p < s_.size(); ++p) {
            if (s_[p] == '+' && s_.substr(p + 1, 2) == "#}") return done(p + 3);
            if (s_[p] == '-' && s_.substr(p + 1, 2) == "#}") return done(skip_spaces(s_, p + 3));
            if (s_.substr(p, 2) == "#}") {
                size_t j = p + 2;
                if (j < s_.size() && s_[j] == '\n') ++j;
                return done(j);
            }
        }
        fail(tag, "Missing end of comment tag");
    }

    size_t done(size_t end) {
        line_starting_ = end > 0 && s_[end - 1] == '\n';
        return end;
    }

    size_t lex_tag(size_t i, bool block) {
        std::vector<char> balance;
        while (true) {
            if (i >= s_.size()) return i;  // the parser reports the missing end
            if (balance.empty()) {
                if (block) {
                    const size_t end = end_block(i, "%}");
                    if (end != std::string_view::npos) {
                        tokens_.push_back({Tok::BlockEnd, i, {}, {}});
                        return done(end);
                    }
                } else if (s_[i] == '-' && s_.substr(i + 1, 2) == "}}") {
                    // "-}}" strips what follows; "}}" keeps it (no trim_blocks here).
                    tokens_.push_back({Tok::VarEnd, i, {}, {}});
                    return done(skip_spaces(s_, i + 3));
                } else if (s_.substr(i, 2) == "}}") {
                    tokens_.push_back({Tok::VarEnd, i, {}, {}});
                    return done(i + 2);
                }
            }
            size_t len = 0;
            if (space_at(s_, i, &len)) {
                i = skip_spaces(s_, i);
                continue;
            }
            const char c = s_[i];
            if (is_digit(c)) {
                i = number(i);
                continue;
            }
            if (is_name_start(c)) {
                size_t j = i;
                while (j < s_.size() && is_name_char(s_[j])) ++j;
                tokens_.push_back({Tok::Name, i, std::string(s_.substr(i, j - i)), {}});
                i = j;
                continue;
            }
            if (c == '\'' || c == '"') {
                i = string(i);
                continue;
            }
            static const char* kOps2[] = {"//", "**", "==", "!=", ">=", "<="};
            bool matched = false;
            for (const char* op : kOps2) {
                if (s_.substr(i, 2) == op) {
                    tokens_.push_back({Tok::Op, i, op, {}});
                    i += 2;
                    matched = true;
                    break;
                }
            }
            if (matched) continue;
            if (std::string_view("+-/*%~[](){}=.:|,;<>").find(c) == std::string_view::npos) {
                size_t j = i;
                const char32_t cp = utf8::next(s_, j);
                std::string shown;
                utf8::append(shown, cp);
                fail(i, "unexpected char '" + shown + "'");
            }
            if (c == '(' || c == '[' || c == '{') {
                balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
            } else if (c == ')' || c == ']' || c == '}') {
                if (balance.empty()) fail(i, std::string("unexpected '") + c + "'");
                const char want = balance.back();
                balance.pop_back();
                if (want != c)
                    fail(i, std::string("unexpected '") + c + "', expected '" + want + "'");
            }
            tokens_.push_back({Tok::Op, i, std::string(1, c), {}});
            ++i;
        }
    }

    // Digits with optional "_" separators, as jinja2's integer_re/float_re.
    size_t digits(size_t i) const {
        if (i >= s_.size() || !is_digit(s_[i])) return std::string_view::npos;
        while (i < s_.size()) {
            if (is_digit(s_[i])) {
                ++i;
            } else if (s_[i] == '_' && i + 1 < s_.size() && is_digit(s_[i + 1])) {
                i += 2;
            } else {
                break;
            }
        }
        return i;
    }

    size_t number(size_t i) {
        const bool after_dot = i > 0 && s_[i - 1] == '.';
        // Float: digits ((. digits)? e[+-]digits | . digits)
        if (!after_dot) {
            size_t j = digits(i);
            size_t end = std::string_view::npos;
            size_t k = j;
            if (k < s_.size() && s_[k] == '.') {
                const size_t f = digits(k + 1);
                if (f != std::string_view::npos) {
                    k = f;
                    end = f;
                }
            }
            if (k < s_.size() && (s_[k] == 'e' || s_[k] == 'E')) {
                size_t e = k + 1;
                if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
                const size_t x = digits(e);
                if (x != std::string_view::npos) end = x;
            }
            if (end != std::string_view::npos) {
                std::string text;
                for (char c : s_.substr(i, end - i))
                    if (c != '_') text += c;
                double d = 0;
                const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
                if (r.ec == std::errc::result_out_of_range) {
                    d = text.find("e-") != std::string::npos || text.find("E-") != std::string::npos
                            ? 0.0
                            : HUGE_VAL;
                }
                tokens_.push_back({Tok::Float, i, {}, Value(d)});
                return end;
            }
        }
        // Integer: 0b/0o/0x, [1-9](_?\d)*, 0(_?0)*
        int base = 10;
        size_t j = i;
        std::string text;
        if (s_[i] == '0' && i + 1 < s_.size() &&
            std::string_view("bBoOxX").find(s_[i + 1]) != std::string_view::npos) {
            const char b = static_cast<char>(s_[i + 1] | 0x20);
            base = b == 'b' ? 2 : b == 'o' ? 8 : 16;
            auto ok = [&](char c) {
                if (base == 2) return c == '0' || c == '1';
                if (base == 8) return c >= '0' && c <= '7';
                return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
            };
            size_t k = i + 2;
            while (k < s_.size()) {
                if (ok(s_[k])) {
                    text += s_[k++];
                } else if (s_[k] == '_' && k + 1 < s_.size() && ok(s_[k + 1])) {
                    ++k;
                } else {
                    break;
                }
            }
            if (text.empty()) {
                j = i + 1;  // just "0"; the letter lexes as a name
                text = "0";
                base = 10;
            } else {
                j = k;
            }
        } else if (s_[i] == '0') {
            j = i + 1;
            while (j < s_.size()) {
                if (s_[j] == '0') {
                    ++j;
                } else if (s_[j] == '_' && j + 1 < s_.size() && s_[j + 1] == '0') {
                    j += 2;
                } else {
                    break;
                }
            }
            text = "0";
        } else {
            j = digits(i);
            for (char c : s_.substr(i, j - i))
                if (c != '_') text += c;
        }
        int64_t v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v, base);
        if (r.ec != std::errc()) fail(i, "integer literal too large");
        tokens_.push_back({Tok::Integer, i, {}, Value(v)});
        return j;
    }

    size_t string(size_t i) {
        const char q = s_[i];
        size_t j = i + 1;
        while (j < s_.size() && s_[j] != q) {
            if (s_[j] == '\\') ++j;
            ++j;
        }
        if (j >= s_.size()) fail(i, std::string("unexpected char '") + q + "'");
        tokens_.push_back({Tok::String, i, unescape(s_.substr(i + 1, j - i - 1), i), {}});
        return j + 1;
    }

    // Python's unicode-escape decoding of a string literal's body.
    std::string unescape(std::string_view s, size_t at) const {
        std::string out;
        for (size_t i = 0; i < s.size();) {
            if (s[i] != '\\' || i + 1 >= s.size()) {
                out += s[i++];
                continue;
            }
            const char e = s[i + 1];
            i += 2;
            auto hex = [&](int n) {
                uint32_t v = 0;
                for (int k = 0; k < n; ++k, ++i) {
                    if (i >= s.size()) fail(at, "truncated escape sequence");
                    const char h = s[i];
                    v <<= 4;
                    if (is_digit(h))
                        v |= static_cast<uint32_t>(h - '0');
                    else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
                        v |= static_cast<uint32_t>((h | 0x20) - 'a' + 10);
                    else
                        fail(at, "truncated escape sequence");
                }
                return v;
            };
            switch (e) {
                case '\n':
                    break;
                case '\\':
                case '\'':
                case '"':
                    out += e;
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case 'x':
                    utf8::append(out, hex(2));
                    break;
                case 'u':
                case 'U': {
                    const uint32_t cp = hex(e == 'u' ? 4 : 8);
                    if (cp > 0x10FFFF) fail(at, "illegal Unicode character");
                    utf8::append(out, cp);
                    break;
                }
                case 'N':
                    fail(at, "\\N{...} escapes are not supported");
                default:
                    if (e >= '0' && e <= '7') {
                        uint32_t v = static_cast<uint32_t>(e - '0');
                        for (int k = 0; k < 2 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++k)
                            v = v * 8 + static_cast<uint32_t>(s[i++] - '0');
                        utf8::append(out, v);
                    } else {
                        out += '\\';  // unknown escapes stay as they are
                        out += e;
                    }
            }
        }
        return out;
    }

    std::string_view s_;
    const Locator& loc_;
    std::vector<Token> tokens_;
    bool line_starting_ = true;
};

// --- parser -----------------------------------------------------------------

class Parser {
public:
    Parser(std::vector<Token> tokens, const Locator& loc) : t_(std::move(tokens)), loc_(loc) {}

    std::unique_ptr<Program> run() {
        auto p = std::make_unique<Program>();
        p->body = subparse({});
        return p;
    }

private:
    struct Guard {
        explicit Guard(Parser& p) : p_(p) {
            if (++p_.nesting_ > 2 * kMaxParseDepth)
                p_.fail("the template nests too deeply (at most " + std::to_string(kMaxParseDepth) +
                        " levels)");
        }
        ~Guard() { --p_.nesting_; }
        Parser& p_;
    };

    const Token& cur() const { return t_[i_]; }
    const Token& look() const { return t_[std::min(i_ + 1, t_.size() - 1)]; }
    const Token& next() {
        const Token& t = t_[i_];
        if (i_ + 1 < t_.size()) ++i_;
        return t;
    }

    bool is_op(const Token& t, std::string_view op) const {
        return t.type == Tok::Op && t.text == op;
    }
    bool is_name(const Token& t, std::string_view name) const {
        return t.type == Tok::Name && t.text == name;
    }
    bool skip_op(std::string_view op) {
        if (!is_op(cur(), op)) return false;
        next();
        return true;
    }
    bool skip_name(std::string_view name) {
        if (!is_name(cur(), name)) return false;
        next();
        return true;
    }

    static std::string describe(const Token& t) {
        switch (t.type) {
            case Tok::Data:
                return "template data";
            case Tok::VarBegin:
                return "begin of print statement";
            case Tok::VarEnd:
                return "end of print statement";
            case Tok::BlockBegin:
                return "begin of statement block";
            case Tok::BlockEnd:
                return "end of statement block";
            case Tok::Name:
            case Tok::Op:
                return t.text;
            case Tok::String:
                return "string";
            case Tok::Integer:
                return "integer";
            case Tok::Float:
                return "float";
            case Tok::Eof:
                return "end of template";
        }
        return "?";
    }

    [[noreturn]] void fail_at(const Token& t, const std::string& message) const {
        const auto [line, col] = loc_.at(t.pos);
        throw TemplateError(message, line, col);
    }
    [[noreturn]] void fail(const std::string& message) const { fail_at(cur(), message); }

    void expect_op(std::string_view op) {
        if (!is_op(cur(), op))
            fail("expected token '" + std::string(op) + "', got '" + describe(cur()) + "'");
        next();
    }
    void expect(Tok type, const char* what) {
        if (cur().type != type) {
            if (cur().type == Tok::Eof)
                fail(std::string("unexpected end of template, expected ") + what);
            fail(std::string("expected token '") + what + "', got '" + describe(cur()) + "'");
        }
        next();
    }
    std::string expect_name() {
        if (cur().type != Tok::Name) fail("expected token 'name', got '" + describe(cur()) + "'");
        return next().text;
    }

    NodePtr node(NodeType type, const Token& at) {
        auto n = std::make_unique<Node>();
        n->type = type;
        const auto [line, col] = loc_.at(at.pos);
        n->line = line;
        n->column = col;
        return n;
    }

    // Computes the subtree depth and refuses trees deeper than the limit.
    NodePtr done(NodePtr n) {
        int d = 0;
        auto see = [&](const NodePtr& k) {
            if (k) d = std::max(d, k->depth);
        };
        for (const auto& k : n->kids) see(k);
        for (const auto& k : n->call.args) see(k);
        for (const auto& [name, k] : n->call.kwargs) see(k);
        see(n->call.star);
        see(n->call.starstar);
        see(n->target);
        for (const auto& k : n->targets) see(k);
        for (const auto& k : n->body) see(k);
        for (const auto& k : n->else_body) see(k);
        for (const auto& b : n->branches)
            for (const auto& k : b) see(k);
        for (const auto& k : n->defaults) see(k);
        n->depth = d + 1;
        if (n->depth > kMaxParseDepth) {
            throw TemplateError("the template nests too deeply (at most " +
                                    std::to_string(kMaxParseDepth) + " levels)",
                                n->line, n->column);
        }
        return n;
    }

    static bool literal(const Node* n) {
        if (!n) return true;
        switch (n->type) {
            case NodeType::Const:
                return true;
            case NodeType::List:
            case NodeType::Tuple:
            case NodeType::Dict:
            case NodeType::Neg:
            case NodeType::Pos:
            case NodeType::Slice:
                for (const auto& k : n->kids)
                    if (!literal(k.get())) return false;
                return true;
            default:
                return false;
        }
    }

    static void mark_folded_slices(Node& n) {
        for (auto& k : n.kids)
            if (k) mark_folded_slices(*k);
        for (auto& k : n.call.args) mark_folded_slices(*k);
        for (auto& [name, k] : n.call.kwargs) mark_folded_slices(*k);
        if (n.type == NodeType::Getitem && n.kids[1]->type == NodeType::Slice &&
            literal(n.kids[0].get()) && literal(n.kids[1].get()))
            n.folded_slice = true;
    }

    // --- statements ---

    std::vector<NodePtr> subparse(const std::vector<std::string_view>& end_tokens) {
        Guard g(*this);
        std::vector<NodePtr> body;
        while (cur().type != Tok::Eof) {
            const Token& t = cur();
            if (t.type == Tok::Data) {
                auto n = node(NodeType::Data, t);
                n->value = Value(t.text);
                body.push_back(done(std::move(n)));
                next();
            } else if (t.type == Tok::VarBegin) {
                next();
                auto n = node(NodeType::Output, cur());
                n->kids.push_back(parse_tuple(false, true, {}, false));
                mark_folded_slices(*n->kids[0]);
                expect(Tok::VarEnd, "end of print statement");
                body.push_back(done(std::move(n)));
            } else if (t.type == Tok::BlockBegin) {
                next();
                if (cur().type == Tok::Name &&
                    std::find(end_tokens.begin(), end_tokens.end(), cur().text) != end_tokens.end())
                    return body;
                auto stmts = parse_statement();
                for (auto& s : stmts) body.push_back(std::move(s));
                expect(Tok::BlockEnd, "end of statement block");
            } else {
                fail("unexpected '" + describe(t) + "'");
            }
        }
        if (!end_tokens.empty()) {
            std::string want;
            for (auto e : end_tokens) want += (want.empty() ? "'" : " or '") + std::string(e) + "'";
            fail("unexpected end of template: expected " + want);
        }
        return body;
    }

    // The body up to one of end_tokens (the current token is then that name).
    std::vector<NodePtr> statements(const std::vector<std::string_view>& end_tokens,
                                    bool drop_needle) {
        skip_op(":");
        expect(Tok::BlockEnd, "end of statement block");
        auto body = subparse(end_tokens);
        if (drop_needle) next();
        return body;
    }

    std::vector<NodePtr> parse_statement() {
        const Token& t = cur();
        if (t.type != Tok::Name) fail("tag name expected");
        const std::string& tag = t.text;
        std::vector<NodePtr> out;
        if (tag == "for") {
            out.push_back(parse_for());
        } else if (tag == "if") {
            out.push_back(parse_if());
        } else if (tag == "set") {
            out.push_back(parse_set());
        } else if (tag == "macro") {
            out.push_back(parse_macro());
        } else if (tag == "call") {
            out.push_back(parse_call_block());
        } else if (tag == "filter") {
            auto n = node(NodeType::FilterBlock, next());
            n->kids.push_back(parse_filter(nullptr, true));
            n->body = statements({"endfilter"}, true);
            out.push_back(done(std::move(n)));
        } else if (tag == "break" || tag == "continue") {
            if (loop_depth_ == 0) fail("'" + tag + "' outside of a loop");
            out.push_back(
                done(node(tag == "break" ? NodeType::Break : NodeType::Continue, next())));
        } else if (tag == "with") {
            out.push_back(parse_with());
        } else if (tag == "generation") {
            // transformers' AssistantTracker: the body as it is.
            auto n = node(NodeType::Scope, next());
            n->body = statements({"endgeneration"}, true);
            out.push_back(done(std::move(n)));
        } else if (tag == "print") {
            next();
            while (cur().type != Tok::BlockEnd) {
                if (!out.empty()) expect_op(",");
                auto n = node(NodeType::Output, cur());
                n->kids.push_back(parse_expression(true));
                out.push_back(done(std::move(n)));
            }
        } else if (tag == "include" || tag == "import" || tag == "from" || tag == "extends" ||
                   tag == "block" || tag == "autoescape" || tag == "do") {
            fail("the '" + tag + "' tag is not supported in chat templates");
        } else {
            fail("Encountered unknown tag '" + tag + "'.");
        }
        return out;
    }

    NodePtr parse_for() {
        auto n = node(NodeType::For, next());
        n->target = parse_assign_target(true, false, {"in"}, false);
        if (!skip_name("in")) fail("expected token 'in', got '" + describe(cur()) + "'");
        n->kids.push_back(parse_tuple(false, false, {"recursive"}, false));
        n->kids.push_back(nullptr);
        if (skip_name("if")) n->kids[1] = parse_expression(true);
        if (skip_name("recursive")) fail("recursive loops are not supported");
        ++loop_depth_;
        n->body = statements({"endfor", "else"}, false);
        --loop_depth_;
        if (next().text != "endfor") n->else_body = statements({"endfor"}, true);
        return done(std::move(n));
    }

    NodePtr parse_if() {
        // if/elif/.../else: kids[i] is the test of branches[i].
        auto n = node(NodeType::If, next());
        while (true) {
            n->kids.push_back(parse_tuple(false, false, {}, false));
            n->branches.push_back(statements({"elif", "else", "endif"}, false));
            const std::string& t = next().text;
            if (t == "elif") continue;
            if (t == "else") n->else_body = statements({"endif"}, true);
            break;
        }
        return done(std::move(n));
    }

    NodePtr parse_set() {
        auto n = node(NodeType::Set, next());
        n->target = parse_assign_target(true, false, {}, true);
        if (skip_op("=")) {
            n->kids.push_back(parse_tuple(false, true, {}, false));
            return done(std::move(n));
        }
        n->type = NodeType::SetBlock;
        n->kids.push_back(is_op(cur(), "|") ? parse_filter(nullptr, false) : nullptr);
        n->body = statements({"endset"}, true);
        return done(std::move(n));
    }

    void parse_signature(Node& n) {
        expect_op("(");
        while (!is_op(cur(), ")")) {
            if (!n.params.empty()) expect_op(",");
            n.params.push_back(expect_name());
            if (skip_op("=")) {
                n.defaults.push_back(parse_expression(true));
            } else if (!n.defaults.empty()) {
                fail("non-default argument follows default argument");
            }
        }
        expect_op(")");
    }

    // Whether the body reads varargs, kwargs or caller (jinja2 decides the
    // macro's signature from that).
    static void scan_names(const Node& n, Node& macro) {
        if (n.type == NodeType::Name) {
            if (n.name == "varargs") macro.uses_varargs = true;
            if (n.name == "kwargs") macro.uses_kwargs = true;
            if (n.name == "caller") macro.uses_caller = true;
        }
        auto see = [&](const NodePtr& k) {
            if (k) scan_names(*k, macro);
        };
        for (const auto& k : n.kids) see(k);
        for (const auto& k : n.call.args) see(k);
        for (const auto& [name, k] : n.call.kwargs) see(k);
        see(n.call.star);
        see(n.call.starstar);
        for (const auto& k : n.targets) see(k);
        for (const auto& k : n.body) see(k);
        for (const auto& k : n.else_body) see(k);
        for (const auto& b : n.branches)
            for (const auto& k : b) see(k);
        for (const auto& k : n.defaults) see(k);
    }

    NodePtr parse_macro() {
        auto n = node(NodeType::Macro, next());
        n->name = expect_name();
        parse_signature(*n);
        const int saved = loop_depth_;
        loop_depth_ = 0;
        n->body = statements({"endmacro"}, true);
        loop_depth_ = saved;
        for (const auto& s : n->body) scan_names(*s, *n);
        return done(std::move(n));
    }

    NodePtr parse_call_block() {
        auto n = node(NodeType::CallBlock, next());
        if (is_op(cur(), "(")) parse_signature(*n);
        auto call = parse_expression(true);
        if (call->type != NodeType::Call) fail_at(cur(), "expected call");
        n->kids.push_back(std::move(call));
        const int saved = loop_depth_;
        loop_depth_ = 0;
        n->body = statements({"endcall"}, true);
        loop_depth_ = saved;
        for (const auto& s : n->body) scan_names(*s, *n);
        return done(std::move(n));
    }

    NodePtr parse_with() {
        auto n = node(NodeType::With, next());
        while (cur().type != Tok::BlockEnd) {
            if (!n->targets.empty()) expect_op(",");
            n->targets.push_back(parse_assign_target(true, false, {}, false));
            expect_op("=");
            n->kids.push_back(parse_expression(true));
        }
        n->body = statements({"endwith"}, true);
        return done(std::move(n));
    }

    static bool can_assign(const Node& n) {
        if (n.type == NodeType::Name || n.type == NodeType::NSRef) return true;
        if (n.type == NodeType::Tuple) {
            for (const auto& k : n.kids)
                if (k->type != NodeType::Name && !(k->type == NodeType::Tuple && can_assign(*k)))
                    return false;
            return true;
        }
        return false;
    }

    NodePtr parse_assign_target(bool with_tuple, bool name_only,
                                const std::vector<std::string_view>& extra_end,
                                bool with_namespace) {
        NodePtr target;
        const Token& at = cur();
        if (name_only) {
            target = node(NodeType::Name, at);
            target->name = expect_name();
            return done(std::move(target));
        }
        if (with_tuple) {
            target = parse_tuple(true, true, extra_end, false, with_namespace);
        } else {
            target = parse_primary(with_namespace);
        }
        if (!can_assign(*target)) {
            const char* what = target->type == NodeType::Const ? "const" : "expression";
            fail_at(at, std::string("can't assign to '") + what + "'");
        }
        return target;
    }

    // --- expressions ---

    NodePtr parse_expression(bool with_condexpr) {
        Guard g(*this);
        return with_condexpr ? parse_condexpr() : parse_or();
    }

    NodePtr parse_condexpr() {
        const Token& at = cur();
        NodePtr expr1 = parse_or();
        while (skip_name("if")) {
            auto n = node(NodeType::CondExpr, at);
            NodePtr expr2 = parse_or();
            NodePtr expr3;
            if (skip_name("else")) {
                Guard g(*this);
                expr3 = parse_condexpr();
            }
            n->kids.push_back(std::move(expr2));
            n->kids.push_back(std::move(expr1));
            n->kids.push_back(std::move(expr3));
            expr1 = done(std::move(n));
        }
        return expr1;
    }

    NodePtr parse_or() {
        const Token& at = cur();
        NodePtr left = parse_and();
        while (skip_name("or")) {
            auto n = node(NodeType::Or, at);
            n->kids.push_back(std::move(left));
            n->kids.push_back(parse_and());
            left = done(std::move(n));
        }
        return left;
    }

    NodePtr parse_and() {
        const Token& at = cur();
        NodePtr left = parse_not();
        while (skip_name("and")) {
            auto n = node(NodeType::And, at);
            n->kids.push_back(std::move(left));
            n->kids.push_back(parse_not());
            left = done(std::move(n));
        }
        return left;
    }

    NodePtr parse_not() {
        if (is_name(cur(), "not")) {
            Guard g(*this);
            auto n = node(NodeType::Not, next());
            n->kids.push_back(parse_not());
            return done(std::move(n));
        }
        return parse_compare();
    }

    NodePtr parse_compare() {
        const Token& at = cur();
        NodePtr expr = parse_math1();
        NodePtr n;
        while (true) {
            CmpOp op;
            const Token& t = cur();
            if (is_op(t, "==")) {
                op = CmpOp::Eq;
            } else if (is_op(t, "!=")) {
                op = CmpOp::Ne;
            } else if (is_op(t, "<")) {
                op = CmpOp::Lt;
            } else if (is_op(t, "<=")) {
                op = CmpOp::Le;
            } else if (is_op(t, ">")) {
                op = CmpOp::Gt;
            } else if (is_op(t, ">=")) {
                op = CmpOp::Ge;
            } else if (is_name(t, "in")) {
                op = CmpOp::In;
            } else if (is_name(t, "not") && is_name(look(), "in")) {
                next();
                op = CmpOp::NotIn;
            } else {
                break;
            }
            next();
            if (!n) {
                n = node(NodeType::Compare, at);
                n->kids.push_back(std::move(expr));
            }
            n->ops.push_back(op);
            n->kids.push_back(parse_math1());
        }
        return n ? done(std::move(n)) : std::move(expr);
    }

    NodePtr binary(BinOp op, NodePtr a, NodePtr b, const Token& at) {
        auto n = node(NodeType::Binary, at);
        n->op = op;
        n->kids.push_back(std::move(a));
        n->kids.push_back(std::move(b));
        return done(std::move(n));
    }

    NodePtr parse_math1() {
        const Token& at = cur();
        NodePtr left = parse_concat();
        while (is_op(cur(), "+") || is_op(cur(), "-")) {
            const BinOp op = next().text == "+" ? BinOp::Add : BinOp::Sub;
            left = binary(op, std::move(left), parse_concat(), at);
        }
        return left;
    }

    NodePtr parse_concat() {
        const Token& at = cur();
        NodePtr first = parse_math2();
        if (!is_op(cur(), "~")) return first;
        auto n = node(NodeType::Concat, at);
        n->kids.push_back(std::move(first));
        while (skip_op("~")) n->kids.push_back(parse_math2());
        return done(std::move(n));
    }

    NodePtr parse_math2() {
        const Token& at = cur();
        NodePtr left = parse_pow();
        while (true) {
            BinOp op;
            if (is_op(cur(), "*")) {
                op = BinOp::Mul;
            } else if (is_op(cur(), "/")) {
                op = BinOp::Div;
            } else if (is_op(cur(), "//")) {
                op = BinOp::FloorDiv;
            } else if (is_op(cur(), "%")) {
                op = BinOp::Mod;
            } else {
                break;
            }
            next();
            left = binary(op, std::move(left), parse_pow(), at);
        }
        return left;
    }

    NodePtr parse_pow() {
        const Token& at = cur();
        NodePtr left = parse_unary(true);
        while (skip_op("**")) left = binary(BinOp::Pow, std::move(left), parse_unary(true), at);
        return left;
    }

    NodePtr parse_unary(bool with_filter) {
        Guard g(*this);
        NodePtr n;
        if (is_op(cur(), "-") || is_op(cur(), "+")) {
            n = node(cur().text == "-" ? NodeType::Neg : NodeType::Pos, cur());
            next();
            n->kids.push_back(parse_unary(false));
            n = done(std::move(n));
        } else {
            n = parse_primary(false);
        }
        n = parse_postfix(std::move(n));
        if (with_filter) n = parse_filter_expr(std::move(n));
        return n;
    }

    NodePtr parse_primary(bool with_namespace) {
        const Token& t = cur();
        if (t.type == Tok::Name) {
            next();
            if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
                auto n = node(NodeType::Const, t);
                n->value = Value(t.text == "true" || t.text == "True");
                return done(std::move(n));
            }
            if (t.text == "none" || t.text == "None") {
                auto n = node(NodeType::Const, t);
                n->value = Value::none();
                return done(std::move(n));
            }
            if (with_namespace && is_op(cur(), ".")) {
                next();
                auto n = node(NodeType::NSRef, t);
                n->name = t.text;
                n->attr = expect_name();
                return done(std::move(n));
            }
            auto n = node(NodeType::Name, t);
            n->name = t.text;
            return done(std::move(n));
        }
        if (t.type == Tok::String) {
            auto n = node(NodeType::Const, t);
            std::string s;
            while (cur().type == Tok::String) s += next().text;
            n->value = Value(std::move(s));
            return done(std::move(n));
        }
        if (t.type == Tok::Integer || t.type == Tok::Float) {
            auto n = node(NodeType::Const, t);
            n->value = next().number;
            return done(std::move(n));
        }
        if (is_op(t, "(")) {
            next();
            NodePtr n = parse_tuple(false, true, {}, true);
            expect_op(")");
            return n;
        }
        if (is_op(t, "[")) return parse_list();
        if (is_op(t, "{")) return parse_dict();
        if (t.type == Tok::Eof) fail("unexpected end of template");
        fail("unexpected '" + describe(t) + "'");
    }

    bool is_tuple_end(const std::vector<std::string_view>& extra_end) const {
        const Token& t = cur();
        if (t.type == Tok::VarEnd || t.type == Tok::BlockEnd || is_op(t, ")")) return true;
        if (t.type == Tok::Eof) return true;
        return t.type == Tok::Name &&
               std::find(extra_end.begin(), extra_end.end(), t.text) != extra_end.end();
    }

    NodePtr parse_tuple(bool simplified, bool with_condexpr,
                        const std::vector<std::string_view>& extra_end, bool explicit_parens,
                        bool with_namespace = false) {
        const Token& at = cur();
        std::vector<NodePtr> args;
        bool is_tuple = false;
        while (true) {
            if (!args.empty()) expect_op(",");
            if (is_tuple_end(extra_end)) break;
            args.push_back(simplified ? parse_primary(with_namespace)
                                      : parse_expression(with_condexpr));
            if (is_op(cur(), ",")) {
                is_tuple = true;
            } else {
                break;
            }
        }
        if (!is_tuple) {
            if (!args.empty()) return std::move(args[0]);
            if (!explicit_parens) fail("Expected an expression, got '" + describe(cur()) + "'");
        }
        auto n = node(NodeType::Tuple, at);
        n->kids = std::move(args);
        return done(std::move(n));
    }

    NodePtr parse_list() {
        auto n = node(NodeType::List, next());
        while (!is_op(cur(), "]")) {
            if (!n->kids.empty()) expect_op(",");
            if (is_op(cur(), "]")) break;
            n->kids.push_back(parse_expression(true));
        }
        expect_op("]");
        return done(std::move(n));
    }

    NodePtr parse_dict() {
        auto n = node(NodeType::Dict, next());
        while (!is_op(cur(), "}")) {
            if (!n->kids.empty()) expect_op(",");
            if (is_op(cur(), "}")) break;
            n->kids.push_back(parse_expression(true));
            expect_op(":");
            n->kids.push_back(parse_expression(true));
        }
        expect_op("}");
        return done(std::move(n));
    }

    NodePtr parse_postfix(NodePtr n) {
        while (true) {
            if (is_op(cur(), ".") || is_op(cur(), "[")) {
                n = parse_subscript(std::move(n));
            } else if (is_op(cur(), "(")) {
                n = parse_call(std::move(n));
            } else {
                break;
            }
        }
        return n;
    }

    NodePtr parse_filter_expr(NodePtr n) {
        while (true) {
            if (is_op(cur(), "|")) {
                n = parse_filter(std::move(n), false);
            } else if (is_name(cur(), "is")) {
                n = parse_test(std::move(n));
            } else if (is_op(cur(), "(")) {
                n = parse_call(std::move(n));
            } else {
                break;
            }
        }
        return n;
    }

    NodePtr parse_subscript(NodePtr obj) {
        const Token& t = next();
        if (t.text == ".") {
            const Token& a = next();
            if (a.type == Tok::Name) {
                auto n = node(NodeType::Getattr, t);
                n->name = a.text;
                n->kids.push_back(std::move(obj));
                return done(std::move(n));
            }
            if (a.type != Tok::Integer) fail_at(a, "expected name or number");
            auto n = node(NodeType::Getitem, t);
            auto k = node(NodeType::Const, a);
            k->value = a.number;
            n->kids.push_back(std::move(obj));
            n->kids.push_back(done(std::move(k)));
            return done(std::move(n));
        }
        // "["
        auto n = node(NodeType::Getitem, t);
        std::vector<NodePtr> args;
        while (!is_op(cur(), "]")) {
            if (!args.empty()) expect_op(",");
            args.push_back(parse_subscribed());
        }
        expect_op("]");
        n->kids.push_back(std::move(obj));
        if (args.size() == 1) {
            n->kids.push_back(std::move(args[0]));
        } else {
            auto tup = node(NodeType::Tuple, t);
            tup->kids = std::move(args);
            n->kids.push_back(done(std::move(tup)));
        }
        return done(std::move(n));
    }

    NodePtr parse_subscribed() {
        const Token& at = cur();
        std::vector<NodePtr> args;
        if (is_op(cur(), ":")) {
            next();
            args.push_back(nullptr);
        } else {
            NodePtr e = parse_expression(true);
            if (!is_op(cur(), ":")) return e;
            next();
            args.push_back(std::move(e));
        }
        if (is_op(cur(), ":")) {
            args.push_back(nullptr);
        } else if (!is_op(cur(), "]") && !is_op(cur(), ",")) {
            args.push_back(parse_expression(true));
        } else {
            args.push_back(nullptr);
        }
        if (is_op(cur(), ":")) {
            next();
            if (!is_op(cur(), "]") && !is_op(cur(), ","))
                args.push_back(parse_expression(true));
            else
                args.push_back(nullptr);
        } else {
            args.push_back(nullptr);
        }
        auto n = node(NodeType::Slice, at);
        n->kids = std::move(args);
        return done(std::move(n));
    }

    void parse_call_args(CallSyntax& c) {
        const Token& open = cur();
        expect_op("(");
        bool require_comma = false;
        auto ensure = [&](bool ok) {
            if (!ok) fail_at(open, "invalid syntax for function call expression");
        };
        while (!is_op(cur(), ")")) {
            if (require_comma) {
                expect_op(",");
                if (is_op(cur(), ")")) break;
            }
            if (is_op(cur(), "*")) {
                ensure(!c.star && !c.starstar);
                next();
                c.star = parse_expression(true);
            } else if (is_op(cur(), "**")) {
                ensure(!c.starstar);
                next();
                c.starstar = parse_expression(true);
            } else if (cur().type == Tok::Name && is_op(look(), "=")) {
                ensure(!c.starstar);
                std::string key = next().text;
                next();
                c.kwargs.emplace_back(std::move(key), parse_expression(true));
            } else {
                ensure(!c.star && !c.starstar && c.kwargs.empty());
                c.args.push_back(parse_expression(true));
            }
            require_comma = true;
        }
        expect_op(")");
    }

    NodePtr parse_call(NodePtr callee) {
        auto n = node(NodeType::Call, cur());
        parse_call_args(n->call);
        n->kids.push_back(std::move(callee));
        return done(std::move(n));
    }

    NodePtr parse_filter(NodePtr obj, bool start_inline) {
        while (is_op(cur(), "|") || start_inline) {
            if (!start_inline) next();
            const Token& t = cur();
            std::string name = expect_name();
            while (is_op(cur(), ".")) {
                next();
                name += '.';
                name += expect_name();
            }
            if (!has_filter(name)) fail_at(t, "No filter named '" + name + "'.");
            auto n = node(NodeType::Filter, t);
            n->name = std::move(name);
            if (is_op(cur(), "(")) parse_call_args(n->call);
            n->kids.push_back(std::move(obj));
            obj = done(std::move(n));
            start_inline = false;
        }
        return obj;
    }

    NodePtr parse_test(NodePtr obj) {
        const Token& is = next();
        const bool negated = skip_name("not");
        const Token& t = cur();
        std::string name = expect_name();
        while (is_op(cur(), ".")) {
            next();
            name += '.';
            name += expect_name();
        }
        if (!has_test(name)) fail_at(t, "No test named '" + name + "'.");
        auto n = node(NodeType::Test, is);
        n->name = std::move(name);
        const Token& c = cur();
        if (is_op(c, "(")) {
            parse_call_args(n->call);
        } else if ((c.type == Tok::Name || c.type == Tok::String || c.type == Tok::Integer ||
                    c.type == Tok::Float || is_op(c, "(") || is_op(c, "[") || is_op(c, "{")) &&
                   !is_name(c, "else") && !is_name(c, "or") && !is_name(c, "and")) {
            if (is_name(c, "is")) fail("You cannot chain multiple tests with is");
            Guard g(*this);
            n->call.args.push_back(parse_postfix(parse_primary(false)));
        }
        n->kids.push_back(std::move(obj));
        NodePtr out = done(std::move(n));
        if (negated) {
            auto x = node(NodeType::Not, is);
            x->kids.push_back(std::move(out));
            out = done(std::move(x));
        }
        return out;
    }

    std::vector<Token> t_;
    size_t i_ = 0;
    const Locator& loc_;
    int nesting_ = 0;
    int loop_depth_ = 0;
};

}  // namespace

std::unique_ptr<Program> parse(std::string_view source) {
    // jinja2: "\r\n" and "\r" are newlines; one trailing newline is dropped
    // (keep_trailing_newline=False).
    std::string src;
    src.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            src += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            src += source[i];
        }
    }
    if (!src.empty() && src.back() == '\n') src.pop_back();
    const Locator loc(src);
    if (!utf8::valid(src)) {
        size_t bad = 0;
        for (size_t i = 0; i < src.size();) {
            const size_t before = i;
            const char32_t c = utf8::next(src, i);
            if (static_cast<unsigned char>(src[before]) >= 0x80 && i == before + 1 &&
                c == static_cast<unsigned char>(src[before])) {
                bad = before;
                break;
            }
        }
        const auto [line, col] = loc.at(bad);
        throw TemplateError("the template is not valid UTF-8", line, col);
    }
    Lexer lexer(src, loc);
    Parser parser(lexer.run(), loc);
    return parser.run();
}

}  // namespace powerinfer::jinja
