#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <utility>

#include "gguf/gguf.h"
#include "tokenizer/unicode.h"

namespace powerinfer {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// GPT-2's byte-level alphabet: printable bytes stand for themselves, the
// others are moved to U+0100 and up so that every byte is a visible character.
struct ByteLevelAlphabet {
    std::array<std::string, 256> byte_to_text;
    std::unordered_map<uint32_t, uint8_t> cp_to_byte;

    ByteLevelAlphabet() {
        uint32_t next = 256;
        for (uint32_t b = 0; b < 256; ++b) {
            const bool printable =
                (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            const uint32_t cp = printable ? b : next++;
            unicode::append_utf8(byte_to_text[b], cp);
            cp_to_byte[cp] = static_cast<uint8_t>(b);
        }
    }
};

const ByteLevelAlphabet& byte_level() {
    static const ByteLevelAlphabet alphabet;
    return alphabet;
}

// Token texts that llama.cpp (llama-vocab.cpp, as in llama-cpp-python 0.3.36)
// recognises without metadata. Non-ASCII ones as UTF-8 escapes to keep the
// source ASCII for MSVC: U+FF5C fullwidth bar, U+2581 SentencePiece space.
#define PI_FW_BAR "\xEF\xBD\x9C"
#define PI_SPM_SPACE "\xE2\x96\x81"
#define PI_DEEPSEEK_EOS "<" PI_FW_BAR "end" PI_SPM_SPACE "of" PI_SPM_SPACE "sentence" PI_FW_BAR ">"

// End of generation, whatever their type in the file (they become control tokens).
constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    PI_DEEPSEEK_EOS,
    "[e~[",
};
// Candidates for EOT when the metadata names none, in our order of preference
// (llama.cpp takes the first in its hash map's order; models have one).
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>",    "<|im_end|>",         "<|end|>",
    "<end_of_turn>", "<|endoftext|>",      "<EOT>",
    "_<EOT>",        PI_DEEPSEEK_EOS,      "<|end_of_text|>",
    "[EOT]",         "<end_of_utterance>",
};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
constexpr std::string_view kFimPreTexts[] = {
    "<|fim_prefix|>",  "<fim-prefix>",
    "<fim_prefix>",    "<" PI_FW_BAR "fim" PI_SPM_SPACE "begin" PI_FW_BAR ">",
    "<PRE>",           PI_SPM_SPACE "<PRE>",
    "<|code_prefix|>", "<|prefix|>",
};
constexpr std::string_view kFimSufTexts[] = {
    "<|fim_suffix|>",  "<fim-suffix>",
    "<fim_suffix>",    "<" PI_FW_BAR "fim" PI_SPM_SPACE "hole" PI_FW_BAR ">",
    "<SUF>",           PI_SPM_SPACE "<SUF>",
    "<|code_suffix|>", "<|suffix|>",
};
constexpr std::string_view kFimMidTexts[] = {
    "<|fim_middle|>",  "<fim-middle>",
    "<fim_middle>",    "<" PI_FW_BAR "fim" PI_SPM_SPACE "end" PI_FW_BAR ">",
    "<MID>",           PI_SPM_SPACE "<MID>",
    "<|code_middle|>", "<|middle|>",
};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>",
                                             "[PAD]"};
constexpr std::string_view kFimRepTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
                                             "<REPO>", "<reponame>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};
// gpt-oss's channel markers are always rendered: llama.cpp makes them user-defined.
constexpr std::string_view kAlwaysRenderedTexts[] = {"<|channel|>", "<|message|>", "<|start|>",
                                                     "<|constrain|>"};

struct Fragment {
    int32_t token;  // >= 0: a special token; -1: raw text
    size_t offset, length;
};

// Lets the token map be searched with a string_view, without a copy.
struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Token text -> id: open addressing over (hash tag, id) pairs, the texts
// staying in the vocabulary. SentencePiece looks up every candidate pair's
// text, so this is the tokenizer's hot path; it also loads a 262k vocabulary
// without a node allocation per token.
class TokenIndex {
public:
    // Empty texts are indexed as "[EMPTY_<id>]", as llama.cpp names them; a
    // later duplicate text wins.
    void build(const std::vector<std::string>& tokens) {
        tokens_ = &tokens;
        size_t capacity = 16;
        while (capacity < tokens.size() * 2) capacity <<= 1;
        slots_.assign(capacity, Slot{0, -1});
        mask_ = capacity - 1;
        for (size_t i = 0; i < tokens.size(); ++i) {
            const auto id = static_cast<int32_t>(i);
            if (tokens[i].empty()) {
                empty_["[EMPTY_" + std::to_string(i) + "]"] = id;
            } else {
                insert(tokens[i], id);
            }
        }
    }

    int32_t find(std::string_view text) const {
        const uint64_t h = hash(text);
        const auto tag = static_cast<uint32_t>(h >> 32);
        for (size_t s = h & mask_;; s = (s + 1) & mask_) {
            const Slot& slot = slots_[s];
            if (slot.id < 0) break;
            if (slot.tag == tag && (*tokens_)[static_cast<size_t>(slot.id)] == text) return slot.id;
        }
        if (empty_.empty() || !text.starts_with("[EMPTY_")) return -1;
        auto it = empty_.find(text);
        return it == empty_.end() ? -1 : it->second;
    }

private:
    struct Slot {
        uint32_t tag;
        int32_t id;  // -1: free
    };
    static uint64_t hash(std::string_view text) {  // FNV-1a 64
        uint64_t h = 0xCBF29CE484222325ull;
        for (char c : text) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
        return h;
    }
    void insert(std::string_view text, int32_t id) {
        const uint64_t h = hash(text);
        const auto tag = static_cast<uint32_t>(h >> 32);
        for (size_t s = h & mask_;; s = (s + 1) & mask_) {
            Slot& slot = slots_[s];
            if (slot.id < 0 ||
                (slot.tag == tag && (*tokens_)[static_cast<size_t>(slot.id)] == text)) {
                slot = Slot{tag, id};
                return;
            }
        }
    }

    const std::vector<std::string>* tokens_ = nullptr;
    std::vector<Slot> slots_;
    size_t mask_ = 0;
    std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> empty_;
};

uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

struct Tokenizer::Impl {
    VocabData v;
    TokenIndex token_to_id;
    struct Merge {
        int32_t rank;
        int32_t result;  // token id of the merged text, -1 if not in the vocabulary
    };
    std::unordered_map<uint64_t, Merge> merges;  // (left id, right id) -> merge
    std::vector<int32_t> special_tokens;         // longest text first
    // Ranks in special_tokens grouped by the first two bytes of their text
    // (CSR: ranks [prefix_begin[k], prefix_begin[k + 1])), and those of
    // one-byte texts by that byte: finds the specials a text contains in one pass.
    std::vector<uint32_t> prefix_begin, prefix_ranks;
    std::array<std::vector<uint32_t>, 256> single_byte_ranks;
    std::vector<bool> eog;
    std::array<int32_t, 256> spm_byte_token{};

    // Byte-level BPE results per pre-tokenized word: chat text repeats words a lot.
    mutable std::mutex cache_mutex;
    mutable std::unordered_map<std::string, std::vector<int32_t>, TextHash, std::equal_to<>>
        word_cache;

    TokenType type(int32_t id) const {
        return v.types.empty() ? TokenType::Normal : v.types[static_cast<size_t>(id)];
    }
    int32_t find(std::string_view text) const { return token_to_id.find(text); }

    void build();
    void apply_special_token_rules();
    void index_special_tokens();
    std::vector<uint32_t> specials_in(std::string_view text, bool parse_special) const;
    std::vector<Fragment> partition(std::string_view text, bool parse_special) const;
    void encode_bpe(std::string_view text, std::vector<int32_t>& out) const;
    void bpe_word(const std::string& word, std::vector<int32_t>& out) const;
    void encode_spm(std::string_view text, std::vector<int32_t>& out) const;
};

void Tokenizer::Impl::build() {
    const auto n = static_cast<int32_t>(v.tokens.size());
    if (n == 0) throw EngineError("the model has no tokenizer vocabulary (tokenizer.ggml.tokens)");
    if (!v.types.empty() && static_cast<int32_t>(v.types.size()) != n) {
        throw EngineError("tokenizer.ggml.token_type has " + std::to_string(v.types.size()) +
                          " entries but the vocabulary has " + std::to_string(n));
    }
    if (!v.scores.empty() && static_cast<int32_t>(v.scores.size()) != n) {
        throw EngineError("tokenizer.ggml.scores has " + std::to_string(v.scores.size()) +
                          " entries but the vocabulary has " + std::to_string(n));
    }
    for (int32_t* id : {&v.bos, &v.eos, &v.eot, &v.eom, &v.unk, &v.pad, &v.fim_pre, &v.fim_suf,
                        &v.fim_mid, &v.fim_pad, &v.fim_rep, &v.fim_sep}) {
        if (*id >= n) *id = -1;  // an id past the vocabulary cannot be used
    }
    token_to_id.build(v.tokens);

    apply_special_token_rules();
    for (int32_t i = 0; i < n; ++i) {
        const TokenType t = type(i);
        if ((t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) &&
            !v.tokens[static_cast<size_t>(i)].empty()) {
            special_tokens.push_back(i);
        }
    }
    std::stable_sort(special_tokens.begin(), special_tokens.end(), [&](int32_t a, int32_t b) {
        return v.tokens[static_cast<size_t>(a)].size() > v.tokens[static_cast<size_t>(b)].size();
    });
    index_special_tokens();

    if (v.kind == VocabKind::BytePairGpt2) {
        merges.reserve(v.merges.size());
        for (size_t rank = 0; rank < v.merges.size(); ++rank) {
            const std::string& m = v.merges[rank];
            // Split at the first space after the first character (a side may start with one).
            const size_t sep = m.find(' ', 1);
            if (sep == std::string::npos) {
                throw EngineError("malformed BPE merge #" + std::to_string(rank) + " '" + m +
                                  "' in tokenizer.ggml.merges");
            }
            const int32_t left = find(std::string_view(m).substr(0, sep));
            const int32_t right = find(std::string_view(m).substr(sep + 1));
            if (left < 0 || right < 0) continue;  // can never apply
            const int32_t result =
                find(std::string(m.substr(0, sep)) + std::string(m.substr(sep + 1)));
            merges.emplace(pair_key(left, right), Merge{static_cast<int32_t>(rank), result});
        }
    } else {
        static constexpr char kHex[] = "0123456789ABCDEF";
        for (int b = 0; b < 256; ++b) {
            const std::string name = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
            int32_t id = find(name);
            if (id < 0) id = find(std::string(1, static_cast<char>(b)));
            spm_byte_token[static_cast<size_t>(b)] = id >= 0 ? id : v.unk;
        }
    }
}

// llama.cpp's rules for special tokens the metadata does not declare: roles
// (EOT, EOM, fill-in-the-middle) and end-of-generation tokens are found by
// their text and become control tokens, so that they only match with
// parse_special and render as "" unless asked; then its model workarounds.
void Tokenizer::Impl::apply_special_token_rules() {
    const auto n = static_cast<int32_t>(v.tokens.size());
    if (v.types.empty()) v.types.assign(static_cast<size_t>(n), TokenType::Normal);
    auto make_control = [&](int32_t id) { v.types[static_cast<size_t>(id)] = TokenType::Control; };
    // The first candidate present (lowest id for the FIM roles, preference
    // order for EOT), unless the metadata set the role.
    auto detect = [&](int32_t& role, std::span<const std::string_view> texts, bool by_id) {
        if (role >= 0) return;
        for (std::string_view text : texts) {
            const int32_t id = find(text);
            if (id >= 0 && (role < 0 || (by_id && id < role))) {
                role = id;
                if (!by_id) break;
            }
        }
        if (role >= 0) make_control(role);
    };
    detect(v.eot, kEotTexts, false);
    detect(v.eom, kEomTexts, false);
    detect(v.fim_pre, kFimPreTexts, true);
    detect(v.fim_suf, kFimSufTexts, true);
    detect(v.fim_mid, kFimMidTexts, true);
    detect(v.fim_pad, kFimPadTexts, true);
    detect(v.fim_rep, kFimRepTexts, true);
    detect(v.fim_sep, kFimSepTexts, true);

    eog.assign(static_cast<size_t>(n), false);
    for (int32_t id : {v.fim_pad, v.fim_rep, v.fim_sep}) {
        if (id >= 0) eog[static_cast<size_t>(id)] = true;
    }
    for (std::string_view text : kEogTexts) {
        const int32_t id = find(text);
        if (id < 0) continue;
        eog[static_cast<size_t>(id)] = true;
        make_control(id);
    }
    for (std::string_view text : kAlwaysRenderedTexts) {
        const int32_t id = find(text);
        if (id >= 0) v.types[static_cast<size_t>(id)] = TokenType::UserDefined;
    }
    for (int32_t id : {v.eos, v.eot, v.eom}) {
        if (id >= 0) eog[static_cast<size_t>(id)] = true;
    }
    auto eog_token = [&](std::string_view text) {
        const int32_t id = find(text);
        return id >= 0 && eog[static_cast<size_t>(id)] ? id : -1;
    };
    // Harmony (gpt-oss) and solar-open: <|end|> ends a message, not the generation.
    const int32_t end = eog_token("<|end|>");
    const bool has_call = eog_token("<|call|>") >= 0 || eog_token("<|calls|>") >= 0;
    if (end >= 0 && has_call && (eog_token("<|return|>") >= 0 || eog_token("<|flush|>") >= 0)) {
        eog[static_cast<size_t>(end)] = false;
        v.types[static_cast<size_t>(end)] = TokenType::UserDefined;
    }
    // Gemma 4 and PaddleOCR: </s> is ordinary text there.
    const int32_t close_s = eog_token("</s>");
    if (close_s >= 0 && eog_token("<|tool_response>") >= 0) {
        eog[static_cast<size_t>(close_s)] = false;
        v.types[static_cast<size_t>(close_s)] = TokenType::Normal;
    }
}

void Tokenizer::Impl::index_special_tokens() {
    constexpr size_t kKeys = 1 << 16;
    auto key = [&](uint32_t rank) {
        const std::string& s = v.tokens[static_cast<size_t>(special_tokens[rank])];
        return static_cast<size_t>(static_cast<uint8_t>(s[0])) << 8 | static_cast<uint8_t>(s[1]);
    };
    prefix_begin.assign(kKeys + 1, 0);
    for (uint32_t r = 0; r < special_tokens.size(); ++r) {
        const std::string& s = v.tokens[static_cast<size_t>(special_tokens[r])];
        if (s.size() == 1) {
            single_byte_ranks[static_cast<uint8_t>(s[0])].push_back(r);
        } else {
            ++prefix_begin[key(r) + 1];
        }
    }
    for (size_t k = 0; k < kKeys; ++k) prefix_begin[k + 1] += prefix_begin[k];
    prefix_ranks.resize(prefix_begin[kKeys]);
    std::vector<uint32_t> next(prefix_begin.begin(), prefix_begin.end() - 1);
    for (uint32_t r = 0; r < special_tokens.size(); ++r) {
        if (v.tokens[static_cast<size_t>(special_tokens[r])].size() > 1)
            prefix_ranks[next[key(r)]++] = r;
    }
}

// The ranks (in special_tokens) of the special tokens that occur in the text
// and may match (control and unknown ones only with parse_special), in rank
// order. Only these can split the text, so partition() needs to try no others.
std::vector<uint32_t> Tokenizer::Impl::specials_in(std::string_view text,
                                                   bool parse_special) const {
    std::vector<uint32_t> found;
    auto eligible = [&](uint32_t rank) {
        return parse_special || type(special_tokens[rank]) == TokenType::UserDefined;
    };
    for (size_t i = 0; i < text.size(); ++i) {
        for (uint32_t r : single_byte_ranks[static_cast<uint8_t>(text[i])]) {
            if (eligible(r)) found.push_back(r);
        }
        if (i + 1 == text.size()) break;
        const size_t k = static_cast<size_t>(static_cast<uint8_t>(text[i])) << 8 |
                         static_cast<uint8_t>(text[i + 1]);
        for (uint32_t j = prefix_begin[k]; j < prefix_begin[k + 1]; ++j) {
            const uint32_t r = prefix_ranks[j];
            const std::string& s = v.tokens[static_cast<size_t>(special_tokens[r])];
            if (text.compare(i, s.size(), s) == 0 && eligible(r)) found.push_back(r);
        }
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return found;
}

// Cuts the text at special tokens, longest token text first (as llama.cpp's
// tokenizer_st_partition does). Control and unknown tokens only count when
// parse_special is set; user-defined tokens always do.
std::vector<Fragment> Tokenizer::Impl::partition(std::string_view text, bool parse_special) const {
    std::vector<Fragment> frags;
    if (text.empty()) return frags;
    frags.push_back({-1, 0, text.size()});
    for (uint32_t rank : specials_in(text, parse_special)) {
        const int32_t id = special_tokens[rank];
        const std::string& s = v.tokens[static_cast<size_t>(id)];
        std::vector<Fragment> next;
        bool changed = false;
        for (const Fragment& f : frags) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            const std::string_view raw = text.substr(f.offset, f.length);
            size_t base = 0;
            for (size_t hit = raw.find(s); hit != std::string_view::npos; hit = raw.find(s, base)) {
                changed = true;
                if (hit > base) next.push_back({-1, f.offset + base, hit - base});
                next.push_back({id, f.offset + hit, s.size()});
                base = hit + s.size();
            }
            if (base < raw.size()) next.push_back({-1, f.offset + base, raw.size() - base});
        }
        if (changed) frags.swap(next);
    }
    return frags;
}

void Tokenizer::Impl::encode_bpe(std::string_view text, std::vector<int32_t>& out) const {
    const ByteLevelAlphabet& alphabet = byte_level();
    std::string mapped;
    for (const std::string& word : pre_tokenize(text, v.pre)) {
        mapped.clear();
        for (char c : word) mapped += alphabet.byte_to_text[static_cast<uint8_t>(c)];
        {
            std::lock_guard<std::mutex> lock(cache_mutex);
            auto it = word_cache.find(mapped);
            if (it != word_cache.end()) {
                out.insert(out.end(), it->second.begin(), it->second.end());
                continue;
            }
        }
        std::vector<int32_t> ids;
        bpe_word(mapped, ids);
        out.insert(out.end(), ids.begin(), ids.end());
        std::lock_guard<std::mutex> lock(cache_mutex);
        if (word_cache.size() > 200000) word_cache.clear();  // bound memory on huge inputs
        word_cache.emplace(mapped, std::move(ids));
    }
}

// Classic BPE over a doubly linked list of symbols: repeatedly merge the
// adjacent pair with the lowest merge rank (leftmost on ties), skipping queue
// entries made stale by earlier merges.
void Tokenizer::Impl::bpe_word(const std::string& word, std::vector<int32_t>& out) const {
    if (v.ignore_merges) {
        const int32_t whole = find(word);
        if (whole >= 0) {
            out.push_back(whole);
            return;
        }
    }
    struct Symbol {
        int32_t prev, next;
        size_t offset, length;
        int32_t id;
    };
    std::vector<Symbol> sym;
    for (size_t pos = 0; pos < word.size();) {
        const size_t len = std::min<size_t>(
            static_cast<size_t>(unicode::utf8_sequence_length(static_cast<uint8_t>(word[pos]))),
            word.size() - pos);
        const auto index = static_cast<int32_t>(sym.size());
        sym.push_back({index - 1, -1, pos, len, find(std::string_view(word).substr(pos, len))});
        if (index > 0) sym[static_cast<size_t>(index - 1)].next = index;
        pos += len;
    }
    struct Candidate {
        int32_t rank, left, right, left_id, right_id;
        bool operator>(const Candidate& o) const {
            return rank != o.rank ? rank > o.rank : left > o.left;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
    auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = sym[static_cast<size_t>(left)];
        const Symbol& r = sym[static_cast<size_t>(right)];
        if (l.id < 0 || r.id < 0) return;
        auto it = merges.find(pair_key(l.id, r.id));
        if (it == merges.end()) return;
        queue.push({it->second.rank, left, right, l.id, r.id});
    };
    for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) consider(i - 1, i);
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = sym[static_cast<size_t>(c.left)];
        Symbol& r = sym[static_cast<size_t>(c.right)];
        if (l.length == 0 || r.length == 0 || l.next != c.right || l.id != c.left_id ||
            r.id != c.right_id) {
            continue;  // stale: one side has changed since this pair was queued
        }
        l.length += r.length;
        l.id = merges.at(pair_key(c.left_id, c.right_id)).result;
        r.length = 0;
        l.next = r.next;
        if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }
    for (int32_t i = sym.empty() ? -1 : 0; i >= 0; i = sym[static_cast<size_t>(i)].next) {
        const Symbol& s = sym[static_cast<size_t>(i)];
        if (s.id >= 0) {
            out.push_back(s.id);
            continue;
        }
        // Not in the vocabulary: fall back to single-byte tokens where they exist.
        for (size_t k = 0; k < s.length; ++k) {
            const int32_t id = find(word.substr(s.offset + k, 1));
            if (id >= 0) out.push_back(id);
        }
    }
}

// SentencePiece BPE: merge the adjacent pair whose merged text is the
// highest-scoring vocabulary entry (leftmost on ties); symbols left without a
// token become <0xNN> byte tokens. Only pairs whose text is a token are ever
// merged, so every merged symbol is a token: llama.cpp's re-split of merged
// texts that are not tokens (its rev_merge) never applies and is left out.
void Tokenizer::Impl::encode_spm(std::string_view text, std::vector<int32_t>& out) const {
    struct Symbol {
        int32_t prev, next;
        size_t offset, length;
    };
    std::vector<Symbol> sym;
    for (size_t pos = 0; pos < text.size();) {
        const size_t len = std::min<size_t>(
            static_cast<size_t>(unicode::utf8_sequence_length(static_cast<uint8_t>(text[pos]))),
            text.size() - pos);
        const auto index = static_cast<int32_t>(sym.size());
        sym.push_back({index - 1, -1, pos, len});
        if (index > 0) sym[static_cast<size_t>(index - 1)].next = index;
        pos += len;
    }
    struct Candidate {
        float score;
        int32_t left, right;
        size_t length;
        bool operator<(const Candidate& o) const {
            return score != o.score ? score < o.score : left > o.left;
        }
    };
    std::vector<Candidate> storage;
    storage.reserve(sym.size() * 2);
    std::priority_queue<Candidate> queue(std::less<Candidate>(), std::move(storage));
    auto consider = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = sym[static_cast<size_t>(left)];
        const Symbol& r = sym[static_cast<size_t>(right)];
        const std::string_view merged = text.substr(l.offset, l.length + r.length);
        const int32_t id = find(merged);
        if (id < 0) return;
        const float score = v.scores.empty() ? 0.0f : v.scores[static_cast<size_t>(id)];
        queue.push({score, left, right, merged.size()});
    };
    for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) consider(i - 1, i);
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& l = sym[static_cast<size_t>(c.left)];
        Symbol& r = sym[static_cast<size_t>(c.right)];
        if (l.length == 0 || r.length == 0 || l.length + r.length != c.length) continue;
        l.length += r.length;
        r.length = 0;
        l.next = r.next;
        if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = c.left;
        consider(l.prev, c.left);
        consider(c.left, l.next);
    }
    for (int32_t i = sym.empty() ? -1 : 0; i >= 0; i = sym[static_cast<size_t>(i)].next) {
        const Symbol& s = sym[static_cast<size_t>(i)];
        const std::string_view piece = text.substr(s.offset, s.length);
        const int32_t id = find(piece);
        if (id >= 0) {
            out.push_back(id);
            continue;
        }
        for (char b : piece) {
            const int32_t byte_id = spm_byte_token[static_cast<uint8_t>(b)];
            if (byte_id >= 0) out.push_back(byte_id);
        }
    }
}

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::from_vocab(VocabData vocab) {
    std::unique_ptr<Tokenizer> t(new Tokenizer());
    t->impl_->v = std::move(vocab);
    t->impl_->build();
    return t;
}

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::GgufFile& file) {
    VocabData v;
    const std::string model = file.get_string("tokenizer.ggml.model").value_or("");
    if (model == "gpt2") {
        v.kind = VocabKind::BytePairGpt2;
        const std::string pre = file.get_string("tokenizer.ggml.pre").value_or("default");
        v.pre = pre_tokenizer_from_name(pre);
        // llama.cpp applies merges only to words that are not already tokens for these.
        v.ignore_merges = pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" ||
                          pre == "falcon3" || pre == "falcon-h1" || pre == "pixtral" ||
                          pre == "midm-2.0" || pre == "lfm2";
        v.add_bos = v.ignore_merges;
        v.add_space_prefix = false;
        v.merges = file.get_string_array("tokenizer.ggml.merges");
        if (v.merges.empty()) {
            throw EngineError(
                "the model's BPE tokenizer has no merges (tokenizer.ggml.merges); the file is "
                "incomplete or was converted by an old tool");
        }
    } else if (model == "llama") {
        v.kind = VocabKind::SentencePiece;
        v.add_bos = true;
        v.add_space_prefix = true;
        v.bos = 1;
        v.eos = 2;
        v.unk = 0;
        v.scores = file.get_float_array("tokenizer.ggml.scores");
    } else if (model.empty()) {
        throw EngineError(
            "the model file has no tokenizer (tokenizer.ggml.model is missing); use a GGUF "
            "converted with its tokenizer");
    } else {
        throw EngineError("unsupported tokenizer model '" + model +
                          "' (tokenizer.ggml.model); supported: gpt2 (byte-level BPE) and llama "
                          "(SentencePiece BPE)");
    }
    v.tokens = file.get_string_array("tokenizer.ggml.tokens");
    for (int64_t t : file.get_int_array("tokenizer.ggml.token_type")) {
        v.types.push_back(t >= 0 && t <= 6 ? static_cast<TokenType>(t) : TokenType::Undefined);
    }
    auto id = [&](const char* key, int32_t& dst) {
        if (auto x = file.get_int(key)) dst = static_cast<int32_t>(*x);
    };
    id("tokenizer.ggml.bos_token_id", v.bos);
    id("tokenizer.ggml.eos_token_id", v.eos);
    id("tokenizer.ggml.eot_token_id", v.eot);
    id("tokenizer.ggml.eom_token_id", v.eom);
    id("tokenizer.ggml.unknown_token_id", v.unk);
    id("tokenizer.ggml.padding_token_id", v.pad);
    id("tokenizer.ggml.fim_pre_token_id", v.fim_pre);
    id("tokenizer.ggml.fim_suf_token_id", v.fim_suf);
    id("tokenizer.ggml.fim_mid_token_id", v.fim_mid);
    id("tokenizer.ggml.fim_pad_token_id", v.fim_pad);
    id("tokenizer.ggml.fim_rep_token_id", v.fim_rep);
    id("tokenizer.ggml.fim_sep_token_id", v.fim_sep);
    id("tokenizer.ggml.prefix_token_id", v.fim_pre);  // deprecated names; llama.cpp reads them last
    id("tokenizer.ggml.suffix_token_id", v.fim_suf);
    id("tokenizer.ggml.middle_token_id", v.fim_mid);
    if (auto b = file.get_bool("tokenizer.ggml.add_bos_token")) v.add_bos = *b;
    if (auto b = file.get_bool("tokenizer.ggml.add_eos_token")) v.add_eos = *b;
    if (auto b = file.get_bool("tokenizer.ggml.add_space_prefix")) v.add_space_prefix = *b;
    return from_vocab(std::move(v));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
    const Impl& m = *impl_;
    std::vector<int32_t> out;
    out.reserve(text.size() / 3 + 2);
    if (add_special && m.v.add_bos && m.v.bos >= 0) out.push_back(m.v.bos);
    bool prev_special = true;  // SentencePiece: a text fragment after a special gets a space
    for (const Fragment& f : m.partition(text, parse_special)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            prev_special = true;
            continue;
        }
        const std::string_view raw = text.substr(f.offset, f.length);
        if (m.v.kind == VocabKind::BytePairGpt2) {
            m.encode_bpe(raw, out);
        } else {
            std::string escaped;
            if (m.v.add_space_prefix && prev_special) escaped += kSpmSpace;
            for (char c : raw) {
                if (c == ' ') {
                    escaped += kSpmSpace;
                } else {
                    escaped += c;
                }
            }
            m.encode_spm(escaped, out);
        }
        prev_special = false;
    }
    if (add_special && m.v.add_eos && m.v.eos >= 0) out.push_back(m.v.eos);
    return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
    const Impl& m = *impl_;
    if (id < 0 || id >= n_vocab()) return {};
    const std::string& text = m.v.tokens[static_cast<size_t>(id)];
    switch (m.type(id)) {
        case TokenType::Control:
        case TokenType::Unknown:
            return special ? text : std::string();
        case TokenType::UserDefined:
            return text;
        case TokenType::Normal:
            break;
        case TokenType::Byte:
            if (m.v.kind == VocabKind::SentencePiece && text.size() == 6) {
                return std::string(1, static_cast<char>(std::stoi(text.substr(3, 2), nullptr, 16)));
            }
            return {};
        default:
            return {};
    }
    std::string out;
    if (m.v.kind == VocabKind::SentencePiece) {
        for (size_t pos = 0; pos < text.size();) {
            if (text.compare(pos, kSpmSpace.size(), kSpmSpace) == 0) {
                out += ' ';
                pos += kSpmSpace.size();
            } else {
                out += text[pos++];
            }
        }
        return out;
    }
    const ByteLevelAlphabet& alphabet = byte_level();
    for (uint32_t cp : unicode::decode_utf8(text)) {
        auto it = alphabet.cp_to_byte.find(cp);
        if (it != alphabet.cp_to_byte.end()) {
            out += static_cast<char>(it->second);
        } else {
            unicode::append_utf8(out, cp);  // not a byte-level character: keep as is
        }
    }
    return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool special) const {
    std::string out;
    bool strip_space = impl_->v.kind == VocabKind::SentencePiece && impl_->v.add_space_prefix;
    for (int32_t id : ids) {
        std::string piece = token_to_piece(id, special);
        if (piece.empty()) continue;
        if (strip_space && piece[0] == ' ') piece.erase(0, 1);  // the encoder's space prefix
        strip_space = false;
        out += piece;
    }
    return out;
}

bool Tokenizer::is_eog(int32_t id) const {
    return id >= 0 && id < n_vocab() && impl_->eog[static_cast<size_t>(id)];
}
bool Tokenizer::is_control(int32_t id) const {
    return id >= 0 && id < n_vocab() && impl_->type(id) == TokenType::Control;
}
int32_t Tokenizer::bos() const { return impl_->v.bos; }
int32_t Tokenizer::eos() const { return impl_->v.eos; }
int32_t Tokenizer::eot() const { return impl_->v.eot; }
bool Tokenizer::add_bos() const { return impl_->v.add_bos; }
int32_t Tokenizer::n_vocab() const { return static_cast<int32_t>(impl_->v.tokens.size()); }
VocabKind Tokenizer::kind() const { return impl_->v.kind; }
PreTokenizer Tokenizer::pre_tokenizer() const { return impl_->v.pre; }
const std::string& Tokenizer::token_text(int32_t id) const {
    static const std::string kEmpty;
    return id >= 0 && id < n_vocab() ? impl_->v.tokens[static_cast<size_t>(id)] : kEmpty;
}
int32_t Tokenizer::find_token(std::string_view text) const { return impl_->find(text); }

std::string StreamingDetokenizer::feed(int32_t token) {
    pending_ += tokenizer_->token_to_piece(token);
    const size_t hold = unicode::incomplete_utf8_tail(pending_);
    std::string ready =
        unicode::sanitize_utf8(std::string_view(pending_).substr(0, pending_.size() - hold));
    pending_.erase(0, pending_.size() - hold);
    return ready;
}

std::string StreamingDetokenizer::flush() {
    // Only an incomplete character can be pending: it becomes one U+FFFD.
    std::string rest = pending_.empty() ? std::string() : std::string("\xEF\xBF\xBD");
    pending_.clear();
    return rest;
}

}  // namespace powerinfer
