// Python's str semantics for the Jinja builtins (code point based, as
// Python 3 has them): strip/split/splitlines, case mapping and titles,
// replace, prefix/suffix tests, padding, and str.format's mini-language. The
// methods and filters that use them are in jinja_builtins.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "chat/jinja_strings.h"

namespace powerinfer::jinja::pystr {

U32 decode(std::string_view s) {
    U32 out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) out += utf8::next(s, i);
    return out;
}

std::string encode(const U32& s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) utf8::append(out, c);
    return out;
}

int64_t clamp_len(int64_t v) {
    return std::clamp<int64_t>(v, -(int64_t{1} << 40), int64_t{1} << 40);
}

// --- string helpers (Python's str methods, code point based) ---

namespace {
bool in_set(char32_t c, const U32* chars) {
    return chars ? chars->find(c) != U32::npos : utf8::is_space(c);
}
}  // namespace

std::string strip(std::string_view s, const Value* chars, bool left, bool right) {
    U32 set;
    const U32* cs = nullptr;
    if (chars && !chars->is_none()) {
        if (!chars->is_string()) throw ValueError("strip arg must be None or str");
        set = decode(chars->as_string());
        cs = &set;
    }
    const U32 u = decode(s);
    size_t b = 0, e = u.size();
    if (left)
        while (b < e && in_set(u[b], cs)) ++b;
    if (right)
        while (e > b && in_set(u[e - 1], cs)) --e;
    return encode(u.substr(b, e - b));
}

std::vector<Value> split(std::string_view s, const Value* sep, int64_t maxsplit, bool from_right) {
    std::vector<Value> out;
    if (maxsplit < 0) maxsplit = std::numeric_limits<int64_t>::max();
    if (!sep || sep->is_none()) {
        const U32 u = decode(s);
        std::vector<std::pair<size_t, size_t>> words;
        if (!from_right) {
            size_t i = 0;
            while (i < u.size()) {
                while (i < u.size() && utf8::is_space(u[i])) ++i;
                if (i >= u.size()) break;
                if (static_cast<int64_t>(words.size()) == maxsplit) {
                    words.emplace_back(i, u.size());  // the rest, trailing space included
                    break;
                }
                size_t j = i;
                while (j < u.size() && !utf8::is_space(u[j])) ++j;
                words.emplace_back(i, j);
                i = j;
            }
        } else {
            size_t i = u.size();
            while (i > 0) {
                while (i > 0 && utf8::is_space(u[i - 1])) --i;
                if (i == 0) break;
                if (static_cast<int64_t>(words.size()) == maxsplit) {
                    words.emplace_back(0, i);
                    break;
                }
                size_t j = i;
                while (j > 0 && !utf8::is_space(u[j - 1])) --j;
                words.emplace_back(j, i);
                i = j;
            }
            std::reverse(words.begin(), words.end());
        }
        for (auto [b, e] : words) out.emplace_back(encode(u.substr(b, e - b)));
        return out;
    }
    if (!sep->is_string())
        throw ValueError("must be str or None, not " + std::string(sep->type_name()));
    const std::string& d = sep->as_string();
    if (d.empty()) throw ValueError("empty separator");
    std::vector<std::string> parts;
    if (!from_right) {
        size_t start = 0;
        int64_t n = 0;
        while (n < maxsplit) {
            const size_t p = s.find(d, start);
            if (p == std::string_view::npos) break;
            parts.emplace_back(s.substr(start, p - start));
            start = p + d.size();
            ++n;
        }
        parts.emplace_back(s.substr(start));
    } else {
        size_t end = s.size();
        int64_t n = 0;
        while (n < maxsplit && end >= d.size()) {
            const size_t p = s.rfind(d, end - d.size());
            if (p == std::string_view::npos) break;
            parts.emplace_back(s.substr(p + d.size(), end - p - d.size()));
            end = p;
            ++n;
        }
        parts.emplace_back(s.substr(0, end));
        std::reverse(parts.begin(), parts.end());
    }
    for (auto& p : parts) out.emplace_back(std::move(p));
    return out;
}

namespace {
bool line_break(char32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
           c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
}
}  // namespace

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
    const U32 u = decode(s);
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t i = 0; i < u.size();) {
        if (!line_break(u[i])) {
            ++i;
            continue;
        }
        size_t eol = i + 1;
        if (u[i] == '\r' && i + 1 < u.size() && u[i + 1] == '\n') eol = i + 2;
        out.push_back(encode(u.substr(start, (keepends ? eol : i) - start)));
        start = i = eol;
    }
    if (start < u.size()) out.push_back(encode(u.substr(start)));
    return out;
}

bool all_cased(const U32& u, bool upper) {
    bool any = false;
    for (char32_t c : u) {
        if (utf8::is_upper(c)) {
            if (!upper) return false;
            any = true;
        } else if (utf8::is_lower(c)) {
            if (upper) return false;
            any = true;
        }
    }
    return any;
}

void append_upper(U32& out, char32_t c) {
    if (c == 0xDF) {
        out += U"SS";
    } else {
        out += utf8::to_upper(c);
    }
}

std::string upper(std::string_view s) {
    U32 out;
    for (char32_t c : decode(s)) append_upper(out, c);
    return encode(out);
}

std::string lower(std::string_view s) {
    U32 u = decode(s);
    for (char32_t& c : u) c = utf8::to_lower(c);
    return encode(u);
}

namespace {
bool cased(char32_t c) { return utf8::is_upper(c) || utf8::is_lower(c); }
}  // namespace

std::string py_title(std::string_view s) {
    U32 out;
    bool prev_cased = false;
    for (char32_t c : decode(s)) {
        if (cased(c)) {
            if (prev_cased) {
                out += utf8::to_lower(c);
            } else if (c == 0xDF) {
                out += U"Ss";
            } else {
                out += utf8::to_upper(c);
            }
            prev_cased = true;
        } else {
            out += c;
            prev_cased = false;
        }
    }
    return encode(out);
}

std::string capitalize(std::string_view s) {
    const U32 u = decode(s);
    U32 out;
    for (size_t i = 0; i < u.size(); ++i) {
        if (i == 0) {
            if (u[0] == 0xDF) {
                out += U"Ss";
            } else {
                out += utf8::to_upper(u[0]);
            }
        } else {
            out += utf8::to_lower(u[i]);
        }
    }
    return encode(out);
}

std::string replace(Interpreter& in, std::string_view s, std::string_view old,
                    std::string_view with, int64_t count) {
    if (count < 0) count = std::numeric_limits<int64_t>::max();
    std::string out;
    if (old.empty()) {
        // Python inserts `with` around every code point.
        int64_t n = 0;
        size_t i = 0;
        while (true) {
            if (n < count) {
                out += with;
                ++n;
            }
            if (i >= s.size()) break;
            const size_t start = i;
            utf8::next(s, i);
            out += s.substr(start, i - start);
            in.check_size(out.size());
        }
        return out;
    }
    size_t start = 0;
    int64_t n = 0;
    while (n < count) {
        const size_t p = s.find(old, start);
        if (p == std::string_view::npos) break;
        out += s.substr(start, p - start);
        out += with;
        start = p + old.size();
        ++n;
        in.check_size(out.size());
    }
    out += s.substr(start);
    in.check_size(out.size());
    return out;
}

int64_t cp_index(std::string_view s, size_t byte) {
    return static_cast<int64_t>(utf8::length(s.substr(0, byte)));
}

// Python's str.startswith/endswith with an optional [start, end) window.
bool affix(const std::string& s, const Value& arg, const Value* start, const Value* end,
           bool suffix) {
    std::string_view view = s;
    std::string window;
    if ((start && !start->is_none()) || (end && !end->is_none())) {
        const auto offs = utf8::offsets(s);
        const auto n = static_cast<int64_t>(offs.size()) - 1;
        auto norm = [&](const Value* v, int64_t dflt) {
            if (!v || v->is_none()) return dflt;
            int64_t x = clamp_len(need_int(v, "startswith"));
            if (x < 0) x = std::max<int64_t>(0, x + n);
            return std::min(x, n);
        };
        const int64_t a = norm(start, 0), b = norm(end, n);
        if (a > b) return false;
        window = s.substr(offs[static_cast<size_t>(a)],
                          offs[static_cast<size_t>(b)] - offs[static_cast<size_t>(a)]);
        view = window;
    }
    auto one = [&](const Value& p) {
        if (!p.is_string())
            throw ValueError(std::string(suffix ? "endswith" : "startswith") +
                             " first arg must be str or a tuple of str, not " + p.type_name());
        const std::string& x = p.as_string();
        if (x.size() > view.size()) return false;
        return suffix ? view.substr(view.size() - x.size()) == x : view.substr(0, x.size()) == x;
    };
    if (arg.is_list() && arg.as_list().kind == SeqKind::Tuple) {
        for (const Value& p : arg.as_list().items)
            if (one(p)) return true;
        return false;
    }
    return one(arg);
}

// align: -1 left, 0 str.center, 1 right, 2 format's "^".
std::string pad(std::string_view s, int64_t width, char32_t fill, int align) {
    const auto len = static_cast<int64_t>(utf8::length(s));
    width = clamp_len(width);
    if (width <= len) return std::string(s);
    const int64_t total = width - len;
    int64_t left = 0;
    if (align == 1) {
        left = total;
    } else if (align == 0) {
        left = total / 2 + (total & width & 1);  // CPython's pad() for str.center
    } else if (align == 2) {
        left = total / 2;
    }
    std::string f;
    utf8::append(f, fill);
    std::string out;
    for (int64_t i = 0; i < left; ++i) out += f;
    out += s;
    for (int64_t i = left; i < total; ++i) out += f;
    return out;
}

char32_t fill_char(const Value* v) {
    if (!v) return ' ';
    const std::string& f = need_str(v, "center", "fillchar");
    if (utf8::length(f) != 1)
        throw ValueError("The fill character must be exactly one character long");
    size_t i = 0;
    return utf8::next(f, i);
}

// --- str.format (the format mini-language, for the common specs) ---

namespace {
std::string format_spec(const Value& v, std::string_view spec) {
    if (spec.empty()) return v.str();
    // [[fill]align][sign][#][0][width][,][.precision][type]
    size_t i = 0;
    char32_t fill = ' ';
    char align = 0;
    {
        size_t j = 0;
        const char32_t first = utf8::next(spec, j);
        if (j < spec.size() && std::string_view("<>^=").find(spec[j]) != std::string_view::npos) {
            fill = first;
            align = spec[j];
            i = j + 1;
        } else if (std::string_view("<>^=").find(spec[0]) != std::string_view::npos) {
            align = spec[0];
            i = 1;
        }
    }
    char sign = 0;
    if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
    if (i < spec.size() && spec[i] == '#') ++i;
    if (i < spec.size() && spec[i] == '0') {
        if (!align) {
            fill = '0';
            align = '=';
        }
        ++i;
    }
    int64_t width = 0;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9' && width < 100000)
        width = width * 10 + (spec[i++] - '0');
    if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) ++i;
    int prec = -1;
    if (i < spec.size() && spec[i] == '.') {
        prec = 0;
        ++i;
        while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9' && prec < 1000)
            prec = prec * 10 + (spec[i++] - '0');
        prec = std::min(prec, 100);
    }
    char type = i < spec.size() ? spec[i++] : 0;
    if (i != spec.size()) throw ValueError("Invalid format specifier");
    std::string body;
    if (v.is_string() || (!v.is_number() && type == 0)) {
        if (type && type != 's')
            throw ValueError(std::string("Unknown format code '") + type +
                             "' for object of type 'str'");
        body = v.str();
        if (prec >= 0) {
            const auto offs = utf8::offsets(body);
            if (static_cast<size_t>(prec) + 1 < offs.size())
                body.resize(offs[static_cast<size_t>(prec)]);
        }
        if (!align) align = '<';
    } else {
        if (!v.is_number())
            throw ValueError("Unknown format code for object of type " + quoted_type(v));
        const bool is_float = v.kind() == Kind::Float;
        if (type == 0) type = is_float ? 'r' : 'd';
        char buf[512];
        const double d = v.as_double();
        switch (type) {
            case 'd':
                if (is_float)
                    throw ValueError("Unknown format code 'd' for object of type 'float'");
                body = std::to_string(std::llabs(v.as_int()));
                break;
            case 'x':
            case 'X':
            case 'o':
            case 'b': {
                if (is_float)
                    throw ValueError(std::string("Unknown format code '") + type +
                                     "' for object of type 'float'");
                const uint64_t x = static_cast<uint64_t>(std::llabs(v.as_int()));
                if (type == 'b') {
                    body.clear();
                    for (uint64_t y = x; y; y >>= 1) body += char('0' + (y & 1));
                    if (body.empty()) body.push_back('0');
                    std::reverse(body.begin(), body.end());
                } else {
                    std::snprintf(buf, sizeof buf,
                                  type == 'o'   ? "%llo"
                                  : type == 'x' ? "%llx"
                                                : "%llX",
                                  static_cast<unsigned long long>(x));
                    body = buf;
                }
                break;
            }
            case 'r':
                body = float_repr(std::fabs(d));
                if (prec >= 0) {
                    std::snprintf(buf, sizeof buf, "%.*g", std::max(1, prec), std::fabs(d));
                    body = buf;
                }
                break;
            case 'f':
            case 'F':
            case 'e':
            case 'E':
            case 'g':
            case 'G':
            case '%': {
                const double x = type == '%' ? std::fabs(d) * 100 : std::fabs(d);
                char spec_c[16];
                std::snprintf(spec_c, sizeof spec_c, "%%.%d%c", prec < 0 ? 6 : prec,
                              type == '%' ? 'f' : type);
                std::snprintf(buf, sizeof buf, spec_c, x);
                body = buf;
                if (type == '%') body += '%';
                break;
            }
            default:
                throw ValueError(std::string("Unknown format code '") + type + "'");
        }
        const bool neg = is_float ? std::signbit(d) && !std::isnan(d) : v.as_int() < 0;
        std::string s = neg ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "";
        if (align == '=') {
            const int64_t len = static_cast<int64_t>(utf8::length(body) + s.size());
            if (width > len) body = pad("", width - len, fill, -1) + body;
            return s + body;
        }
        body = s + body;
        if (!align) align = '>';
    }
    return pad(body, width, fill, align == '<' ? -1 : align == '^' ? 2 : 1);
}
}  // namespace

std::string str_format(Interpreter& in, const std::string& fmt, const CallArgs& a) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
                out += '}';
                ++i;
                continue;
            }
            throw ValueError("Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) throw ValueError("Single '{' encountered in format string");
        std::string field = fmt.substr(i + 1, close - i - 1);
        i = close;
        std::string spec;
        char conv = 0;
        if (const size_t colon = field.find(':'); colon != std::string::npos) {
            spec = field.substr(colon + 1);
            field.resize(colon);
        }
        if (const size_t bang = field.find('!'); bang != std::string::npos) {
            if (bang + 2 != field.size())
                throw ValueError("expected ':' after conversion specifier");
            conv = field[bang + 1];
            field.resize(bang);
        }
        // field: name or index, then .attr / [key] parts
        size_t k = 0;
        while (k < field.size() && field[k] != '.' && field[k] != '[') ++k;
        const std::string head = field.substr(0, k);
        Value v;
        if (head.empty()) {
            if (auto_index >= a.args.size()) throw ValueError("Replacement index out of range");
            v = a.args[auto_index++];
        } else if (std::all_of(head.begin(), head.end(),
                               [](char ch) { return ch >= '0' && ch <= '9'; })) {
            const size_t idx = head.size() > 6 ? a.args.size() : std::stoul(head);
            if (idx >= a.args.size()) throw ValueError("Replacement index out of range");
            v = a.args[idx];
        } else {
            const Value* kw = a.kwarg(head);
            if (!kw) throw ValueError("KeyError: '" + head + "'");
            v = *kw;
        }
        while (k < field.size()) {
            if (field[k] == '.') {
                size_t e = k + 1;
                while (e < field.size() && field[e] != '.' && field[e] != '[') ++e;
                v = in.getattr(v, field.substr(k + 1, e - k - 1));
                k = e;
            } else {
                const size_t e = field.find(']', k);
                if (e == std::string::npos) throw ValueError("Missing ']' in format string");
                const std::string key = field.substr(k + 1, e - k - 1);
                const bool digits = !key.empty() && key.size() < 10 &&
                                    std::all_of(key.begin(), key.end(),
                                                [](char ch) { return ch >= '0' && ch <= '9'; });
                v = in.getitem(v,
                               digits ? Value(static_cast<int64_t>(std::stoll(key))) : Value(key));
                k = e + 1;
            }
        }
        if (conv == 'r' || conv == 'a') {
            v = Value(v.repr());
        } else if (conv == 's') {
            v = Value(v.str());
        } else if (conv) {
            throw ValueError(std::string("Unknown conversion specifier ") + conv);
        }
        out += format_spec(v, spec);
        in.check_size(out.size());
    }
    return out;
}

}  // namespace powerinfer::jinja::pystr
