// The str, dict and list methods templates call (`s.strip()`,
// `d.items()`, `xs.index(x)`), with the semantics of Python 3 under
// transformers' sandboxed jinja2 environment: a method that would change
// its object is refused as unsafe.
#include <algorithm>

#include "chat/jinja_internal.h"
#include "chat/jinja_strings.h"

namespace powerinfer::jinja {
using namespace pystr;

namespace {

bool is_mutating(const Value& obj, std::string_view name) {
    if (obj.is_list() && obj.as_list().kind == SeqKind::List) {
        for (const char* m :
             {"append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"})
            if (name == m) return true;
    }
    if (obj.is_dict()) {
        for (const char* m : {"clear", "pop", "popitem", "setdefault", "update"})
            if (name == m) return true;
    }
    return false;
}

const char* const kStrMethods[] = {
    "capitalize", "casefold",  "center",     "count",      "endswith",     "find",
    "format",     "index",     "isalnum",    "isalpha",    "isdecimal",    "isdigit",
    "islower",    "isnumeric", "isspace",    "istitle",    "isupper",      "join",
    "ljust",      "lower",     "lstrip",     "partition",  "removeprefix", "removesuffix",
    "replace",    "rfind",     "rindex",     "rjust",      "rpartition",   "rsplit",
    "rstrip",     "split",     "splitlines", "startswith", "strip",        "swapcase",
    "title",      "upper",     "zfill"};
const char* const kDictMethods[] = {"copy", "get", "items", "keys", "values"};
const char* const kListMethods[] = {"copy", "count", "index"};

Value call_str_method(Interpreter& in, const std::string& s, std::string_view name, CallArgs& a) {
    in.charge(1 + s.size() / 64);
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        const Bound b = bind(a, {"chars"}, name);
        return Value(strip(s, b[0], name != "rstrip", name != "lstrip"));
    }
    if (name == "split" || name == "rsplit") {
        const Bound b = bind(a, {"sep", "maxsplit"}, name);
        const int64_t maxsplit = b[1] ? need_int(b[1], name) : -1;
        auto parts = split(s, b[0], maxsplit, name == "rsplit");
        in.check_items(parts.size());
        return Value::list(std::move(parts));
    }
    if (name == "splitlines") {
        const Bound b = bind(a, {"keepends"}, name);
        std::vector<Value> out;
        for (auto& l : splitlines(s, b[0] && b[0]->truthy())) out.emplace_back(std::move(l));
        return Value::list(std::move(out));
    }
    if (name == "replace") {
        const Bound b = bind(a, {"old", "new", "count"}, name);
        const std::string& old = need_str(b[0], name, "old");
        const std::string& with = need_str(b[1], name, "new");
        return Value(replace(in, s, old, with, b[2] ? need_int(b[2], name) : -1));
    }
    if (name == "startswith" || name == "endswith") {
        const Bound b = bind(a, {"prefix", "start", "end"}, name);
        if (!b[0]) throw ValueError(std::string(name) + "() takes at least 1 argument (0 given)");
        return Value(affix(s, *b[0], b[1], b[2], name == "endswith"));
    }
    if (name == "upper") return Value(upper(s));
    if (name == "lower" || name == "casefold") return Value(lower(s));
    if (name == "title") return Value(py_title(s));
    if (name == "capitalize") return Value(capitalize(s));
    if (name == "swapcase") {
        U32 out;
        for (char32_t c : decode(s)) {
            if (utf8::is_upper(c)) {
                out += utf8::to_lower(c);
            } else if (utf8::is_lower(c)) {
                append_upper(out, c);
            } else {
                out += c;
            }
        }
        return Value(encode(out));
    }
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex" ||
        name == "count") {
        const Bound b = bind(a, {"sub"}, name);
        const std::string& sub = need_str(b[0], name, "sub");
        if (name == "count") {
            if (sub.empty()) return Value(static_cast<int64_t>(utf8::length(s) + 1));
            int64_t n = 0;
            for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size()))
                ++n;
            return Value(n);
        }
        const size_t p = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
        if (p == std::string::npos) {
            if (name == "index" || name == "rindex") throw ValueError("substring not found");
            return Value(int64_t{-1});
        }
        return Value(cp_index(s, p));
    }
    if (name == "join") {
        const Bound b = bind(a, {"iterable"}, name);
        if (!b[0]) throw ValueError("join() takes exactly one argument (0 given)");
        std::string out;
        size_t i = 0;
        for (const Value& v : in.iterate(*b[0])) {
            if (!v.is_string())
                throw ValueError("sequence item " + std::to_string(i) +
                                 ": expected str instance, " + v.type_name() + " found");
            if (i++) out += s;
            out += v.as_string();
            in.check_size(out.size());
        }
        return Value(std::move(out));
    }
    if (name == "center" || name == "ljust" || name == "rjust") {
        const Bound b = bind(a, {"width", "fillchar"}, name);
        const int64_t w = need_int(b[0], name);
        in.check_size(static_cast<size_t>(std::max<int64_t>(0, clamp_len(w))));
        return Value(pad(s, w, fill_char(b[1]), name == "ljust" ? -1 : name == "rjust" ? 1 : 0));
    }
    if (name == "zfill") {
        const Bound b = bind(a, {"width"}, name);
        const int64_t w = clamp_len(need_int(b[0], name));
        in.check_size(static_cast<size_t>(std::max<int64_t>(0, w)));
        const auto len = static_cast<int64_t>(utf8::length(s));
        if (w <= len) return Value(s);
        const bool sign = !s.empty() && (s[0] == '+' || s[0] == '-');
        return Value((sign ? s.substr(0, 1) : "") + std::string(static_cast<size_t>(w - len), '0') +
                     (sign ? s.substr(1) : s));
    }
    if (name == "removeprefix" || name == "removesuffix") {
        const Bound b = bind(a, {"affix"}, name);
        const std::string& x = need_str(b[0], name, "affix");
        if (name == "removeprefix")
            return Value(s.compare(0, x.size(), x) == 0 ? s.substr(x.size()) : s);
        return Value(s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0
                         ? s.substr(0, s.size() - x.size())
                         : s);
    }
    if (name == "partition" || name == "rpartition") {
        const Bound b = bind(a, {"sep"}, name);
        const std::string& sep = need_str(b[0], name, "sep");
        if (sep.empty()) throw ValueError("empty separator");
        const size_t p = name == "partition" ? s.find(sep) : s.rfind(sep);
        if (p == std::string::npos) {
            return name == "partition" ? Value::tuple({Value(s), Value(""), Value("")})
                                       : Value::tuple({Value(""), Value(""), Value(s)});
        }
        return Value::tuple({Value(s.substr(0, p)), Value(sep), Value(s.substr(p + sep.size()))});
    }
    if (name == "format") return Value(str_format(in, s, a));
    if (name.substr(0, 2) == "is") {
        bind(a, {}, name);
        const U32 u = decode(s);
        auto all = [&](auto pred) { return !u.empty() && std::all_of(u.begin(), u.end(), pred); };
        if (name == "isspace") return Value(all(utf8::is_space));
        if (name == "isdigit" || name == "isdecimal" || name == "isnumeric")
            return Value(all(utf8::is_digit));
        if (name == "isalpha") return Value(all(utf8::is_alpha));
        if (name == "isalnum")
            return Value(all([](char32_t c) { return utf8::is_alpha(c) || utf8::is_digit(c); }));
        if (name == "istitle") {
            bool any_cased = false, ok = true, prev = false;
            for (char32_t c : u) {
                if (utf8::is_upper(c)) {
                    if (prev) ok = false;
                    prev = any_cased = true;
                } else if (utf8::is_lower(c)) {
                    if (!prev) ok = false;
                    prev = any_cased = true;
                } else {
                    prev = false;
                }
            }
            return Value(ok && any_cased);
        }
        return Value(all_cased(u, name == "isupper"));  // islower, isupper
    }
    throw ValueError("'str' object has no attribute '" + std::string(name) + "'");
}

Value call_method(Interpreter& in, const Value& obj, const std::string& name, CallArgs& a) {
    if (obj.is_string()) return call_str_method(in, obj.as_string(), name, a);
    if (obj.is_dict()) {
        const DictData& d = obj.as_dict();
        in.charge(1 + d.items.size() / 8);
        if (name == "get") {
            const Bound b = bind(a, {"key", "default"}, name);
            if (!b[0]) throw ValueError("get expected at least 1 argument, got 0");
            check_hashable(*b[0]);
            if (const Value* v = d.find_key(*b[0])) return *v;
            return b[1] ? *b[1] : Value::none();
        }
        bind(a, {}, name);
        if (name == "copy") return obj;
        std::vector<Value> out;
        out.reserve(d.items.size());
        for (const auto& [k, v] : d.items) {
            if (name == "items") {
                out.push_back(Value::tuple({k, v}));
            } else {
                out.push_back(name == "keys" ? k : v);
            }
        }
        return Value::list(std::move(out), name == "items"  ? SeqKind::Items
                                           : name == "keys" ? SeqKind::Keys
                                                            : SeqKind::Values);
    }
    if (obj.is_list()) {
        const auto& items = obj.as_list().items;
        in.charge(1 + items.size() / 8);
        if (name == "copy") {
            bind(a, {}, name);
            return obj;
        }
        const Bound b = bind(a, {"value"}, name);
        if (!b[0]) throw ValueError(name + "() takes exactly one argument (0 given)");
        int64_t n = 0;
        for (size_t i = 0; i < items.size(); ++i) {
            if (equal(items[i], *b[0])) {
                if (name == "index") return Value(static_cast<int64_t>(i));
                ++n;
            }
        }
        if (name == "index") throw ValueError(b[0]->repr() + " is not in list");
        return Value(n);
    }
    throw ValueError(quoted_type(obj) + " object has no attribute '" + name + "'");
}

}  // namespace

std::optional<Value> method(Interpreter& in, const Value& obj, std::string_view name) {
    bool known = false;
    if (obj.is_string()) {
        known = listed(kStrMethods, name);
    } else if (obj.is_dict()) {
        known = listed(kDictMethods, name);
    } else if (obj.is_list() &&
               (obj.as_list().kind == SeqKind::List || obj.as_list().kind == SeqKind::Tuple)) {
        known =
            listed(kListMethods, name) && !(obj.as_list().kind == SeqKind::Tuple && name == "copy");
    }
    if (!known) {
        if (is_mutating(obj, name))
            return Value::undefined("access to attribute '" + std::string(name) + "' of " +
                                    quoted_type(obj) + " object is unsafe.");
        return std::nullopt;
    }
    (void)in;
    auto f = std::make_shared<FunctionData>();
    f->name = std::string(name);
    f->call = [obj, n = std::string(name)](Interpreter& in2, CallArgs& a) {
        return call_method(in2, obj, n, a);
    };
    return Value::function(std::move(f));
}

}  // namespace powerinfer::jinja
