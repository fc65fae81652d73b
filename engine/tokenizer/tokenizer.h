// Text <-> token ids for the llama.cpp model families, built from GGUF
// metadata, producing the same ids as llama.cpp (llama_tokenize) does:
//  - byte-level BPE (`tokenizer.ggml.model` = "gpt2") with the pre-tokenizers
//    named by `tokenizer.ggml.pre` (default/gpt2, llama3, qwen2, smollm and
//    their aliases), merges ranked by `tokenizer.ggml.merges`;
//  - SentencePiece BPE (`tokenizer.ggml.model` = "llama", e.g. Llama 2,
//    Mistral, Gemma 3) with scores, <0xNN> byte fallback and the
//    `tokenizer.ggml.add_space_prefix` flag; no pre-tokenizer.
// Control / user-defined tokens (e.g. <|im_start|>) are matched as whole
// tokens when parse_special is true; user-defined ones always. As in
// llama.cpp, tokens that end generation or mark fill-in-the-middle roles are
// recognised by their text, and become control tokens if the file says otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace powerinfer::gguf {
class GgufFile;
}

namespace powerinfer {

// `tokenizer.ggml.token_type` values (llama_token_type).
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

enum class VocabKind { BytePairGpt2, SentencePiece };

// Pre-tokenizer splitting rules (llama.cpp's regex sets, implemented by hand).
enum class PreTokenizer {
    Default,  // "default": punctuation runs, gpt2, number runs, 3-digit groups
    Gpt2,     // "gpt-2", "olmo", "mpt", ...
    Llama3,   // "llama3"/"llama-bpe", "dbrx", "smaug-bpe", "falcon3", ...: digits in groups of 1-3
    Qwen2,    // "qwen2", "stablelm2", "deepseek-r1-qwen", ...: single digits
    Smollm,   // "smollm", "starcoder", "refact", "command-r", ...: single digits, then gpt2
};

// Everything the tokenizer needs; from_gguf fills it from metadata, tests
// build small ones by hand.
struct VocabData {
    VocabKind kind = VocabKind::BytePairGpt2;
    PreTokenizer pre = PreTokenizer::Default;
    std::vector<std::string> tokens;
    std::vector<float> scores;        // SentencePiece merge priority; empty for BPE
    std::vector<TokenType> types;     // empty: all Normal
    std::vector<std::string> merges;  // BPE, "left right", highest priority first
    int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1;
    // Fill-in-the-middle roles (tokenizer.ggml.fim_*_token_id); -1: found by text.
    int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
    bool add_bos = false, add_eos = false;
    bool add_space_prefix = true;  // SentencePiece only
    bool ignore_merges = false;    // BPE: a word that is a token is not merged (llama3)
};

class Tokenizer {
public:
    // Reads tokenizer.ggml.* metadata. Throws EngineError for a missing
    // vocabulary or an unsupported tokenizer model / pre-tokenizer.
    static std::unique_ptr<Tokenizer> from_gguf(const gguf::GgufFile& file);
    // Throws EngineError on inconsistent data (ids out of range, sizes).
    static std::unique_ptr<Tokenizer> from_vocab(VocabData vocab);
    ~Tokenizer();

    // add_special: add BOS / EOS as the model's metadata asks
    // (tokenizer.ggml.add_bos_token / add_eos_token), like llama_tokenize.
    // parse_special: match control tokens written in the text as one token.
    std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

    // The bytes of one token (may be part of a UTF-8 character). Control and
    // unknown tokens give "" unless `special` is true.
    std::string token_to_piece(int32_t id, bool special = false) const;
    // Concatenated pieces; for SentencePiece vocabularies with a space
    // prefix, the first piece's leading space is removed.
    std::string decode(std::span<const int32_t> ids, bool special = false) const;

    bool is_eog(int32_t id) const;  // end of generation: EOS, EOT, EOM, <|im_end|>-like
    bool is_control(int32_t id) const;
    int32_t bos() const;
    int32_t eos() const;
    int32_t eot() const;  // -1 if none
    bool add_bos() const;
    int32_t n_vocab() const;
    VocabKind kind() const;
    PreTokenizer pre_tokenizer() const;
    const std::string& token_text(int32_t id) const;  // raw vocabulary entry
    int32_t find_token(std::string_view text) const;  // -1 if absent

private:
    Tokenizer();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Turns a stream of generated tokens into text that never splits a UTF-8
// character: feed() returns only complete characters and holds back an
// incomplete tail; invalid bytes become U+FFFD.
class StreamingDetokenizer {
public:
    explicit StreamingDetokenizer(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}

    std::string feed(int32_t token);
    // Returns whatever is held back (an incomplete tail becomes U+FFFD).
    std::string flush();
    void reset() { pending_.clear(); }
    bool has_pending() const { return !pending_.empty(); }

private:
    const Tokenizer* tokenizer_;
    std::string pending_;
};

// Splits text into the pre-tokenizer's words (exposed for tests).
std::vector<std::string> pre_tokenize(std::string_view text, PreTokenizer pre);
// Parses a `tokenizer.ggml.pre` name; throws EngineError if unknown.
PreTokenizer pre_tokenizer_from_name(std::string_view name);

}  // namespace powerinfer
