#include "runtime/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "tokenizer/unicode.h"

namespace powerinfer::runtime {
namespace {

class Parser {
public:
    Parser(std::string_view text, const std::string& source) : s_(text), source_(source) {}

    Json document() {
        Json v = value(0);
        skip_ws();
        if (pos_ != s_.size()) fail("unexpected text after the JSON value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        int line = 1, col = 1;
        for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        throw EngineError(source_ + ": " + what + " at line " + std::to_string(line) + ", column " +
                          std::to_string(col));
    }

    void skip_ws() {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }

    bool consume(std::string_view lit) {
        if (s_.substr(pos_, lit.size()) != lit) return false;
        pos_ += lit.size();
        return true;
    }

    Json value(int depth) {
        if (depth > 64) fail("nesting too deep");
        skip_ws();
        if (pos_ >= s_.size()) fail("unexpected end of file");
        const char c = s_[pos_];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') return Json(string());
        if (consume("true")) return Json(true);
        if (consume("false")) return Json(false);
        if (consume("null")) return Json();
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        fail(std::string("unexpected character '") + c + "'");
    }

    Json object(int depth) {
        ++pos_;
        Json::Object obj;
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            return Json(std::move(obj));
        }
        for (;;) {
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a quoted key");
            std::string key = string();
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':' after a key");
            ++pos_;
            obj.emplace_back(std::move(key), value(depth + 1));
            skip_ws();
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == '}') {
                ++pos_;
                return Json(std::move(obj));
            }
            fail("expected ',' or '}' in an object");
        }
    }

    Json array(int depth) {
        ++pos_;
        Json::Array arr;
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            return Json(std::move(arr));
        }
        for (;;) {
            arr.push_back(value(depth + 1));
            skip_ws();
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == ']') {
                ++pos_;
                return Json(std::move(arr));
            }
            fail("expected ',' or ']' in an array");
        }
    }

    Json number() {
        const size_t start = pos_;
        if (s_[pos_] == '-') ++pos_;
        auto digits = [&] {
            const size_t b = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            return pos_ > b;
        };
        if (!digits()) fail("invalid number");
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            if (!digits()) fail("invalid number");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (!digits()) fail("invalid number");
        }
        double v = 0;
        const auto r = std::from_chars(s_.data() + start, s_.data() + pos_, v);
        if (r.ec != std::errc()) fail("number out of range");
        return Json(v);
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = s_[pos_++];
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= unsigned(c - 'A' + 10);
            else
                fail("invalid \\u escape");
        }
        return v;
    }

    std::string string() {
        ++pos_;  // opening quote
        std::string out;
        while (pos_ < s_.size()) {
            const char c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) break;
            const char e = s_[pos_++];
            switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && consume("\\u")) {
                        const unsigned lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid surrogate pair");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    unicode::append_utf8(out, cp);
                    break;
                }
                default:
                    --pos_;
                    fail("invalid escape in a string");
            }
        }
        fail("unterminated string");
    }

    std::string_view s_;
    const std::string& source_;
    size_t pos_ = 0;
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
    return Parser(text, source).document();
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
