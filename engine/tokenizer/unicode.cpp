#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>

#include "common/utf8_append.h"

namespace powerinfer::unicode {
namespace {

struct Run {
    uint32_t start;
    CharClass cls;
};

constexpr Run kRuns[] = {
#include "tokenizer/unicode_table.inc"
};

// ASCII is by far the most common input: answer it from a flat table.
constexpr std::array<CharClass, 128> make_ascii_table() {
    std::array<CharClass, 128> table{};
    size_t run = 0;
    for (uint32_t cp = 0; cp < 128; ++cp) {
        while (run + 1 < std::size(kRuns) && kRuns[run + 1].start <= cp) ++run;
        table[cp] = kRuns[run].cls;
    }
    return table;
}
constexpr std::array<CharClass, 128> kAscii = make_ascii_table();

constexpr uint32_t kReplacement = 0xFFFD;

}  // namespace

CharClass char_class(uint32_t cp) {
    if (cp < 128) return kAscii[cp];
    if (cp > 0x10FFFF) return CharClass::Undefined;
    const Run* it = std::upper_bound(std::begin(kRuns), std::end(kRuns), cp,
                                     [](uint32_t c, const Run& r) { return c < r.start; });
    return (it - 1)->cls;
}

bool is_whitespace(uint32_t cp) {
    // The White_Space property (the set llama.cpp's \s uses).
    if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
    if (cp < 0x85) return false;
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

int utf8_sequence_length(uint8_t lead) {
    if (lead < 0x80) return 1;
    if ((lead & 0xE0) == 0xC0) return 2;
    if ((lead & 0xF0) == 0xE0) return 3;
    if ((lead & 0xF8) == 0xF0) return 4;
    return 1;
}

namespace {

// Decodes one character at `pos`; returns its length, or 0 if invalid.
// Non-strict decoding checks only the byte structure, as llama.cpp does when
// it tokenizes; strict decoding also rejects overlong forms and surrogates.
size_t decode_one(std::string_view s, size_t pos, uint32_t& cp, bool strict) {
    const auto b0 = static_cast<uint8_t>(s[pos]);
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    int n = utf8_sequence_length(b0);
    if (n == 1 || pos + n > s.size()) return 0;
    uint32_t c = b0 & (0x7F >> n);
    for (int i = 1; i < n; ++i) {
        const auto b = static_cast<uint8_t>(s[pos + i]);
        if ((b & 0xC0) != 0x80) return 0;
        c = (c << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c > 0x10FFFF || (strict && (c < kMin[n] || (c >= 0xD800 && c <= 0xDFFF)))) return 0;
    cp = c;
    return static_cast<size_t>(n);
}

}  // namespace

std::vector<uint32_t> decode_utf8(std::string_view text) {
    std::vector<uint32_t> out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        uint32_t cp = 0;
        size_t n = decode_one(text, pos, cp, false);
        if (n == 0) {
            out.push_back(kReplacement);
            pos += 1;
        } else {
            out.push_back(cp);
            pos += n;
        }
    }
    return out;
}

void append_utf8(std::string& out, uint32_t cp) { powerinfer::append_utf8(out, cp); }

size_t incomplete_utf8_tail(std::string_view s) {
    // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
    const size_t max_back = std::min<size_t>(3, s.size());
    for (size_t back = 1; back <= max_back; ++back) {
        const auto b = static_cast<uint8_t>(s[s.size() - back]);
        if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking
        const int n = utf8_sequence_length(b);
        if (n > 1 && static_cast<size_t>(n) > back) {
            // Only a prefix that could still become valid is held back.
            for (size_t i = s.size() - back + 1; i < s.size(); ++i) {
                if ((static_cast<uint8_t>(s[i]) & 0xC0) != 0x80) return 0;
            }
            return back;
        }
        return 0;
    }
    return 0;
}

std::string sanitize_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    while (pos < s.size()) {
        uint32_t cp = 0;
        size_t n = decode_one(s, pos, cp, true);
        if (n == 0) {
            append_utf8(out, kReplacement);
            pos += 1;
        } else {
            out.append(s.substr(pos, n));
            pos += n;
        }
    }
    return out;
}

}  // namespace powerinfer::unicode
