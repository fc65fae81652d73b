// Pre-tokenizers: the regex sets of llama.cpp's llama-vocab.cpp, written as
// hand-coded matchers over code points. Each stage splits every chunk of the
// previous stage into its matches plus the unmatched text between them
// (regex-split semantics), and no match crosses a chunk boundary: a chunk's
// end counts as the end of the text for look-aheads.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace powerinfer {
namespace {

using unicode::char_class;
using unicode::CharClass;
using unicode::is_whitespace;

struct Span {
    size_t begin, end;
};

// Matches at `pos` inside [pos, end); returns the match length, 0 for none.
using Matcher = size_t (*)(const std::vector<uint32_t>& cp, size_t pos, size_t end);

bool is_letter(uint32_t c) { return char_class(c) == CharClass::Letter; }
bool is_number(uint32_t c) { return char_class(c) == CharClass::Number; }
// [^\s\p{L}\p{N}]
bool is_other(uint32_t c) { return !is_whitespace(c) && !is_letter(c) && !is_number(c); }
bool is_newline(uint32_t c) { return c == '\r' || c == '\n'; }

template <typename Pred>
size_t run_length(const std::vector<uint32_t>& cp, size_t pos, size_t end, Pred pred) {
    size_t i = pos;
    while (i < end && pred(cp[i])) ++i;
    return i - pos;
}

uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// 's|'t|'re|'ve|'m|'ll|'d, case-sensitive or not.
size_t match_contraction(const std::vector<uint32_t>& cp, size_t pos, size_t end,
                         bool ignore_case) {
    if (cp[pos] != '\'' || pos + 1 >= end) return 0;
    auto low = [&](size_t i) { return ignore_case ? ascii_lower(cp[i]) : cp[i]; };
    const uint32_t a = low(pos + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (pos + 2 >= end) return 0;
    const uint32_t b = low(pos + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
size_t match_gpt2(const std::vector<uint32_t>& cp, size_t pos, size_t end) {
    if (size_t n = match_contraction(cp, pos, end, false)) return n;
    const uint32_t c = cp[pos];
    const size_t lead = (c == ' ' && pos + 1 < end) ? 1 : 0;
    const uint32_t head = cp[pos + lead];
    if (is_letter(head)) return lead + run_length(cp, pos + lead, end, is_letter);
    if (is_number(head)) return lead + run_length(cp, pos + lead, end, is_number);
    if (is_other(head)) return lead + run_length(cp, pos + lead, end, is_other);
    const size_t n = run_length(cp, pos, end, is_whitespace);
    if (pos + n == end) return n;  // nothing follows: (?!\S) holds
    return n > 1 ? n - 1 : 0;      // leave the last space to the next word
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
template <size_t max_digits>
size_t match_llama3(const std::vector<uint32_t>& cp, size_t pos, size_t end) {
    if (size_t n = match_contraction(cp, pos, end, true)) return n;
    const uint32_t c = cp[pos];
    if (is_letter(c)) return run_length(cp, pos, end, is_letter);
    if (!is_newline(c) && !is_number(c) && pos + 1 < end && is_letter(cp[pos + 1])) {
        return 1 + run_length(cp, pos + 1, end, is_letter);
    }
    if (is_number(c)) {
        const size_t n = run_length(cp, pos, end, is_number);
        return n < max_digits ? n : max_digits;
    }
    const size_t lead = (c == ' ' && pos + 1 < end) ? 1 : 0;
    if (is_other(cp[pos + lead])) {
        size_t n = lead + run_length(cp, pos + lead, end, is_other);
        return n + run_length(cp, pos + n, end, is_newline);
    }
    const size_t n = run_length(cp, pos, end, is_whitespace);
    // \s*[\r\n]+ : up to and including the last line break of the run.
    for (size_t i = n; i > 0; --i) {
        if (is_newline(cp[pos + i - 1])) return i;
    }
    if (pos + n == end || n == 1) return n;  // \s+(?!\S) at the end, or plain \s+
    return n - 1;
}

size_t match_number(const std::vector<uint32_t>& cp, size_t pos, size_t) {
    return is_number(cp[pos]) ? 1 : 0;
}

size_t match_number_run(const std::vector<uint32_t>& cp, size_t pos, size_t end) {
    return run_length(cp, pos, end, is_number);
}

// [\p{P}\$\+<=>\^~\|]+
size_t match_punct_run(const std::vector<uint32_t>& cp, size_t pos, size_t end) {
    return run_length(cp, pos, end, [](uint32_t c) {
        return char_class(c) == CharClass::Punctuation || c == '$' || c == '+' || c == '<' ||
               c == '=' || c == '>' || c == '^' || c == '~' || c == '|';
    });
}

// [0-9][0-9][0-9]
size_t match_three_digits(const std::vector<uint32_t>& cp, size_t pos, size_t end) {
    if (pos + 3 > end) return 0;
    for (size_t i = pos; i < pos + 3; ++i) {
        if (cp[i] < '0' || cp[i] > '9') return 0;
    }
    return 3;
}

std::vector<Span> split(const std::vector<uint32_t>& cp, const std::vector<Span>& chunks,
                        Matcher match) {
    std::vector<Span> out;
    out.reserve(chunks.size() * 2);
    for (const Span& chunk : chunks) {
        size_t gap = chunk.begin;
        size_t pos = chunk.begin;
        while (pos < chunk.end) {
            const size_t n = match(cp, pos, chunk.end);
            if (n == 0) {
                ++pos;
                continue;
            }
            if (gap < pos) out.push_back({gap, pos});
            out.push_back({pos, pos + n});
            pos += n;
            gap = pos;
        }
        if (gap < chunk.end) out.push_back({gap, chunk.end});
    }
    return out;
}

std::vector<Matcher> stages(PreTokenizer pre) {
    switch (pre) {
        case PreTokenizer::Gpt2:
            return {match_gpt2};
        case PreTokenizer::Llama3:
            return {match_llama3<3>};
        case PreTokenizer::Qwen2:
            return {match_llama3<1>};
        case PreTokenizer::Smollm:
            return {match_number, match_gpt2};
        case PreTokenizer::Default:
            break;
    }
    return {match_punct_run, match_gpt2, match_number_run, match_three_digits};
}

}  // namespace

std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer pre) {
    const std::vector<uint32_t> cp = unicode::decode_utf8(text);
    std::vector<Span> chunks;
    if (!cp.empty()) chunks.push_back({0, cp.size()});
    for (Matcher m : stages(pre)) chunks = split(cp, chunks, m);
    std::vector<std::string> words;
    words.reserve(chunks.size());
    for (const Span& s : chunks) {
        std::string w;
        for (size_t i = s.begin; i < s.end; ++i) unicode::append_utf8(w, cp[i]);
        words.push_back(std::move(w));
    }
    return words;
}

PreTokenizer pre_tokenizer_from_name(std::string_view name) {
    struct Alias {
        std::string_view name;
        PreTokenizer pre;
    };
    // Names as written by llama.cpp's convert_hf_to_gguf.py, grouped the way
    // llama-vocab.cpp groups their regexes.
    static constexpr Alias kAliases[] = {
        {"default", PreTokenizer::Default},  {"llama3", PreTokenizer::Llama3},
        {"llama-v3", PreTokenizer::Llama3},  {"llama-bpe", PreTokenizer::Llama3},
        {"falcon3", PreTokenizer::Llama3},   {"falcon-h1", PreTokenizer::Llama3},
        {"pixtral", PreTokenizer::Llama3},   {"midm-2.0", PreTokenizer::Llama3},
        {"lfm2", PreTokenizer::Llama3},      {"dbrx", PreTokenizer::Llama3},
        {"smaug-bpe", PreTokenizer::Llama3}, {"chatglm-bpe", PreTokenizer::Llama3},
        {"qwen2", PreTokenizer::Qwen2},      {"deepseek-r1-qwen", PreTokenizer::Qwen2},
        {"stablelm2", PreTokenizer::Qwen2},  {"hunyuan", PreTokenizer::Qwen2},
        {"megrez", PreTokenizer::Qwen2},     {"smollm", PreTokenizer::Smollm},
        {"starcoder", PreTokenizer::Smollm}, {"refact", PreTokenizer::Smollm},
        {"command-r", PreTokenizer::Smollm}, {"codeshell", PreTokenizer::Smollm},
        {"exaone", PreTokenizer::Smollm},    {"minerva-7b", PreTokenizer::Smollm},
        {"gpt-2", PreTokenizer::Gpt2},       {"gpt2", PreTokenizer::Gpt2},
        {"phi-2", PreTokenizer::Gpt2},       {"mpt", PreTokenizer::Gpt2},
        {"olmo", PreTokenizer::Gpt2},        {"jais", PreTokenizer::Gpt2},
        {"trillion", PreTokenizer::Gpt2},    {"roberta-bpe", PreTokenizer::Gpt2},
    };
    for (const Alias& a : kAliases) {
        if (a.name == name) return a.pre;
    }
    throw EngineError("unsupported tokenizer pre-tokenizer '" + std::string(name) +
                      "' (tokenizer.ggml.pre); supported: default, gpt2, llama3/llama-bpe, "
                      "qwen2, smollm and their aliases. Try a model converted for one of these.");
}

}  // namespace powerinfer
