#include "runtime/json_grammar.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace powerinfer::runtime {
namespace {

// Whitespace allowed between tokens of the document, per gap: enough for
// pretty-printing, too little for a model to loop on newlines.
constexpr int kMaxWhitespace = 12;
// Digits of an integer part and of a fraction (a model must not emit
// digits forever), and of an exponent (a double overflows beyond e308).
constexpr int kMaxDigits = 16;
constexpr int kMaxExponentDigits = 2;  // e99 at most: every parser reads a finite double
// Bounds beyond which the bounded repetitions would make the grammar large.
constexpr int64_t kMaxBound = 100000;

struct Item {
    bool rule = false;
    uint32_t id = 0;
    ByteSet bytes{};
};
using Seq = std::vector<Item>;

Item byte_range(uint8_t lo, uint8_t hi) {
    Item it;
    for (int b = lo; b <= hi; ++b) it.bytes[size_t(b) >> 6] |= uint64_t{1} << (b & 63);
    return it;
}
Item byte_of(char c) { return byte_range(uint8_t(c), uint8_t(c)); }
Item ref(uint32_t rule) {
    Item it;
    it.rule = true;
    it.id = rule;
    return it;
}
Item bytes_of(std::string_view chars) {
    Item it;
    for (char c : chars) it.bytes[uint8_t(c) >> 6] |= uint64_t{1} << (uint8_t(c) & 63);
    return it;
}
void append_literal(Seq& seq, std::string_view text) {
    for (char c : text) seq.push_back(byte_of(c));
}

// The compact JSON text of a value (what an enum or const must read as).
std::string compact(const Json& v) {
    if (const auto* a = v.as_array()) {
        std::string out = "[";
        for (size_t i = 0; i < a->size(); ++i) out += (i ? "," : "") + compact((*a)[i]);
        return out + "]";
    }
    if (const auto* o = v.as_object()) {
        std::string out = "{";
        for (size_t i = 0; i < o->size(); ++i)
            out += (i ? "," : "") + Json((*o)[i].first).dump(0) + ":" + compact((*o)[i].second);
        return out + "}";
    }
    return v.dump(0);
}

class Builder {
public:
    Grammar g;
    uint32_t reserve() {
        g.rules.emplace_back();
        return static_cast<uint32_t>(g.rules.size() - 1);
    }
    void alt(uint32_t rule, const Seq& seq) {
        const auto start = static_cast<uint32_t>(g.symbols.size());
        for (const Item& it : seq) {
            GrammarSymbol s;
            s.kind = it.rule ? GrammarSymbol::Kind::Rule : GrammarSymbol::Kind::Bytes;
            s.rule = it.id;
            s.bytes = it.bytes;
            g.symbols.push_back(s);
        }
        g.symbols.push_back(GrammarSymbol{});
        g.rules[rule].push_back(start);
    }
    uint32_t rule(const std::vector<Seq>& alts) {
        const uint32_t r = reserve();
        for (const Seq& a : alts) alt(r, a);
        return r;
    }
    // Zero to n repetitions of `item`: R_k = "" | item R_(k-1), or, unbounded
    // (n < 0), R = "" | item R.
    uint32_t up_to(const Item& item, int64_t n) {
        if (n < 0) {
            const uint32_t r = reserve();
            alt(r, {});
            alt(r, {item, ref(r)});
            return r;
        }
        uint32_t r = rule({{}});
        for (int64_t k = 1; k <= n; ++k) r = rule({{}, {item, ref(r)}});
        return r;
    }
};

const std::set<std::string, std::less<>>& annotations() {
    static const std::set<std::string, std::less<>> s = {
        "title",      "description", "default",   "examples", "$schema",     "$id",    "$comment",
        "deprecated", "readOnly",    "writeOnly", "$defs",    "definitions", "strict", "name"};
    return s;
}

const std::set<std::string, std::less<>>& supported() {
    static const std::set<std::string, std::less<>> s = {
        "type",      "properties", "required", "additionalProperties",
        "items",     "minItems",   "maxItems", "minLength",
        "maxLength", "enum",       "const",    "anyOf",
        "oneOf",     "allOf",      "$ref"};
    return s;
}

// Grammar::finish_bytes: each rule's shortest expansion (a fixpoint; every
// rule the compiler builds has a finite one), then per symbol the rest of
// its alternative.
void finish_costs(Grammar& g) {
    constexpr uint32_t kInf = 1u << 30;
    std::vector<uint32_t> rule_min(g.rules.size(), kInf);
    auto seq_cost = [&](uint32_t at) {
        uint64_t sum = 0;
        for (; g.symbols[at].kind != GrammarSymbol::Kind::End; ++at)
            sum +=
                g.symbols[at].kind == GrammarSymbol::Kind::Bytes ? 1 : rule_min[g.symbols[at].rule];
        return uint32_t(std::min<uint64_t>(sum, kInf));
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t r = 0; r < g.rules.size(); ++r)
            for (const uint32_t a : g.rules[r]) {
                const uint32_t c = seq_cost(a);
                if (c < rule_min[r]) {
                    rule_min[r] = c;
                    changed = true;
                }
            }
    }
    g.finish_bytes.assign(g.symbols.size(), 0);
    for (size_t i = g.symbols.size(); i-- > 0;) {
        const GrammarSymbol& s = g.symbols[i];
        if (s.kind == GrammarSymbol::Kind::End) continue;
        const uint64_t self = s.kind == GrammarSymbol::Kind::Bytes ? 1 : rule_min[s.rule];
        g.finish_bytes[i] = uint32_t(std::min<uint64_t>(self + g.finish_bytes[i + 1], kInf));
    }
}

class SchemaCompiler {
public:
    explicit SchemaCompiler(const Json& root) : root_(root) {}

    std::shared_ptr<const Grammar> compile(std::string_view prefix, std::string_view suffix) {
        const uint32_t value = schema(root_, "#");
        Seq seq;
        append_literal(seq, prefix);
        seq.push_back(ref(value));
        append_literal(seq, suffix);
        b_.g.root = b_.rule({seq});
        finish_costs(b_.g);
        return std::make_shared<const Grammar>(std::move(b_.g));
    }

private:
    [[noreturn]] static void fail(const std::string& where, const std::string& what) {
        throw UnsupportedSchema("JSON schema at " + where + ": " + what);
    }

    int64_t bound(const Json& s, const char* key, const std::string& where, int64_t dflt) {
        const Json* v = s.find(key);
        if (!v) return dflt;
        const double* d = v->as_number();
        if (!d || *d < 0 || std::floor(*d) != *d)
            fail(where, std::string("'") + key + "' must be a non-negative integer");
        if (*d > double(kMaxBound))
            fail(where, std::string("'") + key + "' above " + std::to_string(kMaxBound) +
                            " is not supported by the constrained sampler");
        return int64_t(*d);
    }

    uint32_t ws() {
        if (!ws_) ws_ = b_.up_to(bytes_of(" \n\t"), kMaxWhitespace);
        return *ws_;
    }
    uint32_t digits(int n) {
        auto& r = digits_[n];
        if (!r) r = b_.up_to(byte_range('0', '9'), n);
        return *r;
    }

    // One character of a JSON string: unescaped UTF-8 (well-formed, no
    // surrogates, no overlongs) or an escape.
    uint32_t string_char() {
        if (char_) return *char_;
        const Item tail = byte_range(0x80, 0xBF);
        const Item hex = bytes_of("0123456789abcdefABCDEF");
        std::vector<Seq> alts = {
            {byte_range(0x20, 0x21)},
            {byte_range(0x23, 0x5B)},
            {byte_range(0x5D, 0x7F)},
            {byte_range(0xC2, 0xDF), tail},
            {byte_of(char(0xE0)), byte_range(0xA0, 0xBF), tail},
            {byte_range(0xE1, 0xEC), tail, tail},
            {byte_of(char(0xED)), byte_range(0x80, 0x9F), tail},
            {byte_range(0xEE, 0xEF), tail, tail},
            {byte_of(char(0xF0)), byte_range(0x90, 0xBF), tail, tail},
            {byte_range(0xF1, 0xF3), tail, tail, tail},
            {byte_of(char(0xF4)), byte_range(0x80, 0x8F), tail, tail},
            {byte_of('\\'), bytes_of("\"\\/bfnrt")},
            // \uXXXX outside the surrogates (a lone surrogate does not decode).
            {byte_of('\\'), byte_of('u'), bytes_of("0123456789abcefABCEF"), hex, hex, hex},
        };
        char_ = b_.rule(alts);
        return *char_;
    }

    uint32_t string_type(int64_t min_len, int64_t max_len) {
        if (max_len >= 0 && max_len < min_len)
            throw UnsupportedSchema("JSON schema: 'maxLength' is below 'minLength'");
        auto& cached = strings_[std::pair{min_len, max_len}];
        if (cached) return *cached;
        Seq seq{byte_of('"')};
        for (int64_t i = 0; i < min_len; ++i) seq.push_back(ref(string_char()));
        if (max_len < 0) {
            if (!any_chars_) any_chars_ = b_.up_to(ref(string_char()), -1);
            seq.push_back(ref(*any_chars_));
        } else {
            seq.push_back(ref(b_.up_to(ref(string_char()), max_len - min_len)));
        }
        seq.push_back(byte_of('"'));
        const uint32_t r = b_.rule({seq});
        strings_[std::pair{min_len, max_len}] = r;
        return r;
    }

    uint32_t integer_part() {
        if (!int_)
            int_ = b_.rule({{byte_of('0')}, {byte_range('1', '9'), ref(digits(kMaxDigits - 1))}});
        return *int_;
    }
    uint32_t integer_type() {
        if (!integer_)
            integer_ = b_.rule({{ref(integer_part())}, {byte_of('-'), ref(integer_part())}});
        return *integer_;
    }
    uint32_t number_type() {
        if (number_) return *number_;
        const uint32_t frac =
            b_.rule({{}, {byte_of('.'), byte_range('0', '9'), ref(digits(kMaxDigits - 1))}});
        const uint32_t exp =
            b_.rule({{},
                     {bytes_of("eE"), byte_range('0', '9'), ref(digits(kMaxExponentDigits - 1))},
                     {bytes_of("eE"), bytes_of("+-"), byte_range('0', '9'),
                      ref(digits(kMaxExponentDigits - 1))}});
        number_ = b_.rule({{ref(integer_type()), ref(frac), ref(exp)}});
        return *number_;
    }
    uint32_t literal(const std::string& text) {
        Seq seq;
        append_literal(seq, text);
        return b_.rule({seq});
    }

    // A JSON array whose items follow `item`.
    uint32_t array_of(uint32_t item, int64_t min_items, int64_t max_items,
                      const std::string& where) {
        if (max_items >= 0 && max_items < min_items) fail(where, "'maxItems' is below 'minItems'");
        const uint32_t w = ws();
        std::vector<Seq> alts;
        if (min_items == 0) alts.push_back({byte_of('['), ref(w), byte_of(']')});
        if (max_items != 0) {
            const Seq more{ref(w), byte_of(','), ref(w), ref(item)};
            const uint32_t more_rule = b_.rule({more});
            Seq seq{byte_of('['), ref(w), ref(item)};
            for (int64_t i = 1; i < min_items; ++i) seq.push_back(ref(more_rule));
            const int64_t first = std::max<int64_t>(1, min_items);
            seq.push_back(ref(b_.up_to(ref(more_rule), max_items < 0 ? -1 : max_items - first)));
            seq.push_back(ref(w));
            seq.push_back(byte_of(']'));
            alts.push_back(seq);
        }
        return b_.rule(alts);
    }

    // An object with any keys whose values follow `value`.
    uint32_t map_of(uint32_t value) {
        const uint32_t w = ws();
        const uint32_t member =
            b_.rule({{ref(string_type(0, -1)), ref(w), byte_of(':'), ref(w), ref(value)}});
        const uint32_t more =
            b_.up_to(ref(b_.rule({{ref(w), byte_of(','), ref(w), ref(member)}})), -1);
        return b_.rule({{byte_of('{'), ref(w), byte_of('}')},
                        {byte_of('{'), ref(w), ref(member), ref(more), ref(w), byte_of('}')}});
    }

    uint32_t any_value() {
        if (any_) return *any_;
        any_ = b_.reserve();
        const uint32_t arr = array_of(*any_, 0, -1, "#");
        const uint32_t obj = map_of(*any_);
        for (const uint32_t r : {obj, arr, string_type(0, -1), number_type(), literal("true"),
                                 literal("false"), literal("null")})
            b_.alt(*any_, {ref(r)});
        return *any_;
    }

    // Declared properties in order: required ones always, optional ones
    // when the model writes them.
    uint32_t object_with(const Json::Object& props, const std::set<std::string>& required,
                         const std::string& where) {
        const uint32_t w = ws();
        const size_t n = props.size();
        std::vector<uint32_t> kv(n);
        for (size_t i = 0; i < n; ++i) {
            Seq seq;
            append_literal(seq, Json(props[i].first).dump(0));
            seq.push_back(ref(w));
            seq.push_back(byte_of(':'));
            seq.push_back(ref(w));
            seq.push_back(ref(schema(props[i].second, where + "/properties/" + props[i].first)));
            kv[i] = b_.rule({seq});
        }
        // after[i]: the rest from property i once something was written;
        // first[i]: the rest from property i when nothing was written yet.
        std::vector<uint32_t> after(n + 1), first(n + 1);
        after[n] = b_.rule({{}});
        first[n] = after[n];
        for (size_t k = n; k-- > 0;) {
            const bool req = required.count(props[k].first) > 0;
            std::vector<Seq> a{{ref(w), byte_of(','), ref(w), ref(kv[k]), ref(after[k + 1])}};
            if (!req) a.push_back({ref(after[k + 1])});
            after[k] = b_.rule(a);
            std::vector<Seq> f{{ref(kv[k]), ref(after[k + 1])}};
            if (!req) f.push_back({ref(first[k + 1])});
            first[k] = b_.rule(f);
        }
        return b_.rule({{byte_of('{'), ref(w), ref(first[0]), ref(w), byte_of('}')}});
    }

    uint32_t typed(const std::string& type, const Json& s, const std::string& where) {
        if (type == "string")
            return string_type(bound(s, "minLength", where, 0), bound(s, "maxLength", where, -1));
        if (type == "integer") return integer_type();
        if (type == "number") return number_type();
        if (type == "boolean") return b_.rule({{ref(literal("true"))}, {ref(literal("false"))}});
        if (type == "null") return literal("null");
        if (type == "array") {
            const Json* items = s.find("items");
            const uint32_t item = items ? schema(*items, where + "/items") : any_value();
            const int64_t lo = bound(s, "minItems", where, 0);
            return array_of(item, lo, bound(s, "maxItems", where, -1), where);
        }
        if (type == "object") {
            const Json* props = s.find("properties");
            const Json* extra = s.find("additionalProperties");
            std::set<std::string> required;
            if (const Json* req = s.find("required")) {
                const auto* list = req->as_array();
                if (!list) fail(where, "'required' must be an array of property names");
                for (const Json& r : *list) {
                    if (!r.as_string())
                        fail(where, "'required' must be an array of property names");
                    required.insert(*r.as_string());
                }
            }
            if (props) {
                const auto* obj = props->as_object();
                if (!obj) fail(where, "'properties' must be an object");
                for (const auto& name : required) {
                    const bool declared = std::any_of(
                        obj->begin(), obj->end(), [&](const auto& p) { return p.first == name; });
                    if (!declared)
                        fail(where, "required property '" + name +
                                        "' is not declared in 'properties' (declare its schema)");
                }
                return object_with(*obj, required, where);
            }
            if (!required.empty())
                fail(where,
                     "'required' without 'properties' is not supported: declare the "
                     "required properties' schemas");
            if (extra && extra->as_bool() && !*extra->as_bool()) return literal("{}");
            if (extra && extra->as_object())
                return map_of(schema(*extra, where + "/additionalProperties"));
            return map_of(any_value());
        }
        fail(where, "unknown type '" + type + "'");
    }

    const Json& resolve(const std::string& pointer, const std::string& where) {
        if (pointer == "#") return root_;
        for (const char* base : {"#/$defs/", "#/definitions/"}) {
            const std::string_view b(base);
            if (pointer.compare(0, b.size(), b) != 0) continue;
            const Json* defs = root_.find(b.substr(2, b.size() - 3));
            const Json* target = defs ? defs->find(pointer.substr(b.size())) : nullptr;
            if (!target) fail(where, "'$ref' " + pointer + " does not resolve");
            return *target;
        }
        fail(where, "'$ref' " + pointer +
                        " is not supported (only \"#\", \"#/$defs/NAME\" and "
                        "\"#/definitions/NAME\")");
    }

    uint32_t schema(const Json& s, const std::string& where) {
        if (++depth_ > 64) fail(where, "nested too deeply");
        struct Leave {
            int& d;
            ~Leave() { --d; }
        } leave{depth_};
        if (const bool* b = s.as_bool()) {
            if (*b) return any_value();
            fail(where, "the schema 'false' admits no document");
        }
        const auto* obj = s.as_object();
        if (!obj) fail(where, "a schema must be an object or a boolean");
        for (const auto& [key, value] : *obj) {
            (void)value;
            if (!supported().count(key) && !annotations().count(key))
                fail(where, "the keyword '" + key +
                                "' is not supported by the constrained sampler; remove it "
                                "(supported: type, properties, required, additionalProperties, "
                                "items, minItems, maxItems, minLength, maxLength, enum, const, "
                                "anyOf, oneOf, allOf with one schema, $ref)");
        }
        if (const Json* r = s.find("$ref")) {
            if (!r->as_string()) fail(where, "'$ref' must be a string");
            auto it = refs_.find(*r->as_string());
            if (it != refs_.end()) return it->second;
            const uint32_t rule = b_.reserve();
            refs_[*r->as_string()] = rule;
            const Json& target = resolve(*r->as_string(), where);
            b_.alt(rule, {ref(schema(target, *r->as_string()))});
            return rule;
        }
        if (const Json* c = s.find("const")) return literal(compact(*c));
        if (const Json* e = s.find("enum")) {
            const auto* list = e->as_array();
            if (!list || list->empty()) fail(where, "'enum' must be a non-empty array");
            std::vector<Seq> alts;
            for (const Json& v : *list) alts.push_back({ref(literal(compact(v)))});
            return b_.rule(alts);
        }
        for (const char* key : {"anyOf", "oneOf"}) {
            if (const Json* any = s.find(key)) {
                const auto* list = any->as_array();
                if (!list || list->empty())
                    fail(where, std::string("'") + key + "' must be a non-empty array");
                std::vector<Seq> alts;
                for (size_t i = 0; i < list->size(); ++i)
                    alts.push_back(
                        {ref(schema((*list)[i], where + "/" + key + "/" + std::to_string(i)))});
                return b_.rule(alts);
            }
        }
        if (const Json* all = s.find("allOf")) {
            const auto* list = all->as_array();
            if (!list || list->size() != 1)
                fail(where, "'allOf' is supported with exactly one schema");
            return schema(list->front(), where + "/allOf/0");
        }
        std::vector<std::string> types;
        if (const Json* t = s.find("type")) {
            if (const auto* one = t->as_string()) {
                types.push_back(*one);
            } else if (const auto* list = t->as_array()) {
                for (const Json& x : *list) {
                    if (!x.as_string()) fail(where, "'type' must be a string or a list of strings");
                    types.push_back(*x.as_string());
                }
            } else {
                fail(where, "'type' must be a string or a list of strings");
            }
        } else if (s.find("properties") || s.find("additionalProperties") || s.find("required")) {
            types.push_back("object");
        } else if (s.find("items") || s.find("minItems") || s.find("maxItems")) {
            types.push_back("array");
        } else if (s.find("minLength") || s.find("maxLength")) {
            types.push_back("string");
        } else {
            return any_value();
        }
        if (types.empty()) fail(where, "'type' is an empty list");
        if (types.size() == 1) return typed(types[0], s, where);
        std::vector<Seq> alts;
        for (const auto& t : types) alts.push_back({ref(typed(t, s, where))});
        return b_.rule(alts);
    }

    const Json& root_;
    Builder b_;
    int depth_ = 0;
    std::map<std::string, uint32_t> refs_;
    std::optional<uint32_t> ws_, char_, any_chars_, int_, integer_, number_, any_;
    std::map<int, std::optional<uint32_t>> digits_;
    std::map<std::pair<int64_t, int64_t>, std::optional<uint32_t>> strings_;
};

}  // namespace

std::shared_ptr<const Grammar> compile_json_schema(const Json& schema, std::string_view prefix,
                                                   std::string_view suffix) {
    return SchemaCompiler(schema).compile(prefix, suffix);
}

std::shared_ptr<const Grammar> compile_json_schema_text(std::string_view schema_json,
                                                        std::string_view prefix,
                                                        std::string_view suffix) {
    const Json schema = Json::parse(schema_json, "JSON schema");
    return compile_json_schema(schema, prefix, suffix);
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : g_(std::move(grammar)) {
    for (const uint32_t a : g_->rules[g_->root]) expand(Stack{a}, stacks_);
    std::sort(stacks_.begin(), stacks_.end());
    stacks_.erase(std::unique(stacks_.begin(), stacks_.end()), stacks_.end());
    refresh_next();
}

void GrammarMatcher::expand(Stack s, Stacks& out) const {
    for (;;) {
        if (s.empty()) {
            out.push_back(std::move(s));
            return;
        }
        const uint32_t at = s.back();
        const GrammarSymbol& sym = g_->symbols[at];
        if (sym.kind == GrammarSymbol::Kind::End) {
            s.pop_back();
            continue;
        }
        if (sym.kind == GrammarSymbol::Kind::Bytes) {
            out.push_back(std::move(s));
            return;
        }
        s.pop_back();
        // The rest of this sequence waits below the rule's alternative (a
        // finished sequence is not kept, so right recursion stays flat).
        if (g_->symbols[at + 1].kind != GrammarSymbol::Kind::End) s.push_back(at + 1);
        const auto& alts = g_->rules[sym.rule];
        for (size_t i = 0; i < alts.size(); ++i) {
            Stack t = i + 1 == alts.size() ? std::move(s) : s;
            t.push_back(alts[i]);
            expand(std::move(t), out);
        }
        return;
    }
}

bool GrammarMatcher::advance(const Stacks& in, uint8_t byte, Stacks& out) const {
    out.clear();
    for (const Stack& s : in) {
        if (s.empty()) continue;
        if (!g_->symbols[s.back()].has(byte)) continue;
        Stack t = s;
        t.back() += 1;
        expand(std::move(t), out);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return !out.empty();
}

bool GrammarMatcher::can_accept(std::string_view bytes) const {
    if (bytes.empty()) return true;
    const auto first = uint8_t(bytes[0]);
    if (!((next_[first >> 6] >> (first & 63)) & 1u)) return false;
    Stacks cur, next;
    if (!advance(stacks_, first, cur)) return false;
    for (size_t i = 1; i < bytes.size(); ++i) {
        if (!advance(cur, uint8_t(bytes[i]), next)) return false;
        cur.swap(next);
    }
    return true;
}

bool GrammarMatcher::accept(std::string_view bytes) {
    Stacks cur = stacks_, next;
    for (const char c : bytes) {
        if (!advance(cur, uint8_t(c), next)) return false;
        cur.swap(next);
    }
    stacks_ = std::move(cur);
    refresh_next();
    return true;
}

int64_t GrammarMatcher::finish_bytes(const Stacks& stacks) const {
    int64_t best = -1;
    for (const Stack& s : stacks) {
        int64_t sum = 0;
        for (const uint32_t at : s) sum += g_->finish_bytes[at];
        if (best < 0 || sum < best) best = sum;
    }
    return best;
}

int64_t GrammarMatcher::finish_bytes() const { return finish_bytes(stacks_); }

int64_t GrammarMatcher::finish_bytes_after(std::string_view bytes) const {
    if (bytes.empty()) return finish_bytes();
    const auto first = uint8_t(bytes[0]);
    if (!((next_[first >> 6] >> (first & 63)) & 1u)) return -1;
    Stacks cur, next;
    if (!advance(stacks_, first, cur)) return -1;
    for (size_t i = 1; i < bytes.size(); ++i) {
        if (!advance(cur, uint8_t(bytes[i]), next)) return -1;
        cur.swap(next);
    }
    return finish_bytes(cur);
}

bool GrammarMatcher::accepting() const {
    return std::any_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::finished() const {
    return std::all_of(stacks_.begin(), stacks_.end(), [](const Stack& s) { return s.empty(); });
}

void GrammarMatcher::refresh_next() {
    next_ = {};
    for (const Stack& s : stacks_) {
        if (s.empty()) continue;
        const ByteSet& b = g_->symbols[s.back()].bytes;
        for (size_t i = 0; i < 4; ++i) next_[i] |= b[i];
    }
}

}  // namespace powerinfer::runtime
