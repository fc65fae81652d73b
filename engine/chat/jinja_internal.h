// The Jinja interpreter's insides (jinja.h): syntax tree, parser entry and
// the evaluator that the builtins (jinja_builtins.cpp) call back into.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja.h"

namespace powerinfer::jinja {

// Expressions and statements nest at most this deep in the syntax tree (so
// that recursion over it, destruction included, stays shallow).
constexpr int kMaxParseDepth = 128;

enum class NodeType : uint8_t {
    // expressions
    Const,     // value
    Name,      // name
    Getattr,   // kids[0].name
    Getitem,   // kids[0][kids[1]]
    Slice,     // kids[0]:kids[1]:kids[2] (null for absent)
    Call,      // kids[0](call)
    Filter,    // kids[0] | name(call); kids[0] null in filter blocks
    Test,      // kids[0] is name(call)
    Neg,       // -kids[0]
    Pos,       // +kids[0]
    Not,       // not kids[0]
    And,       // kids[0] and kids[1]
    Or,        // kids[0] or kids[1]
    Binary,    // kids[0] op kids[1]
    Compare,   // kids[0] ops[0] kids[1] ops[1] kids[2] ...
    CondExpr,  // kids[1] if kids[0] else kids[2] (null: undefined)
    List,      // [kids...]
    Tuple,     // (kids...)
    Dict,      // {kids[0]: kids[1], ...}
    Concat,    // kids[0] ~ kids[1] ~ ...
    NSRef,     // name.attr (assignment targets only)
    // statements
    Data,         // text
    Output,       // {{ kids[0] }}
    If,           // if kids[i]: branches[i] (elif chains), else else_body
    For,          // for target in kids[0] if kids[1]: body else else_body
    Set,          // set target = kids[0]
    SetBlock,     // set target | kids[0] (filter, may be null): body
    Macro,        // macro name(params = defaults): body
    CallBlock,    // call(params) kids[0]: body
    FilterBlock,  // filter kids[0]: body
    Break,
    Continue,
    With,   // with targets[i] = kids[i]: body
    Scope,  // body (generation blocks)
};

enum class BinOp : uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
enum class CmpOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct CallSyntax {
    std::vector<NodePtr> args;
    std::vector<std::pair<std::string, NodePtr>> kwargs;
    NodePtr star;      // *args
    NodePtr starstar;  // **kwargs
};

struct Node {
    NodeType type;
    int line = 0, column = 0;
    int depth = 1;  // of the subtree
    std::string name, attr;
    Value value;
    BinOp op = BinOp::Add;
    std::vector<CmpOp> ops;
    std::vector<NodePtr> kids;
    CallSyntax call;
    NodePtr target;                // for, set
    std::vector<NodePtr> targets;  // with
    std::vector<NodePtr> body, else_body;
    std::vector<std::vector<NodePtr>> branches;  // if/elif
    std::vector<std::string> params;             // macro, call block
    std::vector<NodePtr> defaults;               // for the last params
    bool uses_varargs = false, uses_kwargs = false, uses_caller = false;
    // Getitem: a slice of a literal inside {{ }}, which jinja2 folds at
    // compile time through getitem (so a bad one is undefined, not an error).
    bool folded_slice = false;
};

struct Program {
    std::vector<NodePtr> body;
};

// Parses a template (newlines normalized, one trailing newline dropped, as
// jinja2 does). Throws TemplateError.
std::unique_ptr<Program> parse(std::string_view source);

class Interpreter;

// Builtins (jinja_builtins.cpp).
bool has_filter(std::string_view name);
bool has_test(std::string_view name);
Value apply_filter(Interpreter& in, std::string_view name, const Value& v, CallArgs& args);
bool apply_test(Interpreter& in, std::string_view name, const Value& v, CallArgs& args);
// obj.name as jinja2's sandboxed getattr sees it: a method of str, dict or
// list (bound to obj), else nullopt (jinja_methods.cpp).
std::optional<Value> method(Interpreter& in, const Value& obj, std::string_view name);
// The globals: range, dict, namespace, joiner, cycler, raise_exception,
// strftime_now (jinja_globals.cpp).
std::vector<std::pair<std::string, Value>> globals(Interpreter& in);

// Argument handling and errors of the evaluator, the builtins and the
// globals (defined in jinja_builtins.cpp).
// Binds positional and keyword arguments to named parameters (Python's
// rules: too many, unknown or repeated arguments are errors).
struct Bound {
    std::vector<const Value*> slot;
    const Value* operator[](size_t i) const { return slot[i]; }
    bool has(size_t i) const { return slot[i] && !slot[i]->is_none(); }
};
Bound bind(const CallArgs& a, std::initializer_list<const char*> names, std::string_view fn);
const std::string& need_str(const Value* v, std::string_view fn, std::string_view what);
int64_t need_int(const Value* v, std::string_view fn);
std::string quoted_type(const Value& v);  // 'int', 'str', ...
[[noreturn]] void undefined_error(const Value& v);
// Whether name is one of names (the builtins' and methods' tables).
template <size_t N>
bool listed(const char* const (&names)[N], std::string_view name) {
    for (const char* n : names)
        if (name == n) return true;
    return false;
}

// Throws the interpreter's error for a 64-bit integer overflow.
[[noreturn]] void integer_overflow();
// Python's printf-style `fmt % rhs` (the % operator and the format filter).
std::string percent_format(Interpreter& in, const std::string& fmt, const Value& rhs);
// Python's a % b (numbers, or str % args).
Value py_mod(Interpreter& in, const Value& a, const Value& b);

// Python's str() of a value under jinja2 (undefined prints as "").
inline std::string to_str(const Value& v) { return v.str(); }

class Interpreter {
public:
    explicit Interpreter(const Options& options);
    ~Interpreter();

    std::string render(const Program& program, const Value& variables);

    // For the builtins.
    const Options& options() const { return options_; }
    // Counts `units` evaluation steps; throws when over the limit.
    void charge(uint64_t units);
    // Checks a string about to be made (bytes) and charges for it.
    void check_size(size_t bytes);
    void check_items(size_t items);
    Value call(const Value& fn, CallArgs& args);
    NamespaceData* new_namespace();
    // Items of an iterable (for loops and filters): lists, strings (code
    // points), dicts (keys), generators (consumed), undefined (none).
    // Throws ValueError for what is not iterable.
    std::vector<Value> iterate(const Value& v);
    // jinja2's environment.getattr / getitem.
    Value getattr(const Value& obj, std::string_view name);
    Value getitem(const Value& obj, const Value& key);

    struct Scope;

private:
    enum class Flow { Normal, Break, Continue };

    Value eval(const Node& n);
    Value eval_inner(const Node& n);
    Value eval_call(const Node& n);
    Value eval_binary(const Node& n);
    Value eval_compare(const Node& n);
    Value eval_filter(const Node& n, const Value* input);
    Value eval_test(const Node& n);
    void eval_args(const CallSyntax& s, CallArgs& out);
    Flow exec(const Node& n);
    Flow exec_body(const std::vector<NodePtr>& body);
    Flow exec_inner(const Node& n);
    Flow exec_for(const Node& n);
    void exec_set(const Node& n);
    void assign(const Node& target, const Value& v);
    std::string capture(const std::vector<NodePtr>& body);
    Value make_macro(const Node& n, const std::string& name);
    Value lookup(const std::string& name);
    void write(std::string_view text);
    [[noreturn]] void fail(const Node& n, const std::string& message);

    Options options_;
    uint64_t steps_ = 0;
    int depth_ = 0;
    std::string* out_ = nullptr;
    std::shared_ptr<Scope> scope_;
    std::vector<std::unique_ptr<NamespaceData>> namespaces_;
    int loop_depth_ = 0;
};

}  // namespace powerinfer::jinja
