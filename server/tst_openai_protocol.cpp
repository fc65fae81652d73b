#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include "openai_protocol.h"

using namespace powerinfer::server;

namespace {

ParseOutcome chat(const QByteArray& body, ParseLimits limits = {}) {
    return parseCompletionRequest(Endpoint::ChatCompletions, body, limits);
}

// A request body the openai Python client sent (tests/fixtures/
// openai_requests.json, tests/reference/make_openai_fixtures.py).
QByteArray clientRequest(const char* name) {
    QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/openai_requests.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QJsonObject body = QJsonDocument::fromJson(f.readAll())
                                 .object()
                                 .value(QLatin1String("requests"))
                                 .toObject()
                                 .value(QLatin1String(name))
                                 .toObject();
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

}  // namespace

class TestOpenAiProtocol : public QObject {
    Q_OBJECT
private slots:
    void mapsAChatRequest() {
        const auto out = chat(R"({"model":"m","messages":[{"role":"system","content":"Be brief."},
            {"role":"user","content":"Hi"}],"max_tokens":7,"temperature":0.25,"top_p":0.5,
            "stop":["END","\n\n"],"seed":42,"stream":true,"stream_options":{"include_usage":true}})");
        QVERIFY2(out.call, qPrintable(out.error.message));
        const auto& c = *out.call;
        QCOMPARE(c.model, QStringLiteral("m"));
        QCOMPARE(c.request.messages.size(), size_t(2));
        QCOMPARE(c.request.messages[0].role, std::string("system"));
        QCOMPARE(c.request.messages[1].content, std::string("Hi"));
        QCOMPARE(c.request.max_tokens, 7);
        QCOMPARE(c.request.sampling.temperature, 0.25f);
        QCOMPARE(c.request.sampling.top_p, 0.5f);
        QCOMPARE(c.request.sampling.seed, uint64_t(42));
        QCOMPARE(c.request.stop, (std::vector<std::string>{"END", "\n\n"}));
        QVERIFY(c.stream);
        QVERIFY(c.includeUsage);
    }

    void acceptsTextPartsNullsAndAliases() {
        const auto out = chat(R"({"messages":[{"role":"developer","content":"Rules"},
            {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
            {"role":"assistant","content":null}],"max_tokens":null,"stop":"x","seed":0})");
        QVERIFY2(out.call, qPrintable(out.error.message));
        const auto& r = out.call->request;
        QCOMPARE(r.messages[0].role, std::string("system"));
        QCOMPARE(r.messages[1].content, std::string("ab"));
        QCOMPARE(r.messages[2].content, std::string());
        QCOMPARE(r.max_tokens, ParseLimits().defaultMaxTokens);
        QCOMPARE(r.stop, std::vector<std::string>{"x"});
        QVERIFY2(r.sampling.seed != 0, "seed 0 must stay deterministic, not mean 'random'");
        QVERIFY(out.call->model.isEmpty());
    }

    void capsMaxTokensAtTheContext() {
        ParseLimits limits;
        limits.maxTokensCap = 100;
        const auto out =
            chat(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":5000})", limits);
        QVERIFY(out.call);
        QCOMPARE(out.call->request.max_tokens, 100);
    }

    void mapsACompletionRequest() {
        auto out = parseCompletionRequest(Endpoint::Completions,
                                          R"({"prompt":"Once","max_tokens":3})", {});
        QVERIFY(out.call);
        QCOMPARE(out.call->request.prompt, std::string("Once"));
        QVERIFY(out.call->request.messages.empty());
        out = parseCompletionRequest(Endpoint::Completions, R"({"prompt":["One"]})", {});
        QVERIFY(out.call);
        QCOMPARE(out.call->request.prompt, std::string("One"));
    }

    void rejectsInvalidRequests_data() {
        QTest::addColumn<int>("endpoint");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("code");
        const int c = int(Endpoint::ChatCompletions), p = int(Endpoint::Completions);
        const QByteArray msg = R"("messages":[{"role":"user","content":"x"}])";
        QTest::newRow("not json") << c << QByteArray("{\"messages\": [") << ""
                                  << "invalid_json";
        QTest::newRow("not an object") << c << QByteArray("[1,2]") << ""
                                       << "invalid_json";
        QTest::newRow("missing messages") << c << QByteArray("{}") << "messages"
                                          << "missing_required_parameter";
        QTest::newRow("messages string") << c << QByteArray(R"({"messages":"hi"})") << "messages"
                                         << "invalid_type";
        QTest::newRow("no messages") << c << QByteArray(R"({"messages":[]})") << "messages"
                                     << "invalid_value";
        QTest::newRow("message not object")
            << c << QByteArray(R"({"messages":[3]})") << "messages[0]"
            << "invalid_type";
        QTest::newRow("bad role") << c
                                  << QByteArray(R"({"messages":[{"role":"robot","content":"x"}]})")
                                  << "messages[0].role"
                                  << "invalid_value";
        QTest::newRow("role number")
            << c << QByteArray(R"({"messages":[{"role":1,"content":"x"}]})") << "messages[0].role"
            << "invalid_type";
        QTest::newRow("content number")
            << c << QByteArray(R"({"messages":[{"role":"user","content":5}]})")
            << "messages[0].content"
            << "invalid_type";
        QTest::newRow("image part")
            << c << QByteArray(R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})")
            << "messages[0].content[0].type"
            << "unsupported_content";
        QTest::newRow("negative max_tokens")
            << c << ("{" + msg + R"(,"max_tokens":-5})") << "max_tokens"
            << "invalid_value";
        QTest::newRow("zero max_tokens") << c << ("{" + msg + R"(,"max_tokens":0})") << "max_tokens"
                                         << "invalid_value";
        QTest::newRow("fractional max_tokens")
            << c << ("{" + msg + R"(,"max_tokens":1.5})") << "max_tokens"
            << "invalid_type";
        QTest::newRow("string max_tokens")
            << c << ("{" + msg + R"(,"max_tokens":"5"})") << "max_tokens"
            << "invalid_type";
        QTest::newRow("hot temperature")
            << c << ("{" + msg + R"(,"temperature":3})") << "temperature"
            << "invalid_value";
        QTest::newRow("string temperature")
            << c << ("{" + msg + R"(,"temperature":"warm"})") << "temperature"
            << "invalid_type";
        QTest::newRow("top_p below 0") << c << ("{" + msg + R"(,"top_p":-0.1})") << "top_p"
                                       << "invalid_value";
        QTest::newRow("stop number") << c << ("{" + msg + R"(,"stop":5})") << "stop"
                                     << "invalid_type";
        QTest::newRow("stop array of numbers")
            << c << ("{" + msg + R"(,"stop":["a",1]})") << "stop[1]"
            << "invalid_type";
        QTest::newRow("five stops")
            << c << ("{" + msg + R"(,"stop":["a","b","c","d","e"]})") << "stop"
            << "invalid_value";
        QTest::newRow("stream string") << c << ("{" + msg + R"(,"stream":"yes"})") << "stream"
                                       << "invalid_type";
        QTest::newRow("n 2") << c << ("{" + msg + R"(,"n":2})") << "n"
                             << "invalid_value";
        QTest::newRow("model number") << c << ("{" + msg + R"(,"model":7})") << "model"
                                      << "invalid_type";
        QTest::newRow("seed string") << c << ("{" + msg + R"(,"seed":"abc"})") << "seed"
                                     << "invalid_type";
        QTest::newRow("missing prompt") << p << QByteArray("{}") << "prompt"
                                        << "missing_required_parameter";
        QTest::newRow("prompt batch") << p << QByteArray(R"({"prompt":["a","b"]})") << "prompt"
                                      << "invalid_value";
        QTest::newRow("prompt tokens") << p << QByteArray(R"({"prompt":[1,2,3]})") << "prompt"
                                       << "invalid_value";
        QTest::newRow("prompt object") << p << QByteArray(R"({"prompt":{}})") << "prompt"
                                       << "invalid_type";
        // Issue 17 refused tools and response_format; issue 18 serves them
        // and refuses what it cannot serve.
        QTest::newRow("tool without function")
            << c << ("{" + msg + R"(,"tools":[{"type":"function"}]})") << "tools[0].function"
            << "invalid_type";
        QTest::newRow("tool_choice names no tool")
            << c
            << ("{" + msg +
                R"(,"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"g"}}})")
            << "tool_choice"
            << "invalid_value";
        QTest::newRow("tool_choice without tools")
            << c << ("{" + msg + R"(,"tool_choice":"required"})") << "tool_choice"
            << "invalid_value";
        QTest::newRow("tools on completions")
            << p
            << QByteArray(R"({"prompt":"x","tools":[{"type":"function","function":{"name":"f"}}]})")
            << "tools"
            << "unsupported_parameter";
        QTest::newRow("functions")
            << c << ("{" + msg + R"(,"functions":[{"name":"f"}]})") << "functions"
            << "unsupported_parameter";
        QTest::newRow("unknown response_format")
            << c << ("{" + msg + R"(,"response_format":{"type":"xml"}})") << "response_format"
            << "invalid_value";
        QTest::newRow("json schema without a schema")
            << p << QByteArray(R"({"prompt":"x","response_format":{"type":"json_schema"}})")
            << "response_format.json_schema.schema"
            << "invalid_value";
    }
    void plainTextFormatAndNoToolsAreAccepted() {
        const QByteArray msg = R"("messages":[{"role":"user","content":"x"}])";
        QVERIFY(parseCompletionRequest(Endpoint::ChatCompletions,
                                       "{" + msg + R"(,"response_format":{"type":"text"}})", {})
                    .call);
        QVERIFY(parseCompletionRequest(Endpoint::ChatCompletions, "{" + msg + R"(,"tools":[]})", {})
                    .call);
    }
    void rejectsInvalidRequests() {
        QFETCH(int, endpoint);
        QFETCH(QByteArray, body);
        QFETCH(QString, param);
        QFETCH(QString, code);
        const auto out = parseCompletionRequest(Endpoint(endpoint), body, {});
        QVERIFY(!out.call);
        QCOMPARE(out.error.status, 400);
        QCOMPARE(out.error.param, param);
        QCOMPARE(out.error.code, code);
        QVERIFY(!out.error.message.isEmpty());
    }

    void toolRequestsBecomeAConversationAndAConstraint() {
        ParseOutcome o = chat(clientRequest("tool_required"));
        QVERIFY2(o.call, qPrintable(o.error.message));
        QVERIFY(o.call->parseToolCalls);
        QCOMPARE(o.call->toolNames, (QStringList{"get_weather", "add"}));
        const auto& c = *o.call->request.constraint;
        QCOMPARE(c.prefix, std::string("<tool_call>\n"));
        QCOMPARE(c.suffix, std::string("\n</tool_call>"));
        // Both tools, their parameter schemas verbatim (declared order).
        const QString schema = QString::fromStdString(c.json_schema);
        QVERIFY2(
            schema.startsWith(
                R"({"anyOf":[{"type":"object","properties":{"name":{"const":"get_weather"},"arguments":{)") &&
                schema.contains(R"("city":{"description":"The city, e.g. Paris","type":"string"})"),
            qPrintable(schema));
        QVERIFY(schema.contains(R"({"const":"add"})"));
        QVERIFY(o.call->request.chat_json.find("\"tools\"") != std::string::npos);

        o = chat(clientRequest("tool_named_stream"));
        QVERIFY(o.call && o.call->stream);
        QVERIFY(!QString::fromStdString(o.call->request.constraint->json_schema).contains("anyOf"));
        QVERIFY(QString::fromStdString(o.call->request.constraint->json_schema)
                    .contains(R"({"const":"get_weather"})"));

        // The agent's second turn: the client's assistant message (content
        // null, tool_calls) and the tool's result.
        o = chat(clientRequest("tool_result"));
        QVERIFY2(o.call, qPrintable(o.error.message));
        QVERIFY(!o.call->request.constraint);  // tool_choice auto
        const QJsonObject conv =
            QJsonDocument::fromJson(QByteArray::fromStdString(o.call->request.chat_json)).object();
        const QJsonArray messages = conv.value(QLatin1String("messages")).toArray();
        QCOMPARE(messages.size(), 3);
        const QJsonObject assistant = messages.at(1).toObject();
        QVERIFY(assistant.value(QLatin1String("content")).isNull());
        const QJsonObject fn = assistant.value(QLatin1String("tool_calls"))
                                   .toArray()
                                   .at(0)
                                   .toObject()
                                   .value(QLatin1String("function"))
                                   .toObject();
        QCOMPARE(fn.value(QLatin1String("arguments")).toString(),
                 QStringLiteral(R"({"city": "Paris"})"));
        QCOMPARE(messages.at(2).toObject().value(QLatin1String("tool_call_id")).toString(),
                 QStringLiteral("call_0"));
        QCOMPARE(conv.value(QLatin1String("tools")).toArray().size(), 2);

        // tool_choice "none": no tools for the model, nothing parsed.
        o = chat(
            R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"})");
        QVERIFY(o.call && !o.call->parseToolCalls && o.call->request.chat_json.empty());
    }

    void responseFormatsBecomeConstraints() {
        ParseOutcome o = chat(clientRequest("json_object"));
        QVERIFY(o.call);
        QCOMPARE(o.call->request.constraint->json_schema, std::string(R"({"type":"object"})"));
        QVERIFY(o.call->request.constraint->prefix.empty());
        // The schema is passed on as written: its property order is what
        // the sampler writes.
        o = chat(
            R"({"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta"]},"strict":true}}})");
        QVERIFY(o.call);
        QCOMPARE(
            o.call->request.constraint->json_schema,
            std::string(
                R"({"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}},"required":["zeta"]})"));
        o = chat(clientRequest("json_schema_parse"));
        QVERIFY(o.call);
        QVERIFY(QString::fromStdString(o.call->request.constraint->json_schema)
                    .startsWith(R"({"$defs")"));
    }

    void toolCallsAreParsedFromTheReply() {
        const QStringList tools{"get_weather", "add"};
        ToolCallReply r = parseToolCalls(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
            "\"Paris\"}}\n</tool_call>",
            tools, "call_x_");
        QCOMPARE(r.calls.size(), 1);
        QVERIFY(r.content.isEmpty());
        QJsonObject call = r.calls.at(0).toObject();
        QCOMPARE(call.value(QLatin1String("id")).toString(), QStringLiteral("call_x_0"));
        QCOMPARE(call.value(QLatin1String("type")).toString(), QStringLiteral("function"));
        QCOMPARE(call.value(QLatin1String("function"))
                     .toObject()
                     .value(QLatin1String("arguments"))
                     .toString(),
                 QStringLiteral(R"({"city":"Paris"})"));
        // Text first, two calls (Qwen2.5 writes them one after another), the
        // last one cut off before its closing tag.
        r = parseToolCalls(
            "Let me check.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": "
            "2}}\n</tool_call>\n"
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}",
            tools, "c");
        QCOMPARE(r.calls.size(), 2);
        QCOMPARE(r.content, QStringLiteral("Let me check."));
        QCOMPARE(r.calls.at(1)
                     .toObject()
                     .value(QLatin1String("function"))
                     .toObject()
                     .value(QLatin1String("name"))
                     .toString(),
                 QStringLiteral("get_weather"));
        // Not a call: malformed JSON, or a function nobody offered.
        for (const char* text :
             {"<tool_call>\n{\"name\": \"add\", \"arguments\": {\n</tool_call>",
              "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>"}) {
            r = parseToolCalls(text, tools, "c");
            QVERIFY(r.calls.isEmpty());
            QCOMPARE(r.content, QString::fromUtf8(text));
        }
        // The reply object: content null, finish_reason tool_calls.
        r = parseToolCalls("<tool_call>{\"name\": \"add\", \"arguments\": {}}</tool_call>", tools,
                           "c");
        powerinfer::GenerateResult result;
        result.finish = powerinfer::FinishReason::Stop;
        const QJsonObject o =
            completionResponse(Endpoint::ChatCompletions, {"id", 1, "m"}, result, &r);
        const QJsonObject choice = o.value(QLatin1String("choices")).toArray().at(0).toObject();
        QCOMPARE(choice.value(QLatin1String("finish_reason")).toString(),
                 QStringLiteral("tool_calls"));
        QVERIFY(choice.value(QLatin1String("message"))
                    .toObject()
                    .value(QLatin1String("content"))
                    .isNull());
    }

    void errorObjectHasTheOpenAiShape() {
        ApiError e;
        e.message = QStringLiteral("nope");
        const QJsonObject inner = e.toJson().value(QLatin1String("error")).toObject();
        QCOMPARE(inner.value(QLatin1String("message")).toString(), QStringLiteral("nope"));
        QCOMPARE(inner.value(QLatin1String("type")).toString(),
                 QStringLiteral("invalid_request_error"));
        QVERIFY(inner.contains(QLatin1String("param")) &&
                inner.value(QLatin1String("param")).isNull());
        QVERIFY(inner.contains(QLatin1String("code")) &&
                inner.value(QLatin1String("code")).isNull());
    }

    void buildsResponsesAndChunks() {
        powerinfer::GenerateResult r;
        r.text = "Hello";
        r.finish = powerinfer::FinishReason::Stop;
        r.prompt_tokens = 4;
        r.generated_tokens = 2;
        const ResponseIdentity who{QStringLiteral("chatcmpl-1"), 1700000000, QStringLiteral("m")};
        const QJsonObject full = completionResponse(Endpoint::ChatCompletions, who, r);
        QCOMPARE(full.value(QLatin1String("object")).toString(), QStringLiteral("chat.completion"));
        const QJsonObject choice = full.value(QLatin1String("choices")).toArray().at(0).toObject();
        QCOMPARE(choice.value(QLatin1String("message"))
                     .toObject()
                     .value(QLatin1String("content"))
                     .toString(),
                 QStringLiteral("Hello"));
        QCOMPARE(choice.value(QLatin1String("finish_reason")).toString(), QStringLiteral("stop"));
        QCOMPARE(full.value(QLatin1String("usage"))
                     .toObject()
                     .value(QLatin1String("total_tokens"))
                     .toInt(),
                 6);

        const QJsonObject text = completionResponse(Endpoint::Completions, who, r);
        QCOMPARE(text.value(QLatin1String("object")).toString(), QStringLiteral("text_completion"));
        QCOMPARE(text.value(QLatin1String("choices"))
                     .toArray()
                     .at(0)
                     .toObject()
                     .value(QLatin1String("text"))
                     .toString(),
                 QStringLiteral("Hello"));

        const QJsonObject chunk =
            streamChunk(Endpoint::ChatCompletions, who,
                        QJsonObject{{QLatin1String("content"), QStringLiteral("He")}}, {});
        QCOMPARE(chunk.value(QLatin1String("object")).toString(),
                 QStringLiteral("chat.completion.chunk"));
        const QJsonObject c0 = chunk.value(QLatin1String("choices")).toArray().at(0).toObject();
        QVERIFY(c0.value(QLatin1String("finish_reason")).isNull());
        QCOMPARE(
            c0.value(QLatin1String("delta")).toObject().value(QLatin1String("content")).toString(),
            QStringLiteral("He"));

        QCOMPARE(finishReasonName(powerinfer::FinishReason::Length), QStringLiteral("length"));
        QCOMPARE(finishReasonName(powerinfer::FinishReason::ContextFull), QStringLiteral("length"));
    }

    void holdbackNeverShowsAStopString() {
        StopStringHoldback h({"World"});
        QCOMPARE(h.push("Hel"), std::string("Hel"));
        QCOMPARE(h.push("lo W"), std::string("lo "));  // "W" could start "World"
        QCOMPARE(h.push("orld and more"), std::string());
        QCOMPARE(h.released(), std::string("Hello "));
    }

    void holdbackReleasesADivergedPrefix() {
        StopStringHoldback h({"\n\nUser:"});
        QCOMPARE(h.push("a\n"), std::string("a"));
        QCOMPARE(h.push("\nUs"), std::string());
        QCOMPARE(h.push("ed"), std::string("\n\nUsed"));
        // The engine's final text adds what was held back at the end.
        StopStringHoldback tail({"END"});
        QCOMPARE(tail.push("x E"), std::string("x "));
        QCOMPARE(tail.finish("x E"), std::string("E"));
        QCOMPARE(tail.released(), std::string("x E"));
    }

    void holdbackKeepsMultibyteCharactersWhole() {
        // "é" (C3 A9) starts the stop string, so both of its bytes are held.
        StopStringHoldback h(
            {"\xC3\xA9"
             "clair"});
        QCOMPARE(h.push("caf\xC3\xA9"), std::string("caf"));
        QCOMPARE(h.push(" au lait"), std::string("\xC3\xA9 au lait"));
        QCOMPARE(h.push(" \xC3\xA9"
                        "clair"),
                 std::string(" "));
        QCOMPARE(h.released(), std::string("caf\xC3\xA9 au lait "));
    }
};

QTEST_GUILESS_MAIN(TestOpenAiProtocol)
#include "tst_openai_protocol.moc"
