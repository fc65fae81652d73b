#include "openai_protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>
#include <QVariant>
#include <cmath>

namespace powerinfer::server {

namespace {

ApiError invalid(const QString& message, const QString& param = {}, const QString& code = {}) {
    ApiError e;
    e.status = 400;
    e.message = message;
    e.param = param;
    e.code = code;
    return e;
}

QString jsonTypeName(const QJsonValue& v) {
    switch (v.type()) {
        case QJsonValue::Null:
            return QStringLiteral("null");
        case QJsonValue::Bool:
            return QStringLiteral("a boolean");
        case QJsonValue::Double:
            return QStringLiteral("a number");
        case QJsonValue::String:
            return QStringLiteral("a string");
        case QJsonValue::Array:
            return QStringLiteral("an array");
        case QJsonValue::Object:
            return QStringLiteral("an object");
        case QJsonValue::Undefined:
            break;
    }
    return QStringLiteral("undefined");
}

ApiError wrongType(const QString& param, const QString& expected, const QJsonValue& got) {
    return invalid(
        QStringLiteral("'%1' must be %2, not %3.").arg(param, expected, jsonTypeName(got)), param,
        QStringLiteral("invalid_type"));
}

// Absent and null both mean "use the default".
bool present(const QJsonObject& o, const QString& key) {
    const QJsonValue v = o.value(key);
    return !v.isUndefined() && !v.isNull();
}

// JSON numbers are doubles: an integer must be integral and in range.
std::optional<ApiError> readInteger(const QJsonObject& o, const QString& key, double lo, double hi,
                                    int64_t* out) {
    const QJsonValue v = o.value(key);
    if (!v.isDouble()) return wrongType(key, QStringLiteral("an integer"), v);
    const double d = v.toDouble();
    if (!std::isfinite(d) || std::floor(d) != d)
        return wrongType(key, QStringLiteral("an integer"), v);
    if (d < lo || d > hi)
        return invalid(QStringLiteral("'%1' must be between %2 and %3, got %4.")
                           .arg(key)
                           .arg(lo, 0, 'g', 17)
                           .arg(hi, 0, 'g', 17)
                           .arg(d, 0, 'g', 17),
                       key, QStringLiteral("invalid_value"));
    *out = int64_t(d);
    return std::nullopt;
}

std::optional<ApiError> readNumber(const QJsonObject& o, const QString& key, double lo, double hi,
                                   double* out) {
    const QJsonValue v = o.value(key);
    if (!v.isDouble()) return wrongType(key, QStringLiteral("a number"), v);
    const double d = v.toDouble();
    if (!std::isfinite(d) || d < lo || d > hi)
        return invalid(QStringLiteral("'%1' must be between %2 and %3, got %4.")
                           .arg(key)
                           .arg(lo)
                           .arg(hi)
                           .arg(d),
                       key, QStringLiteral("invalid_value"));
    *out = d;
    return std::nullopt;
}

// "content" is a string, or (newer clients) an array of {type:"text", text}
// parts; assistant turns may carry null content.
std::optional<ApiError> readContent(const QJsonValue& v, const QString& param, const QString& role,
                                    std::string* out) {
    if (v.isString()) {
        *out = v.toString().toStdString();
        return std::nullopt;
    }
    if (v.isNull() && role == QLatin1String("assistant")) {
        out->clear();
        return std::nullopt;
    }
    if (!v.isArray())
        return wrongType(param, QStringLiteral("a string or an array of text parts"), v);
    std::string text;
    const QJsonArray parts = v.toArray();
    for (qsizetype i = 0; i < parts.size(); ++i) {
        const QString partParam = QStringLiteral("%1[%2]").arg(param).arg(i);
        if (!parts[i].isObject())
            return wrongType(partParam, QStringLiteral("an object"), parts[i]);
        const QJsonObject part = parts[i].toObject();
        if (part.value(QLatin1String("type")).toString() != QLatin1String("text"))
            return invalid(
                QStringLiteral("Only text content parts are supported ('%1.type' must be "
                               "\"text\").")
                    .arg(partParam),
                partParam + QStringLiteral(".type"), QStringLiteral("unsupported_content"));
        const QJsonValue t = part.value(QLatin1String("text"));
        if (!t.isString())
            return wrongType(partParam + QStringLiteral(".text"), QStringLiteral("a string"), t);
        text += t.toString().toStdString();
    }
    *out = std::move(text);
    return std::nullopt;
}

// Messages, also as normalized JSON for GenerateRequest::chat_json (content
// as text or null, tool_calls with JSON-text arguments, tool_call_id).
std::optional<ApiError> readMessages(const QJsonObject& body, const ParseLimits& limits,
                                     std::vector<powerinfer::ChatMessage>* out,
                                     QJsonArray* normalized, bool* toolTurns) {
    const QString key = QStringLiteral("messages");
    if (!present(body, key))
        return invalid(
            QStringLiteral("'messages' is required: a non-empty array of {role, content}."), key,
            QStringLiteral("missing_required_parameter"));
    const QJsonValue v = body.value(key);
    if (!v.isArray()) return wrongType(key, QStringLiteral("an array"), v);
    const QJsonArray messages = v.toArray();
    if (messages.isEmpty())
        return invalid(QStringLiteral("'messages' must contain at least one message."), key,
                       QStringLiteral("invalid_value"));
    if (messages.size() > limits.maxMessages)
        return invalid(QStringLiteral("'messages' has %1 entries; at most %2 are accepted.")
                           .arg(messages.size())
                           .arg(limits.maxMessages),
                       key, QStringLiteral("invalid_value"));
    for (qsizetype i = 0; i < messages.size(); ++i) {
        const QString param = QStringLiteral("messages[%1]").arg(i);
        if (!messages[i].isObject())
            return wrongType(param, QStringLiteral("an object"), messages[i]);
        const QJsonObject m = messages[i].toObject();
        const QJsonValue roleValue = m.value(QLatin1String("role"));
        if (!roleValue.isString())
            return wrongType(param + QStringLiteral(".role"), QStringLiteral("a string"),
                             roleValue);
        QString role = roleValue.toString();
        if (role == QLatin1String("developer")) role = QStringLiteral("system");  // newer alias
        if (role != QLatin1String("system") && role != QLatin1String("user") &&
            role != QLatin1String("assistant") && role != QLatin1String("tool"))
            return invalid(
                QStringLiteral("'%1.role' must be \"system\", \"user\", \"assistant\" or "
                               "\"tool\", got \"%2\".")
                    .arg(param, roleValue.toString()),
                param + QStringLiteral(".role"), QStringLiteral("invalid_value"));
        powerinfer::ChatMessage message;
        message.role = role.toStdString();
        const QJsonValue calls = m.value(QLatin1String("tool_calls"));
        const bool hasCalls =
            role == QLatin1String("assistant") && calls.isArray() && !calls.toArray().isEmpty();
        const QJsonValue content = m.value(QLatin1String("content"));
        // An assistant turn that only calls tools has no content.
        if (!(hasCalls && (content.isNull() || content.isUndefined())))
            if (auto e = readContent(content, param + QStringLiteral(".content"), role,
                                     &message.content))
                return e;
        QJsonObject n;
        n.insert(QLatin1String("role"), role);
        n.insert(QLatin1String("content"),
                 hasCalls && message.content.empty()
                     ? QJsonValue()
                     : QJsonValue(QString::fromStdString(message.content)));
        if (hasCalls) {
            QJsonArray normalizedCalls;
            const QJsonArray list = calls.toArray();
            for (qsizetype c = 0; c < list.size(); ++c) {
                const QString cp = QStringLiteral("%1.tool_calls[%2]").arg(param).arg(c);
                const QJsonObject call = list[c].toObject();
                const QJsonObject fn = call.value(QLatin1String("function")).toObject();
                const QJsonValue name = fn.value(QLatin1String("name"));
                if (!name.isString())
                    return wrongType(cp + QStringLiteral(".function.name"),
                                     QStringLiteral("a string"), name);
                QJsonValue args = fn.value(QLatin1String("arguments"));
                if (args.isObject())
                    args = QString::fromUtf8(
                        QJsonDocument(args.toObject()).toJson(QJsonDocument::Compact));
                if (!args.isString())
                    return wrongType(cp + QStringLiteral(".function.arguments"),
                                     QStringLiteral("a string of JSON"), args);
                QJsonObject f{{QLatin1String("name"), name}, {QLatin1String("arguments"), args}};
                QJsonObject nc{{QLatin1String("type"), QStringLiteral("function")},
                               {QLatin1String("function"), f}};
                if (call.value(QLatin1String("id")).isString())
                    nc.insert(QLatin1String("id"), call.value(QLatin1String("id")));
                normalizedCalls.append(nc);
            }
            n.insert(QLatin1String("tool_calls"), normalizedCalls);
            *toolTurns = true;
        }
        if (role == QLatin1String("tool")) {
            *toolTurns = true;
            for (const char* k : {"tool_call_id", "name"})
                if (m.value(QLatin1String(k)).isString())
                    n.insert(QLatin1String(k), m.value(QLatin1String(k)));
        }
        normalized->append(n);
        out->push_back(std::move(message));
    }
    return std::nullopt;
}

// tools: [{"type": "function", "function": {"name", "description"?,
// "parameters"?}}]; fills the names.
std::optional<ApiError> readTools(const QJsonObject& body, QJsonArray* tools, QStringList* names) {
    const QString key = QStringLiteral("tools");
    if (!present(body, key)) return std::nullopt;
    const QJsonValue v = body.value(key);
    if (!v.isArray()) return wrongType(key, QStringLiteral("an array"), v);
    const QJsonArray list = v.toArray();
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QString param = QStringLiteral("tools[%1]").arg(i);
        if (!list[i].isObject()) return wrongType(param, QStringLiteral("an object"), list[i]);
        const QJsonObject t = list[i].toObject();
        if (t.value(QLatin1String("type")).toString() != QLatin1String("function"))
            return invalid(QStringLiteral("'%1.type' must be \"function\".").arg(param),
                           param + QStringLiteral(".type"), QStringLiteral("invalid_value"));
        const QJsonValue fn = t.value(QLatin1String("function"));
        if (!fn.isObject())
            return wrongType(param + QStringLiteral(".function"), QStringLiteral("an object"), fn);
        const QJsonValue name = fn.toObject().value(QLatin1String("name"));
        if (!name.isString() || name.toString().isEmpty())
            return wrongType(param + QStringLiteral(".function.name"),
                             QStringLiteral("a non-empty string"), name);
        const QJsonValue params = fn.toObject().value(QLatin1String("parameters"));
        if (!params.isUndefined() && !params.isNull() && !params.isObject())
            return wrongType(param + QStringLiteral(".function.parameters"),
                             QStringLiteral("an object (a JSON schema)"), params);
        names->append(name.toString());
        tools->append(t);
    }
    return std::nullopt;
}

// The text of a member of a (valid) JSON document, by keys and array
// indexes: QJsonObject sorts keys, but a schema's property order is what the
// constrained sampler writes, so schemas are taken from the body verbatim.
class RawJson {
public:
    explicit RawJson(const QByteArray& text) : t_(text) {}

    std::optional<QByteArray> member(const QList<QVariant>& path) const {
        qsizetype at = skipSpace(0);
        for (const QVariant& step : path) {
            if (at >= t_.size()) return std::nullopt;
            const bool byIndex = step.typeId() == QMetaType::Int;
            if ((byIndex && t_[at] != '[') || (!byIndex && t_[at] != '{')) return std::nullopt;
            at = skipSpace(at + 1);
            bool found = false;
            for (int index = 0; at < t_.size() && t_[at] != ']' && t_[at] != '}'; ++index) {
                bool match = byIndex && index == step.toInt();
                if (!byIndex) {
                    const qsizetype keyEnd = skipValue(at);
                    const QJsonDocument key =
                        QJsonDocument::fromJson("[" + t_.mid(at, keyEnd - at) + "]");
                    match = key.array().at(0).toString() == step.toString();
                    at = skipSpace(skipSpace(keyEnd) + 1);  // past ':'
                }
                if (match) {
                    found = true;
                    break;
                }
                at = skipSpace(skipValue(at));
                if (at < t_.size() && t_[at] == ',') at = skipSpace(at + 1);
            }
            if (!found) return std::nullopt;
        }
        return t_.mid(at, skipValue(at) - at);
    }

private:
    qsizetype skipSpace(qsizetype i) const {
        while (i < t_.size() && (t_[i] == ' ' || t_[i] == '\n' || t_[i] == '\r' || t_[i] == '\t'))
            ++i;
        return i;
    }
    // The end of the value starting at i.
    qsizetype skipValue(qsizetype i) const {
        int depth = 0;
        bool inString = false;
        for (; i < t_.size(); ++i) {
            const char c = t_[i];
            if (inString) {
                if (c == '\\')
                    ++i;
                else if (c == '"') {
                    inString = false;
                    if (depth == 0) return i + 1;
                }
                continue;
            }
            if (c == '"')
                inString = true;
            else if (c == '{' || c == '[')
                ++depth;
            else if (c == '}' || c == ']') {
                if (depth == 0) return i;
                if (--depth == 0) return i + 1;
            } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t'))
                return i;
        }
        return i;
    }
    const QByteArray& t_;
};

QString compactJson(const QJsonValue& v) {
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    return QStringLiteral("{}");
}

std::string jsonString(const QString& s) {
    const QByteArray a = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
    return a.mid(1, a.size() - 2).toStdString();
}

// The constraint that makes the reply one call of the chosen tools:
// <tool_call>\n{"name": N, "arguments": {...}}\n</tool_call>.
powerinfer::OutputConstraint toolCallConstraint(const QByteArray& body, const QJsonArray& tools,
                                                const QList<int>& chosen) {
    const RawJson raw(body);
    std::vector<std::string> branches;
    for (const int i : chosen) {
        const QJsonObject fn = tools.at(i).toObject().value(QLatin1String("function")).toObject();
        std::string params = R"({"type":"object"})";
        if (fn.value(QLatin1String("parameters")).isObject())
            if (auto p = raw.member({QStringLiteral("tools"), i, QStringLiteral("function"),
                                     QStringLiteral("parameters")}))
                params = p->toStdString();
        branches.push_back(R"({"type":"object","properties":{"name":{"const":)" +
                           jsonString(fn.value(QLatin1String("name")).toString()) +
                           R"(},"arguments":)" + params + R"(},"required":["name","arguments"]})");
    }
    powerinfer::OutputConstraint c;
    if (branches.size() == 1) {
        c.json_schema = branches[0];
    } else {
        c.json_schema = R"({"anyOf":[)";
        for (size_t i = 0; i < branches.size(); ++i) c.json_schema += (i ? "," : "") + branches[i];
        c.json_schema += "]}";
    }
    c.prefix = std::string(kToolCallOpen) + "\n";
    c.suffix = "\n</tool_call>";
    return c;
}

std::optional<ApiError> readPrompt(const QJsonObject& body, std::string* out) {
    const QString key = QStringLiteral("prompt");
    if (!present(body, key))
        return invalid(QStringLiteral("'prompt' is required: a string."), key,
                       QStringLiteral("missing_required_parameter"));
    const QJsonValue v = body.value(key);
    if (v.isString()) {
        *out = v.toString().toStdString();
        return std::nullopt;
    }
    // Clients may send a one-element batch; batches of several prompts or of
    // token ids are not supported by a single-sequence engine.
    if (v.isArray() && v.toArray().size() == 1 && v.toArray().at(0).isString()) {
        *out = v.toArray().at(0).toString().toStdString();
        return std::nullopt;
    }
    if (v.isArray())
        return invalid(QStringLiteral("'prompt' must be a string or an array of exactly one string "
                                      "(batches and token arrays are not supported)."),
                       key, QStringLiteral("invalid_value"));
    return wrongType(key, QStringLiteral("a string"), v);
}

std::optional<ApiError> readStops(const QJsonObject& body, const ParseLimits& limits,
                                  std::vector<std::string>* out) {
    const QString key = QStringLiteral("stop");
    if (!present(body, key)) return std::nullopt;
    const QJsonValue v = body.value(key);
    QJsonArray list;
    if (v.isString())
        list.append(v);
    else if (v.isArray())
        list = v.toArray();
    else
        return wrongType(key, QStringLiteral("a string or an array of strings"), v);
    if (list.size() > limits.maxStops)
        return invalid(QStringLiteral("'stop' may hold at most %1 strings.").arg(limits.maxStops),
                       key, QStringLiteral("invalid_value"));
    for (qsizetype i = 0; i < list.size(); ++i) {
        if (!list[i].isString())
            return wrongType(QStringLiteral("stop[%1]").arg(i), QStringLiteral("a string"),
                             list[i]);
        const std::string s = list[i].toString().toStdString();
        if (!s.empty()) out->push_back(s);  // an empty stop string would end every reply at once
    }
    return std::nullopt;
}

QJsonValue nullIfEmpty(const QString& s) { return s.isEmpty() ? QJsonValue() : QJsonValue(s); }

QString objectName(Endpoint endpoint, bool chunk) {
    if (endpoint == Endpoint::ChatCompletions)
        return chunk ? QStringLiteral("chat.completion.chunk") : QStringLiteral("chat.completion");
    return QStringLiteral("text_completion");
}

QJsonObject envelope(Endpoint endpoint, const ResponseIdentity& who, bool chunk) {
    QJsonObject o;
    o.insert(QLatin1String("id"), who.id);
    o.insert(QLatin1String("object"), objectName(endpoint, chunk));
    o.insert(QLatin1String("created"), who.created);
    o.insert(QLatin1String("model"), who.model);
    return o;
}

}  // namespace

QJsonObject ApiError::toJson() const {
    QJsonObject inner;
    inner.insert(QLatin1String("message"), message);
    inner.insert(QLatin1String("type"), type);
    inner.insert(QLatin1String("param"), nullIfEmpty(param));
    inner.insert(QLatin1String("code"), nullIfEmpty(code));
    QJsonObject outer;
    outer.insert(QLatin1String("error"), inner);
    return outer;
}

ParseOutcome parseCompletionRequest(Endpoint endpoint, const QByteArray& body,
                                    const ParseLimits& limits) {
    ParseOutcome out;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        out.error = invalid(QStringLiteral("The request body is not valid JSON (%1 at offset %2).")
                                .arg(parseError.errorString())
                                .arg(parseError.offset),
                            {}, QStringLiteral("invalid_json"));
        return out;
    }
    if (!doc.isObject()) {
        out.error = invalid(QStringLiteral("The request body must be a JSON object."), {},
                            QStringLiteral("invalid_json"));
        return out;
    }
    const QJsonObject o = doc.object();
    CompletionCall call;
    call.endpoint = endpoint;
    auto& req = call.request;

    auto fail = [&out](ApiError e) {
        out.error = std::move(e);
        return out;
    };

    if (present(o, QStringLiteral("model"))) {
        const QJsonValue m = o.value(QLatin1String("model"));
        if (!m.isString())
            return fail(wrongType(QStringLiteral("model"), QStringLiteral("a string"), m));
        call.model = m.toString();
    }
    // Legacy function calling: refused, never silently ignored.
    for (const QString& key : {QStringLiteral("functions"), QStringLiteral("function_call")}) {
        if (present(o, key))
            return fail(invalid(QStringLiteral("'%1' (legacy function calling) is not supported; "
                                               "send 'tools' and 'tool_choice' instead.")
                                    .arg(key),
                                key, QStringLiteral("unsupported_parameter")));
    }
    QJsonArray normalized;
    bool toolTurns = false;
    if (endpoint == Endpoint::ChatCompletions) {
        if (auto e = readMessages(o, limits, &req.messages, &normalized, &toolTurns))
            return fail(*e);
    } else {
        if (auto e = readPrompt(o, &req.prompt)) return fail(*e);
    }

    QJsonArray tools;
    if (auto e = readTools(o, &tools, &call.toolNames)) return fail(*e);
    if (!tools.isEmpty() && endpoint != Endpoint::ChatCompletions)
        return fail(invalid(QStringLiteral("'tools' is supported on /v1/chat/completions only."),
                            QStringLiteral("tools"), QStringLiteral("unsupported_parameter")));
    // tool_choice: "none", "auto" (the default with tools), "required", or
    // {"type": "function", "function": {"name": ...}}.
    QString choice = tools.isEmpty() ? QStringLiteral("none") : QStringLiteral("auto");
    QList<int> chosen;
    if (present(o, QStringLiteral("tool_choice"))) {
        const QJsonValue tc = o.value(QLatin1String("tool_choice"));
        if (tc.isString()) {
            choice = tc.toString();
            if (choice != QLatin1String("none") && choice != QLatin1String("auto") &&
                choice != QLatin1String("required"))
                return fail(invalid(QStringLiteral("'tool_choice' must be \"none\", \"auto\", "
                                                   "\"required\" or {\"type\": \"function\", "
                                                   "\"function\": {\"name\": ...}}."),
                                    QStringLiteral("tool_choice"),
                                    QStringLiteral("invalid_value")));
        } else if (tc.isObject()) {
            const QString name = tc.toObject()
                                     .value(QLatin1String("function"))
                                     .toObject()
                                     .value(QLatin1String("name"))
                                     .toString();
            const int index = int(call.toolNames.indexOf(name));
            if (index < 0)
                return fail(invalid(QStringLiteral("'tool_choice' names the function \"%1\", "
                                                   "which is not among 'tools'.")
                                        .arg(name),
                                    QStringLiteral("tool_choice"),
                                    QStringLiteral("invalid_value")));
            choice = QStringLiteral("required");
            chosen = {index};
        } else {
            return fail(wrongType(QStringLiteral("tool_choice"),
                                  QStringLiteral("a string or an object"), tc));
        }
        if (choice != QLatin1String("none") && tools.isEmpty())
            return fail(invalid(QStringLiteral("'tool_choice' needs 'tools'."),
                                QStringLiteral("tool_choice"), QStringLiteral("invalid_value")));
    }
    const bool offerTools = choice != QLatin1String("none") && !tools.isEmpty();
    if (offerTools || toolTurns) {
        // The tools verbatim: templates print them with tojson, in the
        // client's key order (QJsonObject would sort the keys).
        req.chat_json = "{\"messages\":" +
                        QJsonDocument(normalized).toJson(QJsonDocument::Compact).toStdString();
        if (offerTools) {
            const auto raw = RawJson(body).member({QStringLiteral("tools")});
            req.chat_json +=
                ",\"tools\":" +
                (raw ? raw->toStdString()
                     : QJsonDocument(tools).toJson(QJsonDocument::Compact).toStdString());
        }
        req.chat_json += "}";
    }
    call.parseToolCalls = offerTools;
    if (!offerTools) call.toolNames.clear();
    if (choice == QLatin1String("required")) {
        if (chosen.isEmpty())
            for (int i = 0; i < tools.size(); ++i) chosen.append(i);
        req.constraint = toolCallConstraint(body, tools, chosen);
    }

    if (present(o, QStringLiteral("response_format"))) {
        const QJsonValue f = o.value(QLatin1String("response_format"));
        if (!f.isObject())
            return fail(
                wrongType(QStringLiteral("response_format"), QStringLiteral("an object"), f));
        const QString type = f.toObject().value(QLatin1String("type")).toString();
        if (type == QLatin1String("json_object") || type == QLatin1String("json_schema")) {
            if (req.constraint)
                return fail(invalid(QStringLiteral("'response_format' cannot be combined with a "
                                                   "required tool call ('tool_choice')."),
                                    QStringLiteral("response_format"),
                                    QStringLiteral("invalid_value")));
            powerinfer::OutputConstraint c;
            c.json_schema = R"({"type":"object"})";
            if (type == QLatin1String("json_schema")) {
                const QJsonValue schema = f.toObject()
                                              .value(QLatin1String("json_schema"))
                                              .toObject()
                                              .value(QLatin1String("schema"));
                if (!schema.isObject())
                    return fail(
                        invalid(QStringLiteral("'response_format.json_schema.schema' must be "
                                               "a JSON schema object."),
                                QStringLiteral("response_format.json_schema.schema"),
                                QStringLiteral("invalid_value")));
                const auto raw =
                    RawJson(body).member({QStringLiteral("response_format"),
                                          QStringLiteral("json_schema"), QStringLiteral("schema")});
                c.json_schema = raw ? raw->toStdString() : compactJson(schema).toStdString();
            }
            req.constraint = c;
        } else if (type != QLatin1String("text")) {
            return fail(invalid(QStringLiteral("'response_format.type' must be \"text\", "
                                               "\"json_object\" or \"json_schema\"."),
                                QStringLiteral("response_format"),
                                QStringLiteral("invalid_value")));
        }
    }

    req.max_tokens = limits.defaultMaxTokens;
    for (const QString& key :
         {QStringLiteral("max_tokens"), QStringLiteral("max_completion_tokens")}) {
        if (!present(o, key)) continue;
        int64_t n = 0;
        if (auto e = readInteger(o, key, 1, 1e9, &n)) return fail(*e);
        req.max_tokens = int(std::min<int64_t>(n, limits.maxTokensCap));
    }
    if (present(o, QStringLiteral("n"))) {
        int64_t n = 0;
        if (auto e = readInteger(o, QStringLiteral("n"), 1, 1, &n))
            return fail(invalid(QStringLiteral("Only n = 1 is supported."), QStringLiteral("n"),
                                QStringLiteral("invalid_value")));
    }
    double d = 0;
    if (present(o, QStringLiteral("temperature"))) {
        if (auto e = readNumber(o, QStringLiteral("temperature"), 0, 2, &d)) return fail(*e);
        req.sampling.temperature = float(d);
    }
    if (present(o, QStringLiteral("top_p"))) {
        if (auto e = readNumber(o, QStringLiteral("top_p"), 0, 1, &d)) return fail(*e);
        req.sampling.top_p = float(d);
    }
    if (present(o, QStringLiteral("min_p"))) {  // llama.cpp-style extension
        if (auto e = readNumber(o, QStringLiteral("min_p"), 0, 1, &d)) return fail(*e);
        req.sampling.min_p = float(d);
    }
    if (present(o, QStringLiteral("top_k"))) {  // llama.cpp-style extension
        int64_t k = 0;
        if (auto e = readInteger(o, QStringLiteral("top_k"), 0, 1e6, &k)) return fail(*e);
        req.sampling.top_k = int(k);
    }
    // Accepted for compatibility, validated, but not applied by this engine.
    for (const QString& key :
         {QStringLiteral("presence_penalty"), QStringLiteral("frequency_penalty")}) {
        if (present(o, key))
            if (auto e = readNumber(o, key, -2, 2, &d)) return fail(*e);
    }
    if (present(o, QStringLiteral("seed"))) {
        int64_t seed = 0;
        if (auto e = readInteger(o, QStringLiteral("seed"), -9.2e18, 9.2e18, &seed))
            return fail(*e);
        // The engine reads 0 as "random"; a client asking for seed 0 wants
        // repeatable output, so 0 maps to a fixed non-zero seed.
        req.sampling.seed = seed == 0 ? 0x9E3779B97F4A7C15ull : uint64_t(seed);
    }
    if (auto e = readStops(o, limits, &req.stop)) return fail(*e);
    if (present(o, QStringLiteral("stream"))) {
        const QJsonValue s = o.value(QLatin1String("stream"));
        if (!s.isBool())
            return fail(wrongType(QStringLiteral("stream"), QStringLiteral("a boolean"), s));
        call.stream = s.toBool();
    }
    if (present(o, QStringLiteral("stream_options"))) {
        const QJsonValue so = o.value(QLatin1String("stream_options"));
        if (!so.isObject())
            return fail(
                wrongType(QStringLiteral("stream_options"), QStringLiteral("an object"), so));
        const QJsonValue usage = so.toObject().value(QLatin1String("include_usage"));
        if (!usage.isUndefined() && !usage.isNull() && !usage.isBool())
            return fail(wrongType(QStringLiteral("stream_options.include_usage"),
                                  QStringLiteral("a boolean"), usage));
        call.includeUsage = usage.toBool(false);
    }
    out.call = std::move(call);
    return out;
}

QString finishReasonName(powerinfer::FinishReason reason) {
    switch (reason) {
        case powerinfer::FinishReason::Stop:
        case powerinfer::FinishReason::Cancelled:
            return QStringLiteral("stop");
        case powerinfer::FinishReason::Length:
        case powerinfer::FinishReason::ContextFull:
            return QStringLiteral("length");
        case powerinfer::FinishReason::Error:
            break;
    }
    return QStringLiteral("error");
}

QJsonObject usageJson(const powerinfer::GenerateResult& result) {
    QJsonObject u;
    u.insert(QLatin1String("prompt_tokens"), result.prompt_tokens);
    u.insert(QLatin1String("completion_tokens"), result.generated_tokens);
    u.insert(QLatin1String("total_tokens"), result.prompt_tokens + result.generated_tokens);
    return u;
}

ToolCallReply parseToolCalls(const std::string& text, const QStringList& toolNames,
                             const QString& idPrefix) {
    ToolCallReply reply;
    reply.content = QString::fromStdString(text);
    const std::string open = kToolCallOpen, close = "</tool_call>";
    size_t at = text.find(open);
    if (at == std::string::npos) return reply;
    const QString before = QString::fromStdString(text.substr(0, at)).trimmed();
    QJsonArray calls;
    while (at != std::string::npos) {
        const size_t from = at + open.size();
        size_t end = text.find(close, from);
        // A reply cut by max_tokens may lack the closing tag.
        const std::string inner =
            text.substr(from, end == std::string::npos ? std::string::npos : end - from);
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(inner), &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) return reply;
        const QJsonObject o = doc.object();
        const QString name = o.value(QLatin1String("name")).toString();
        QJsonValue args = o.value(QLatin1String("arguments"));
        if (args.isUndefined()) args = o.value(QLatin1String("parameters"));
        if (args.isString()) {  // some models write the arguments as JSON text
            const QJsonDocument a = QJsonDocument::fromJson(args.toString().toUtf8());
            if (a.isObject()) args = a.object();
        }
        if (!toolNames.contains(name) || !args.isObject()) return reply;
        const QJsonObject fn{
            {QLatin1String("name"), name},
            {QLatin1String("arguments"),
             QString::fromUtf8(QJsonDocument(args.toObject()).toJson(QJsonDocument::Compact))}};
        calls.append(QJsonObject{{QLatin1String("id"), idPrefix + QString::number(calls.size())},
                                 {QLatin1String("type"), QStringLiteral("function")},
                                 {QLatin1String("function"), fn}});
        if (end == std::string::npos) break;
        at = text.find(open, end + close.size());
    }
    reply.content = before;
    reply.calls = calls;
    return reply;
}

QJsonObject completionResponse(Endpoint endpoint, const ResponseIdentity& who,
                               const powerinfer::GenerateResult& result,
                               const ToolCallReply* tools) {
    QJsonObject o = envelope(endpoint, who, false);
    QJsonObject choice;
    choice.insert(QLatin1String("index"), 0);
    const QString text = QString::fromStdString(result.text);
    if (endpoint == Endpoint::ChatCompletions) {
        QJsonObject message;
        message.insert(QLatin1String("role"), QStringLiteral("assistant"));
        if (tools && !tools->calls.isEmpty()) {
            message.insert(QLatin1String("content"),
                           tools->content.isEmpty() ? QJsonValue() : QJsonValue(tools->content));
            message.insert(QLatin1String("tool_calls"), tools->calls);
        } else {
            message.insert(QLatin1String("content"), text);
        }
        choice.insert(QLatin1String("message"), message);
    } else {
        choice.insert(QLatin1String("text"), text);
        choice.insert(QLatin1String("logprobs"), QJsonValue());
    }
    choice.insert(QLatin1String("finish_reason"), tools && !tools->calls.isEmpty()
                                                      ? QStringLiteral("tool_calls")
                                                      : finishReasonName(result.finish));
    o.insert(QLatin1String("choices"), QJsonArray{choice});
    o.insert(QLatin1String("usage"), usageJson(result));
    return o;
}

QJsonObject streamChunk(Endpoint endpoint, const ResponseIdentity& who, const QJsonObject& delta,
                        const QString& finishReason) {
    QJsonObject o = envelope(endpoint, who, true);
    QJsonObject choice;
    choice.insert(QLatin1String("index"), 0);
    if (endpoint == Endpoint::ChatCompletions) {
        choice.insert(QLatin1String("delta"), delta);
    } else {
        choice.insert(QLatin1String("text"), delta.value(QLatin1String("content")).toString());
        choice.insert(QLatin1String("logprobs"), QJsonValue());
    }
    choice.insert(QLatin1String("finish_reason"), nullIfEmpty(finishReason));
    o.insert(QLatin1String("choices"), QJsonArray{choice});
    return o;
}

QJsonObject usageChunk(Endpoint endpoint, const ResponseIdentity& who,
                       const powerinfer::GenerateResult& result) {
    QJsonObject o = envelope(endpoint, who, true);
    o.insert(QLatin1String("choices"), QJsonArray());
    o.insert(QLatin1String("usage"), usageJson(result));
    return o;
}

StopStringHoldback::StopStringHoldback(std::vector<std::string> stops) : stops_(std::move(stops)) {}

std::string StopStringHoldback::push(const std::string& piece) {
    if (stopped_) return {};
    pending_ += piece;
    // A complete stop string: release what precedes it, nothing after.
    size_t cut = std::string::npos;
    for (const auto& stop : stops_) cut = std::min(cut, pending_.find(stop));
    if (cut != std::string::npos) {
        stopped_ = true;
        std::string out = pending_.substr(0, cut);
        released_ += out;
        pending_.clear();
        return out;
    }
    // Keep the longest tail that is a proper prefix of some stop string. It
    // starts where a stop string starts, so the cut is on a UTF-8 boundary.
    size_t keep = 0;
    for (const auto& stop : stops_) {
        const size_t maxLen = std::min(stop.size() - 1, pending_.size());
        for (size_t len = maxLen; len > keep; --len) {
            if (pending_.compare(pending_.size() - len, len, stop, 0, len) == 0) {
                keep = len;
                break;
            }
        }
    }
    std::string out = pending_.substr(0, pending_.size() - keep);
    pending_.erase(0, pending_.size() - keep);
    released_ += out;
    return out;
}

std::string StopStringHoldback::finish(const std::string& finalText) {
    // The engine's final text is authoritative; text already sent cannot be
    // taken back, so only a continuation of it is released.
    if (finalText.size() <= released_.size() ||
        finalText.compare(0, released_.size(), released_) != 0)
        return {};
    std::string out = finalText.substr(released_.size());
    released_ = finalText;
    pending_.clear();
    stopped_ = true;
    return out;
}

}  // namespace powerinfer::server
