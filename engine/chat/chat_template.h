// Chat prompt formatting for the common model families. The template is
// recognised from the model's `tokenizer.chat_template` Jinja text by
// signature substrings (the way llama.cpp's llm_chat_detect_template does),
// then rendered by hand-written code: no Jinja interpreter.
//
// The output never contains the BOS token: tokenize it with add_special=true
// (BOS as the model asks) and parse_special=true (so <|im_start|> and the
// like become their control tokens).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

struct ChatTemplate {
    ChatTemplateKind kind = ChatTemplateKind::ChatML;
    std::string name = "chatml";  // llama.cpp's name for it ("chatml", "llama3", ...)
    // System prompt the model's template inserts when a conversation has none
    // (SmolLM2, Qwen2.5); empty if it does not.
    std::string default_system;
    // Text that ends an assistant turn, for stop-string matching on top of
    // the tokenizer's end-of-generation tokens.
    std::vector<std::string> stop_strings;
    // Non-empty when the model's template was not recognised and ChatML is
    // used instead: a sentence the UI can show.
    std::string warning;

    // Renders the conversation; with add_generation_prompt the text ends
    // where the assistant's reply starts.
    std::string format(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

    // Recognises a Jinja chat template (or a template name such as "chatml").
    // Unknown or empty text gives ChatML with `warning` set.
    static ChatTemplate detect(std::string_view jinja);
    // A template by its name; nullopt if there is none by that name.
    static std::optional<ChatTemplate> from_name(std::string_view name);
    static std::vector<std::string> names();
};

}  // namespace powerinfer
