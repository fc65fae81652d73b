// Conversation export as Markdown (for reading) and JSON (for tools).
#pragma once

#include <QByteArray>
#include <QString>

#include "records.h"

namespace powerinfer::app {

QString conversationToMarkdown(const ConversationRecord& conversation,
                               const QList<MessageRecord>& messages);
// {"title", "system_prompt", "created_at", "messages": [{"role", "content",
// "created_at", "model", "prompt_tokens", "completion_tokens", "tokens_per_s", "state"}]}
QByteArray conversationToJson(const ConversationRecord& conversation,
                              const QList<MessageRecord>& messages);

}  // namespace powerinfer::app
