#include "conversation_export.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace powerinfer::app {

namespace {
QString heading(const QString& role) {
    if (role == QLatin1String("user")) return QStringLiteral("You");
    if (role == QLatin1String("assistant")) return QStringLiteral("Assistant");
    return role.isEmpty() ? role : role.left(1).toUpper() + role.mid(1);
}
}  // namespace

QString conversationToMarkdown(const ConversationRecord& conversation,
                               const QList<MessageRecord>& messages) {
    QString out = QStringLiteral("# %1\n\n").arg(conversation.title);
    if (conversation.createdAt.isValid())
        out += QStringLiteral("*%1*\n\n").arg(conversation.createdAt.toString(Qt::ISODate));
    if (!conversation.systemPrompt.isEmpty())
        out += QStringLiteral("> **System:** %1\n\n").arg(conversation.systemPrompt);
    for (const MessageRecord& m : messages) {
        out += QStringLiteral("## %1\n\n%2\n\n").arg(heading(m.role), m.content.trimmed());
        if (m.role == QLatin1String("assistant") && m.completionTokens > 0) {
            out += QStringLiteral("<sub>%1 · %2 tokens · %3 tok/s%4</sub>\n\n")
                       .arg(m.model)
                       .arg(m.completionTokens)
                       .arg(m.tokensPerSecond, 0, 'f', 1)
                       .arg(m.state == QLatin1String("stopped") ? QStringLiteral(" · stopped")
                                                                : QString());
        }
    }
    return out;
}

QByteArray conversationToJson(const ConversationRecord& conversation,
                              const QList<MessageRecord>& messages) {
    QJsonArray list;
    for (const MessageRecord& m : messages) {
        QJsonObject o{{QStringLiteral("role"), m.role},
                      {QStringLiteral("content"), m.content},
                      {QStringLiteral("created_at"), m.createdAt.toString(Qt::ISODateWithMs)},
                      {QStringLiteral("state"), m.state}};
        if (m.role == QLatin1String("assistant")) {
            o.insert(QStringLiteral("model"), m.model);
            o.insert(QStringLiteral("prompt_tokens"), m.promptTokens);
            o.insert(QStringLiteral("completion_tokens"), m.completionTokens);
            o.insert(QStringLiteral("tokens_per_s"), m.tokensPerSecond);
        }
        list.append(o);
    }
    const QJsonObject root{
        {QStringLiteral("title"), conversation.title},
        {QStringLiteral("system_prompt"), conversation.systemPrompt},
        {QStringLiteral("created_at"), conversation.createdAt.toString(Qt::ISODateWithMs)},
        {QStringLiteral("messages"), list},
    };
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

}  // namespace powerinfer::app
