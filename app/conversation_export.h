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

struct ExportedConversation {
    ConversationRecord conversation;
    QList<MessageRecord> messages;
};
// Every conversation: {"format": "powerinfer-conversations", "version": 1,
// "conversations": [<one conversationToJson object each>]}.
QByteArray conversationsToJson(const QList<ExportedConversation>& all);
// Reads either form (one conversation, or all). Messages get fresh uids;
// a reply cut off while streaming comes in as "interrupted". Returns an empty
// list and sets *error on anything that is not such an export.
QList<ExportedConversation> conversationsFromJson(const QByteArray& json, QString* error);

}  // namespace powerinfer::app
