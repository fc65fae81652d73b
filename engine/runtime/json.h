// A small JSON reader/writer for config.json: enough of RFC 8259 for
// settings files (objects, arrays, strings with escapes, numbers, literals).
// Errors carry the line and column so a user can fix a hand-edited file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/error.h"

namespace powerinfer::runtime {

class Json {
public:
    using Array = std::vector<Json>;
    using Object = std::vector<std::pair<std::string, Json>>;  // keeps key order

    Json() = default;  // null
    Json(bool b) : v_(b) {}
    Json(double d) : v_(d) {}
    Json(int64_t i) : v_(static_cast<double>(i)) {}
    Json(int i) : v_(static_cast<double>(i)) {}
    Json(std::string s) : v_(std::move(s)) {}
    Json(const char* s) : v_(std::string(s)) {}
    Json(Array a) : v_(std::move(a)) {}
    Json(Object o) : v_(std::move(o)) {}

    bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
    const bool* as_bool() const { return std::get_if<bool>(&v_); }
    const double* as_number() const { return std::get_if<double>(&v_); }
    const std::string* as_string() const { return std::get_if<std::string>(&v_); }
    const Array* as_array() const { return std::get_if<Array>(&v_); }
    const Object* as_object() const { return std::get_if<Object>(&v_); }
    const Json* find(std::string_view key) const;  // objects only

    // Throws EngineError "<source>: <problem> at line L, column C".
    static Json parse(std::string_view text, const std::string& source = "<json>");
    std::string dump(int indent = 2) const;

private:
    void dump_to(std::string& out, int indent, int depth) const;
    std::variant<std::monostate, bool, double, std::string, Array, Object> v_;
};

}  // namespace powerinfer::runtime
