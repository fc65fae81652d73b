// Test data of tst_json_grammar.cpp, kept apart from its Q_OBJECT class:
// moc's lexer misreads some of these raw strings.
#include "tst_json_grammar_data.h"

const char* const kPerson = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"enum": ["a", "b", 3, null]}, "maxItems": 3},
    "address": {"type": "object", "properties": {"city": {"type": "string"},
                "zip": {"type": ["string", "null"]}}, "required": ["city"]},
    "score": {"type": "number"},
    "ok": {"type": "boolean"}
  },
  "required": ["name", "age"]
})";

std::vector<UnsupportedCase> unsupported_cases() {
    return {
        {R"({"type":"string","pattern":"^a+$"})", "'pattern'"},
        {R"({"type":"object","properties":{"d":{"type":"string","format":"date-time"}}})",
         "#/properties/d: the keyword 'format'"},
        {R"({"type":"integer","minimum":0})", "'minimum'"},
        {R"({"type":"object","required":["x"],"properties":{"y":{}}})", "'x' is not declared"},
        {R"({"$ref":"other.json#/x"})", "'$ref'"},
        {R"({"type":"strange"})", "unknown type 'strange'"},
        {R"({"allOf":[{},{}]})", "'allOf'"},
    };
}

std::vector<const char*> walk_schemas() {
    return {
        kPerson,
        R"({"type":"object"})",
        R"({"type":"array","items":{"type":"number"},"minItems":2,"maxItems":4})",
        R"({"anyOf":[{"type":"object","properties":{"k":{"const":"v"},"n":{"type":"integer"}},"required":["k","n"]},{"type":"boolean"}]})",
        R"({"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"label":{"type":"string","maxLength":5}},"required":["id","label"]}}},"required":["items"]})",
    };
}
