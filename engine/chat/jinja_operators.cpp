// Python's operators under jinja2: arithmetic on 64-bit integers with
// overflow checks, Python's floor division and modulo, str % args, and the
// comparisons (`in` included). The evaluator (jinja.cpp) calls eval_binary
// and eval_compare for the syntax tree's operator nodes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "chat/jinja.h"
#include "chat/jinja_internal.h"

namespace powerinfer::jinja {

void integer_overflow() {
    throw ValueError("integer overflow (the interpreter's integers are 64-bit)");
}

namespace {

bool add_overflows(int64_t a, int64_t b, int64_t* out) {
    if ((b > 0 && a > std::numeric_limits<int64_t>::max() - b) ||
        (b < 0 && a < std::numeric_limits<int64_t>::min() - b))
        return true;
    *out = a + b;
    return false;
}

bool mul_overflows(int64_t a, int64_t b, int64_t* out) {
    if (a == 0 || b == 0) {
        *out = 0;
        return false;
    }
    if ((a == -1 && b == std::numeric_limits<int64_t>::min()) ||
        (b == -1 && a == std::numeric_limits<int64_t>::min()))
        return true;
    const int64_t r = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    if (r / b != a) return true;
    *out = r;
    return false;
}

[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
    throw ValueError(std::string("unsupported operand type(s) for ") + op + ": " + quoted_type(a) +
                     " and " + quoted_type(b));
}

// Python's float floor division and modulo.
std::pair<double, double> float_divmod(double vx, double wx) {
    double mod = std::fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0) {
        if ((wx < 0) != (mod < 0)) {
            mod += wx;
            div -= 1.0;
        }
    } else {
        mod = std::copysign(0.0, wx);
    }
    double floordiv;
    if (div != 0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
        floordiv = std::copysign(0.0, vx / wx);
    }
    return {floordiv, mod};
}

int64_t int_floordiv(int64_t a, int64_t b) {
    if (a == std::numeric_limits<int64_t>::min() && b == -1) integer_overflow();
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t int_mod(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

}  // namespace

// Python's printf-style str % args (the common conversions).
std::string percent_format(Interpreter& in, const std::string& fmt, const Value& rhs) {
    std::vector<Value> args;
    const DictData* mapping = nullptr;
    if (rhs.is_list() && rhs.as_list().kind == SeqKind::Tuple) {
        args = rhs.as_list().items;
    } else if (rhs.is_dict()) {
        mapping = &rhs.as_dict();
        args.push_back(rhs);
    } else {
        args.push_back(rhs);
    }
    // CPython treats any non-tuple argument with __getitem__ (a list, a dict,
    // jinja2's Undefined) as a mapping: unused, it is not an error.
    const bool mapping_like =
        mapping || rhs.is_undefined() || (rhs.is_list() && rhs.as_list().kind != SeqKind::Tuple);
    size_t next = 0;
    bool used_mapping = false;
    std::string out;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) throw ValueError("incomplete format");
        const Value* arg = nullptr;
        if (fmt[i] == '(') {
            const size_t close = fmt.find(')', i);
            if (close == std::string::npos || !mapping)
                throw ValueError("format requires a mapping");
            arg = mapping->find(std::string_view(fmt).substr(i + 1, close - i - 1));
            if (!arg) throw ValueError("KeyError: " + fmt.substr(i + 1, close - i - 1));
            used_mapping = true;
            i = close + 1;
        }
        std::string flags;
        while (i < fmt.size() && std::string_view("-+ #0").find(fmt[i]) != std::string_view::npos)
            flags += fmt[i++];
        int width = 0, prec = -1;
        while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9' && width < 10000)
            width = width * 10 + (fmt[i++] - '0');
        if (i < fmt.size() && fmt[i] == '.') {
            prec = 0;
            ++i;
            while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9' && prec < 10000)
                prec = prec * 10 + (fmt[i++] - '0');
        }
        if (i >= fmt.size()) throw ValueError("incomplete format");
        const char conv = fmt[i];
        if (conv == '%') {
            out += '%';
            continue;
        }
        if (!arg) {
            if (next >= args.size()) throw ValueError("not enough arguments for format string");
            arg = &args[next++];
        }
        std::string piece;
        switch (conv) {
            case 's':
                piece = arg->str();
                if (prec >= 0) {
                    const auto offs = utf8::offsets(piece);
                    if (static_cast<size_t>(prec) + 1 < offs.size())
                        piece.resize(offs[static_cast<size_t>(prec)]);
                }
                break;
            case 'r':
            case 'a':
                piece = arg->repr();
                break;
            case 'd':
            case 'i':
            case 'u':
                if (!arg->is_number())
                    throw ValueError(std::string("%") + conv +
                                     " format: a real number is required, not " + arg->type_name());
                piece = std::to_string(arg->kind() == Kind::Float
                                           ? static_cast<int64_t>(std::trunc(
                                                 std::clamp(arg->as_double(), -9.2e18, 9.2e18)))
                                           : arg->as_int());
                break;
            case 'f':
            case 'F':
            case 'e':
            case 'E':
            case 'g':
            case 'G':
            case 'x':
            case 'X':
            case 'o': {
                if (!arg->is_number())
                    throw ValueError(std::string("%") + conv +
                                     " format: a number is required, not " + arg->type_name());
                char spec[16];
                char buf[512];
                const bool integral = conv == 'x' || conv == 'X' || conv == 'o';
                if (integral) {
                    if (arg->kind() == Kind::Float)
                        throw ValueError("%x format: an integer is required");
                    std::snprintf(spec, sizeof spec, "%%ll%c", conv);
                    std::snprintf(buf, sizeof buf, spec, static_cast<long long>(arg->as_int()));
                } else {
                    std::snprintf(spec, sizeof spec, "%%.%d%c", prec < 0 ? 6 : std::min(prec, 100),
                                  conv);
                    std::snprintf(buf, sizeof buf, spec, arg->as_double());
                }
                piece = buf;
                break;
            }
            default:
                throw ValueError(std::string("unsupported format character '") + conv + "'");
        }
        const size_t len = utf8::length(piece);
        if (static_cast<size_t>(width) > len) {
            const std::string pad(static_cast<size_t>(width) - len,
                                  flags.find('0') != std::string::npos && conv != 's' ? '0' : ' ');
            piece = flags.find('-') != std::string::npos ? piece + pad : pad + piece;
        }
        out += piece;
        in.check_size(out.size());
    }
    if (!used_mapping && !mapping_like && next < args.size())
        throw ValueError("not all arguments converted during string formatting");
    return out;
}

Value py_mod(Interpreter& in, const Value& a, const Value& b) {
    if (a.is_string()) return Value(percent_format(in, a.as_string(), b));
    if (a.is_undefined()) undefined_error(a);
    if (b.is_undefined()) undefined_error(b);
    if (a.is_number() && b.is_number()) {
        if (a.kind() == Kind::Float || b.kind() == Kind::Float) {
            if (b.as_double() == 0) throw ValueError("float modulo");
            return Value(float_divmod(a.as_double(), b.as_double()).second);
        }
        if (b.as_int() == 0) throw ValueError("integer division or modulo by zero");
        return Value(int_mod(a.as_int(), b.as_int()));
    }
    unsupported("%", a, b);
}

Value Interpreter::eval_binary(const Node& n) {
    const Value a = eval(*n.kids[0]);
    const Value b = eval(*n.kids[1]);
    if (n.op == BinOp::Mod) return py_mod(*this, a, b);
    if (a.is_undefined()) undefined_error(a);
    if (b.is_undefined()) undefined_error(b);
    const bool nums = a.is_number() && b.is_number();
    const bool floats = nums && (a.kind() == Kind::Float || b.kind() == Kind::Float);
    int64_t r = 0;
    switch (n.op) {
        case BinOp::Add:
            if (floats) return Value(a.as_double() + b.as_double());
            if (nums) {
                if (add_overflows(a.as_int(), b.as_int(), &r)) integer_overflow();
                return Value(r);
            }
            if (a.is_string() && b.is_string()) {
                check_size(a.as_string().size() + b.as_string().size());
                return Value(a.as_string() + b.as_string());
            }
            if (a.is_list() && b.is_list() && a.as_list().kind == b.as_list().kind &&
                (a.as_list().kind == SeqKind::List || a.as_list().kind == SeqKind::Tuple)) {
                check_items(a.as_list().items.size() + b.as_list().items.size());
                std::vector<Value> items = a.as_list().items;
                items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
                return Value::list(std::move(items), a.as_list().kind);
            }
            if (a.is_string() || (a.is_list() && a.as_list().kind == SeqKind::List))
                throw ValueError(std::string("can only concatenate ") + a.type_name() + " (not \"" +
                                 b.type_name() + "\") to " + a.type_name());
            unsupported("+", a, b);
        case BinOp::Sub:
            if (floats) return Value(a.as_double() - b.as_double());
            if (nums) {
                if (b.as_int() == std::numeric_limits<int64_t>::min() ||
                    add_overflows(a.as_int(), -b.as_int(), &r))
                    integer_overflow();
                return Value(r);
            }
            unsupported("-", a, b);
        case BinOp::Mul: {
            if (floats) return Value(a.as_double() * b.as_double());
            if (nums) {
                if (mul_overflows(a.as_int(), b.as_int(), &r)) integer_overflow();
                return Value(r);
            }
            const Value* seq = (a.kind() == Kind::Int || a.kind() == Kind::Bool) ? &b : &a;
            const Value* count = seq == &a ? &b : &a;
            if (count->kind() == Kind::Int || count->kind() == Kind::Bool) {
                const int64_t times = std::max<int64_t>(0, count->as_int());
                if (seq->is_string()) {
                    const std::string& s = seq->as_string();
                    if (!s.empty() &&
                        static_cast<uint64_t>(times) > options_.limits.max_output / s.size())
                        check_size(options_.limits.max_output + 1);
                    check_size(s.size() * static_cast<size_t>(times));
                    std::string out;
                    out.reserve(s.size() * static_cast<size_t>(times));
                    for (int64_t i = 0; i < times; ++i) out += s;
                    return Value(std::move(out));
                }
                if (seq->is_list() && (seq->as_list().kind == SeqKind::List ||
                                       seq->as_list().kind == SeqKind::Tuple)) {
                    const auto& items = seq->as_list().items;
                    if (!items.empty() &&
                        static_cast<uint64_t>(times) > options_.limits.max_items / items.size())
                        check_items(options_.limits.max_items + 1);
                    check_items(items.size() * static_cast<size_t>(times));
                    std::vector<Value> out;
                    for (int64_t i = 0; i < times; ++i)
                        out.insert(out.end(), items.begin(), items.end());
                    return Value::list(std::move(out), seq->as_list().kind);
                }
            }
            if (a.is_string() || b.is_string())
                throw ValueError("can't multiply sequence by non-int of type " +
                                 quoted_type(a.is_string() ? b : a));
            unsupported("*", a, b);
        }
        case BinOp::Div:
            if (nums) {
                if (b.as_double() == 0) throw ValueError("division by zero");
                return Value(a.as_double() / b.as_double());
            }
            unsupported("/", a, b);
        case BinOp::FloorDiv:
            if (floats) {
                if (b.as_double() == 0) throw ValueError("float floor division by zero");
                return Value(float_divmod(a.as_double(), b.as_double()).first);
            }
            if (nums) {
                if (b.as_int() == 0) throw ValueError("integer division or modulo by zero");
                return Value(int_floordiv(a.as_int(), b.as_int()));
            }
            unsupported("//", a, b);
        case BinOp::Mod:
            return py_mod(*this, a, b);
        case BinOp::Pow: {
            if (!nums) unsupported("** or pow()", a, b);
            if (!floats && b.as_int() >= 0) {
                int64_t base = a.as_int(), e = b.as_int(), acc = 1;
                while (e > 0) {
                    if (e & 1) {
                        if (mul_overflows(acc, base, &acc)) integer_overflow();
                    }
                    e >>= 1;
                    if (e > 0 && mul_overflows(base, base, &base)) integer_overflow();
                }
                return Value(acc);
            }
            const double x = a.as_double(), y = b.as_double();
            if (x == 0 && y < 0) throw ValueError("0.0 cannot be raised to a negative power");
            if (x < 0 && y != std::floor(y))
                throw ValueError("a negative number to a fractional power is complex");
            return Value(std::pow(x, y));
        }
    }
    throw ValueError("unknown operator");
}

namespace {

bool contains(Interpreter& in, const Value& container, const Value& item) {
    switch (container.kind()) {
        case Kind::String:
            if (!item.is_string())
                throw ValueError(
                    std::string("'in <string>' requires string as left operand, not ") +
                    item.type_name());
            in.charge(container.as_string().size() / 64);
            return container.as_string().find(item.as_string()) != std::string::npos;
        case Kind::List:
            in.charge(container.as_list().items.size() / 8);
            for (const Value& v : container.as_list().items)
                if (equal(v, item)) return true;
            return false;
        case Kind::Dict:
            check_hashable(item);
            in.charge(container.as_dict().items.size() / 8);
            return container.as_dict().find_key(item) != nullptr;
        case Kind::Iterator: {
            IteratorData& it = container.as_iterator();
            while (it.pos < it.items.size()) {
                in.charge(1);
                if (equal(it.items[it.pos++], item)) return true;
            }
            it.check();  // the generator fails where it stopped
            return false;
        }
        case Kind::Undefined:
            return false;
        default:
            throw ValueError(std::string("argument of type '") + container.type_name() +
                             "' is not iterable");
    }
}

}  // namespace

Value Interpreter::eval_compare(const Node& n) {
    Value left = eval(*n.kids[0]);
    for (size_t i = 0; i < n.ops.size(); ++i) {
        Value right = eval(*n.kids[i + 1]);
        bool ok = false;
        switch (n.ops[i]) {
            case CmpOp::Eq:
                ok = equal(left, right);
                break;
            case CmpOp::Ne:
                ok = !equal(left, right);
                break;
            case CmpOp::Lt:
                ok = less(left, right);
                break;
            case CmpOp::Gt:
                ok = less(right, left);
                break;
            case CmpOp::Le:
                ok = less(left, right) || equal(left, right);
                break;
            case CmpOp::Ge:
                ok = less(right, left) || equal(left, right);
                break;
            case CmpOp::In:
                ok = contains(*this, right, left);
                break;
            case CmpOp::NotIn:
                ok = !contains(*this, right, left);
                break;
        }
        if (!ok) return Value(false);
        left = std::move(right);
    }
    return Value(true);
}

}  // namespace powerinfer::jinja
