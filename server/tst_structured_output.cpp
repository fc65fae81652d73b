// Structured output and tool calls over real HTTP with the real default model
// (SmolLM2, whose template knows no tools: the "prompted" tool format):
//  - 50 greedy and sampled replies under JSON schemas (nested objects,
//    arrays, enums, numbers, required keys) all parse and validate;
//  - the openai client's own request bodies (tests/fixtures/
//    openai_requests.json, recorded by tests/reference/
//    make_openai_fixtures.py) for tool calls, streamed tool calls, a tool
//    result turn, JSON mode and a pydantic schema;
//  - unsupported schemas and oversized prompts answered with OpenAI's codes.
// Skips without POWERINFER_MODEL.
#include <QFile>

#include "runtime/json.h"
#include "runtime/json_schema_validate.h"
#include "server_test_support.h"

using namespace powerinfer::server;
using namespace powerinfer::server::testing;
using powerinfer::runtime::Json;

namespace {

QJsonObject fixtureRequests() {
    QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/openai_requests.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll())
        .object()
        .value(QLatin1String("requests"))
        .toObject();
}

QByteArray compact(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

// "" if text parses and validates under schema (JSON text), else why.
std::string violation(const QString& text, const QByteArray& schema) {
    try {
        return powerinfer::runtime::json_schema_violation(Json::parse(text.toStdString()),
                                                          Json::parse(schema.toStdString()));
    } catch (const std::exception& e) {
        return std::string("does not parse: ") + e.what();
    }
}

void verifyUsage(const QJsonObject& o) {
    const QJsonObject u = o.value(QLatin1String("usage")).toObject();
    QVERIFY(u.value(QLatin1String("prompt_tokens")).toInt() > 0);
    QVERIFY(u.value(QLatin1String("completion_tokens")).toInt() > 0);
    QCOMPARE(u.value(QLatin1String("total_tokens")).toInt(),
             u.value(QLatin1String("prompt_tokens")).toInt() +
                 u.value(QLatin1String("completion_tokens")).toInt());
}

}  // namespace

class TestStructuredOutput : public QObject {
    Q_OBJECT
    std::unique_ptr<Harness> h_;
    QNetworkAccessManager nam_;
    QJsonObject fixtures_;

    Response post(const QByteArray& body) {
        return call(nam_, h_->url(QStringLiteral("/v1/chat/completions")), "POST", body, {},
                    120000);
    }

private slots:
    void initTestCase() {
        const QByteArray modelPath = qgetenv("POWERINFER_MODEL");
        if (modelPath.isEmpty())
            QSKIP("POWERINFER_MODEL is not set (scripts/test sets it to the default model)");
        fixtures_ = fixtureRequests();
        QVERIFY2(!fixtures_.isEmpty(), "tests/fixtures/openai_requests.json is missing");
        powerinfer::LoadOptions options;
        options.model_path = modelPath.toStdString();
        options.n_ctx = 1024;
        options.tuning.sparse = false;
        h_ = std::make_unique<Harness>(powerinfer::Engine::load(options), testConfig(),
                                       QStringLiteral("m"));
        QCOMPARE(h_->backend->modelInfo().tool_call_format, std::string("prompted"));
    }

    void fiftySchemaRepliesParseAndValidate() {
        struct Case {
            const char* prompt;
            const char* schema;
        } cases[] = {
            {"Describe a person.",
             R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer"},"email":{"type":"string","maxLength":16}},"required":["name","age"]})"},
            {"Give me a shopping list.",
             R"({"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"item":{"type":"string","maxLength":10},"qty":{"type":"integer"}},"required":["item","qty"]},"minItems":1,"maxItems":3}},"required":["items"]})"},
            {"Classify the sentiment of: I love this phone.",
             R"({"type":"object","properties":{"sentiment":{"enum":["positive","negative","neutral"]},"confidence":{"type":"number"}},"required":["sentiment","confidence"]})"},
            {"Where is Paris?",
             R"({"type":"object","properties":{"city":{"type":"string","maxLength":12},"location":{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}},"required":["lat","lon"]},"capital":{"type":"boolean"}},"required":["city","location","capital"]})"},
            {"List three prime numbers.",
             R"({"type":"array","items":{"type":"integer"},"minItems":3,"maxItems":3})"},
        };
        int replies = 0, sampled = 0, tokens = 0;
        QElapsedTimer clock;
        clock.start();
        for (const Case& c : cases) {
            for (int k = 0; k < 10; ++k) {
                const bool greedy = k == 0;
                // Written out, so that the schema keeps its property order.
                const QByteArray body =
                    QStringLiteral(
                        R"({"model":"m","messages":[{"role":"user","content":"%1"}],"max_tokens":%6,"temperature":%2,"seed":%3,"stream":%4,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":%5}}})")
                        .arg(QString::fromUtf8(c.prompt),
                             greedy ? QStringLiteral("0") : QStringLiteral("1"))
                        .arg(1000 + k)
                        .arg(k == 1 ? QStringLiteral("true") : QStringLiteral("false"),
                             QString::fromUtf8(c.schema))
                        // The sampled replies get a tight budget: the
                        // document must still close in time and validate.
                        .arg(greedy ? 64 : 48)
                        .toUtf8();
                const Response r = post(body);
                QCOMPARE(r.status, 200);
                QString text;
                if (k == 1) {
                    const SseStream s = parseSse(r.body);
                    QVERIFY(s.wellFormed && s.done);
                    text = s.text();
                } else {
                    text = r.chatContent();
                    verifyUsage(r.json());
                    tokens += r.json()
                                  .value(QLatin1String("usage"))
                                  .toObject()
                                  .value(QLatin1String("completion_tokens"))
                                  .toInt();
                    QVERIFY2(r.firstChoice().value(QLatin1String("finish_reason")).toString() ==
                                 QLatin1String("stop"),
                             qPrintable(QStringLiteral("%1 (sample %2): %3")
                                            .arg(QString::fromUtf8(c.schema))
                                            .arg(k)
                                            .arg(r.chatContent())));
                }
                const std::string why = violation(text, c.schema);
                QVERIFY2(why.empty(), qPrintable(QStringLiteral("%1 -> %2: %3")
                                                     .arg(QString::fromUtf8(c.schema), text,
                                                          QString::fromStdString(why))));
                ++replies;
                sampled += !greedy;
            }
        }
        qInfo("50 schema replies: %d tokens (without the streamed ones) in %.1f s", tokens,
              double(clock.elapsed()) / 1000.0);
        QCOMPARE(replies, 50);
        QCOMPARE(sampled, 45);
    }

    void theOpenAiClientsStructuredOutputRequests() {
        // JSON mode: any object, closed within the client's max_tokens (64)
        // although this model, left alone, rambles in a string far longer.
        Response r = post(compact(fixtures_.value(QLatin1String("json_object")).toObject()));
        QCOMPARE(r.firstChoice().value(QLatin1String("finish_reason")).toString(),
                 QStringLiteral("stop"));
        QCOMPARE(r.status, 200);
        QVERIFY2(violation(r.chatContent(), R"({"type":"object"})").empty(),
                 qPrintable(r.chatContent()));
        // chat.completions.parse with a pydantic model: $defs, $ref, anyOf
        // with null, additionalProperties false, enums.
        QJsonObject parse = fixtures_.value(QLatin1String("json_schema_parse")).toObject();
        parse.insert(QLatin1String("max_tokens"), 96);  // the document still closes in time
        r = post(compact(parse));
        QCOMPARE(r.status, 200);
        verifyUsage(r.json());
        const QByteArray schema = compact(parse.value(QLatin1String("response_format"))
                                              .toObject()
                                              .value(QLatin1String("json_schema"))
                                              .toObject()
                                              .value(QLatin1String("schema"))
                                              .toObject());
        QCOMPARE(r.firstChoice().value(QLatin1String("finish_reason")).toString(),
                 QStringLiteral("stop"));
        const std::string why = violation(r.chatContent(), schema);
        QVERIFY2(why.empty(), qPrintable(r.chatContent() + " " + QString::fromStdString(why)));
    }

    void unsupportedSchemasAreRefusedUpFront() {
        for (const bool stream : {false, true}) {
            const QByteArray body =
                QStringLiteral(
                    R"({"messages":[{"role":"user","content":"hi"}],"stream":%1,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"when":{"type":"string","format":"date-time"}}}}}})")
                    .arg(stream ? "true" : "false")
                    .toUtf8();
            const Response r = post(body);
            QCOMPARE(r.status, 400);
            QVERIFY(r.contentType.startsWith("application/json"));
            QCOMPARE(r.error().value(QLatin1String("code")).toString(),
                     QStringLiteral("unsupported_schema"));
            QVERIFY2(r.error().value(QLatin1String("message")).toString().contains("'format'"),
                     qPrintable(r.body));
        }
    }

    void requiredToolCallsFollowTheToolsSchemas() {
        const QJsonObject req = fixtures_.value(QLatin1String("tool_required")).toObject();
        const Response r = post(compact(req));
        QCOMPARE(r.status, 200);
        verifyUsage(r.json());
        const QJsonObject choice = r.firstChoice();
        QCOMPARE(choice.value(QLatin1String("finish_reason")).toString(),
                 QStringLiteral("tool_calls"));
        const QJsonObject message = choice.value(QLatin1String("message")).toObject();
        QVERIFY(message.value(QLatin1String("content")).isNull());
        const QJsonArray calls = message.value(QLatin1String("tool_calls")).toArray();
        QCOMPARE(calls.size(), 1);
        const QJsonObject call = calls.at(0).toObject();
        QVERIFY(call.value(QLatin1String("id")).toString().startsWith("call_"));
        QCOMPARE(call.value(QLatin1String("type")).toString(), QStringLiteral("function"));
        const QString name = call.value(QLatin1String("function"))
                                 .toObject()
                                 .value(QLatin1String("name"))
                                 .toString();
        const QString args = call.value(QLatin1String("function"))
                                 .toObject()
                                 .value(QLatin1String("arguments"))
                                 .toString();
        QByteArray params;
        for (const QJsonValue& t : req.value(QLatin1String("tools")).toArray()) {
            const QJsonObject fn = t.toObject().value(QLatin1String("function")).toObject();
            if (fn.value(QLatin1String("name")).toString() == name)
                params = compact(fn.value(QLatin1String("parameters")).toObject());
        }
        QVERIFY2(!params.isEmpty(), qPrintable(name));
        const std::string why = violation(args, params);
        QVERIFY2(why.empty(), qPrintable(args + " " + QString::fromStdString(why)));
    }

    void namedToolCallsStreamAsOpenAiStreamsThem() {
        const QJsonObject req = fixtures_.value(QLatin1String("tool_named_stream")).toObject();
        const Response r = post(compact(req));
        QCOMPARE(r.status, 200);
        const SseStream s = parseSse(r.body);
        QVERIFY(s.wellFormed && s.done);
        QString name, args, finish;
        for (const QJsonObject& e : s.events) {
            const QJsonObject c = e.value(QLatin1String("choices")).toArray().at(0).toObject();
            if (!c.value(QLatin1String("finish_reason")).isNull())
                finish = c.value(QLatin1String("finish_reason")).toString();
            for (const QJsonValue& tc : c.value(QLatin1String("delta"))
                                            .toObject()
                                            .value(QLatin1String("tool_calls"))
                                            .toArray()) {
                const QJsonObject fn = tc.toObject().value(QLatin1String("function")).toObject();
                QCOMPARE(tc.toObject().value(QLatin1String("index")).toInt(), 0);
                name += fn.value(QLatin1String("name")).toString();
                args += fn.value(QLatin1String("arguments")).toString();
            }
        }
        QVERIFY(s.text().isEmpty());  // the call's text is not streamed as content
        QCOMPARE(finish, QStringLiteral("tool_calls"));
        QCOMPARE(name, QStringLiteral("get_weather"));
        const std::string why = violation(args, compact(req.value(QLatin1String("tools"))
                                                            .toArray()
                                                            .at(0)
                                                            .toObject()
                                                            .value(QLatin1String("function"))
                                                            .toObject()
                                                            .value(QLatin1String("parameters"))
                                                            .toObject()));
        QVERIFY2(why.empty(), qPrintable(args));
    }

    void toolResultsAndAutoChoiceGetAnswers() {
        for (const char* name : {"tool_result", "tool_auto"}) {
            const Response r = post(compact(fixtures_.value(QLatin1String(name)).toObject()));
            QCOMPARE(r.status, 200);
            verifyUsage(r.json());
            const QJsonObject message = r.firstChoice().value(QLatin1String("message")).toObject();
            const QString finish = r.firstChoice().value(QLatin1String("finish_reason")).toString();
            if (finish == QLatin1String("tool_calls")) {
                QVERIFY(!message.value(QLatin1String("tool_calls")).toArray().isEmpty());
            } else {
                QVERIFY2(!message.value(QLatin1String("content")).toString().trimmed().isEmpty(),
                         qPrintable(r.body));
                QVERIFY(
                    !message.value(QLatin1String("content")).toString().contains("<tool_call>"));
            }
        }
    }

    void promptsBeyondTheContextGetContextLengthExceeded() {
        QJsonObject req = fixtures_.value(QLatin1String("tool_result")).toObject();
        QJsonArray messages = req.value(QLatin1String("messages")).toArray();
        messages.append(QJsonObject{
            {QLatin1String("role"), QStringLiteral("user")},
            {QLatin1String("content"), QString(QStringLiteral("word ")).repeated(1500)}});
        req.insert(QLatin1String("messages"), messages);
        const Response r = post(compact(req));
        QCOMPARE(r.status, 400);
        QCOMPARE(r.error().value(QLatin1String("code")).toString(),
                 QStringLiteral("context_length_exceeded"));
    }

    void cleanupTestCase() { h_.reset(); }
};

QTEST_GUILESS_MAIN(TestStructuredOutput)
#include "tst_structured_output.moc"
