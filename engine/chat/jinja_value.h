// Values of the Jinja interpreter (jinja.h), with Python's semantics: what
// jinja2 does with them is what Python does (str(), repr(), ==, <, truth,
// json.dumps). Strings are UTF-8; lengths, indices and slices count code
// points, as Python's str does. Lists, dicts and strings are immutable and
// shared (copying a Value is cheap), as in jinja2's ImmutableSandboxedEnvironment.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"

namespace powerinfer::jinja {

// An error in a template or in what it does: the message says what, and
// where (line and column, 1-based) when it is known.
class TemplateError : public EngineError {
public:
    TemplateError(const std::string& message, int line, int column);
    const std::string& message() const { return message_; }  // without the location
    int line() const { return line_; }
    int column() const { return column_; }

private:
    std::string message_;
    int line_ = 0, column_ = 0;
};

// Thrown by value operations, which do not know where they are; the
// interpreter adds the location of the expression (TemplateError).
class ValueError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class Kind : uint8_t {
    Undefined,  // jinja2's default Undefined: prints as "", falsy, fails on use
    None,
    Bool,
    Int,
    Float,
    String,
    List,  // also tuples and dict views (SeqKind)
    Dict,
    Iterator,   // a one-shot generator (select, map, ...): truthy, no len()
    Function,   // macros, globals, bound methods
    Namespace,  // namespace(): the one mutable object
};

enum class SeqKind : uint8_t { List, Tuple, Items, Keys, Values };

class Value;
struct ListData;
struct DictData;
struct IteratorData;
struct FunctionData;
struct NamespaceData;

// Containers nest at most this deep (repr, ==, tojson recurse).
constexpr int kMaxNesting = 256;

class Value {
public:
    Value() = default;  // undefined
    static Value undefined(std::string hint = {});
    static Value none();
    Value(bool b) : kind_(Kind::Bool) { u_.b = b; }
    Value(int v) : Value(static_cast<int64_t>(v)) {}
    Value(int64_t v) : kind_(Kind::Int) { u_.i = v; }
    Value(double v) : kind_(Kind::Float) { u_.f = v; }
    Value(std::string s);
    Value(std::string_view s) : Value(std::string(s)) {}
    Value(const char* s) : Value(std::string(s)) {}
    static Value list(std::vector<Value> items, SeqKind kind = SeqKind::List);
    static Value tuple(std::vector<Value> items) { return list(std::move(items), SeqKind::Tuple); }
    static Value dict(std::vector<std::pair<Value, Value>> items);  // later keys replace earlier
    static Value iterator(std::vector<Value> items, std::string name);
    static Value function(std::shared_ptr<const FunctionData> f);
    static Value ns(NamespaceData* ns);  // owned by the render

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::Undefined; }
    bool is_none() const { return kind_ == Kind::None; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_int() const { return kind_ == Kind::Int; }  // not bool
    bool is_number() const {
        return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool;
    }
    bool is_list() const { return kind_ == Kind::List; }
    bool is_dict() const { return kind_ == Kind::Dict; }

    bool as_bool() const { return u_.b; }
    int64_t as_int() const { return kind_ == Kind::Bool ? (u_.b ? 1 : 0) : u_.i; }
    double as_double() const;              // Int, Bool or Float
    const std::string& as_string() const;  // String only
    const ListData& as_list() const;
    const DictData& as_dict() const;
    IteratorData& as_iterator() const;
    const FunctionData& as_function() const;
    NamespaceData& as_namespace() const { return *u_.ns; }
    const std::string& undefined_hint() const;  // why it is undefined ("'x' is undefined")

    // Nesting depth of containers (0 for scalars).
    int depth() const;
    // The type name Python gives ("str", "list", "NoneType", ...).
    const char* type_name() const;

    bool truthy() const;
    // str(): what {{ value }} prints.
    std::string str() const;
    // repr(): strings quoted, as inside a printed list.
    std::string repr() const;

private:
    Kind kind_ = Kind::Undefined;
    union {
        bool b;
        int64_t i;
        double f;
        NamespaceData* ns;
    } u_{};
    std::shared_ptr<const void> p_;  // string, list, dict, iterator, function, hint
};

struct ListData {
    std::vector<Value> items;
    SeqKind kind = SeqKind::List;
    int depth = 1;
};

struct DictData {
    std::vector<std::pair<Value, Value>> items;  // insertion order, as Python's dict
    int depth = 1;
    const Value* find(std::string_view key) const;
    const Value* find_key(const Value& key) const;  // any hashable key, by Python's ==
};

// A generator: items are computed eagerly but handed out once, as Python's
// generators are (a second loop over it sees nothing).
struct IteratorData {
    std::vector<Value> items;
    size_t pos = 0;
    std::string name;   // for repr: "<generator object select_or_reject>"
    std::string error;  // raised after the items (a generator that fails part way)
    int depth = 1;
    void check() const {
        if (!error.empty()) throw ValueError(error);
    }
    std::vector<Value> take() {
        check();
        std::vector<Value> out(items.begin() + static_cast<std::ptrdiff_t>(pos), items.end());
        pos = items.size();
        return out;
    }
};

struct NamespaceData {
    std::vector<std::pair<std::string, Value>> attrs;
    Value* find(std::string_view name);
};

struct CallArgs {
    std::vector<Value> args;
    std::vector<std::pair<std::string, Value>> kwargs;
    const Value* kwarg(std::string_view name) const;
};

class Interpreter;

struct FunctionData {
    std::string name;
    bool is_macro = false;
    std::function<Value(Interpreter&, CallArgs&)> call;
};

// While it lives, the recursive value operations below (repr, ==, <,
// to_json) count their work in *steps (failing past max_steps) and refuse
// to print more than max_bytes. The interpreter holds one per render.
class ValueBudget {
public:
    ValueBudget(uint64_t* steps, uint64_t max_steps, size_t max_bytes);
    ~ValueBudget();
    ValueBudget(const ValueBudget&) = delete;
    ValueBudget& operator=(const ValueBudget&) = delete;

private:
    uint64_t* saved_steps_;
    uint64_t saved_max_steps_;
    size_t saved_max_bytes_;
};

// Python's == (1 == 1.0 == True, [1] != (1,), dicts by content).
bool equal(const Value& a, const Value& b);
// Python's <; throws ValueError where Python raises TypeError.
bool less(const Value& a, const Value& b);
// Whether a value can be a dict key (hashable); throws ValueError if not.
void check_hashable(const Value& v);

// json.dumps(v, ensure_ascii=False, indent=indent, separators=..., sort_keys=...).
// indent: null for none (one line), an int (spaces) or a string.
struct JsonStyle {
    bool pretty = false;
    std::string indent;  // per level, when pretty
    std::string item_sep = ", ";
    std::string key_sep = ": ";
    bool sort_keys = false;
    bool ensure_ascii = false;
};
std::string to_json(const Value& v, const JsonStyle& style = {});
// Parses JSON text (RFC 8259; ints stay ints, numbers with a fraction or
// exponent become floats, as Python's json.loads). Throws TemplateError
// with the line and column of the problem.
Value from_json(std::string_view text);

// Python's repr() of a float ("1.0", "1e+16", "inf").
std::string float_repr(double v);
// Python's repr() of a str.
std::string string_repr(std::string_view s);

namespace utf8 {
// Decodes the code point at s[i] and advances i; invalid bytes decode as
// themselves (one byte each), so that any input is handled.
char32_t next(std::string_view s, size_t& i);
void append(std::string& out, char32_t c);
size_t length(std::string_view s);  // code points
// Byte offsets of each code point, plus s.size() at the end.
std::vector<size_t> offsets(std::string_view s);
bool is_space(char32_t c);  // Python's str.isspace()
char32_t to_upper(char32_t c);
char32_t to_lower(char32_t c);
bool is_upper(char32_t c);
bool is_lower(char32_t c);
bool is_alpha(char32_t c);
bool is_digit(char32_t c);
bool valid(std::string_view s);
}  // namespace utf8

}  // namespace powerinfer::jinja
