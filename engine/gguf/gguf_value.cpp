#include <limits>

#include "gguf/gguf.h"

namespace powerinfer::gguf {

std::string_view value_type_name(ValueType t) {
    switch (t) {
        case ValueType::UINT8:
            return "uint8";
        case ValueType::INT8:
            return "int8";
        case ValueType::UINT16:
            return "uint16";
        case ValueType::INT16:
            return "int16";
        case ValueType::UINT32:
            return "uint32";
        case ValueType::INT32:
            return "int32";
        case ValueType::FLOAT32:
            return "float32";
        case ValueType::BOOL:
            return "bool";
        case ValueType::STRING:
            return "string";
        case ValueType::ARRAY:
            return "array";
        case ValueType::UINT64:
            return "uint64";
        case ValueType::INT64:
            return "int64";
        case ValueType::FLOAT64:
            return "float64";
    }
    return "unknown";
}

std::optional<int64_t> Value::as_int() const {
    if (const auto* u = std::get_if<uint64_t>(&v)) {
        if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
        return static_cast<int64_t>(*u);
    }
    if (const auto* i = std::get_if<int64_t>(&v)) return *i;
    return std::nullopt;
}

std::optional<uint64_t> Value::as_uint() const {
    if (const auto* u = std::get_if<uint64_t>(&v)) return *u;
    if (const auto* i = std::get_if<int64_t>(&v)) {
        if (*i < 0) return std::nullopt;
        return static_cast<uint64_t>(*i);
    }
    return std::nullopt;
}

std::optional<double> Value::as_float() const {
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    return std::nullopt;
}

std::optional<bool> Value::as_bool() const {
    if (const auto* b = std::get_if<bool>(&v)) return *b;
    return std::nullopt;
}

const std::string* Value::as_string() const { return std::get_if<std::string>(&v); }
const Array* Value::as_array() const { return std::get_if<Array>(&v); }

Value Value::u8(uint8_t x) { return {ValueType::UINT8, uint64_t{x}}; }
Value Value::i8(int8_t x) { return {ValueType::INT8, int64_t{x}}; }
Value Value::u16(uint16_t x) { return {ValueType::UINT16, uint64_t{x}}; }
Value Value::i16(int16_t x) { return {ValueType::INT16, int64_t{x}}; }
Value Value::u32(uint32_t x) { return {ValueType::UINT32, uint64_t{x}}; }
Value Value::i32(int32_t x) { return {ValueType::INT32, int64_t{x}}; }
Value Value::u64(uint64_t x) { return {ValueType::UINT64, x}; }
Value Value::i64(int64_t x) { return {ValueType::INT64, x}; }
Value Value::f32(float x) { return {ValueType::FLOAT32, double{x}}; }
Value Value::f64(double x) { return {ValueType::FLOAT64, x}; }
Value Value::boolean(bool x) { return {ValueType::BOOL, x}; }
Value Value::str(std::string s) { return {ValueType::STRING, std::move(s)}; }
Value Value::array(ValueType elem, std::vector<Value> items) {
    return {ValueType::ARRAY, Array{elem, std::move(items)}};
}

}  // namespace powerinfer::gguf
