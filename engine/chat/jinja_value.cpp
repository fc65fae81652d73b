// Jinja values with Python semantics (long, about 1,150 lines: every
// operator and conversion of str/int/float/list/dict/none/undefined).
#include "chat/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>

#include "common/json_reader.h"

#include "common/utf8_append.h"

namespace powerinfer::jinja {
namespace {

std::string located(const std::string& message, int line, int column) {
    if (line <= 0) return message;
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message;
}

const std::string kEmpty;

// The render's step counter and size limit (ValueBudget), for the recursive
// value operations: printing, comparing and serializing a value costs in
// proportion to its size, and a value built from shared parts can be
// exponentially larger than the work that built it.
struct Budget {
    uint64_t* steps = nullptr;
    uint64_t max_steps = 0;
    size_t max_bytes = size_t{64} << 20;
};
thread_local Budget g_budget;

void tick(int depth) {
    if (depth > kMaxNesting) throw ValueError("values nest too deeply");
    if (g_budget.steps && ++*g_budget.steps > g_budget.max_steps)
        throw ValueError("the template takes too many steps (over " +
                         std::to_string(g_budget.max_steps) + ")");
}

void check_bytes(const std::string& out) {
    if (out.size() > g_budget.max_bytes)
        throw ValueError("a value is too large to print (over " +
                         std::to_string(g_budget.max_bytes) + " bytes)");
}

void append_hex(std::string& out, uint32_t v, int digits) {
    static const char* kHex = "0123456789abcdef";
    for (int d = digits - 1; d >= 0; --d) out += kHex[(v >> (4 * d)) & 15];
}

// Non-ASCII code points Python's str.isprintable() rejects (separators,
// format and private-use characters; unassigned ones are not known here).
bool unprintable(char32_t c) {
    return (c >= 0x80 && c <= 0xA0) || c == 0xAD || (c >= 0x600 && c <= 0x605) || c == 0x61C ||
           c == 0x6DD || c == 0x70F || c == 0x1680 || c == 0x180E || (c >= 0x2000 && c <= 0x200F) ||
           (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x2064) ||
           (c >= 0x2066 && c <= 0x206F) || c == 0x3000 || (c >= 0xD800 && c <= 0xF8FF) ||
           c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || c == 0xFFFE || c == 0xFFFF ||
           (c >= 0x1D173 && c <= 0x1D17A) || c == 0xE0001 || (c >= 0xE0020 && c <= 0xE007F) ||
           c >= 0xF0000;
}

void repr_to(const Value& v, std::string& out, int depth);

void seq_repr(const std::vector<Value>& items, SeqKind kind, std::string& out, int depth) {
    switch (kind) {
        case SeqKind::Tuple:
            out += '(';
            break;
        case SeqKind::Items:
            out += "dict_items([";
            break;
        case SeqKind::Keys:
            out += "dict_keys([";
            break;
        case SeqKind::Values:
            out += "dict_values([";
            break;
        case SeqKind::List:
            out += '[';
            break;
    }
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        repr_to(items[i], out, depth + 1);
    }
    switch (kind) {
        case SeqKind::Tuple:
            out += items.size() == 1 ? ",)" : ")";
            break;
        case SeqKind::List:
            out += ']';
            break;
        default:
            out += "])";
            break;
    }
}

void repr_to(const Value& v, std::string& out, int depth) {
    tick(depth);
    check_bytes(out);
    switch (v.kind()) {
        case Kind::String:
            out += string_repr(v.as_string());
            return;
        case Kind::List:
            seq_repr(v.as_list().items, v.as_list().kind, out, depth);
            return;
        case Kind::Dict: {
            out += '{';
            bool first = true;
            for (const auto& [k, x] : v.as_dict().items) {
                if (!first) out += ", ";
                first = false;
                repr_to(k, out, depth + 1);
                out += ": ";
                repr_to(x, out, depth + 1);
            }
            out += '}';
            return;
        }
        case Kind::Namespace: {
            // A namespace can hold itself: the depth check ends that.
            out += "<Namespace {";
            bool first = true;
            for (const auto& [k, x] : v.as_namespace().attrs) {
                if (!first) out += ", ";
                first = false;
                out += string_repr(k) + ": ";
                repr_to(x, out, depth + 1);
            }
            out += "}>";
            return;
        }
        case Kind::Undefined:
            out += "Undefined";  // jinja2's Undefined.__repr__
            return;
        default:
            out += v.str();
            return;
    }
}

bool equal_at(const Value& a, const Value& b, int depth);

bool seq_equal(const std::vector<Value>& x, const std::vector<Value>& y, int depth) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
        if (!equal_at(x[i], y[i], depth + 1)) return false;
    return true;
}

bool equal_at(const Value& a, const Value& b, int depth) {
    tick(depth);
    if (a.is_number() && b.is_number()) {
        if (a.kind() == Kind::Float || b.kind() == Kind::Float)
            return a.as_double() == b.as_double();
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Kind::Undefined:
        case Kind::None:
            return true;
        case Kind::String:
            return a.as_string() == b.as_string();
        case Kind::List: {
            const ListData& x = a.as_list();
            const ListData& y = b.as_list();
            // list == tuple is False in Python; dict views compare like sets
            // (rare in templates; compared in order here).
            if ((x.kind == SeqKind::Tuple) != (y.kind == SeqKind::Tuple)) return false;
            if ((x.kind == SeqKind::List) != (y.kind == SeqKind::List)) return false;
            if (&x == &y) return true;  // Python compares identical elements as equal
            return seq_equal(x.items, y.items, depth);
        }
        case Kind::Dict: {
            const DictData& x = a.as_dict();
            const DictData& y = b.as_dict();
            if (&x == &y) return true;
            if (x.items.size() != y.items.size()) return false;
            for (const auto& [k, v] : x.items) {
                const Value* w = y.find_key(k);
                if (!w || !equal_at(v, *w, depth + 1)) return false;
            }
            return true;
        }
        case Kind::Iterator:
            return &a.as_iterator() == &b.as_iterator();
        case Kind::Function:
            return &a.as_function() == &b.as_function();
        case Kind::Namespace:
            return &a.as_namespace() == &b.as_namespace();
        default:
            return false;
    }
}

std::string json_string(std::string_view s, bool ensure_ascii) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const size_t start = i;
            const char32_t cp = utf8::next(s, i);
            if (!ensure_ascii) {
                out.append(s.substr(start, i - start));
            } else if (cp >= 0x10000) {
                const uint32_t v = static_cast<uint32_t>(cp) - 0x10000;
                out += "\\u";
                append_hex(out, 0xD800 + (v >> 10), 4);
                out += "\\u";
                append_hex(out, 0xDC00 + (v & 0x3FF), 4);
            } else {
                out += "\\u";
                append_hex(out, static_cast<uint32_t>(cp), 4);
            }
            continue;
        }
        ++i;
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                if (c < 0x20) {
                    out += "\\u00";
                    append_hex(out, c, 2);
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    out += '"';
    return out;
}

std::string json_float(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    return float_repr(d);
}

// json.dumps turns keys into strings: str keys as they are, numbers and
// literals as JSON writes them; other keys are a TypeError.
std::string json_key(const Value& k) {
    switch (k.kind()) {
        case Kind::String:
            return k.as_string();
        case Kind::Int:
            return std::to_string(k.as_int());
        case Kind::Float:
            return json_float(k.as_double());
        case Kind::Bool:
            return k.as_bool() ? "true" : "false";
        case Kind::None:
            return "null";
        default:
            throw ValueError(std::string("keys must be str, int, float, bool or None, not ") +
                             k.type_name());
    }
}

void json_to(const Value& v, const JsonStyle& st, int level, std::string& out) {
    tick(level);
    check_bytes(out);
    auto newline = [&](int lv) {
        out += '\n';
        for (int i = 0; i < lv; ++i) out += st.indent;
    };
    switch (v.kind()) {
        case Kind::None:
            out += "null";
            return;
        case Kind::Bool:
            out += v.as_bool() ? "true" : "false";
            return;
        case Kind::Int:
            out += std::to_string(v.as_int());
            return;
        case Kind::Float:
            out += json_float(v.as_double());
            return;
        case Kind::String:
            out += json_string(v.as_string(), st.ensure_ascii);
            return;
        case Kind::List: {
            const ListData& l = v.as_list();
            if (l.kind != SeqKind::List && l.kind != SeqKind::Tuple)
                throw ValueError(std::string("Object of type ") + v.type_name() +
                                 " is not JSON serializable");
            if (l.items.empty()) {
                out += "[]";
                return;
            }
            out += '[';
            for (size_t i = 0; i < l.items.size(); ++i) {
                if (i) out += st.item_sep;
                if (st.pretty) newline(level + 1);
                json_to(l.items[i], st, level + 1, out);
            }
            if (st.pretty) newline(level);
            out += ']';
            return;
        }
        case Kind::Dict: {
            const DictData& d = v.as_dict();
            if (d.items.empty()) {
                out += "{}";
                return;
            }
            std::vector<std::pair<std::string, const Value*>> items;
            items.reserve(d.items.size());
            for (const auto& [k, x] : d.items) items.emplace_back(json_key(k), &x);
            if (st.sort_keys) {
                for (const auto& [k, x] : d.items)
                    if (!k.is_string())
                        throw ValueError("'<' not supported between dict keys of different types");
                std::stable_sort(items.begin(), items.end(),
                                 [](const auto& a, const auto& b) { return a.first < b.first; });
            }
            out += '{';
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += st.item_sep;
                if (st.pretty) newline(level + 1);
                out += json_string(items[i].first, st.ensure_ascii);
                out += st.key_sep;
                json_to(*items[i].second, st, level + 1, out);
            }
            if (st.pretty) newline(level);
            out += '}';
            return;
        }
        default:
            throw ValueError(std::string("Object of type ") + v.type_name() +
                             " is not JSON serializable");
    }
}

// --- JSON reader ------------------------------------------------------------

// Builds template Values for common/json_reader.h as Python's json.loads
// does: integers stay ints (a float beyond 64 bits), NaN and Infinity read.
struct JsonBuilder {
    using Value = jinja::Value;
    Value null() { return Value::none(); }
    Value boolean(bool b) { return Value(b); }
    std::optional<Value> number(std::string_view text, bool fractional) {
        if (text == "NaN") return Value(std::nan(""));
        if (text == "Infinity") return Value(HUGE_VAL);
        if (text == "-Infinity") return Value(-HUGE_VAL);
        if (!fractional) {
            int64_t v = 0;
            const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
            if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return Value(v);
            // Beyond 64 bits: a float (Python would keep an exact int).
        }
        double d = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
        if (r.ec == std::errc::result_out_of_range) {
            d = text.find_first_of("eE") != std::string_view::npos &&
                        text.find("e-") == std::string_view::npos &&
                        text.find("E-") == std::string_view::npos
                    ? HUGE_VAL
                    : 0.0;
            if (text[0] == '-') d = -d;
        } else if (r.ec != std::errc()) {
            return std::nullopt;
        }
        return Value(d);
    }
    Value string(std::string s) { return Value(std::move(s)); }
    Value array(std::vector<Value> items) { return Value::list(std::move(items)); }
    Value object(std::vector<std::pair<std::string, Value>> members) {
        std::vector<std::pair<Value, Value>> items;
        items.reserve(members.size());
        for (auto& [k, v] : members) items.emplace_back(Value(std::move(k)), std::move(v));
        return Value::dict(std::move(items));
    }
    [[noreturn]] void fail(const std::string& what, int line, int column) const {
        throw TemplateError("JSON: " + what, line, column);
    }
};

}  // namespace

ValueBudget::ValueBudget(uint64_t* steps, uint64_t max_steps, size_t max_bytes)
    : saved_steps_(g_budget.steps),
      saved_max_steps_(g_budget.max_steps),
      saved_max_bytes_(g_budget.max_bytes) {
    g_budget.steps = steps;
    g_budget.max_steps = max_steps;
    g_budget.max_bytes = max_bytes;
}

ValueBudget::~ValueBudget() {
    g_budget.steps = saved_steps_;
    g_budget.max_steps = saved_max_steps_;
    g_budget.max_bytes = saved_max_bytes_;
}

TemplateError::TemplateError(const std::string& message, int line, int column)
    : EngineError(located(message, line, column)),
      message_(message),
      line_(line),
      column_(column) {}

Value Value::undefined(std::string hint) {
    Value v;
    if (!hint.empty()) v.p_ = std::make_shared<const std::string>(std::move(hint));
    return v;
}

Value Value::none() {
    Value v;
    v.kind_ = Kind::None;
    return v;
}

Value::Value(std::string s) : kind_(Kind::String) {
    p_ = std::make_shared<const std::string>(std::move(s));
}

Value Value::list(std::vector<Value> items, SeqKind kind) {
    auto d = std::make_shared<ListData>();
    int depth = 0;
    for (const Value& x : items) depth = std::max(depth, x.depth());
    if (depth + 1 > kMaxNesting) throw ValueError("values nest too deeply");
    d->items = std::move(items);
    d->kind = kind;
    d->depth = depth + 1;
    Value v;
    v.kind_ = Kind::List;
    v.p_ = std::move(d);
    return v;
}

Value Value::dict(std::vector<std::pair<Value, Value>> items) {
    auto d = std::make_shared<DictData>();
    int depth = 0;
    d->items.reserve(items.size());
    for (auto& [k, x] : items) {
        check_hashable(k);
        depth = std::max({depth, k.depth(), x.depth()});
        bool replaced = false;
        // Python keeps the first key's position and the last value.
        for (auto& [k2, x2] : d->items) {
            if (equal(k2, k)) {
                x2 = std::move(x);
                replaced = true;
                break;
            }
        }
        if (!replaced) d->items.emplace_back(std::move(k), std::move(x));
    }
    if (depth + 1 > kMaxNesting) throw ValueError("values nest too deeply");
    d->depth = depth + 1;
    Value v;
    v.kind_ = Kind::Dict;
    v.p_ = std::move(d);
    return v;
}

Value Value::iterator(std::vector<Value> items, std::string name) {
    auto d = std::make_shared<IteratorData>();
    int depth = 0;
    for (const Value& x : items) depth = std::max(depth, x.depth());
    if (depth + 1 > kMaxNesting) throw ValueError("values nest too deeply");
    d->items = std::move(items);
    d->name = std::move(name);
    d->depth = depth + 1;
    Value v;
    v.kind_ = Kind::Iterator;
    v.p_ = std::move(d);
    return v;
}

Value Value::function(std::shared_ptr<const FunctionData> f) {
    Value v;
    v.kind_ = Kind::Function;
    v.p_ = std::move(f);
    return v;
}

Value Value::ns(NamespaceData* ns) {
    Value v;
    v.kind_ = Kind::Namespace;
    v.u_.ns = ns;
    return v;
}

double Value::as_double() const {
    switch (kind_) {
        case Kind::Float:
            return u_.f;
        case Kind::Int:
            return static_cast<double>(u_.i);
        case Kind::Bool:
            return u_.b ? 1.0 : 0.0;
        default:
            return 0.0;
    }
}

const std::string& Value::as_string() const {
    return kind_ == Kind::String ? *static_cast<const std::string*>(p_.get()) : kEmpty;
}

const ListData& Value::as_list() const { return *static_cast<const ListData*>(p_.get()); }
const DictData& Value::as_dict() const { return *static_cast<const DictData*>(p_.get()); }
IteratorData& Value::as_iterator() const {
    return *const_cast<IteratorData*>(static_cast<const IteratorData*>(p_.get()));
}
const FunctionData& Value::as_function() const {
    return *static_cast<const FunctionData*>(p_.get());
}

const std::string& Value::undefined_hint() const {
    if (kind_ == Kind::Undefined && p_) return *static_cast<const std::string*>(p_.get());
    return kEmpty;
}

int Value::depth() const {
    switch (kind_) {
        case Kind::List:
            return as_list().depth;
        case Kind::Dict:
            return as_dict().depth;
        case Kind::Iterator:
            return as_iterator().depth;
        default:
            return 0;
    }
}

const char* Value::type_name() const {
    switch (kind_) {
        case Kind::Undefined:
            return "Undefined";
        case Kind::None:
            return "NoneType";
        case Kind::Bool:
            return "bool";
        case Kind::Int:
            return "int";
        case Kind::Float:
            return "float";
        case Kind::String:
            return "str";
        case Kind::List:
            switch (as_list().kind) {
                case SeqKind::Tuple:
                    return "tuple";
                case SeqKind::Items:
                    return "dict_items";
                case SeqKind::Keys:
                    return "dict_keys";
                case SeqKind::Values:
                    return "dict_values";
                default:
                    return "list";
            }
        case Kind::Dict:
            return "dict";
        case Kind::Iterator:
            return "generator";
        case Kind::Function:
            return as_function().is_macro ? "Macro" : "builtin_function_or_method";
        case Kind::Namespace:
            return "Namespace";
    }
    return "object";
}

bool Value::truthy() const {
    switch (kind_) {
        case Kind::Undefined:
        case Kind::None:
            return false;
        case Kind::Bool:
            return u_.b;
        case Kind::Int:
            return u_.i != 0;
        case Kind::Float:
            return u_.f != 0.0;
        case Kind::String:
            return !as_string().empty();
        case Kind::List:
            return !as_list().items.empty();
        case Kind::Dict:
            return !as_dict().items.empty();
        default:
            return true;
    }
}

std::string Value::str() const {
    switch (kind_) {
        case Kind::Undefined:
            return "";
        case Kind::None:
            return "None";
        case Kind::Bool:
            return u_.b ? "True" : "False";
        case Kind::Int:
            return std::to_string(u_.i);
        case Kind::Float:
            return float_repr(u_.f);
        case Kind::String:
            return as_string();
        case Kind::List:
        case Kind::Dict:
            return repr();
        case Kind::Iterator:
            return "<generator object " + as_iterator().name + ">";
        case Kind::Function:
            return as_function().is_macro ? "<Macro '" + as_function().name + "'>"
                                          : "<built-in function " + as_function().name + ">";
        case Kind::Namespace: {
            std::string out;
            repr_to(*this, out, 0);
            return out;
        }
    }
    return "";
}

std::string Value::repr() const {
    std::string out;
    repr_to(*this, out, 0);
    return out;
}

const Value* DictData::find_key(const Value& key) const {
    if (key.is_string()) return find(std::string_view(key.as_string()));
    for (const auto& [k, v] : items)
        if (equal(k, key)) return &v;
    return nullptr;
}

const Value* DictData::find(std::string_view key) const {
    for (const auto& [k, v] : items)
        if (k.is_string() && k.as_string() == key) return &v;
    return nullptr;
}

Value* NamespaceData::find(std::string_view name) {
    for (auto& [k, v] : attrs)
        if (k == name) return &v;
    return nullptr;
}

const Value* CallArgs::kwarg(std::string_view name) const {
    for (const auto& [k, v] : kwargs)
        if (k == name) return &v;
    return nullptr;
}

bool equal(const Value& a, const Value& b) { return equal_at(a, b, 0); }

bool less(const Value& a, const Value& b) {
    tick(0);
    if (a.is_number() && b.is_number()) {
        if (a.kind() == Kind::Float || b.kind() == Kind::Float)
            return a.as_double() < b.as_double();
        return a.as_int() < b.as_int();
    }
    if (a.is_undefined() || b.is_undefined()) {
        const std::string& hint = a.is_undefined() ? a.undefined_hint() : b.undefined_hint();
        throw ValueError(hint.empty() ? "a value is undefined" : hint);
    }
    if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order
    if (a.is_list() && b.is_list() && a.as_list().kind == b.as_list().kind &&
        (a.as_list().kind == SeqKind::List || a.as_list().kind == SeqKind::Tuple)) {
        const auto& x = a.as_list().items;
        const auto& y = b.as_list().items;
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (!equal(x[i], y[i])) return less(x[i], y[i]);
        }
        return x.size() < y.size();
    }
    throw ValueError(std::string("'<' not supported between instances of '") + a.type_name() +
                     "' and '" + b.type_name() + "'");
}

namespace {

void check_hashable_at(const Value& v, int depth) {
    tick(depth);
    switch (v.kind()) {
        case Kind::List:
            if (v.as_list().kind == SeqKind::Tuple) {
                for (const Value& x : v.as_list().items) check_hashable_at(x, depth + 1);
                return;
            }
            [[fallthrough]];
        case Kind::Dict:
            throw ValueError(std::string("unhashable type: '") + v.type_name() + "'");
        default:
            return;
    }
}

}  // namespace

void check_hashable(const Value& v) { check_hashable_at(v, 0); }

std::string to_json(const Value& v, const JsonStyle& style) {
    std::string out;
    json_to(v, style, 0, out);
    return out;
}

Value from_json(std::string_view text) {
    JsonBuilder b;
    return json::read_json(text, b, {kMaxNesting, true});
}

std::string float_repr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));  // "-d.ddde+XX"
    std::string out;
    if (sci[0] == '-') {
        out += '-';
        sci.remove_prefix(1);
    }
    const size_t e = sci.find('e');
    std::string digits;
    for (char c : sci.substr(0, e))
        if (c != '.') digits += c;
    int exp = 0;
    std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
    const int decpt = exp + 1;
    const int n = static_cast<int>(digits.size());
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out += "0.";
            out.append(static_cast<size_t>(-decpt), '0');
            out += digits;
        } else if (decpt >= n) {
            out += digits;
            out.append(static_cast<size_t>(decpt - n), '0');
            out += ".0";
        } else {
            out.append(digits, 0, static_cast<size_t>(decpt));
            out += '.';
            out.append(digits, static_cast<size_t>(decpt));
        }
        return out;
    }
    out += digits[0];
    if (n > 1) {
        out += '.';
        out.append(digits, 1);
    }
    out += exp < 0 ? "e-" : "e+";
    const int a = exp < 0 ? -exp : exp;
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
}

std::string string_repr(std::string_view s) {
    const bool has_single = s.find('\'') != std::string_view::npos;
    const bool has_double = s.find('"') != std::string_view::npos;
    const char quote = has_single && !has_double ? '"' : '\'';
    std::string out(1, quote);
    for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        const char32_t c = utf8::next(s, i);
        if (c == static_cast<char32_t>(quote) || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7F) {
            out += "\\x";
            append_hex(out, static_cast<uint32_t>(c), 2);
        } else if (c < 0x7F) {
            out += static_cast<char>(c);
        } else if (!unprintable(c)) {
            out.append(s.substr(start, i - start));
        } else if (c <= 0xFF) {
            out += "\\x";
            append_hex(out, static_cast<uint32_t>(c), 2);
        } else if (c <= 0xFFFF) {
            out += "\\u";
            append_hex(out, static_cast<uint32_t>(c), 4);
        } else {
            out += "\\U";
            append_hex(out, static_cast<uint32_t>(c), 8);
        }
    }
    out += quote;
    return out;
}

namespace utf8 {

char32_t next(std::string_view s, size_t& i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    if (c < 0x80) {
        ++i;
        return c;
    }
    int n = 0;
    char32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
        n = 1;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3;
        cp = c & 0x07;
    } else {
        ++i;
        return c;  // a stray byte stands for itself
    }
    if (i + static_cast<size_t>(n) >= s.size()) {
        ++i;
        return c;
    }
    for (int k = 1; k <= n; ++k) {
        if ((b(i + static_cast<size_t>(k)) & 0xC0) != 0x80) {
            ++i;
            return c;
        }
        cp = (cp << 6) | (b(i + static_cast<size_t>(k)) & 0x3F);
    }
    static constexpr char32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        ++i;
        return c;
    }
    i += static_cast<size_t>(n) + 1;
    return cp;
}

void append(std::string& out, char32_t c) { append_utf8(out, static_cast<uint32_t>(c)); }

size_t length(std::string_view s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size(); ++n) next(s, i);
    return n;
}

std::vector<size_t> offsets(std::string_view s) {
    std::vector<size_t> out;
    out.reserve(s.size() + 1);
    for (size_t i = 0; i < s.size();) {
        out.push_back(i);
        next(s, i);
    }
    out.push_back(s.size());
    return out;
}

bool is_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

// Simple case mapping for ASCII, Latin-1, Latin Extended-A, Greek and
// Cyrillic (Python maps all of Unicode, and a few characters to several).
char32_t to_upper(char32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0x80) return c;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
    if (c == 0xFF) return 0x178;
    if (c == 0xB5) return 0x39C;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x131) return 'I';
        if (c == 0x17F) return 'S';
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c : c - 1;
        if (c == 0x130 || c == 0x138 || c == 0x149) return c;
        return (c & 1) ? c - 1 : c;
    }
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
    if (c == 0x3C2) return 0x3A3;
    if (c >= 0x3AC && c <= 0x3AF) return c == 0x3AC ? 0x386 : c - 37;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
}

char32_t to_lower(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0x80) return c;
    if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
    if (c == 0x178) return 0xFF;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x130) return 'i';
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
        if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return c;
        return (c & 1) ? c : c + 1;
    }
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    return c;
}

bool is_upper(char32_t c) { return to_lower(c) != c; }
bool is_lower(char32_t c) { return to_upper(c) != c || c == 0xDF; }
bool is_alpha(char32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0x80 && is_upper(c)) ||
           (c >= 0x80 && is_lower(c)) || (c >= 0x4E00 && c <= 0x9FFF) ||
           (c >= 0x3040 && c <= 0x30FF) || (c >= 0xAC00 && c <= 0xD7A3);
}
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

bool valid(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const size_t before = i;
        const char32_t cp = next(s, i);
        if (c >= 0x80 && i == before + 1 && cp == c) return false;
    }
    return true;
}

}  // namespace utf8

}  // namespace powerinfer::jinja
