// The small part of Unicode the pre-tokenizers need: UTF-8 decoding the way
// llama.cpp does it (an invalid byte becomes U+FFFD), general-category class
// per code point, and the White_Space property.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace powerinfer::unicode {

enum class CharClass : uint8_t {
    Undefined,
    Control,
    Letter,
    Number,
    Punctuation,
    Symbol,
    Mark,
    Separator,
};

CharClass char_class(uint32_t cp);
bool is_whitespace(uint32_t cp);
inline bool is_letter(uint32_t cp) { return char_class(cp) == CharClass::Letter; }
inline bool is_number(uint32_t cp) { return char_class(cp) == CharClass::Number; }

// Length of the UTF-8 sequence a lead byte announces (1 for invalid bytes).
int utf8_sequence_length(uint8_t lead);
// Decodes text; each invalid or truncated sequence yields U+FFFD and skips one byte.
std::vector<uint32_t> decode_utf8(std::string_view text);
void append_utf8(std::string& out, uint32_t cp);
// Bytes at the end of `s` that start a UTF-8 character but do not finish it (0-3).
size_t incomplete_utf8_tail(std::string_view s);
// Replaces invalid UTF-8 with U+FFFD (a truncated tail too).
std::string sanitize_utf8(std::string_view s);

}  // namespace powerinfer::unicode
