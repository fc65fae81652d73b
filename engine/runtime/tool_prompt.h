// OpenAI-style conversations with tools (tool definitions, assistant turns
// carrying tool_calls, "tool" turns with results) rendered into a prompt:
//  - templates that write tool calls themselves as <tool_call> JSON (Qwen2.5,
//    Hermes 3, Qwen3: "native") get the conversation and the tools as
//    transformers' apply_chat_template passes them;
//  - every other template (SmolLM2's, which knows no tools) gets the same
//    instructions in a system message, with tool calls and results written
//    as <tool_call>/<tool_response> text in ordinary turns ("prompted").
// Either way the model is asked to answer with
//   <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>
// which the server parses back (server/openai_protocol.h).
#pragma once

#include <string>
#include <string_view>

#include "chat/chat_template.h"

namespace powerinfer::runtime {

// Whether the template itself renders tools and writes <tool_call> blocks.
bool template_writes_tool_calls(std::string_view template_source);

// The prompt text for chat_json ({"messages": [...], "tools": [...]}; see
// GenerateRequest::chat_json). Throws EngineError for a conversation that
// is not of that shape, with what to fix.
std::string render_tool_conversation(const ChatTemplate& chat_template, bool native,
                                     std::string_view chat_json);

}  // namespace powerinfer::runtime
