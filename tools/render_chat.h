// powerinfer-cli --render-chat: prints a chat template's rendering of a
// conversation exactly as Hugging Face transformers' apply_chat_template
// renders it (see render_chat.cpp).
#pragma once

namespace powerinfer::cli {

// Whether argv asks for --render-chat.
bool wants_render_chat(int argc, char** argv);
// Runs it; returns the exit status (2 for a usage error, 1 for a template error).
int render_chat(int argc, char** argv);

}  // namespace powerinfer::cli
