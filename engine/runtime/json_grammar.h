// Constrained generation for structured output: a byte-level context-free
// grammar compiled from a JSON Schema, and a matcher that says which token
// byte strings can continue a document of that grammar.
//
// The grammar works on bytes, not code points, so a token that ends in the
// middle of a UTF-8 character is judged exactly (the grammar spells UTF-8
// out). It is run the way llama.cpp runs its GBNF grammars: the state is a
// set of stacks of grammar positions, advanced one byte at a time; the
// grammars built here are right-recursive only, so a stack never grows with
// the length of a string or an array.
//
// Supported JSON Schema (the subset OpenAI's structured outputs accept, plus
// bounds): type (one or a list), properties (emitted in declared order;
// required ones always, the others optionally), required,
// additionalProperties (false, or a schema for objects without properties),
// items, minItems, maxItems, minLength, maxLength, enum, const, anyOf,
// oneOf (as anyOf), allOf with one member, $ref to "#", "#/$defs/..." or
// "#/definitions/...", and the annotations (title, description, default,
// examples, ...). Anything else (pattern, format, minimum, ...) is refused
// with UnsupportedSchema naming the keyword and where it is, never ignored.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "runtime/json.h"

namespace powerinfer::runtime {

class UnsupportedSchema : public EngineError {
public:
    using EngineError::EngineError;
};

using ByteSet = std::array<uint64_t, 4>;

struct GrammarSymbol {
    enum class Kind : uint8_t { End, Bytes, Rule };
    Kind kind = Kind::End;
    uint32_t rule = 0;  // Rule
    ByteSet bytes{};    // Bytes
    bool has(uint8_t b) const { return (bytes[b >> 6] >> (b & 63)) & 1u; }
};

// Rules are lists of alternatives; each alternative is a run of symbols in
// `symbols` ending with an End symbol.
struct Grammar {
    std::vector<std::vector<uint32_t>> rules;  // rule -> alternatives' first symbol
    std::vector<GrammarSymbol> symbols;
    uint32_t root = 0;
    // Per symbol: the fewest bytes that finish its alternative from there.
    std::vector<uint32_t> finish_bytes;
};

// What constrained output must look like: `prefix`, then one JSON document
// valid under `schema`, then `suffix` (literal texts; a tool call's tags).
// Throws UnsupportedSchema (with the keyword and its JSON pointer) or
// EngineError (the schema is not JSON).
std::shared_ptr<const Grammar> compile_json_schema(const Json& schema, std::string_view prefix = {},
                                                   std::string_view suffix = {});
std::shared_ptr<const Grammar> compile_json_schema_text(std::string_view schema_json,
                                                        std::string_view prefix = {},
                                                        std::string_view suffix = {});

class GrammarMatcher {
public:
    explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

    // Whether `bytes` can continue what was accepted so far (empty: true).
    bool can_accept(std::string_view bytes) const;
    // Accepts `bytes`; false (and nothing changes) if they cannot continue.
    bool accept(std::string_view bytes);
    // The document may end here.
    bool accepting() const;
    // The document is complete and nothing may follow.
    bool finished() const;
    // The fewest bytes that complete the document from here (0 when it may
    // end), and the same after `bytes` (-1 if they cannot continue): a reply
    // held to a token budget closes its document in time when every token
    // leaves at most as many bytes to write as tokens remain.
    int64_t finish_bytes() const;
    int64_t finish_bytes_after(std::string_view bytes) const;
    // Bytes that can come next (a fast first test for tokens).
    const ByteSet& next_bytes() const { return next_; }

private:
    using Stack = std::vector<uint32_t>;
    using Stacks = std::vector<Stack>;
    void expand(Stack stack, Stacks& out) const;
    bool advance(const Stacks& in, uint8_t byte, Stacks& out) const;
    void refresh_next();
    int64_t finish_bytes(const Stacks& stacks) const;

    std::shared_ptr<const Grammar> g_;
    Stacks stacks_;
    ByteSet next_{};
};

}  // namespace powerinfer::runtime
