#include "runtime/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "common/json_reader.h"

namespace powerinfer::runtime {
namespace {

// Builds runtime Json values for common/json_reader.h (numbers are doubles).
struct Builder {
    using Value = Json;
    const std::string& source;
    Json null() { return Json(); }
    Json boolean(bool b) { return Json(b); }
    std::optional<Json> number(std::string_view text, bool) {
        double v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (r.ec != std::errc()) return std::nullopt;
        return Json(v);
    }
    Json string(std::string s) { return Json(std::move(s)); }
    Json array(std::vector<Json> items) { return Json(std::move(items)); }
    Json object(std::vector<std::pair<std::string, Json>> members) {
        return Json(std::move(members));
    }
    [[noreturn]] void fail(const std::string& what, int line, int column) const {
        throw EngineError(source + ": " + what + " at line " + std::to_string(line) + ", column " +
                          std::to_string(column));
    }
};

void dump_string(std::string& out, const std::string& s) {
    out += '"';
    for (const char c : s) {
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
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

}  // namespace

const Json* Json::find(std::string_view key) const {
    const auto* obj = as_object();
    if (!obj) return nullptr;
    for (const auto& [k, v] : *obj)
        if (k == key) return &v;
    return nullptr;
}

Json Json::parse(std::string_view text, const std::string& source) {
    Builder b{source};
    return json::read_json(text, b);
}

std::string Json::dump(int indent) const {
    std::string out;
    dump_to(out, indent, 0);
    return out;
}

void Json::dump_to(std::string& out, int indent, int depth) const {
    auto newline = [&](int d) {
        if (indent <= 0) return;
        out += '\n';
        out.append(static_cast<size_t>(indent * d), ' ');
    };
    if (is_null()) {
        out += "null";
    } else if (const bool* b = as_bool()) {
        out += *b ? "true" : "false";
    } else if (const double* d = as_number()) {
        if (!std::isfinite(*d)) {
            out += "null";
        } else if (*d == std::floor(*d) && std::fabs(*d) < 9e15) {
            out += std::to_string(static_cast<int64_t>(*d));
        } else {
            // Shortest round-trip form, independent of the C locale (a GUI may
            // have set one with a decimal comma).
            char buf[32];
            const auto r = std::to_chars(buf, buf + sizeof buf, *d);
            out.append(buf, r.ptr);
        }
    } else if (const std::string* s = as_string()) {
        dump_string(out, *s);
    } else if (const Array* a = as_array()) {
        if (a->empty()) {
            out += "[]";
            return;
        }
        // Arrays stay on one line: config.json only holds short lists.
        out += '[';
        for (size_t i = 0; i < a->size(); ++i) {
            if (i) out += ", ";
            (*a)[i].dump_to(out, indent, depth + 1);
        }
        out += ']';
    } else if (const Object* o = as_object()) {
        if (o->empty()) {
            out += "{}";
            return;
        }
        out += '{';
        for (size_t i = 0; i < o->size(); ++i) {
            if (i) out += ',';
            newline(depth + 1);
            dump_string(out, (*o)[i].first);
            out += indent > 0 ? ": " : ":";
            (*o)[i].second.dump_to(out, indent, depth + 1);
        }
        newline(depth);
        out += '}';
    }
}

}  // namespace powerinfer::runtime
