// The evaluator: runs the syntax tree (jinja_parse.cpp) with jinja2's
// semantics, one function for every node type, so that scoping and undefined
// handling stay in one place. Python's operators on values (arithmetic, %,
// comparisons) are in jinja_operators.cpp.
#include "chat/jinja.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "chat/jinja_internal.h"

namespace powerinfer::jinja {

struct Interpreter::Scope {
    std::shared_ptr<Scope> parent;
    std::vector<std::pair<std::string, Value>> vars;

    Value* find(std::string_view name) {
        for (auto& [k, v] : vars)
            if (k == name) return &v;
        return nullptr;
    }
    void set(const std::string& name, Value v) {
        if (Value* p = find(name)) {
            *p = std::move(v);
        } else {
            vars.emplace_back(name, std::move(v));
        }
    }
};

Interpreter::Interpreter(const Options& options) : options_(options) {}
Interpreter::~Interpreter() {
    // Scopes may hold namespaces (raw pointers into namespaces_): drop them first.
    scope_.reset();
}

void Interpreter::charge(uint64_t units) {
    steps_ += units;
    if (steps_ > options_.limits.max_steps)
        throw ValueError("the template takes too many steps (over " +
                         std::to_string(options_.limits.max_steps) + ")");
}

void Interpreter::check_size(size_t bytes) {
    if (bytes > options_.limits.max_output)
        throw ValueError("a string would be over " + std::to_string(options_.limits.max_output) +
                         " bytes");
    charge(bytes / 64);
}

void Interpreter::check_items(size_t items) {
    if (items > options_.limits.max_items)
        throw ValueError("a list would have over " + std::to_string(options_.limits.max_items) +
                         " items");
    charge(items / 8);
}

NamespaceData* Interpreter::new_namespace() {
    if (namespaces_.size() >= 100000) throw ValueError("too many namespace() objects");
    namespaces_.push_back(std::make_unique<NamespaceData>());
    return namespaces_.back().get();
}

void Interpreter::write(std::string_view text) {
    if (out_->size() + text.size() > options_.limits.max_output)
        throw ValueError("the output is over " + std::to_string(options_.limits.max_output) +
                         " bytes");
    out_->append(text);
}

void Interpreter::fail(const Node& n, const std::string& message) {
    throw TemplateError(message, n.line, n.column);
}

std::string Interpreter::render(const Program& program, const Value& variables) {
    auto root = std::make_shared<Scope>();
    for (auto& [k, v] : globals(*this)) root->set(k, std::move(v));
    if (variables.is_dict()) {
        for (const auto& [k, v] : variables.as_dict().items)
            if (k.is_string()) root->set(k.as_string(), v);
    }
    scope_ = root;
    std::string result;
    out_ = &result;
    const ValueBudget budget(&steps_, options_.limits.max_steps, options_.limits.max_output);
    exec_body(program.body);
    out_ = nullptr;
    scope_.reset();
    return result;
}

Value Interpreter::lookup(const std::string& name) {
    for (Scope* s = scope_.get(); s; s = s->parent.get()) {
        if (Value* v = s->find(name)) return *v;
    }
    return Value::undefined("'" + name + "' is undefined");
}

std::vector<Value> Interpreter::iterate(const Value& v) {
    switch (v.kind()) {
        case Kind::Undefined:
            return {};
        case Kind::List:
            charge(v.as_list().items.size() / 8);
            return v.as_list().items;
        case Kind::Dict: {
            std::vector<Value> keys;
            keys.reserve(v.as_dict().items.size());
            for (const auto& [k, x] : v.as_dict().items) keys.push_back(k);
            charge(keys.size() / 8);
            return keys;
        }
        case Kind::String: {
            const std::string& s = v.as_string();
            std::vector<Value> out;
            for (size_t i = 0; i < s.size();) {
                const size_t start = i;
                utf8::next(s, i);
                out.emplace_back(std::string(s.substr(start, i - start)));
            }
            charge(out.size() / 8);
            return out;
        }
        case Kind::Iterator:
            return v.as_iterator().take();
        default:
            throw ValueError(quoted_type(v) + " object is not iterable");
    }
}

Value Interpreter::getattr(const Value& obj, std::string_view name) {
    if (obj.is_undefined()) undefined_error(obj);
    if (!name.empty() && name[0] == '_') {
        return Value::undefined("access to attribute '" + std::string(name) + "' of " +
                                quoted_type(obj) + " object is unsafe.");
    }
    if (auto m = method(*this, obj, name)) return *m;
    switch (obj.kind()) {
        case Kind::Dict:
            if (const Value* v = obj.as_dict().find(name)) return *v;
            break;
        case Kind::Namespace:
            if (Value* v = obj.as_namespace().find(name)) return *v;
            break;
        case Kind::None:
            return Value::undefined("'None' has no attribute '" + std::string(name) + "'");
        default:
            break;
    }
    return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute '" +
                            std::string(name) + "'");
}

Value Interpreter::getitem(const Value& obj, const Value& key) {
    if (obj.is_undefined()) undefined_error(obj);
    auto by_attr = [&]() -> Value {
        if (key.is_string()) return getattr(obj, key.as_string());
        if (obj.is_none()) return Value::undefined("None has no element " + key.repr());
        return Value::undefined("'" + std::string(obj.type_name()) + " object' has no element " +
                                key.repr());
    };
    switch (obj.kind()) {
        case Kind::Dict: {
            if (key.kind() == Kind::List && key.as_list().kind != SeqKind::Tuple) return by_attr();
            if (key.is_dict() || key.is_undefined()) return by_attr();
            if (const Value* v = obj.as_dict().find_key(key)) return *v;
            return by_attr();
        }
        case Kind::List: {
            const ListData& l = obj.as_list();
            if ((l.kind != SeqKind::List && l.kind != SeqKind::Tuple) ||
                (key.kind() != Kind::Int && key.kind() != Kind::Bool))
                return by_attr();
            int64_t i = key.as_int();
            const auto n = static_cast<int64_t>(l.items.size());
            if (i < 0) i += n;
            if (i < 0 || i >= n) return by_attr();
            return l.items[static_cast<size_t>(i)];
        }
        case Kind::String: {
            if (key.kind() != Kind::Int && key.kind() != Kind::Bool) return by_attr();
            const std::string& s = obj.as_string();
            const auto offs = utf8::offsets(s);
            const auto n = static_cast<int64_t>(offs.size()) - 1;
            int64_t i = key.as_int();
            if (i < 0) i += n;
            if (i < 0 || i >= n) return by_attr();
            const size_t a = offs[static_cast<size_t>(i)], b = offs[static_cast<size_t>(i) + 1];
            return Value(s.substr(a, b - a));
        }
        default:
            return by_attr();
    }
}

Value Interpreter::call(const Value& fn, CallArgs& args) {
    if (fn.kind() == Kind::Function) return fn.as_function().call(*this, args);
    if (fn.is_undefined()) undefined_error(fn);
    throw ValueError(quoted_type(fn) + " object is not callable");
}

// --- expressions ---------------------------------------------------------------

Value Interpreter::eval(const Node& n) {
    if (depth_ >= options_.limits.max_depth)
        fail(n, "the template nests or recurses too deeply (over " +
                    std::to_string(options_.limits.max_depth) + " levels)");
    ++depth_;
    try {
        charge(1);
        Value v = eval_inner(n);
        --depth_;
        return v;
    } catch (const ValueError& e) {
        --depth_;
        fail(n, e.what());
    } catch (...) {
        --depth_;
        throw;
    }
}

void Interpreter::eval_args(const CallSyntax& s, CallArgs& out) {
    for (const auto& a : s.args) out.args.push_back(eval(*a));
    if (s.star) {
        for (Value& v : iterate(eval(*s.star))) out.args.push_back(std::move(v));
    }
    for (const auto& [k, a] : s.kwargs) out.kwargs.emplace_back(k, eval(*a));
    if (s.starstar) {
        const Value d = eval(*s.starstar);
        if (!d.is_dict())
            throw ValueError("argument after ** must be a mapping, not " + quoted_type(d));
        for (const auto& [k, v] : d.as_dict().items) {
            if (!k.is_string()) throw ValueError("keywords must be strings");
            out.kwargs.emplace_back(k.as_string(), v);
        }
    }
}

namespace {

// Python's slice index normalization (PySlice_AdjustIndices).
std::vector<size_t> slice_indices(int64_t len, const Value* start, const Value* stop,
                                  const Value* step) {
    auto as_index = [](const Value* v) -> std::optional<int64_t> {
        if (!v || v->is_none()) return std::nullopt;
        if (v->kind() != Kind::Int && v->kind() != Kind::Bool)
            throw ValueError("slice indices must be integers or None");
        return v->as_int();
    };
    const auto st = as_index(step);
    int64_t s = st.value_or(1);
    if (s == 0) throw ValueError("slice step cannot be zero");
    s = std::clamp<int64_t>(s, -len - 1, len + 1);
    if (s == 0) s = 1;  // len == 0 with a huge step
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t x = *v;
        if (x < 0) {
            x = x < -len ? -1 : x + len;  // careful with huge negatives
            if (x < 0) x = s < 0 ? -1 : 0;
        } else if (x >= len) {
            x = s < 0 ? len - 1 : len;
        }
        return x;
    };
    const int64_t a = clamp(as_index(start), s < 0 ? len - 1 : 0);
    const int64_t b = clamp(as_index(stop), s < 0 ? -1 : len);
    std::vector<size_t> out;
    if (s > 0) {
        for (int64_t i = a; i < b; i += s) out.push_back(static_cast<size_t>(i));
    } else {
        for (int64_t i = a; i > b; i += s) out.push_back(static_cast<size_t>(i));
    }
    return out;
}

}  // namespace

Value Interpreter::eval_inner(const Node& n) {
    switch (n.type) {
        case NodeType::Const:
            return n.value;
        case NodeType::Name:
            return lookup(n.name);
        case NodeType::Getattr:
            return getattr(eval(*n.kids[0]), n.name);
        case NodeType::Getitem: {
            const Value obj = eval(*n.kids[0]);
            const Node& k = *n.kids[1];
            if (k.type != NodeType::Slice) return getitem(obj, eval(k));
            if (obj.is_undefined()) undefined_error(obj);
            Value parts[3];
            for (int i = 0; i < 3; ++i)
                if (k.kids[static_cast<size_t>(i)])
                    parts[i] = eval(*k.kids[static_cast<size_t>(i)]);
            auto part = [&](int i) { return k.kids[static_cast<size_t>(i)] ? &parts[i] : nullptr; };
            if (obj.is_list() &&
                (obj.as_list().kind == SeqKind::List || obj.as_list().kind == SeqKind::Tuple)) {
                const auto& items = obj.as_list().items;
                std::vector<Value> out;
                for (size_t i :
                     slice_indices(static_cast<int64_t>(items.size()), part(0), part(1), part(2)))
                    out.push_back(items[i]);
                charge(out.size() / 8);
                return Value::list(std::move(out), obj.as_list().kind);
            }
            if (obj.is_string()) {
                const std::string& s = obj.as_string();
                const auto offs = utf8::offsets(s);
                std::string out;
                for (size_t i : slice_indices(static_cast<int64_t>(offs.size()) - 1, part(0),
                                              part(1), part(2)))
                    out.append(s, offs[i], offs[i + 1] - offs[i]);
                charge(s.size() / 64);
                return Value(std::move(out));
            }
            // Slices bypass jinja2's getitem: Python's own error. (Except on a
            // literal, which jinja2's optimizer folds through getitem, into
            // undefined.)
            if (n.folded_slice) {
                return Value::undefined("'" + std::string(obj.type_name()) +
                                        " object' has no element slice");
            }
            if (obj.is_dict()) throw ValueError("unhashable type: 'slice'");
            throw ValueError(quoted_type(obj) + " object is not subscriptable");
        }
        case NodeType::Call:
            return eval_call(n);
        case NodeType::Filter:
            return eval_filter(n, nullptr);
        case NodeType::Test:
            return eval_test(n);
        case NodeType::Neg:
        case NodeType::Pos: {
            const Value v = eval(*n.kids[0]);
            if (v.is_undefined()) undefined_error(v);
            if (v.kind() == Kind::Float)
                return Value(n.type == NodeType::Neg ? -v.as_double() : v.as_double());
            if (v.kind() == Kind::Int || v.kind() == Kind::Bool) {
                if (n.type == NodeType::Pos) return Value(v.as_int());
                if (v.as_int() == std::numeric_limits<int64_t>::min()) integer_overflow();
                return Value(-v.as_int());
            }
            throw ValueError(std::string("bad operand type for unary ") +
                             (n.type == NodeType::Neg ? "-" : "+") + ": " + quoted_type(v));
        }
        case NodeType::Not:
            return Value(!eval(*n.kids[0]).truthy());
        case NodeType::And: {
            Value a = eval(*n.kids[0]);
            if (!a.truthy()) return a;
            return eval(*n.kids[1]);
        }
        case NodeType::Or: {
            Value a = eval(*n.kids[0]);
            if (a.truthy()) return a;
            return eval(*n.kids[1]);
        }
        case NodeType::Binary:
            return eval_binary(n);
        case NodeType::Compare:
            return eval_compare(n);
        case NodeType::CondExpr:
            if (eval(*n.kids[0]).truthy()) return eval(*n.kids[1]);
            if (n.kids[2]) return eval(*n.kids[2]);
            return Value::undefined("the inline if-expression on line " + std::to_string(n.line) +
                                    " evaluated to false and no else section was defined.");
        case NodeType::List:
        case NodeType::Tuple: {
            std::vector<Value> items;
            items.reserve(n.kids.size());
            for (const auto& k : n.kids) items.push_back(eval(*k));
            return Value::list(std::move(items),
                               n.type == NodeType::Tuple ? SeqKind::Tuple : SeqKind::List);
        }
        case NodeType::Dict: {
            std::vector<std::pair<Value, Value>> items;
            for (size_t i = 0; i + 1 < n.kids.size(); i += 2) {
                Value k = eval(*n.kids[i]);
                items.emplace_back(std::move(k), eval(*n.kids[i + 1]));
            }
            return Value::dict(std::move(items));
        }
        case NodeType::Concat: {
            std::string s;
            for (const auto& k : n.kids) {
                s += eval(*k).str();
                check_size(s.size());
            }
            return Value(std::move(s));
        }
        default:
            throw ValueError("this is not an expression");
    }
}

Value Interpreter::eval_call(const Node& n) {
    const Value fn = eval(*n.kids[0]);
    CallArgs args;
    eval_args(n.call, args);
    return call(fn, args);
}

Value Interpreter::eval_filter(const Node& n, const Value* input) {
    // input: the body of a filter block or block set, which the innermost
    // filter of the chain (the one without an operand) gets.
    Value v;
    if (!n.kids[0]) {
        if (input) v = *input;
    } else if (input && n.kids[0]->type == NodeType::Filter) {
        v = eval_filter(*n.kids[0], input);
    } else {
        v = eval(*n.kids[0]);
    }
    CallArgs args;
    eval_args(n.call, args);
    return apply_filter(*this, n.name, v, args);
}

Value Interpreter::eval_test(const Node& n) {
    const Value v = eval(*n.kids[0]);
    CallArgs args;
    eval_args(n.call, args);
    return Value(apply_test(*this, n.name, v, args));
}

// --- statements ------------------------------------------------------------------

Interpreter::Flow Interpreter::exec(const Node& n) {
    if (depth_ >= options_.limits.max_depth)
        fail(n, "the template nests or recurses too deeply (over " +
                    std::to_string(options_.limits.max_depth) + " levels)");
    ++depth_;
    try {
        charge(1);
        const Flow f = exec_inner(n);
        --depth_;
        return f;
    } catch (const ValueError& e) {
        --depth_;
        fail(n, e.what());
    } catch (...) {
        --depth_;
        throw;
    }
}

Interpreter::Flow Interpreter::exec_body(const std::vector<NodePtr>& body) {
    for (const auto& s : body) {
        const Flow f = exec(*s);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

std::string Interpreter::capture(const std::vector<NodePtr>& body) {
    std::string buf;
    std::string* saved = out_;
    out_ = &buf;
    try {
        exec_body(body);
    } catch (...) {
        out_ = saved;
        throw;
    }
    out_ = saved;
    return buf;
}

void Interpreter::assign(const Node& target, const Value& v) {
    switch (target.type) {
        case NodeType::Name:
            scope_->set(target.name, v);
            return;
        case NodeType::Tuple: {
            if (v.is_undefined()) undefined_error(v);
            const std::vector<Value> items = iterate(v);
            if (items.size() != target.kids.size()) {
                if (items.size() > target.kids.size())
                    throw ValueError("too many values to unpack (expected " +
                                     std::to_string(target.kids.size()) + ")");
                throw ValueError("not enough values to unpack (expected " +
                                 std::to_string(target.kids.size()) + ", got " +
                                 std::to_string(items.size()) + ")");
            }
            for (size_t i = 0; i < items.size(); ++i) assign(*target.kids[i], items[i]);
            return;
        }
        case NodeType::NSRef: {
            const Value ns = lookup(target.name);
            if (ns.kind() != Kind::Namespace)
                throw ValueError("cannot assign attribute on non-namespace object");
            if (Value* slot = ns.as_namespace().find(target.attr)) {
                *slot = v;
            } else {
                if (ns.as_namespace().attrs.size() >= 10000)
                    throw ValueError("too many namespace attributes");
                ns.as_namespace().attrs.emplace_back(target.attr, v);
            }
            return;
        }
        default:
            throw ValueError("can't assign to this expression");
    }
}

Value Interpreter::make_macro(const Node& n, const std::string& name) {
    auto f = std::make_shared<FunctionData>();
    f->name = name;
    f->is_macro = true;
    std::weak_ptr<Scope> defined_in = scope_;
    const Node* node = &n;
    f->call = [node, defined_in, name](Interpreter& in, CallArgs& args) -> Value {
        const Node& m = *node;
        auto scope = std::make_shared<Scope>();
        scope->parent = defined_in.lock();
        if (!scope->parent) {
            // Defined in a scope that has ended: only the template's top level
            // stays visible.
            Scope* s = in.scope_.get();
            while (s && s->parent) s = s->parent.get();
            if (s) scope->parent = std::shared_ptr<Scope>(in.scope_, s);
        }
        const size_t np = m.params.size();
        std::vector<bool> given(np, false);
        std::vector<Value> varargs;
        for (size_t i = 0; i < args.args.size(); ++i) {
            if (i < np) {
                scope->set(m.params[i], args.args[i]);
                given[i] = true;
            } else if (m.uses_varargs) {
                varargs.push_back(args.args[i]);
            } else {
                throw ValueError("macro '" + name + "' takes not more than " + std::to_string(np) +
                                 " argument(s)");
            }
        }
        std::vector<std::pair<Value, Value>> kwargs;
        Value caller = Value::undefined("No caller defined");
        for (auto& [k, v] : args.kwargs) {
            const auto it = std::find(m.params.begin(), m.params.end(), k);
            if (it != m.params.end()) {
                const auto i = static_cast<size_t>(it - m.params.begin());
                if (given[i])
                    throw ValueError("macro '" + name + "' got multiple values for argument '" + k +
                                     "'");
                scope->set(k, v);
                given[i] = true;
            } else if (k == "caller" && m.uses_caller) {
                caller = v;
            } else if (m.uses_kwargs) {
                kwargs.emplace_back(Value(k), v);
            } else {
                throw ValueError("macro '" + name + "' takes no keyword argument '" + k + "'");
            }
        }
        std::shared_ptr<Scope> saved = in.scope_;
        in.scope_ = scope;
        try {
            const size_t first_default = np - m.defaults.size();
            for (size_t i = 0; i < np; ++i) {
                if (given[i]) continue;
                if (i >= first_default) {
                    scope->set(m.params[i], in.eval(*m.defaults[i - first_default]));
                } else {
                    scope->set(m.params[i], Value::undefined("parameter '" + m.params[i] +
                                                             "' was not provided"));
                }
            }
            if (m.uses_varargs) scope->set("varargs", Value::tuple(std::move(varargs)));
            if (m.uses_kwargs) scope->set("kwargs", Value::dict(std::move(kwargs)));
            if (m.uses_caller) scope->set("caller", caller);
            std::string out = in.capture(m.body);
            in.scope_ = saved;
            return Value(std::move(out));
        } catch (...) {
            in.scope_ = saved;
            throw;
        }
    };
    return Value::function(std::move(f));
}

Interpreter::Flow Interpreter::exec_for(const Node& n) {
    std::vector<Value> items = iterate(eval(*n.kids[0]));
    std::shared_ptr<Scope> outer = scope_;
    struct Restore {
        Interpreter& in;
        std::shared_ptr<Scope> s;
        ~Restore() { in.scope_ = s; }
    } restore{*this, outer};
    if (n.kids[1]) {
        std::vector<Value> kept;
        for (Value& item : items) {
            charge(1);
            scope_ = std::make_shared<Scope>();
            scope_->parent = outer;
            assign(*n.target, item);
            const bool keep = eval(*n.kids[1]).truthy();
            scope_ = outer;
            if (keep) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    if (items.empty()) return exec_body(n.else_body);
    const auto len = static_cast<int64_t>(items.size());
    auto index = std::make_shared<int64_t>(0);
    auto cycle = std::make_shared<FunctionData>();
    cycle->name = "cycle";
    cycle->call = [index](Interpreter&, CallArgs& a) -> Value {
        if (a.args.empty()) throw ValueError("no items for cycling given");
        return a.args[static_cast<size_t>(*index % static_cast<int64_t>(a.args.size()))];
    };
    const Value cycle_fn = Value::function(cycle);
    for (int64_t i = 0; i < len; ++i) {
        charge(1);
        *index = i;
        scope_ = std::make_shared<Scope>();
        scope_->parent = outer;
        const auto u = static_cast<size_t>(i);
        scope_->set(
            "loop",
            Value::dict({{Value("index0"), Value(i)},
                         {Value("index"), Value(i + 1)},
                         {Value("revindex0"), Value(len - i - 1)},
                         {Value("revindex"), Value(len - i)},
                         {Value("first"), Value(i == 0)},
                         {Value("last"), Value(i == len - 1)},
                         {Value("length"), Value(len)},
                         {Value("depth0"), Value(0)},
                         {Value("depth"), Value(1)},
                         {Value("previtem"),
                          i > 0 ? items[u - 1] : Value::undefined("there is no previous item")},
                         {Value("nextitem"),
                          i + 1 < len ? items[u + 1] : Value::undefined("there is no next item")},
                         {Value("cycle"), cycle_fn}}));
        assign(*n.target, items[u]);
        const Flow f = exec_body(n.body);
        if (f == Flow::Break) break;
    }
    return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_inner(const Node& n) {
    switch (n.type) {
        case NodeType::Data:
            write(n.value.as_string());
            return Flow::Normal;
        case NodeType::Output: {
            const Value v = eval(*n.kids[0]);
            if (v.is_string()) {
                write(v.as_string());
            } else {
                write(v.str());
            }
            return Flow::Normal;
        }
        case NodeType::If:
            for (size_t i = 0; i < n.kids.size(); ++i)
                if (eval(*n.kids[i]).truthy()) return exec_body(n.branches[i]);
            return exec_body(n.else_body);
        case NodeType::For:
            return exec_for(n);
        case NodeType::Set:
            assign(*n.target, eval(*n.kids[0]));
            return Flow::Normal;
        case NodeType::SetBlock: {
            Value v(capture(n.body));
            if (n.kids[0]) v = eval_filter(*n.kids[0], &v);
            assign(*n.target, v);
            return Flow::Normal;
        }
        case NodeType::Macro:
            scope_->set(n.name, make_macro(n, n.name));
            return Flow::Normal;
        case NodeType::CallBlock: {
            const Node& call = *n.kids[0];
            const Value fn = eval(*call.kids[0]);
            CallArgs args;
            eval_args(call.call, args);
            args.kwargs.emplace_back("caller", make_macro(n, "caller"));
            write(this->call(fn, args).str());
            return Flow::Normal;
        }
        case NodeType::FilterBlock: {
            const Value body(capture(n.body));
            write(eval_filter(*n.kids[0], &body).str());
            return Flow::Normal;
        }
        case NodeType::Break:
            return Flow::Break;
        case NodeType::Continue:
            return Flow::Continue;
        case NodeType::With: {
            std::vector<Value> values;
            for (const auto& k : n.kids) values.push_back(eval(*k));
            std::shared_ptr<Scope> outer = scope_;
            scope_ = std::make_shared<Scope>();
            scope_->parent = outer;
            try {
                for (size_t i = 0; i < values.size(); ++i) assign(*n.targets[i], values[i]);
                const Flow f = exec_body(n.body);
                scope_ = outer;
                return f;
            } catch (...) {
                scope_ = outer;
                throw;
            }
        }
        case NodeType::Scope:
            return exec_body(n.body);
        default:
            throw ValueError("this is not a statement");
    }
}

// --- Template ----------------------------------------------------------------------

std::tm civil_time(int year, int month, int day, int hour, int minute, int second) {
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    const int y = year - (month <= 2 ? 1 : 0);
    const int era = (y >= 0 ? y : y - 399) / 400;
    const int yoe = y - era * 400;
    const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const long days = static_cast<long>(era) * 146097 + doe - 719468;
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    static const int kBefore[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    std::tm t{};
    t.tm_year = year - 1900;
    t.tm_mon = month - 1;
    t.tm_mday = day;
    t.tm_hour = hour;
    t.tm_min = minute;
    t.tm_sec = second;
    t.tm_wday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
    t.tm_yday = kBefore[(month - 1) % 12] + day - 1 + (leap && month > 2 ? 1 : 0);
    t.tm_isdst = -1;
    return t;
}

Template::Template(std::string_view source, Options options)
    : program_(parse(source)), options_(std::move(options)) {}
Template::~Template() = default;
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

std::string Template::render(const Value& variables) const {
    Interpreter in(options_);
    try {
        return in.render(*program_, variables);
    } catch (const TemplateError&) {
        throw;
    } catch (const ValueError& e) {
        throw TemplateError(e.what(), 0, 0);
    } catch (const std::bad_alloc&) {
        throw TemplateError("out of memory while rendering the template", 0, 0);
    } catch (const std::length_error&) {
        throw TemplateError("out of memory while rendering the template", 0, 0);
    }
}

}  // namespace powerinfer::jinja
