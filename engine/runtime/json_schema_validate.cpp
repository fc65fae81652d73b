#include "runtime/json_schema_validate.h"

#include <cmath>

namespace powerinfer::runtime {
namespace {

std::string utf8_length_error(const std::string& s, const Json& schema, const std::string& at) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    const Json* lo = schema.find("minLength");
    const Json* hi = schema.find("maxLength");
    if (lo && lo->as_number() && double(n) < *lo->as_number()) return at + ": string too short";
    if (hi && hi->as_number() && double(n) > *hi->as_number()) return at + ": string too long";
    return {};
}

bool equal(const Json& a, const Json& b) { return a.dump(0) == b.dump(0); }

class Validator {
public:
    explicit Validator(const Json& root) : root_(root) {}

    std::string check(const Json& doc, const Json& schema, const std::string& at, int depth = 0) {
        if (depth > 64) return at + ": schema nested too deeply";
        if (const bool* b = schema.as_bool()) return *b ? std::string() : at + ": schema is false";
        if (const Json* r = schema.find("$ref")) {
            const std::string& p = *r->as_string();
            if (p == "#") return check(doc, root_, at, depth + 1);
            for (const char* base : {"#/$defs/", "#/definitions/"}) {
                const std::string b(base);
                if (p.compare(0, b.size(), b) != 0) continue;
                const Json* defs = root_.find(b.substr(2, b.size() - 3));
                const Json* t = defs ? defs->find(p.substr(b.size())) : nullptr;
                if (!t) return at + ": unresolved $ref " + p;
                return check(doc, *t, at, depth + 1);
            }
            return at + ": unsupported $ref " + p;
        }
        if (const Json* c = schema.find("const"))
            if (!equal(doc, *c)) return at + ": not the const value";
        if (const Json* e = schema.find("enum")) {
            bool found = false;
            for (const Json& v : *e->as_array()) found = found || equal(doc, v);
            if (!found) return at + ": not one of the enum values";
        }
        for (const char* key : {"anyOf", "oneOf"}) {
            const Json* alts = schema.find(key);
            if (!alts) continue;
            int matches = 0;
            for (const Json& s : *alts->as_array()) matches += check(doc, s, at, depth + 1).empty();
            if (matches == 0) return at + ": matches no " + key + " branch";
            if (std::string(key) == "oneOf" && matches > 1)
                return at + ": matches several oneOf branches";
        }
        if (const Json* all = schema.find("allOf"))
            for (const Json& s : *all->as_array())
                if (auto e = check(doc, s, at, depth + 1); !e.empty()) return e;
        if (const Json* t = schema.find("type")) {
            std::vector<std::string> types;
            if (t->as_string()) types.push_back(*t->as_string());
            if (t->as_array())
                for (const Json& x : *t->as_array()) types.push_back(*x.as_string());
            std::string last;
            for (const auto& type : types) {
                last = typed(doc, type, schema, at, depth);
                if (last.empty()) return {};
            }
            return last;
        }
        if (doc.as_object()) return typed(doc, "object", schema, at, depth);
        if (doc.as_array()) return typed(doc, "array", schema, at, depth);
        if (doc.as_string()) return utf8_length_error(*doc.as_string(), schema, at);
        return {};
    }

private:
    std::string typed(const Json& doc, const std::string& type, const Json& schema,
                      const std::string& at, int depth) {
        if (type == "null") return doc.is_null() ? "" : at + ": expected null";
        if (type == "boolean") return doc.as_bool() ? "" : at + ": expected a boolean";
        if (type == "number") return doc.as_number() ? "" : at + ": expected a number";
        if (type == "integer") {
            const double* d = doc.as_number();
            return d && std::floor(*d) == *d ? "" : at + ": expected an integer";
        }
        if (type == "string") {
            if (!doc.as_string()) return at + ": expected a string";
            return utf8_length_error(*doc.as_string(), schema, at);
        }
        if (type == "array") {
            const auto* a = doc.as_array();
            if (!a) return at + ": expected an array";
            const Json* lo = schema.find("minItems");
            const Json* hi = schema.find("maxItems");
            if (lo && double(a->size()) < *lo->as_number()) return at + ": too few items";
            if (hi && double(a->size()) > *hi->as_number()) return at + ": too many items";
            if (const Json* items = schema.find("items"))
                for (size_t i = 0; i < a->size(); ++i)
                    if (auto e = check((*a)[i], *items, at + "/" + std::to_string(i), depth + 1);
                        !e.empty())
                        return e;
            return {};
        }
        if (type == "object") {
            const auto* o = doc.as_object();
            if (!o) return at + ": expected an object";
            const Json* props = schema.find("properties");
            const Json* extra = schema.find("additionalProperties");
            if (const Json* req = schema.find("required"))
                for (const Json& name : *req->as_array())
                    if (!doc.find(*name.as_string()))
                        return at + ": missing required property '" + *name.as_string() + "'";
            for (size_t i = 0; i < o->size(); ++i) {
                const auto& [key, value] = (*o)[i];
                for (size_t j = 0; j < i; ++j)
                    if ((*o)[j].first == key) return at + ": duplicate key '" + key + "'";
                const Json* ps = props ? props->find(key) : nullptr;
                if (ps) {
                    if (auto e = check(value, *ps, at + "/" + key, depth + 1); !e.empty()) return e;
                } else if (extra && extra->as_bool() && !*extra->as_bool()) {
                    return at + ": property '" + key + "' is not allowed";
                } else if (extra && extra->as_object()) {
                    if (auto e = check(value, *extra, at + "/" + key, depth + 1); !e.empty())
                        return e;
                }
            }
            return {};
        }
        return at + ": unknown type " + type;
    }

    const Json& root_;
};

}  // namespace

std::string json_schema_violation(const Json& doc, const Json& schema) {
    return Validator(schema).check(doc, schema, "#");
}

}  // namespace powerinfer::runtime
