// Chat prompt formatting. The model's own `tokenizer.chat_template` is
// rendered by the Jinja interpreter (jinja.h) exactly as Hugging Face
// transformers' apply_chat_template renders it. The template is also
// recognised by signature substrings (the way llama.cpp's
// llm_chat_detect_template does), which names it and gives the stop strings;
// the recognised family's hand-written formatter is the fallback when the
// template does not parse or render (then `warning` says so), and what
// from_name() gives.
//
// Where the tokenizer adds BOS (ChatTokens::add_bos), the output does not
// start with the BOS text: tokenize it with add_special=true (BOS as the
// model asks) and parse_special=true (so <|im_start|> and the like become
// their control tokens).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja.h"
#include "powerinfer/engine.h"

namespace powerinfer {

enum class ChatTemplateKind {
    ChatML,
    Llama2,          // [INST] ... [/INST], system folded into the first turn
    Llama2Sys,       // with <<SYS>> blocks
    Llama2SysBos,    // <<SYS>> and <s> before each later turn
    Llama2SysStrip,  // <<SYS>> and trimmed messages
    MistralV1,
    MistralV3,
    MistralV3Tekken,
    MistralV7,
    MistralV7Tekken,
    Llama3,
    Llama4,
    Gemma,
    Phi3,
    Phi4,
    Falcon3,
    Zephyr,
    Monarch,
    DeepSeek,  // deepseek-coder instruct
    DeepSeek2,
    DeepSeek3,  // also DeepSeek-R1 distills
    CommandR,
    Vicuna,
    VicunaOrca,
    OpenChat,
    Granite,
    Exaone3,
    Megrez,
    Orion,
};

// The special tokens' text, as the template's bos_token and eos_token.
struct ChatTokens {
    std::string bos, eos;
    bool add_bos = false;  // the tokenizer adds BOS: a leading BOS text is dropped
};

struct ChatTemplate {
    // The recognised family (ChatML when none): the fallback formatter.
    ChatTemplateKind kind = ChatTemplateKind::ChatML;
    // llama.cpp's name for the family ("chatml", "llama3", ...), or "jinja"
    // for a template of no recognised family rendered by the interpreter.
    std::string name = "chatml";
    // System prompt the model's template inserts when a conversation has none
    // (SmolLM2, Qwen2.5); empty if it does not.
    std::string default_system;
    // Text that ends an assistant turn, for stop-string matching on top of
    // the tokenizer's end-of-generation tokens.
    std::vector<std::string> stop_strings;
    // Non-empty when the model's template cannot be used and a built-in
    // format is used instead: a sentence the UI can show (with the error's
    // line and column).
    std::string warning;
    // The model's template, when it parses and renders a simple conversation.
    std::optional<jinja::Template> jinja;
    ChatTokens tokens;

    // Renders the conversation; with add_generation_prompt the text ends
    // where the assistant's reply starts. Through the model's template when
    // there is one; if that raises for this conversation (some templates
    // refuse a system message, for one), through the family's formatter,
    // with the template's error in *error.
    std::string format(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                       std::string* error = nullptr) const;
    // The model's template only (throws jinja::TemplateError): messages and
    // tools are JSON-like values ({"role": ..., "content": ...}, ...).
    std::string render(const jinja::Value& messages, const jinja::Value& tools,
                       bool add_generation_prompt) const;

    // The model's chat template (or a template name such as "chatml"), with
    // the tokenizer's special tokens. Without them (nullopt), a recognised
    // template that writes bos_token or eos_token keeps the family's
    // formatter, which knows its tokens. Empty text gives ChatML with
    // `warning` set.
    static ChatTemplate detect(std::string_view jinja,
                               const std::optional<ChatTokens>& tokens = std::nullopt);
    // A template by its name; nullopt if there is none by that name.
    static std::optional<ChatTemplate> from_name(std::string_view name);
    static std::vector<std::string> names();
};

}  // namespace powerinfer
