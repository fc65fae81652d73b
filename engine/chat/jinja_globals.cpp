// The Jinja globals templates call: range, dict, namespace, joiner, cycler,
// raise_exception and strftime_now, with jinja2 3.1's semantics (Python 3,
// transformers' sandboxed environment).
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chat/jinja_internal.h"

namespace powerinfer::jinja {

namespace {

// strftime with English names whatever the process locale (Python formats
// with the C locale unless the program changes LC_TIME; glibc flags "-",
// "_" and "0" are understood).
std::string strftime_c(const std::string& fmt, const std::tm& t) {
    static const char* kDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                  "Thursday", "Friday", "Saturday"};
    static const char* kMonths[] = {"January",   "February", "March",    "April",
                                    "May",       "June",     "July",     "August",
                                    "September", "October",  "November", "December"};
    std::string out;
    auto num = [&](int v, int width, char flag) {
        std::string s = std::to_string(v);
        if (flag == '-') return s;
        const char p = flag == '_' ? ' ' : '0';
        while (static_cast<int>(s.size()) < width) s.insert(s.begin(), p);
        return s;
    };
    const int wday = ((t.tm_wday % 7) + 7) % 7;
    const int mon = ((t.tm_mon % 12) + 12) % 12;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%' || i + 1 >= fmt.size()) {
            out += fmt[i];
            continue;
        }
        char flag = 0;
        char c = fmt[++i];
        if ((c == '-' || c == '_' || c == '0') && i + 1 < fmt.size()) {
            flag = c;
            c = fmt[++i];
        }
        const int hour12 = t.tm_hour % 12 == 0 ? 12 : t.tm_hour % 12;
        switch (c) {
            case 'a':
                out += std::string(kDays[wday]).substr(0, 3);
                break;
            case 'A':
                out += kDays[wday];
                break;
            case 'b':
            case 'h':
                out += std::string(kMonths[mon]).substr(0, 3);
                break;
            case 'B':
                out += kMonths[mon];
                break;
            case 'd':
                out += num(t.tm_mday, 2, flag);
                break;
            case 'e':
                out += num(t.tm_mday, 2, flag ? flag : '_');
                break;
            case 'm':
                out += num(mon + 1, 2, flag);
                break;
            case 'y':
                out += num(((t.tm_year + 1900) % 100 + 100) % 100, 2, flag);
                break;
            case 'Y':
                out += std::to_string(t.tm_year + 1900);
                break;
            case 'H':
                out += num(t.tm_hour, 2, flag);
                break;
            case 'I':
                out += num(hour12, 2, flag);
                break;
            case 'M':
                out += num(t.tm_min, 2, flag);
                break;
            case 'S':
                out += num(t.tm_sec, 2, flag);
                break;
            case 'p':
                out += t.tm_hour < 12 ? "AM" : "PM";
                break;
            case 'j':
                out += num(t.tm_yday + 1, 3, flag);
                break;
            case 'w':
                out += std::to_string(wday);
                break;
            case 'u':
                out += std::to_string(wday == 0 ? 7 : wday);
                break;
            case 'F':
                out += std::to_string(t.tm_year + 1900) + "-" + num(mon + 1, 2, 0) + "-" +
                       num(t.tm_mday, 2, 0);
                break;
            case 'T':
                out += num(t.tm_hour, 2, 0) + ":" + num(t.tm_min, 2, 0) + ":" + num(t.tm_sec, 2, 0);
                break;
            case 'D':
                out += num(mon + 1, 2, 0) + "/" + num(t.tm_mday, 2, 0) + "/" +
                       num(((t.tm_year + 1900) % 100 + 100) % 100, 2, 0);
                break;
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case '%':
                out += '%';
                break;
            default: {
                // The C library for the rest of its conversions; anything
                // else is copied as it is (as glibc does).
                if (std::strchr("cCgGklrRsUVWxXzZ", c) == nullptr || c == 0) {
                    out += '%';
                    out += c;
                    break;
                }
                char buf[128];
                const char spec[3] = {'%', c, 0};
                const size_t n = std::strftime(buf, sizeof buf, spec, &t);
                out.append(buf, n);
            }
        }
    }
    return out;
}

}  // namespace

std::vector<std::pair<std::string, Value>> globals(Interpreter& in) {
    std::vector<std::pair<std::string, Value>> g;
    auto add = [&](const char* name, std::function<Value(Interpreter&, CallArgs&)> fn) {
        auto f = std::make_shared<FunctionData>();
        f->name = name;
        f->call = std::move(fn);
        g.emplace_back(name, Value::function(std::move(f)));
    };
    add("range", [](Interpreter& it, CallArgs& a) {
        if (!a.kwargs.empty()) throw ValueError("range() takes no keyword arguments");
        if (a.args.empty() || a.args.size() > 3)
            throw ValueError("range expected at most 3 arguments, got " +
                             std::to_string(a.args.size()));
        int64_t start = 0, stop = 0, step = 1;
        if (a.args.size() == 1) {
            stop = need_int(&a.args[0], "range");
        } else {
            start = need_int(&a.args[0], "range");
            stop = need_int(&a.args[1], "range");
            if (a.args.size() == 3) step = need_int(&a.args[2], "range");
        }
        if (step == 0) throw ValueError("range() arg 3 must not be zero");
        // The sandbox's MAX_RANGE.
        const double count =
            step > 0 ? std::ceil((static_cast<double>(stop) - static_cast<double>(start)) /
                                 static_cast<double>(step))
                     : std::ceil((static_cast<double>(start) - static_cast<double>(stop)) /
                                 static_cast<double>(-static_cast<double>(step)));
        if (count > 100000)
            throw ValueError(
                "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        std::vector<Value> out;
        if (count > 0) {
            it.check_items(static_cast<size_t>(count));
            for (int64_t i = 0, x = start; i < static_cast<int64_t>(count); ++i, x += step)
                out.emplace_back(x);
        }
        return Value::list(std::move(out));
    });
    add("dict", [](Interpreter& it, CallArgs& a) {
        std::vector<std::pair<Value, Value>> items;
        if (a.args.size() > 1) throw ValueError("dict expected at most 1 argument");
        if (!a.args.empty()) {
            const Value& src = a.args[0];
            if (src.is_dict()) {
                items = src.as_dict().items;
            } else {
                for (const Value& p : it.iterate(src)) {
                    const auto kv = it.iterate(p);
                    if (kv.size() != 2)
                        throw ValueError("dictionary update sequence element has the wrong length");
                    items.emplace_back(kv[0], kv[1]);
                }
            }
        }
        for (const auto& [k, v] : a.kwargs) items.emplace_back(Value(k), v);
        return Value::dict(std::move(items));
    });
    add("namespace", [](Interpreter& it, CallArgs& a) {
        NamespaceData* ns = it.new_namespace();
        if (a.args.size() > 1) throw ValueError("namespace expected at most 1 argument");
        if (!a.args.empty()) {
            if (!a.args[0].is_dict()) throw ValueError("namespace() argument must be a mapping");
            for (const auto& [k, v] : a.args[0].as_dict().items) {
                if (!k.is_string()) throw ValueError("namespace keys must be strings");
                if (Value* slot = ns->find(k.as_string())) {
                    *slot = v;
                } else {
                    ns->attrs.emplace_back(k.as_string(), v);
                }
            }
        }
        for (const auto& [k, v] : a.kwargs) {
            if (Value* slot = ns->find(k)) {
                *slot = v;
            } else {
                ns->attrs.emplace_back(k, v);
            }
        }
        return Value::ns(ns);
    });
    add("joiner", [](Interpreter&, CallArgs& a) {
        const Bound b = bind(a, {"sep"}, "joiner");
        const std::string sep = b[0] ? b[0]->str() : ", ";
        auto used = std::make_shared<bool>(false);
        auto f = std::make_shared<FunctionData>();
        f->name = "joiner";
        f->call = [sep, used](Interpreter&, CallArgs&) {
            if (!*used) {
                *used = true;
                return Value("");
            }
            return Value(sep);
        };
        return Value::function(std::move(f));
    });
    add("raise_exception", [](Interpreter&, CallArgs& a) -> Value {
        throw ValueError(a.args.empty() ? std::string("raise_exception() called")
                                        : a.args[0].str());
    });
    add("strftime_now", [](Interpreter& it, CallArgs& a) {
        const Bound b = bind(a, {"format"}, "strftime_now");
        const std::string fmt = need_str(b[0], "strftime_now", "format");
        std::tm t{};
        if (it.options().now) {
            t = *it.options().now;
        } else {
            const std::time_t now =
                std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
#ifdef _WIN32
            localtime_s(&t, &now);
#else
            localtime_r(&now, &t);
#endif
        }
        it.check_size(fmt.size() * 16);
        return Value(strftime_c(fmt, t));
    });
    (void)in;
    return g;
}

}  // namespace powerinfer::jinja
