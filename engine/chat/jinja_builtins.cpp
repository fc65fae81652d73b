// Long (about 950 lines): one function per builtin, a flat list that
// mirrors jinja2's filters.py/tests.py (Python's str operations they share
// are in jinja_strings.cpp).
// jinja2's builtin filters and tests, with the semantics of jinja2 3.1 on
// Python 3 under transformers' sandboxed environment (the str/dict/list
// methods templates call are in jinja_methods.cpp, the globals in
// jinja_globals.cpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "chat/jinja_internal.h"
#include "chat/jinja_strings.h"

namespace powerinfer::jinja {
using namespace pystr;

// The argument helpers (jinja_internal.h), shared with the globals.
std::string quoted_type(const Value& v) { return std::string("'") + v.type_name() + "'"; }

[[noreturn]] void undefined_error(const Value& v) {
    const std::string& hint = v.undefined_hint();
    throw ValueError(hint.empty() ? "a value is undefined" : hint);
}

Bound bind(const CallArgs& a, std::initializer_list<const char*> names, std::string_view fn) {
    Bound b;
    b.slot.assign(names.size(), nullptr);
    if (a.args.size() > names.size())
        throw ValueError(std::string(fn) + "() takes at most " + std::to_string(names.size()) +
                         " argument(s) (" + std::to_string(a.args.size()) + " given)");
    for (size_t i = 0; i < a.args.size(); ++i) b.slot[i] = &a.args[i];
    for (const auto& [k, v] : a.kwargs) {
        size_t i = 0;
        for (const char* n : names) {
            if (k == n) break;
            ++i;
        }
        if (i == names.size())
            throw ValueError(std::string(fn) + "() got an unexpected keyword argument '" + k + "'");
        if (b.slot[i])
            throw ValueError(std::string(fn) + "() got multiple values for argument '" + k + "'");
        b.slot[i] = &v;
    }
    return b;
}

const std::string& need_str(const Value* v, std::string_view fn, std::string_view what) {
    if (!v || !v->is_string())
        throw ValueError(std::string(fn) + "() argument '" + std::string(what) +
                         "' must be str, not " + (v ? v->type_name() : "missing"));
    return v->as_string();
}

int64_t need_int(const Value* v, std::string_view fn) {
    if (!v || (v->kind() != Kind::Int && v->kind() != Kind::Bool))
        throw ValueError(std::string(fn) + "(): an integer is required, not " +
                         (v ? quoted_type(*v) : std::string("nothing")));
    return v->as_int();
}

namespace {

// --- filters ---

Value soft_str(const Value& v) { return v.is_string() ? v : Value(v.str()); }

// A filter that jinja2 writes as a generator: what it yields before an error
// comes out first, the error when the consumer gets to it.
template <class Produce>
Value lazy(const char* name, Produce&& produce) {
    std::vector<Value> out;
    std::string error;
    try {
        produce(out);
    } catch (const ValueError& e) {
        error = e.what();
    }
    Value it = Value::iterator(std::move(out), name);
    it.as_iterator().error = std::move(error);
    return it;
}

// jinja2's make_attrgetter: "a.b.0" looks up item by item (getitem).
Value attr_path(Interpreter& in, Value item, const Value& attribute, const Value* dflt) {
    if (attribute.is_int()) {
        item = in.getitem(item, attribute);
    } else {
        const std::string path = attribute.str();
        size_t start = 0;
        while (true) {
            const size_t dot = path.find('.', start);
            const std::string part =
                path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            const bool digits =
                !part.empty() && part.size() < 18 &&
                std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
            item = in.getitem(item,
                              digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
            if (dflt && !dflt->is_none() && item.is_undefined()) item = *dflt;
            if (dot == std::string::npos) break;
            start = dot + 1;
        }
    }
    return item;
}

size_t length(const Value& v) {
    switch (v.kind()) {
        case Kind::Undefined:
            return 0;
        case Kind::String:
            return utf8::length(v.as_string());
        case Kind::List:
            return v.as_list().items.size();
        case Kind::Dict:
            return v.as_dict().items.size();
        default:
            throw ValueError("object of type " + quoted_type(v) + " has no len()");
    }
}

std::string escape_html(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '\'':
                out += "&#39;";
                break;
            case '"':
                out += "&#34;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// Sort key: lowercased strings unless case_sensitive (jinja2's ignore_case).
Value sort_key(const Value& v, bool case_sensitive) {
    if (!case_sensitive && v.is_string()) return Value(lower(v.as_string()));
    return v;
}

std::vector<Value> attribute_list(const Value* attribute) {
    std::vector<Value> out;
    if (!attribute || attribute->is_none()) return out;
    if (attribute->is_string()) {
        const std::string& s = attribute->as_string();
        size_t start = 0;
        while (true) {
            const size_t comma = s.find(',', start);
            out.emplace_back(
                s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        return out;
    }
    out.push_back(*attribute);
    return out;
}

void stable_sort_values(Interpreter& in, std::vector<Value>& items, std::vector<Value>& keys,
                        bool reverse) {
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    in.charge(items.size() * 2 + 1);
    // jinja2's sort keys are one-item lists: equal keys never reach `<`.
    auto lt = [](const Value& a, const Value& b) { return !equal(a, b) && less(a, b); };
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return reverse ? lt(keys[y], keys[x]) : lt(keys[x], keys[y]);
    });
    std::vector<Value> out;
    out.reserve(items.size());
    for (size_t i : order) out.push_back(std::move(items[i]));
    items = std::move(out);
}

Value select_or_reject(Interpreter& in, const Value& v, CallArgs& a, bool select, bool by_attr,
                       const char* name) {
    return lazy(name, [&](std::vector<Value>& out) {
        if (!v.truthy()) return;  // jinja2: `if value:` before iterating
        size_t off = 0;
        Value attribute;
        if (by_attr) {
            if (a.args.empty()) throw ValueError("Missing parameter for attribute name");
            attribute = a.args[0];
            off = 1;
        }
        const bool has_test_name = a.args.size() > off;
        std::string test;
        CallArgs targs;
        if (has_test_name) {
            test = a.args[off].str();
            if (!has_test(test)) throw ValueError("No test named '" + test + "'.");
            targs.args.assign(a.args.begin() + static_cast<std::ptrdiff_t>(off + 1), a.args.end());
            targs.kwargs = a.kwargs;
        }
        for (const Value& item : in.iterate(v)) {
            in.charge(1);
            const Value x = by_attr ? attr_path(in, item, attribute, nullptr) : item;
            bool ok;
            if (has_test_name) {
                CallArgs t = targs;
                ok = apply_test(in, test, x, t);
            } else {
                ok = x.truthy();
            }
            if (ok == select) out.push_back(item);
        }
    });
}

std::string indent(const Value& v, const Value* width, bool first, bool blank) {
    // jinja2 appends "\n" to the value itself: only strings work.
    if (v.is_undefined()) undefined_error(v);
    if (!v.is_string())
        throw ValueError("unsupported operand type(s) for +=: " + quoted_type(v) + " and 'str'");
    const std::string& s0 = v.as_string();
    std::string ind;
    if (width && width->is_string()) {
        ind = width->as_string();
    } else {
        const int64_t w = width ? need_int(width, "indent") : 4;
        ind = std::string(static_cast<size_t>(std::clamp<int64_t>(w, 0, 10000)), ' ');
    }
    const std::string s = s0 + "\n";
    const auto lines = splitlines(s, false);
    std::string rv;
    if (blank) {
        for (size_t i = 0; i < lines.size(); ++i) {
            if (i) {
                rv += '\n';
                rv += ind;
            }
            rv += lines[i];
        }
    } else {
        rv = lines.empty() ? "" : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) {
            rv += '\n';
            if (!lines[i].empty()) rv += ind;
            rv += lines[i];
        }
    }
    if (first) rv = ind + rv;
    return rv;
}

// Python's int(str, base): optional whitespace and sign, "_" between digits.
std::optional<int64_t> parse_int(std::string_view s, int base) {
    const std::string t = strip(s, nullptr, true, true);
    size_t i = 0;
    bool neg = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) neg = t[i++] == '-';
    if (base == 0 || base == 16 || base == 8 || base == 2) {
        if (t.size() > i + 1 && t[i] == '0') {
            const char p = static_cast<char>(t[i + 1] | 0x20);
            const int pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
            if (pb && (base == 0 || base == pb)) {
                base = pb;
                i += 2;
                if (i < t.size() && t[i] == '_') ++i;
            }
        }
        if (base == 0) base = 10;
    }
    if (base < 2 || base > 36) return std::nullopt;
    if (i >= t.size()) return std::nullopt;
    uint64_t v = 0;
    bool prev_digit = false;
    for (; i < t.size(); ++i) {
        const char c = t[i];
        if (c == '_' && prev_digit && i + 1 < t.size() && t[i + 1] != '_') {
            prev_digit = false;
            continue;
        }
        int d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
            d = (c | 0x20) - 'a' + 10;
        } else {
            return std::nullopt;
        }
        if (d >= base) return std::nullopt;
        if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) -
                 static_cast<uint64_t>(d)) /
                    static_cast<uint64_t>(base))
            throw ValueError("integer overflow (the interpreter's integers are 64-bit)");
        v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
        prev_digit = true;
    }
    if (!prev_digit) return std::nullopt;
    return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

// Python's float(str).
std::optional<double> parse_float(std::string_view s) {
    std::string t = strip(s, nullptr, true, true);
    std::string clean;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '_' && i > 0 && i + 1 < t.size() &&
            std::isdigit(static_cast<unsigned char>(t[i - 1])) &&
            std::isdigit(static_cast<unsigned char>(t[i + 1])))
            continue;
        clean += t[i];
    }
    std::string low = lower(clean);
    bool neg = false;
    std::string body = low;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
        neg = body[0] == '-';
        body = body.substr(1);
    }
    if (body == "inf" || body == "infinity") return neg ? -HUGE_VAL : HUGE_VAL;
    if (body == "nan") return std::nan("");
    if (body.empty() || body.find_first_not_of("0123456789.e+-") != std::string::npos)
        return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(clean.c_str(), &end);
    if (end != clean.c_str() + clean.size()) return std::nullopt;
    return d;
}

int64_t float_to_int(double d) {
    if (std::isnan(d)) throw ValueError("cannot convert float NaN to integer");
    if (std::isinf(d)) throw ValueError("cannot convert float infinity to integer");
    if (d >= 9.2233720368547758e18 || d < -9.2233720368547758e18)
        throw ValueError("integer overflow (the interpreter's integers are 64-bit)");
    return static_cast<int64_t>(std::trunc(d));
}

Value to_int(const Value& v, const Value& dflt, int base) {
    if (v.is_undefined()) undefined_error(v);
    if (v.is_string()) {
        if (auto i = parse_int(v.as_string(), base)) return Value(*i);
        if (auto d = parse_float(v.as_string())) {
            if (std::isinf(*d) || std::isnan(*d)) return dflt;
            return Value(float_to_int(*d));
        }
        return dflt;
    }
    if (v.kind() == Kind::Float) return Value(float_to_int(v.as_double()));
    if (v.kind() == Kind::Int || v.kind() == Kind::Bool) return Value(v.as_int());
    return dflt;
}

Value sum_values(Interpreter& in, const std::vector<Value>& items, Value acc) {
    for (const Value& x : items) {
        in.charge(1);
        if (x.is_undefined()) undefined_error(x);
        if (acc.is_number() && x.is_number()) {
            if (acc.kind() == Kind::Float || x.kind() == Kind::Float) {
                acc = Value(acc.as_double() + x.as_double());
            } else {
                const int64_t a = acc.as_int(), b = x.as_int();
                if ((b > 0 && a > std::numeric_limits<int64_t>::max() - b) ||
                    (b < 0 && a < std::numeric_limits<int64_t>::min() - b))
                    throw ValueError("integer overflow (the interpreter's integers are 64-bit)");
                acc = Value(a + b);
            }
        } else if (acc.is_list() && x.is_list() && acc.as_list().kind == x.as_list().kind) {
            std::vector<Value> v = acc.as_list().items;
            v.insert(v.end(), x.as_list().items.begin(), x.as_list().items.end());
            in.check_items(v.size());
            acc = Value::list(std::move(v), acc.as_list().kind);
        } else {
            throw ValueError("unsupported operand type(s) for +: " + quoted_type(acc) + " and " +
                             quoted_type(x));
        }
    }
    return acc;
}

Value min_max(Interpreter& in, const Value& v, CallArgs& a, bool want_max) {
    const Bound b = bind(a, {"case_sensitive", "attribute"}, want_max ? "max" : "min");
    const bool cs = b[0] && b[0]->truthy();
    std::vector<Value> items = in.iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    auto key = [&](const Value& x) {
        return sort_key(b.has(1) ? attr_path(in, x, *b[1], nullptr) : x, cs);
    };
    size_t best = 0;
    Value best_key = key(items[0]);
    for (size_t i = 1; i < items.size(); ++i) {
        in.charge(1);
        Value k = key(items[i]);
        if (want_max ? less(best_key, k) : less(k, best_key)) {
            best = i;
            best_key = std::move(k);
        }
    }
    return items[best];
}

Value json_filter(const Value& v, CallArgs& a) {
    // transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
    const Bound b = bind(a, {"ensure_ascii", "indent", "separators", "sort_keys"}, "tojson");
    JsonStyle st;
    st.ensure_ascii = b[0] && b[0]->truthy();
    if (b.has(1)) {
        st.pretty = true;
        if (b[1]->is_string()) {
            st.indent = b[1]->as_string();
        } else {
            const int64_t n = need_int(b[1], "tojson");
            st.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(n, 0, 1000)), ' ');
        }
        st.item_sep = ",";
    }
    if (b.has(2)) {
        const Value& sep = *b[2];
        if (!sep.is_list() || sep.as_list().items.size() != 2 ||
            !sep.as_list().items[0].is_string() || !sep.as_list().items[1].is_string())
            throw ValueError("tojson: separators must be a pair of strings");
        st.item_sep = sep.as_list().items[0].as_string();
        st.key_sep = sep.as_list().items[1].as_string();
    }
    st.sort_keys = b[3] && b[3]->truthy();
    return Value(to_json(v, st));
}

std::string jinja_title(const std::string& s) {
    // jinja2's do_title: words split at runs of [-\s({\[<]; each word's first
    // character upper-cased, the rest lower-cased.
    const U32 u = decode(s);
    U32 out;
    auto sep = [](char32_t c) {
        return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || utf8::is_space(c);
    };
    bool at_start = true;
    for (char32_t c : u) {
        if (sep(c)) {
            out += c;
            at_start = true;
        } else if (at_start) {
            append_upper(out, c);
            at_start = false;
        } else {
            out += utf8::to_lower(c);
        }
    }
    return encode(out);
}

}  // namespace

namespace {

const char* const kFilters[] = {
    "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e",
    "escape", "first", "float", "forceescape", "format", "indent", "int", "items", "join", "last",
    "length", "list", "lower", "map", "max", "min", "pprint", "reject", "rejectattr", "replace",
    "reverse", "round", "safe", "select", "selectattr", "sort", "string", "sum", "title", "tojson",
    "trim", "truncate", "unique", "upper", "wordcount",
    // jinja2 has these; chat templates do not use them (a render error here)
    "filesizeformat", "groupby", "random", "slice", "striptags", "urlencode", "urlize", "wordwrap",
    "xmlattr"};

const char* const kTests[] = {
    "boolean", "callable", "defined",  "divisibleby", "eq",    "equalto", "escaped",
    "even",    "false",    "filter",   "float",       "ge",    "gt",      "greaterthan",
    "in",      "integer",  "iterable", "le",          "lower", "lt",      "lessthan",
    "mapping", "ne",       "none",     "number",      "odd",   "sameas",  "sequence",
    "string",  "test",     "true",     "undefined",   "upper", "==",      "!=",
    ">",       ">=",       "<",        "<="};

}  // namespace

bool has_filter(std::string_view name) { return listed(kFilters, name); }
bool has_test(std::string_view name) { return listed(kTests, name); }

Value apply_filter(Interpreter& in, std::string_view name, const Value& v, CallArgs& a) {
    in.charge(1);
    if (name == "trim") {
        const Bound b = bind(a, {"chars"}, name);
        return Value(strip(v.str(), b[0], true, true));
    }
    if (name == "tojson") return json_filter(v, a);
    if (name == "length" || name == "count") {
        bind(a, {}, name);
        return Value(static_cast<int64_t>(length(v)));
    }
    if (name == "list") {
        bind(a, {}, name);
        auto items = in.iterate(v);
        return Value::list(std::move(items));
    }
    if (name == "string") {
        bind(a, {}, name);
        return soft_str(v);
    }
    if (name == "safe") {
        bind(a, {}, name);
        return soft_str(v);
    }
    if (name == "upper") {
        bind(a, {}, name);
        return Value(upper(v.str()));
    }
    if (name == "lower") {
        bind(a, {}, name);
        return Value(lower(v.str()));
    }
    if (name == "capitalize") {
        bind(a, {}, name);
        return Value(capitalize(v.str()));
    }
    if (name == "title") {
        bind(a, {}, name);
        return Value(jinja_title(v.str()));
    }
    if (name == "default" || name == "d") {
        const Bound b = bind(a, {"default_value", "boolean"}, name);
        const bool boolean = b[1] && b[1]->truthy();
        if (v.is_undefined() || (boolean && !v.truthy())) return b[0] ? *b[0] : Value("");
        return v;
    }
    if (name == "join") {
        const Bound b = bind(a, {"d", "attribute"}, name);
        const std::string sep = b[0] ? b[0]->str() : "";
        std::string out;
        bool first = true;
        for (const Value& x : in.iterate(v)) {
            if (!first) out += sep;
            first = false;
            out += (b.has(1) ? attr_path(in, x, *b[1], nullptr) : x).str();
            in.check_size(out.size());
        }
        return Value(std::move(out));
    }
    if (name == "first") {
        bind(a, {}, name);
        if (v.kind() == Kind::Iterator) {
            IteratorData& it = v.as_iterator();
            if (it.pos < it.items.size()) return it.items[it.pos++];
            it.check();
            return Value::undefined("No first item, sequence was empty.");
        }
        auto items = in.iterate(v);
        if (items.empty()) return Value::undefined("No first item, sequence was empty.");
        return items.front();
    }
    if (name == "last") {
        bind(a, {}, name);
        if (v.kind() == Kind::Iterator) throw ValueError("'generator' object is not reversible");
        if (!v.is_string() && !v.is_list() && !v.is_dict() && !v.is_undefined())
            throw ValueError(quoted_type(v) + " object is not reversible");
        auto items = in.iterate(v);
        if (items.empty()) return Value::undefined("No last item, sequence was empty.");
        return items.back();
    }
    if (name == "replace") {
        const Bound b = bind(a, {"old", "new", "count"}, name);
        if (!b[0] || !b[1])
            throw ValueError("replace() missing required arguments 'old' and 'new'");
        return Value(
            replace(in, v.str(), b[0]->str(), b[1]->str(), b.has(2) ? need_int(b[2], name) : -1));
    }
    if (name == "items") {
        bind(a, {}, name);
        if (v.is_undefined()) return Value::iterator({}, "do_items");
        if (!v.is_dict()) {
            // A generator: the error comes when it is iterated.
            Value it = Value::iterator({}, "do_items");
            it.as_iterator().error = "Can only get item pairs from a mapping.";
            return it;
        }
        std::vector<Value> out;
        for (const auto& [k, x] : v.as_dict().items) out.push_back(Value::tuple({k, x}));
        return Value::iterator(std::move(out), "do_items");
    }
    if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
        return select_or_reject(in, v, a, name == "selectattr" || name == "select",
                                name == "selectattr" || name == "rejectattr", "select_or_reject");
    }
    if (name == "map") {
        return lazy("sync_do_map", [&](std::vector<Value>& out) {
            if (!v.truthy()) return;  // jinja2: `if value:` before iterating
            if (a.args.empty() && a.kwarg("attribute")) {
                const Value attribute = *a.kwarg("attribute");
                const Value* dflt = a.kwarg("default");
                for (const auto& [k, x] : a.kwargs)
                    if (k != "attribute" && k != "default")
                        throw ValueError("Unexpected keyword argument '" + k + "'");
                for (const Value& x : in.iterate(v)) {
                    in.charge(1);
                    out.push_back(attr_path(in, x, attribute, dflt));
                }
                return;
            }
            if (a.args.empty()) throw ValueError("map requires a filter argument");
            const std::string filter = a.args[0].str();
            if (!has_filter(filter)) throw ValueError("No filter named '" + filter + "'.");
            CallArgs fargs;
            fargs.args.assign(a.args.begin() + 1, a.args.end());
            fargs.kwargs = a.kwargs;
            for (const Value& x : in.iterate(v)) {
                CallArgs f = fargs;
                out.push_back(apply_filter(in, filter, x, f));
            }
        });
    }
    if (name == "unique") {
        const Bound b = bind(a, {"case_sensitive", "attribute"}, name);
        const bool cs = b[0] && b[0]->truthy();
        return lazy("do_unique", [&](std::vector<Value>& out) {
            std::vector<Value> seen;
            for (const Value& x : in.iterate(v)) {
                Value key = sort_key(b.has(1) ? attr_path(in, x, *b[1], nullptr) : x, cs);
                check_hashable(key);
                in.charge(1 + seen.size() / 8);
                bool dup = false;
                for (const Value& s : seen)
                    if (equal(s, key)) {
                        dup = true;
                        break;
                    }
                if (!dup) {
                    seen.push_back(std::move(key));
                    out.push_back(x);
                }
            }
        });
    }
    if (name == "sort") {
        const Bound b = bind(a, {"reverse", "case_sensitive", "attribute"}, name);
        std::vector<Value> items = in.iterate(v);
        const auto attrs = attribute_list(b[2]);
        const bool cs = b[1] && b[1]->truthy();
        std::vector<Value> keys;
        keys.reserve(items.size());
        for (const Value& x : items) {
            if (attrs.empty()) {
                keys.push_back(sort_key(x, cs));
            } else if (attrs.size() == 1) {
                keys.push_back(sort_key(attr_path(in, x, attrs[0], nullptr), cs));
            } else {
                std::vector<Value> parts;
                for (const Value& at : attrs)
                    parts.push_back(sort_key(attr_path(in, x, at, nullptr), cs));
                keys.push_back(Value::list(std::move(parts)));
            }
        }
        stable_sort_values(in, items, keys, b[0] && b[0]->truthy());
        return Value::list(std::move(items));
    }
    if (name == "dictsort") {
        const Bound b = bind(a, {"case_sensitive", "by", "reverse"}, name);
        if (!v.is_dict()) throw ValueError("dictsort: a mapping is required");
        const bool cs = b[0] && b[0]->truthy();
        const std::string by = b[1] ? b[1]->str() : "key";
        if (by != "key" && by != "value")
            throw ValueError("You can only sort by either 'key' or 'value'");
        std::vector<Value> items, keys;
        for (const auto& [k, x] : v.as_dict().items) {
            items.push_back(Value::tuple({k, x}));
            keys.push_back(sort_key(by == "key" ? k : x, cs));
        }
        stable_sort_values(in, items, keys, b[2] && b[2]->truthy());
        return Value::list(std::move(items));
    }
    if (name == "reverse") {
        bind(a, {}, name);
        if (v.is_string()) {
            U32 u = decode(v.as_string());
            std::reverse(u.begin(), u.end());
            return Value(encode(u));
        }
        if (v.kind() == Kind::Iterator) {
            auto items = v.as_iterator().take();
            std::reverse(items.begin(), items.end());
            return Value::list(std::move(items));
        }
        if (v.is_list() || v.is_dict() || v.is_undefined()) {
            auto items = in.iterate(v);
            std::reverse(items.begin(), items.end());
            return Value::iterator(std::move(items), "reversed");
        }
        throw ValueError("argument must be iterable");
    }
    if (name == "int") {
        const Bound b = bind(a, {"default", "base"}, name);
        const int64_t base = b[1] ? need_int(b[1], name) : 10;
        return to_int(v, b[0] ? *b[0] : Value(int64_t{0}),
                      static_cast<int>(std::clamp<int64_t>(base, -1, 37)));
    }
    if (name == "float") {
        const Bound b = bind(a, {"default"}, name);
        const Value dflt = b[0] ? *b[0] : Value(0.0);
        if (v.is_undefined()) undefined_error(v);
        if (v.is_number()) return Value(v.as_double());
        if (v.is_string()) {
            if (auto d = parse_float(v.as_string())) return Value(*d);
        }
        return dflt;
    }
    if (name == "abs") {
        bind(a, {}, name);
        if (v.kind() == Kind::Float) return Value(std::fabs(v.as_double()));
        if (v.kind() == Kind::Int || v.kind() == Kind::Bool) {
            if (v.as_int() == std::numeric_limits<int64_t>::min())
                throw ValueError("integer overflow (the interpreter's integers are 64-bit)");
            return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
        }
        throw ValueError("bad operand type for abs(): " + quoted_type(v));
    }
    if (name == "round") {
        const Bound b = bind(a, {"precision", "method"}, name);
        const int64_t prec = b[0] ? std::clamp<int64_t>(need_int(b[0], name), -300, 300) : 0;
        const std::string method = b[1] ? b[1]->str() : "common";
        if (method != "common" && method != "ceil" && method != "floor")
            throw ValueError("method must be common, ceil or floor");
        if (!v.is_number())
            throw ValueError("type " + std::string(v.type_name()) +
                             " doesn't define __round__ method");
        if (method == "common" && v.kind() != Kind::Float && prec >= 0) return Value(v.as_int());
        const double scale = std::pow(10.0, static_cast<double>(prec));
        const double x = v.as_double() * scale;
        const double r = method == "ceil"    ? std::ceil(x)
                         : method == "floor" ? std::floor(x)
                                             : std::nearbyint(x);
        return Value(r / scale);
    }
    if (name == "sum") {
        const Bound b = bind(a, {"attribute", "start"}, name);
        std::vector<Value> items = in.iterate(v);
        if (b.has(0))
            for (Value& x : items) x = attr_path(in, x, *b[0], nullptr);
        return sum_values(in, items, b[1] ? *b[1] : Value(int64_t{0}));
    }
    if (name == "max" || name == "min") return min_max(in, v, a, name == "max");
    if (name == "e" || name == "escape" || name == "forceescape") {
        bind(a, {}, name);
        return Value(escape_html(v.str()));
    }
    if (name == "indent") {
        const Bound b = bind(a, {"width", "first", "blank"}, name);
        return Value(indent(v, b[0], b[1] && b[1]->truthy(), b[2] && b[2]->truthy()));
    }
    if (name == "center") {
        const Bound b = bind(a, {"width"}, name);
        const int64_t w = b[0] ? need_int(b[0], name) : 80;
        in.check_size(static_cast<size_t>(std::clamp<int64_t>(w, 0, int64_t{1} << 40)));
        return Value(pad(v.str(), w, ' ', 0));
    }
    if (name == "truncate") {
        const Bound b = bind(a, {"length", "killwords", "end", "leeway"}, name);
        const int64_t len = b[0] ? clamp_len(need_int(b[0], name)) : 255;
        const bool killwords = b[1] && b[1]->truthy();
        const std::string end = b[2] ? b[2]->str() : "...";
        const int64_t leeway = b.has(3) ? clamp_len(need_int(b[3], name)) : 5;
        if (len < static_cast<int64_t>(utf8::length(end)))
            throw ValueError("expected length >= " + std::to_string(utf8::length(end)) + ", got " +
                             std::to_string(len));
        if (leeway < 0) throw ValueError("expected leeway >= 0, got " + std::to_string(leeway));
        if (!v.is_string()) {
            // jinja2 truncates the value itself (len(), slicing).
            if (v.is_undefined() || static_cast<int64_t>(length(v)) <= len + leeway) return v;
            throw ValueError(quoted_type(v) + " object cannot be truncated");
        }
        const std::string& s = v.as_string();
        const U32 u = decode(s);
        if (static_cast<int64_t>(u.size()) <= len + leeway) return v;
        const int64_t keep = std::max<int64_t>(0, len - static_cast<int64_t>(utf8::length(end)));
        U32 head = u.substr(
            0, static_cast<size_t>(std::min<int64_t>(keep, static_cast<int64_t>(u.size()))));
        if (!killwords) {
            const size_t sp = head.rfind(U' ');
            if (sp != U32::npos) head.resize(sp);
        }
        return Value(encode(head) + end);
    }
    if (name == "wordcount") {
        bind(a, {}, name);
        int64_t n = 0;
        bool in_word = false;
        for (char32_t c : decode(v.str())) {
            const bool w = utf8::is_alpha(c) || utf8::is_digit(c) || c == '_';
            if (w && !in_word) ++n;
            in_word = w;
        }
        return Value(n);
    }
    if (name == "attr") {
        const Bound b = bind(a, {"name"}, name);
        const std::string attr = b[0] ? b[0]->str() : "";
        if (v.is_undefined()) undefined_error(v);
        if (auto m = method(in, v, attr)) return *m;
        if (v.kind() == Kind::Namespace) {
            if (Value* x = v.as_namespace().find(attr)) return *x;
        }
        return Value::undefined("'" + std::string(v.type_name()) + " object' has no attribute '" +
                                attr + "'");
    }
    if (name == "format") {
        if (!a.args.empty() && !a.kwargs.empty())
            throw ValueError("can't handle positional and keyword arguments at the same time");
        std::vector<std::pair<Value, Value>> kw;
        for (const auto& [k, x] : a.kwargs) kw.emplace_back(Value(k), x);
        const Value rhs = a.kwargs.empty() ? Value::tuple(a.args) : Value::dict(std::move(kw));
        // str % args, through the same code as the % operator
        return Value(percent_format(in, v.str(), rhs));
    }
    if (name == "pprint") {
        bind(a, {}, name);
        return Value(v.repr());
    }
    if (name == "batch") {
        const Bound b = bind(a, {"linecount", "fill_with"}, name);
        const int64_t n = need_int(b[0], name);
        if (n <= 0) throw ValueError("batch: linecount must be positive");
        std::vector<Value> out, cur;
        for (const Value& x : in.iterate(v)) {
            cur.push_back(x);
            if (static_cast<int64_t>(cur.size()) == n) {
                out.push_back(Value::list(std::move(cur)));
                cur.clear();
            }
        }
        if (!cur.empty()) {
            if (b.has(1))
                while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*b[1]);
            out.push_back(Value::list(std::move(cur)));
        }
        return Value::iterator(std::move(out), "do_batch");
    }
    throw ValueError("the filter '" + std::string(name) + "' is not supported");
}

bool apply_test(Interpreter& in, std::string_view name, const Value& v, CallArgs& a) {
    in.charge(1);
    auto arg = [&]() -> const Value& {
        if (a.args.empty()) {
            if (!a.kwargs.empty()) return a.kwargs[0].second;
            throw ValueError("test '" + std::string(name) + "' needs an argument");
        }
        return a.args[0];
    };
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "string") return v.is_string();
    if (name == "number") return v.is_number();
    if (name == "integer") return v.kind() == Kind::Int;
    if (name == "float") return v.kind() == Kind::Float;
    if (name == "boolean") return v.kind() == Kind::Bool;
    if (name == "true") return v.kind() == Kind::Bool && v.as_bool();
    if (name == "false") return v.kind() == Kind::Bool && !v.as_bool();
    if (name == "mapping") return v.is_dict();
    if (name == "iterable")
        return v.is_string() || v.is_list() || v.is_dict() || v.kind() == Kind::Iterator ||
               v.is_undefined();
    if (name == "sequence")
        return v.is_string() || v.is_dict() || v.is_undefined() ||
               (v.is_list() &&
                (v.as_list().kind == SeqKind::List || v.as_list().kind == SeqKind::Tuple));
    if (name == "callable") return v.kind() == Kind::Function || v.is_undefined();
    if (name == "escaped") return false;
    if (name == "lower" || name == "upper") return all_cased(decode(v.str()), name == "upper");
    if (name == "even" || name == "odd" || name == "divisibleby") {
        // jinja2: value % 2 == 1, value % 2 == 0, value % num == 0 (Python's %).
        const Value m = py_mod(in, v, name == "divisibleby" ? arg() : Value(int64_t{2}));
        return equal(m, Value(int64_t{name == "odd" ? 1 : 0}));
    }
    if (name == "eq" || name == "equalto" || name == "==") return equal(v, arg());
    if (name == "ne" || name == "!=") return !equal(v, arg());
    if (name == "lt" || name == "lessthan" || name == "<") return less(v, arg());
    if (name == "gt" || name == "greaterthan" || name == ">") return less(arg(), v);
    if (name == "le" || name == "<=") return less(v, arg()) || equal(v, arg());
    if (name == "ge" || name == ">=") return less(arg(), v) || equal(v, arg());
    if (name == "in") {
        const Value& seq = arg();
        switch (seq.kind()) {
            case Kind::String:
                if (!v.is_string())
                    throw ValueError(
                        std::string("'in <string>' requires string as left operand, not ") +
                        v.type_name());
                return seq.as_string().find(v.as_string()) != std::string::npos;
            case Kind::List:
                for (const Value& x : seq.as_list().items)
                    if (equal(x, v)) return true;
                return false;
            case Kind::Dict:
                check_hashable(v);
                return seq.as_dict().find_key(v) != nullptr;
            case Kind::Iterator:
            case Kind::Undefined:
                for (const Value& x : in.iterate(seq))
                    if (equal(x, v)) return true;
                return false;
            default:
                throw ValueError(std::string("argument of type '") + seq.type_name() +
                                 "' is not iterable");
        }
    }
    if (name == "sameas") {
        const Value& o = arg();
        if (v.kind() != o.kind()) return false;
        switch (v.kind()) {
            case Kind::None:
            case Kind::Undefined:
                return v.is_none();
            case Kind::Bool:
                return v.as_bool() == o.as_bool();
            case Kind::Int:
                return v.as_int() == o.as_int() && v.as_int() >= -5 && v.as_int() <= 256;
            default:
                return equal(v, o) && (v.kind() == Kind::Function || v.kind() == Kind::Namespace ||
                                       v.kind() == Kind::Iterator);
        }
    }
    if (name == "filter") return v.is_string() && has_filter(v.as_string());
    if (name == "test") return v.is_string() && has_test(v.as_string());
    throw ValueError("No test named '" + std::string(name) + "'.");
}

}  // namespace powerinfer::jinja
