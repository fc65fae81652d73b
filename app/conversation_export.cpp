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
                       .arg(m.state == QLatin1String("stopped")  ? QStringLiteral(" · stopped")
                            : m.state == QLatin1String("length") ? QStringLiteral(" · token limit")
                                                                 : QString());
        }
    }
    return out;
}

namespace {

QJsonObject conversationObject(const ConversationRecord& conversation,
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
    return QJsonObject{
        {QStringLiteral("title"), conversation.title},
        {QStringLiteral("system_prompt"), conversation.systemPrompt},
        {QStringLiteral("created_at"), conversation.createdAt.toString(Qt::ISODateWithMs)},
        {QStringLiteral("messages"), list},
    };
}

bool conversationFrom(const QJsonObject& o, ExportedConversation* out) {
    const QJsonValue list = o.value(QStringLiteral("messages"));
    if (!list.isArray()) return false;
    out->conversation.title = o.value(QStringLiteral("title")).toString();
    if (out->conversation.title.isEmpty()) out->conversation.title = QStringLiteral("Imported");
    out->conversation.systemPrompt = o.value(QStringLiteral("system_prompt")).toString();
    out->conversation.createdAt =
        QDateTime::fromString(o.value(QStringLiteral("created_at")).toString(), Qt::ISODateWithMs);
    static const QStringList roles = {QStringLiteral("user"), QStringLiteral("assistant"),
                                      QStringLiteral("system")};
    static const QStringList states = {QStringLiteral("complete"), QStringLiteral("stopped"),
                                       QStringLiteral("error"), QStringLiteral("interrupted"),
                                       QStringLiteral("length")};
    for (const QJsonValue& v : list.toArray()) {
        const QJsonObject j = v.toObject();
        MessageRecord m;
        m.role = j.value(QStringLiteral("role")).toString();
        if (!roles.contains(m.role)) return false;
        m.content = j.value(QStringLiteral("content")).toString();
        m.createdAt = QDateTime::fromString(j.value(QStringLiteral("created_at")).toString(),
                                            Qt::ISODateWithMs);
        m.state = j.value(QStringLiteral("state")).toString(QStringLiteral("complete"));
        if (m.state == QLatin1String("partial")) m.state = QStringLiteral("interrupted");
        if (!states.contains(m.state)) m.state = QStringLiteral("complete");
        m.model = j.value(QStringLiteral("model")).toString();
        m.promptTokens = j.value(QStringLiteral("prompt_tokens")).toInt();
        m.completionTokens = j.value(QStringLiteral("completion_tokens")).toInt();
        m.tokensPerSecond = j.value(QStringLiteral("tokens_per_s")).toDouble();
        out->messages << m;
    }
    return true;
}

}  // namespace

QByteArray conversationToJson(const ConversationRecord& conversation,
                              const QList<MessageRecord>& messages) {
    return QJsonDocument(conversationObject(conversation, messages))
        .toJson(QJsonDocument::Indented);
}

QByteArray conversationsToJson(const QList<ExportedConversation>& all) {
    QJsonArray list;
    for (const ExportedConversation& c : all)
        list.append(conversationObject(c.conversation, c.messages));
    const QJsonObject root{{QStringLiteral("format"), QStringLiteral("powerinfer-conversations")},
                           {QStringLiteral("version"), 1},
                           {QStringLiteral("conversations"), list}};
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

QList<ExportedConversation> conversationsFromJson(const QByteArray& json, QString* error) {
    QJsonParseError parse;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parse);
    const auto fail = [error](const QString& why) {
        if (error) *error = why;
        return QList<ExportedConversation>{};
    };
    if (parse.error != QJsonParseError::NoError)
        return fail(
            QObject::tr("not JSON (%1 at byte %2)").arg(parse.errorString()).arg(parse.offset));
    const QJsonObject root = doc.object();
    QList<ExportedConversation> out;
    const QJsonValue many = root.value(QStringLiteral("conversations"));
    const QJsonArray objects = many.isArray() ? many.toArray() : QJsonArray{root};
    for (const QJsonValue& v : objects) {
        ExportedConversation c;
        if (!conversationFrom(v.toObject(), &c))
            return fail(QObject::tr(
                "not a PowerInfer conversation export (expected \"messages\" with user and "
                "assistant turns)"));
        out << c;
    }
    if (out.isEmpty()) return fail(QObject::tr("the file holds no conversations"));
    return out;
}

}  // namespace powerinfer::app
