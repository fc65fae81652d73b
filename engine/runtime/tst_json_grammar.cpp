// The JSON-schema grammar and its matcher: documents accepted and refused
// byte by byte, where a document may end, unsupported keywords refused by
// name, random walks through the grammar that always end in documents the
// independent validator accepts, and the sampler's constrained draw.
#include <QtTest>
#include <cmath>
#include <random>

#include "runtime/json_grammar.h"
#include "runtime/json_schema_validate.h"
#include "runtime/sampler.h"
#include "tst_json_grammar_data.h"

using namespace powerinfer;
using namespace powerinfer::runtime;

namespace {

bool accepts_all(const std::string& schema, const std::string& doc) {
    GrammarMatcher m(compile_json_schema_text(schema));
    return m.accept(doc) && m.accepting();
}

// Walks the grammar byte by byte at random (closing bytes favoured so that
// documents end), returning the text once the matcher is finished, or
// accepting and a coin says stop; "" if it ran out of steps.
std::string random_document(const std::shared_ptr<const Grammar>& g, std::mt19937& rng) {
    GrammarMatcher m(g);
    std::string out;
    for (int step = 0; step < 4000; ++step) {
        if (m.finished()) return out;
        if (m.accepting() && rng() % 4 == 0) return out;
        std::vector<uint8_t> options, closing;
        for (int b = 0; b < 256; ++b) {
            const auto byte = uint8_t(b);
            if (!((m.next_bytes()[byte >> 6] >> (byte & 63)) & 1u)) continue;
            const std::string one(1, char(byte));
            if (!m.can_accept(one)) continue;
            options.push_back(byte);
            if (one == "\"" || one == "}" || one == "]" || one == "," || one == "e")
                closing.push_back(byte);
        }
        if (options.empty()) return m.accepting() ? out : std::string();
        const auto& pool = !closing.empty() && rng() % 2 ? closing : options;
        const uint8_t pick = pool[rng() % pool.size()];
        const std::string one(1, char(pick));
        if (!m.accept(one)) return {};
        out += one;
    }
    return {};
}

}  // namespace

class TestJsonGrammar : public QObject {
    Q_OBJECT
private slots:
    void acceptsValidDocuments() {
        QVERIFY(accepts_all(kPerson, R"({"name":"Ann","age":31})"));
        QVERIFY(accepts_all(
            kPerson,
            "{\n  \"name\": \"B\\u00e9\\n\",\n  \"age\": -4,\n  \"tags\": [\"a\", 3, null]\n}"));
        QVERIFY(accepts_all(
            kPerson,
            R"({"name":"","age":0,"address":{"city":"Köln","zip":null},"score":1.5e-3,"ok":false})"));
        QVERIFY(accepts_all(R"({"type":"object"})", R"({"x":[1,{"y":"z"}],"w":true})"));
        QVERIFY(accepts_all("{}", "[1, 2.5, \"s\", null]"));
        QVERIFY(accepts_all(
            R"({"$defs":{"n":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"required":["next"]}},"$ref":"#/$defs/n"})",
            R"({"next":{"next":{"next":null}}})"));
        QVERIFY(accepts_all(R"({"type":"string","minLength":2,"maxLength":3})",
                            "\"\xe2\x82\xac"
                            "ab\""));
    }

    void refusesInvalidDocuments() {
        QVERIFY(!accepts_all(kPerson, R"({"age":31})"));                // required name missing
        QVERIFY(!accepts_all(kPerson, R"({"age":31,"name":"Ann"})"));   // declared order
        QVERIFY(!accepts_all(kPerson, R"({"name":"Ann","age":3.5})"));  // not an integer
        QVERIFY(!accepts_all(kPerson, R"({"name":"0123456789abc","age":1})"));   // maxLength 12
        QVERIFY(!accepts_all(kPerson, R"({"name":"A","age":1,"tags":["c"]})"));  // enum
        QVERIFY(!accepts_all(kPerson, R"({"name":"A","age":1,"tags":["a","a","a","a"]})"));
        QVERIFY(!accepts_all(kPerson, R"({"name":"A","age":1,"extra":1})"));
        QVERIFY(!accepts_all(kPerson, R"({"name":"A","age":01})"));        // leading zero
        QVERIFY(!accepts_all(kPerson, "{\"name\":\"a\xff\",\"age\":1}"));  // invalid UTF-8
        QVERIFY(!accepts_all(kPerson, "{\"name\":\"a\nb\",\"age\":1}"));   // raw control char
        QVERIFY(!accepts_all(R"({"type":"object"})", "[1]"));
        QVERIFY(!accepts_all(R"({"type":"string","minLength":2})", "\"a\""));
    }

    void knowsWhereADocumentEnds() {
        GrammarMatcher m(compile_json_schema_text(R"({"type":"integer"})"));
        QVERIFY(!m.accepting());
        QVERIFY(m.accept("12"));
        QVERIFY(m.accepting());
        QVERIFY(!m.finished());  // more digits may follow
        GrammarMatcher o(
            compile_json_schema_text(R"({"type":"object"})", "<tool_call>\n", "\n</tool_call>"));
        QVERIFY(!o.can_accept("{"));
        QVERIFY(o.accept("<tool_call>\n{}"));
        QVERIFY(!o.accepting());
        QVERIFY(o.accept("\n</tool_call>"));
        QVERIFY(o.finished());
        QVERIFY(!o.can_accept(" "));
    }

    void countsTheBytesLeftToFinish() {
        GrammarMatcher m(compile_json_schema_text(kPerson));
        QCOMPARE(m.finish_bytes(), int64_t(19));                         // {"name":"","age":0}
        QCOMPARE(m.finish_bytes_after("{\"name\":\"Ann"), int64_t(10));  // ","age":0}
        QCOMPARE(m.finish_bytes_after("["), int64_t(-1));
        // A walk that always keeps the document closable within its budget
        // ends inside it, however long the strings could have been.
        GrammarMatcher w(compile_json_schema_text(
            R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"string"}}},"required":["a"]})"));
        int64_t budget = 40;
        std::string doc;
        const std::string prefer =
            "{\"a\":[\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
        for (size_t i = 0; !w.finished() && budget > 0; ++i) {
            --budget;
            std::string pick;
            for (const std::string c : {std::string(1, i < prefer.size() ? prefer[i] : 'x'),
                                        std::string("\""), std::string("]"), std::string("}")}) {
                const int64_t rest = w.finish_bytes_after(c);
                if (rest >= 0 && rest <= budget) {
                    pick = c;
                    break;
                }
            }
            QVERIFY(!pick.empty());
            QVERIFY(w.accept(pick));
            doc += pick;
        }
        QVERIFY2(w.finished(), doc.c_str());
        QCOMPARE(int64_t(doc.size()), int64_t(40));
    }

    void refusesUnsupportedKeywordsByName() {
        const auto cases = unsupported_cases();
        for (const auto& c : cases) {
            try {
                compile_json_schema_text(c.schema);
                QFAIL(c.schema);
            } catch (const UnsupportedSchema& e) {
                QVERIFY2(std::string(e.what()).find(c.words) != std::string::npos, e.what());
            }
        }
        QVERIFY_THROWS_EXCEPTION(EngineError, compile_json_schema_text("{not json"));
    }

    void randomWalksEndInValidDocuments() {
        const auto schemas = walk_schemas();
        std::mt19937 rng(7);
        int documents = 0;
        for (const char* schema_text : schemas) {
            const Json schema = Json::parse(schema_text);
            const auto g = compile_json_schema(schema);
            for (int i = 0; i < 40; ++i) {
                const std::string doc = random_document(g, rng);
                if (doc.empty()) continue;
                ++documents;
                Json parsed;
                try {
                    parsed = Json::parse(doc);
                } catch (const EngineError& e) {
                    QFAIL(qPrintable(QString::fromStdString(doc + " does not parse: " + e.what())));
                }
                const std::string why = json_schema_violation(parsed, schema);
                QVERIFY2(why.empty(), (doc + ": " + why).c_str());
            }
        }
        QVERIFY2(documents >= 150, qPrintable(QString::number(documents)));
    }

    void validatorCatchesViolations() {
        const Json schema = Json::parse(kPerson);
        QVERIFY(json_schema_violation(Json::parse(R"({"name":"a","age":1})"), schema).empty());
        QVERIFY(!json_schema_violation(Json::parse(R"({"name":"a"})"), schema).empty());
        QVERIFY(!json_schema_violation(Json::parse(R"({"name":"a","age":"1"})"), schema).empty());
        QVERIFY(!json_schema_violation(Json::parse(R"({"name":"a","age":1,"tags":["z"]})"), schema)
                     .empty());
    }

    void samplerDrawsOnlyAllowedTokens() {
        std::vector<float> logits = {5.0f, 4.0f, 3.0f, 2.0f, 1.0f};
        SamplingParams greedy;
        greedy.temperature = 0;
        Sampler s(greedy);
        auto odd = [](int32_t t) { return t % 2 == 1; };
        QCOMPARE(s.sample(logits.data(), 5, {}, odd), 1);
        QCOMPARE(s.sample(logits.data(), 5, {}, [](int32_t) { return false; }), -1);
        SamplingParams warm;
        warm.temperature = 1.0f;
        warm.top_k = 0;
        warm.top_p = 1.0f;
        warm.min_p = 0.0f;
        warm.seed = 42;
        s.reset(warm);
        std::map<int32_t, int> seen;
        for (int i = 0; i < 400; ++i) ++seen[s.sample(logits.data(), 5, {}, odd)];
        QCOMPARE(int(seen.size()), 2);
        QVERIFY(seen[1] > seen[3]);  // e^4 vs e^2
        // Unconstrained greedy is unchanged.
        s.reset(greedy);
        QCOMPARE(s.sample(logits.data(), 5, {}), 0);
    }
};

QTEST_GUILESS_MAIN(TestJsonGrammar)
#include "tst_json_grammar.moc"
