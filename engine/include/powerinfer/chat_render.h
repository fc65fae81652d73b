// A chat template's rendering of a conversation, exactly as Hugging Face
// transformers' apply_chat_template renders it (the engine's Jinja
// interpreter; templates are untrusted input and bounded).
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "powerinfer/error.h"

namespace powerinfer {

struct ChatRenderRequest {
    std::string template_source;  // Jinja (e.g. ModelFileInfo::chat_template)
    // {"messages": [...], "tools": [...], ...}: every key becomes a template
    // variable, as apply_chat_template passes its keyword arguments; tools
    // and documents default to none.
    std::string messages_json;
    std::string bos_token, eos_token;
    bool add_generation_prompt = true;
    std::optional<std::tm> now;  // what strftime_now() formats; unset: the local time
};

// The conversation is not valid JSON, or not an object with "messages".
class ChatMessagesError : public EngineError {
public:
    using EngineError::EngineError;
};
// The template does not parse or fails to render (the message carries the
// line and column).
class ChatTemplateError : public EngineError {
public:
    using EngineError::EngineError;
};

// Throws ChatMessagesError or ChatTemplateError.
std::string render_chat_template(const ChatRenderRequest& request);

// A calendar time for ChatRenderRequest::now (month 1-12; weekday and day of
// the year filled in).
std::tm chat_calendar_time(int year, int month, int day, int hour = 0, int minute = 0,
                           int second = 0);

}  // namespace powerinfer
