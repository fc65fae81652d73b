// The one JSON reader of the engine: RFC 8259 text into any value type. The
// runtime's Json (runtime/json.h: config files, request bodies, tool calls)
// and the chat templates' Values (chat/jinja_value.h: Python's json.loads)
// build their own values from it through a Builder:
//
//   struct Builder {
//       using Value = ...;
//       Value null();
//       Value boolean(bool b);
//       // The number's text as written; empty optional: out of range (an error).
//       std::optional<Value> number(std::string_view text, bool has_fraction_or_exponent);
//       Value string(std::string s);
//       Value array(std::vector<Value> items);
//       Value object(std::vector<std::pair<std::string, Value>> members);  // in order, duplicates kept
//       [[noreturn]] void fail(const std::string& what, int line, int column);
//   };
//
// JsonOptions set the nesting limit and whether Python's NaN, Infinity and
// -Infinity literals are read (json.loads reads them). Strings are UTF-8;
// \u escapes with surrogate pairs become one code point, a lone surrogate is
// kept as its three-byte form (as Python keeps it in a str).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/utf8_append.h"

namespace powerinfer::json {

struct JsonOptions {
    int max_depth = 64;
    bool python_literals = false;  // NaN, Infinity, -Infinity
};

template <class Builder>
class JsonReader {
public:
    using Value = typename Builder::Value;

    JsonReader(std::string_view text, Builder& b, JsonOptions options = {})
        : s_(text), b_(b), options_(options) {}

    Value document() {
        Value v = value(0);
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
        b_.fail(what, line, col);
        throw;  // unreachable: Builder::fail throws
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

    Value value(int depth) {
        if (depth >= options_.max_depth) fail("nested too deeply");
        skip_ws();
        if (pos_ >= s_.size()) fail("unexpected end of file");
        const char c = s_[pos_];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') return b_.string(string());
        if (consume("true")) return b_.boolean(true);
        if (consume("false")) return b_.boolean(false);
        if (consume("null")) return b_.null();
        if (options_.python_literals) {
            if (consume("NaN")) return *b_.number("NaN", true);
            if (consume("Infinity")) return *b_.number("Infinity", true);
            if (consume("-Infinity")) return *b_.number("-Infinity", true);
        }
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        fail(std::string("unexpected character '") + c + "'");
    }

    Value object(int depth) {
        ++pos_;
        std::vector<std::pair<std::string, Value>> members;
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            return b_.object(std::move(members));
        }
        for (;;) {
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a quoted key");
            std::string key = string();
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':' after a key");
            ++pos_;
            members.emplace_back(std::move(key), value(depth + 1));
            skip_ws();
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == '}') {
                ++pos_;
                return b_.object(std::move(members));
            }
            fail("expected ',' or '}' in an object");
        }
    }

    Value array(int depth) {
        ++pos_;
        std::vector<Value> items;
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            return b_.array(std::move(items));
        }
        for (;;) {
            items.push_back(value(depth + 1));
            skip_ws();
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == ']') {
                ++pos_;
                return b_.array(std::move(items));
            }
            fail("expected ',' or ']' in an array");
        }
    }

    Value number() {
        const size_t start = pos_;
        if (s_[pos_] == '-') ++pos_;
        auto digits = [&] {
            const size_t d = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            return pos_ > d;
        };
        if (pos_ < s_.size() && s_[pos_] == '0')
            ++pos_;  // no leading zeros: "01" is a 0 and then unexpected text
        else if (!digits())
            fail("invalid number");
        bool fractional = false;
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            fractional = true;
            if (!digits()) fail("invalid number");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            fractional = true;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (!digits()) fail("invalid number");
        }
        std::optional<Value> v = b_.number(s_.substr(start, pos_ - start), fractional);
        if (!v) fail("number out of range");
        return std::move(*v);
    }

    uint32_t hex4() {
        if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = s_[pos_++];
            v <<= 4;
            if (h >= '0' && h <= '9')
                v |= static_cast<uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f')
                v |= static_cast<uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                v |= static_cast<uint32_t>(h - 'A' + 10);
            else
                fail("invalid \\u escape");
        }
        return v;
    }

    std::string string() {
        ++pos_;  // opening quote
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) fail("unterminated string");
            const char c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated string");
            const char e = s_[pos_++];
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    out += e;
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
                    uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
                        const size_t save = pos_;
                        pos_ += 2;
                        const uint32_t lo = hex4();
                        if (lo >= 0xDC00 && lo < 0xE000)
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        else
                            pos_ = save;  // a lone high surrogate, then the next escape
                    }
                    powerinfer::append_utf8(out, cp);
                    break;
                }
                default:
                    --pos_;
                    fail(std::string("invalid escape '\\") + e + "' in a string");
            }
        }
    }

    std::string_view s_;
    Builder& b_;
    JsonOptions options_;
    size_t pos_ = 0;
};

// Reads `text` whole (one value, then only whitespace).
template <class Builder>
typename Builder::Value read_json(std::string_view text, Builder& builder, JsonOptions options = {}) {
    return JsonReader<Builder>(text, builder, options).document();
}

}  // namespace powerinfer::json
