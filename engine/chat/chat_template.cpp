#include "chat/chat_template.h"

#include <cctype>

namespace powerinfer {
namespace {

// DeepSeek's markers (end of sentence, User, Assistant between fullwidth bars,
// U+2581 for spaces), spelled as UTF-8 escapes so that the source stays ASCII
// (MSVC without /utf-8 misreads it otherwise).
const std::string kDeepSeekEnd =
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>";
const std::string kDeepSeekUser = "<\xEF\xBD\x9CUser\xEF\xBD\x9C>";
const std::string kDeepSeekAssistant =
    "<\xEF\xBD\x9C"
    "Assistant\xEF\xBD\x9C>";

struct TemplateInfo {
    ChatTemplateKind kind;
    const char* name;
    std::vector<std::string> stops;
};

const std::vector<TemplateInfo>& catalogue() {
    using K = ChatTemplateKind;
    static const std::vector<TemplateInfo> kTemplates = {
        {K::ChatML, "chatml", {"<|im_end|>"}},
        {K::Llama2, "llama2", {"</s>", "[INST]"}},
        {K::Llama2Sys, "llama2-sys", {"</s>", "[INST]"}},
        {K::Llama2SysBos, "llama2-sys-bos", {"</s>", "[INST]"}},
        {K::Llama2SysStrip, "llama2-sys-strip", {"</s>", "[INST]"}},
        {K::MistralV1, "mistral-v1", {"</s>", "[INST]"}},
        {K::MistralV3, "mistral-v3", {"</s>", "[INST]"}},
        {K::MistralV3Tekken, "mistral-v3-tekken", {"</s>", "[INST]"}},
        {K::MistralV7, "mistral-v7", {"</s>", "[INST]"}},
        {K::MistralV7Tekken, "mistral-v7-tekken", {"</s>", "[INST]"}},
        {K::Llama3, "llama3", {"<|eot_id|>", "<|end_of_text|>"}},
        {K::Llama4, "llama4", {"<|eot|>", "<|end_of_text|>"}},
        {K::Gemma, "gemma", {"<end_of_turn>"}},
        {K::Phi3, "phi3", {"<|end|>", "<|endoftext|>"}},
        {K::Phi4, "phi4", {"<|im_end|>"}},
        {K::Falcon3, "falcon3", {"<|endoftext|>", "\n<|user|>"}},
        {K::Zephyr, "zephyr", {"<|endoftext|>", "</s>"}},
        {K::Monarch, "monarch", {"</s>"}},
        {K::DeepSeek, "deepseek", {"<|EOT|>"}},
        {K::DeepSeek2, "deepseek2", {kDeepSeekEnd, "\nUser:"}},
        {K::DeepSeek3, "deepseek3", {kDeepSeekEnd}},
        {K::CommandR, "command-r", {"<|END_OF_TURN_TOKEN|>"}},
        {K::Vicuna, "vicuna", {"</s>", "\nUSER:"}},
        {K::VicunaOrca, "vicuna-orca", {"</s>", "\nUSER:"}},
        {K::OpenChat, "openchat", {"<|end_of_turn|>"}},
        {K::Granite, "granite", {"<|end_of_text|>"}},
        {K::Exaone3, "exaone3", {"[|endofturn|]"}},
        {K::Megrez, "megrez", {"<|turn_end|>"}},
        {K::Orion, "orion", {"</s>"}},
    };
    return kTemplates;
}

ChatTemplate make(ChatTemplateKind kind) {
    for (const TemplateInfo& t : catalogue()) {
        if (t.kind == kind) {
            ChatTemplate out;
            out.kind = kind;
            out.name = t.name;
            out.stop_strings = t.stops;
            return out;
        }
    }
    return {};
}

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

// Signature tests in llama.cpp's order: several families share markers, so
// the order decides (e.g. Phi-3 and Zephyr both use <|assistant|>).
std::optional<ChatTemplateKind> detect_kind(std::string_view t) {
    using K = ChatTemplateKind;
    auto has = [&](std::string_view s) { return t.find(s) != std::string_view::npos; };
    if (has("<|im_start|>")) {
        if (has("<|im_sep|>")) return K::Phi4;
        return K::ChatML;
    }
    if (t.substr(0, 7) == "mistral" || has("[INST]")) {
        if (has("[SYSTEM_PROMPT]")) {
            // Tekken variants write no space after [INST].
            return has("[INST] ") ? K::MistralV7 : K::MistralV7Tekken;
        }
        if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
            if (has(" [INST]")) return K::MistralV1;
            if (has("\"[INST]\"")) return K::MistralV3Tekken;
            return K::MistralV3;
        }
        if (has("content.strip()")) return K::Llama2SysStrip;
        if (has("bos_token + '[INST]")) return K::Llama2SysBos;
        if (has("<<SYS>>")) return K::Llama2Sys;
        return K::Llama2;
    }
    if (has("<|assistant|>") && has("<|end|>")) return K::Phi3;
    if (has("<|assistant|>") && has("<|user|>") && has("</s>")) return K::Falcon3;
    if (has("<|user|>") && has("<|endoftext|>")) return K::Zephyr;
    if (has("bos_token + message['role']")) return K::Monarch;
    if (has("<start_of_turn>")) return K::Gemma;
    if (has("'\\n\\nAssistant: ' + eos_token")) return K::Orion;
    if (has("GPT4 Correct ")) return K::OpenChat;
    if (has("USER: ") && has("ASSISTANT: ")) return has("SYSTEM: ") ? K::VicunaOrca : K::Vicuna;
    if (has("### Instruction:") && has("<|EOT|>")) return K::DeepSeek;
    if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>")) return K::CommandR;
    if (has("<|start_header_id|>") && has("<|end_header_id|>")) return K::Llama3;
    if (has("'Assistant: ' + message['content'] + eos_token")) return K::DeepSeek2;
    if (has(kDeepSeekAssistant) && has(kDeepSeekUser) && has(kDeepSeekEnd)) {
        return K::DeepSeek3;
    }
    if (has("[|system|]") && has("[|assistant|]") && has("[|endofturn|]")) return K::Exaone3;
    if (has("<|start_of_role|>")) return K::Granite;
    if (has("<|role_start|>")) return K::Megrez;
    if (has("<|header_start|>") && has("<|header_end|>")) return K::Llama4;
    return std::nullopt;
}

// A default system prompt written as a literal in a ChatML template, e.g.
//   {{ '<|im_start|>system\nYou are a helpful AI assistant ...<|im_end|>\n' }}
// used when messages[0] is not a system message. A literal only: text built
// from messages[0]['content'] contains quotes and is skipped.
std::string find_default_system(std::string_view t) {
    static constexpr std::string_view kOpen = "<|im_start|>system";
    static constexpr std::string_view kClose = "<|im_end|>";
    if (t.find("!= 'system'") == std::string_view::npos &&
        t.find("!= \"system\"") == std::string_view::npos &&
        t.find("== 'system'") == std::string_view::npos &&
        t.find("== \"system\"") == std::string_view::npos) {
        return {};
    }
    for (size_t pos = t.find(kOpen); pos != std::string_view::npos; pos = t.find(kOpen, pos + 1)) {
        size_t body = pos + kOpen.size();
        if (t.substr(body, 1) == "\n") {
            body += 1;
        } else if (t.substr(body, 2) == "\\n") {
            body += 2;
        } else {
            continue;
        }
        const size_t end = t.find(kClose, body);
        if (end == std::string_view::npos) break;
        const std::string_view raw = t.substr(body, end - body);
        if (raw.empty() || raw.find_first_of("'\"{}") != std::string_view::npos) continue;
        // Undo Jinja string escapes.
        std::string text;
        for (size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\\' && i + 1 < raw.size()) {
                const char c = raw[++i];
                text += c == 'n' ? '\n' : c == 't' ? '\t' : c;
            } else {
                text += raw[i];
            }
        }
        return text;
    }
    return {};
}

bool is(const ChatMessage& m, std::string_view role) { return m.role == role; }

}  // namespace

std::string ChatTemplate::render(const jinja::Value& messages, const jinja::Value& tools,
                                 bool add_generation_prompt) const {
    if (!jinja) throw jinja::TemplateError("the model has no usable chat template", 0, 0);
    // What transformers' apply_chat_template passes (documents: none).
    const jinja::Value variables = jinja::Value::dict({
        {jinja::Value("messages"), messages},
        {jinja::Value("tools"), tools},
        {jinja::Value("documents"), jinja::Value::none()},
        {jinja::Value("add_generation_prompt"), jinja::Value(add_generation_prompt)},
        {jinja::Value("bos_token"), jinja::Value(tokens.bos)},
        {jinja::Value("eos_token"), jinja::Value(tokens.eos)},
    });
    std::string out = jinja->render(variables);
    // The tokenizer adds BOS itself.
    if (tokens.add_bos && !tokens.bos.empty() && out.compare(0, tokens.bos.size(), tokens.bos) == 0)
        out.erase(0, tokens.bos.size());
    return out;
}

std::string ChatTemplate::format(const std::vector<ChatMessage>& input, bool add_generation_prompt,
                                 std::string* error) const {
    if (jinja) {
        std::vector<jinja::Value> messages;
        messages.reserve(input.size());
        for (const ChatMessage& m : input) {
            messages.push_back(
                jinja::Value::dict({{jinja::Value("role"), jinja::Value(m.role)},
                                    {jinja::Value("content"), jinja::Value(m.content)}}));
        }
        try {
            return render(jinja::Value::list(std::move(messages)), jinja::Value::none(),
                          add_generation_prompt);
        } catch (const jinja::TemplateError& e) {
            if (error) *error = e.what();
        }
    }
    using K = ChatTemplateKind;
    std::vector<ChatMessage> chat;
    if (!default_system.empty() && (input.empty() || !is(input.front(), "system"))) {
        chat.push_back({"system", default_system});
    }
    chat.insert(chat.end(), input.begin(), input.end());
    const bool gen = add_generation_prompt;
    std::string s;

    switch (kind) {
        case K::ChatML:
            for (const auto& m : chat)
                s += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
            if (gen) s += "<|im_start|>assistant\n";
            break;
        case K::Phi4:
            for (const auto& m : chat)
                s += "<|im_start|>" + m.role + "<|im_sep|>" + m.content + "<|im_end|>";
            if (gen) s += "<|im_start|>assistant<|im_sep|>";
            break;
        case K::MistralV7:
        case K::MistralV7Tekken: {
            const std::string sp = kind == K::MistralV7 ? " " : "";
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    s += "[SYSTEM_PROMPT]" + sp + m.content + "[/SYSTEM_PROMPT]";
                } else if (is(m, "user")) {
                    s += "[INST]" + sp + m.content + "[/INST]";
                } else {
                    s += sp + m.content + "</s>";
                }
            }
            break;
        }
        case K::MistralV1:
        case K::MistralV3:
        case K::MistralV3Tekken: {
            const std::string lead = kind == K::MistralV1 ? " " : "";
            const std::string trail = kind == K::MistralV3Tekken ? "" : " ";
            bool in_turn = false;
            for (const auto& m : chat) {
                if (!in_turn) {
                    s += lead + "[INST]" + trail;
                    in_turn = true;
                }
                if (is(m, "system")) {
                    s += m.content + "\n\n";
                } else if (is(m, "user")) {
                    s += m.content + lead + "[/INST]";
                } else {
                    s += trail + (kind == K::MistralV3 ? trim(m.content) : m.content) + "</s>";
                    in_turn = false;
                }
            }
            break;
        }
        case K::Llama2:
        case K::Llama2Sys:
        case K::Llama2SysBos:
        case K::Llama2SysStrip: {
            const bool sys_block = kind != K::Llama2;
            const bool strip = kind == K::Llama2SysStrip;
            bool in_turn = true;  // the first [INST] is written up front, without <s>
            s += "[INST] ";
            for (const auto& m : chat) {
                const std::string content = strip ? trim(m.content) : m.content;
                if (!in_turn) {
                    in_turn = true;
                    s += kind == K::Llama2SysBos ? "<s>[INST] " : "[INST] ";
                }
                if (is(m, "system")) {
                    s += sys_block ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
                } else if (is(m, "user")) {
                    s += content + " [/INST]";
                } else {
                    s += content + "</s>";
                    in_turn = false;
                }
            }
            break;
        }
        case K::Phi3:
            for (const auto& m : chat) s += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
            if (gen) s += "<|assistant|>\n";
            break;
        case K::Falcon3:
            for (const auto& m : chat) s += "<|" + m.role + "|>\n" + m.content + "\n";
            if (gen) s += "<|assistant|>\n";
            break;
        case K::Zephyr:
            for (const auto& m : chat) s += "<|" + m.role + "|>\n" + m.content + "<|endoftext|>\n";
            if (gen) s += "<|assistant|>\n";
            break;
        case K::Monarch:
            for (size_t i = 0; i < chat.size(); ++i) {
                s += (i == 0 ? "" : "<s>") + chat[i].role + "\n" + chat[i].content + "</s>\n";
            }
            if (gen) s += "<s>assistant\n";
            break;
        case K::Gemma: {
            // Gemma has no system role: the system text opens the next user turn.
            std::string system;
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    system += trim(m.content);
                    continue;
                }
                const std::string role = is(m, "assistant") ? "model" : m.role;
                s += "<start_of_turn>" + role + "\n";
                if (!system.empty() && role != "model") {
                    s += system + "\n\n";
                    system.clear();
                }
                s += trim(m.content) + "<end_of_turn>\n";
            }
            if (gen) s += "<start_of_turn>model\n";
            break;
        }
        case K::Llama3:
            for (const auto& m : chat) {
                s += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) +
                     "<|eot_id|>";
            }
            if (gen) s += "<|start_header_id|>assistant<|end_header_id|>\n\n";
            break;
        case K::Llama4:
            for (const auto& m : chat) {
                s += "<|header_start|>" + m.role + "<|header_end|>\n\n" + trim(m.content) +
                     "<|eot|>";
            }
            if (gen) s += "<|header_start|>assistant<|header_end|>\n\n";
            break;
        case K::DeepSeek:
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    s += m.content;
                } else if (is(m, "user")) {
                    s += "### Instruction:\n" + m.content + "\n";
                } else if (is(m, "assistant")) {
                    s += "### Response:\n" + m.content + "\n<|EOT|>\n";
                }
            }
            if (gen) s += "### Response:\n";
            break;
        case K::DeepSeek2:
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    s += m.content + "\n\n";
                } else if (is(m, "user")) {
                    s += "User: " + m.content + "\n\n";
                } else if (is(m, "assistant")) {
                    s += "Assistant: " + m.content + kDeepSeekEnd;
                }
            }
            if (gen) s += "Assistant:";
            break;
        case K::DeepSeek3:
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    s += m.content + "\n\n";
                } else if (is(m, "user")) {
                    s += kDeepSeekUser + m.content;
                } else if (is(m, "assistant")) {
                    s += kDeepSeekAssistant + m.content + kDeepSeekEnd;
                }
            }
            if (gen) s += kDeepSeekAssistant;
            break;
        case K::CommandR:
            for (const auto& m : chat) {
                const char* tag = is(m, "system") ? "<|SYSTEM_TOKEN|>"
                                  : is(m, "user") ? "<|USER_TOKEN|>"
                                                  : "<|CHATBOT_TOKEN|>";
                s += std::string("<|START_OF_TURN_TOKEN|>") + tag + trim(m.content) +
                     "<|END_OF_TURN_TOKEN|>";
            }
            if (gen) s += "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>";
            break;
        case K::Vicuna:
        case K::VicunaOrca:
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    s += kind == K::VicunaOrca ? "SYSTEM: " + m.content + "\n" : m.content + "\n\n";
                } else if (is(m, "user")) {
                    s += "USER: " + m.content + "\n";
                } else if (is(m, "assistant")) {
                    s += "ASSISTANT: " + m.content + "</s>\n";
                }
            }
            if (gen) s += "ASSISTANT:";
            break;
        case K::OpenChat:
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    s += m.content + "<|end_of_turn|>";
                } else {
                    std::string role = m.role;
                    if (!role.empty())
                        role[0] =
                            static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
                    s += "GPT4 Correct " + role + ": " + m.content + "<|end_of_turn|>";
                }
            }
            if (gen) s += "GPT4 Correct Assistant:";
            break;
        case K::Granite:
            for (const auto& m : chat) {
                s += "<|start_of_role|>" + m.role + "<|end_of_role|>" + m.content +
                     "<|end_of_text|>\n";
            }
            if (gen) s += "<|start_of_role|>assistant<|end_of_role|>\n";
            break;
        case K::Exaone3:
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    s += "[|system|]" + trim(m.content) + "[|endofturn|]\n";
                } else if (is(m, "user")) {
                    s += "[|user|]" + trim(m.content) + "\n";
                } else if (is(m, "assistant")) {
                    s += "[|assistant|]" + trim(m.content) + "[|endofturn|]\n";
                }
            }
            if (gen) s += "[|assistant|]";
            break;
        case K::Megrez:
            for (const auto& m : chat) {
                s += "<|role_start|>" + m.role + "<|role_end|>" + m.content + "<|turn_end|>";
            }
            if (gen) s += "<|role_start|>assistant<|role_end|>";
            break;
        case K::Orion: {
            std::string system;
            for (const auto& m : chat) {
                if (is(m, "system")) {
                    system += m.content;
                } else if (is(m, "user")) {
                    s += "Human: ";
                    if (!system.empty()) {
                        s += system + "\n\n";
                        system.clear();
                    }
                    s += m.content + "\n\nAssistant: </s>";
                } else {
                    s += m.content + "</s>";
                }
            }
            break;
        }
    }
    return s;
}

ChatTemplate ChatTemplate::detect(std::string_view source,
                                  const std::optional<ChatTokens>& tokens) {
    if (auto named = from_name(source)) return *named;
    const std::optional<ChatTemplateKind> kind = detect_kind(source);
    ChatTemplate out = make(kind.value_or(ChatTemplateKind::ChatML));
    if (out.kind == ChatTemplateKind::ChatML && kind)
        out.default_system = find_default_system(source);
    if (source.empty()) {
        out.warning =
            "The model has no chat template; using ChatML. If replies look wrong, it may be a "
            "base model (not tuned for chat): use the file of its instruction-tuned (-it, "
            "Instruct) version.";
        return out;
    }
    // Without the special tokens a recognised family's formatter is closer
    // than the template rendered with empty bos_token/eos_token.
    const bool uses_tokens = source.find("bos_token") != std::string_view::npos ||
                             source.find("eos_token") != std::string_view::npos;
    if (kind && !tokens && uses_tokens) return out;
    out.tokens = tokens.value_or(ChatTokens{});
    try {
        out.jinja.emplace(source);
        // A template that cannot render one user message is of no use.
        std::string error;
        out.format({{"user", "Hello"}}, true, &error);
        if (!error.empty()) throw jinja::TemplateError(error, 0, 0);
    } catch (const jinja::TemplateError& e) {
        out.jinja.reset();
        out.warning = "The model's chat template cannot be used (" + std::string(e.what()) +
                      "); using " +
                      (kind ? "the built-in " + out.name + " format" : std::string("ChatML")) +
                      ". If replies look wrong, use a GGUF file of the model with a working "
                      "template.";
        return out;
    }
    if (!kind) {
        out.name = "jinja";
        out.stop_strings.clear();
        if (!out.tokens.eos.empty()) out.stop_strings.push_back(out.tokens.eos);
    }
    return out;
}

std::optional<ChatTemplate> ChatTemplate::from_name(std::string_view name) {
    for (const TemplateInfo& t : catalogue()) {
        if (name == t.name) return make(t.kind);
    }
    return std::nullopt;
}

std::vector<std::string> ChatTemplate::names() {
    std::vector<std::string> out;
    for (const TemplateInfo& t : catalogue()) out.emplace_back(t.name);
    return out;
}

}  // namespace powerinfer
