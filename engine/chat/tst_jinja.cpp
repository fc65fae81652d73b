// The Jinja interpreter against Python's jinja2 as transformers configures it:
// every committed real template x conversation (tests/fixtures/
// chat_templates.json) and the language-feature snippets (tests/fixtures/
// jinja_features.json) must render byte for byte what jinja2 rendered, and
// raise where jinja2 raised. Both files come from
// tests/reference/make_chat_fixtures.py; no Python runs here. Also: located
// errors, the limits (recursion, loops, output and value sizes), and that
// mangled templates only ever raise TemplateError.
#include <QFile>
#include <QtTest>
#include <random>

#include "chat/jinja.h"

using namespace powerinfer::jinja;

namespace {

std::string read_file(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray b = f.readAll();
    return std::string(b.constData(), static_cast<size_t>(b.size()));
}

const QString kFixtures = QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/");

// The time make_chat_fixtures.py gives strftime_now.
Options fixed_time() {
    Options o;
    o.now = civil_time(2025, 6, 15, 10, 30, 0);
    return o;
}

const Value& field(const Value& dict, const char* key) {
    static const Value missing;
    const Value* v = dict.as_dict().find(key);
    return v ? *v : missing;
}

// Renders; returns the output, or "ERROR: <message>".
std::string run(const std::string& source, const Value& vars = Value::dict({}),
                const Options& options = fixed_time()) {
    try {
        return Template(source, options).render(vars);
    } catch (const TemplateError& e) {
        return std::string("ERROR: ") + e.what();
    }
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

}  // namespace

class TestJinja : public QObject {
    Q_OBJECT

private slots:
    void realTemplatesMatchJinja2() {
        const std::string text = read_file(kFixtures + "chat_templates.json");
        QVERIFY2(!text.empty(), "tests/fixtures/chat_templates.json is missing");
        const Value fx = from_json(text);
        const Value& templates = field(fx, "templates");
        const Value& conversations = field(fx, "conversations");
        QCOMPARE(field(fx, "now").as_string(), std::string("2025-06-15T10:30:00"));
        QVERIFY(templates.as_dict().items.size() >= 15);
        std::map<std::string, Template> parsed;
        int rendered = 0, raised = 0;
        for (const Value& c : field(fx, "cases").as_list().items) {
            const std::string name = field(c, "template").as_string();
            const Value& t = field(templates, name.c_str());
            const Value& conv = field(conversations, field(c, "conversation").as_string().c_str());
            auto it = parsed.find(name);
            if (it == parsed.end()) {
                const std::string source =
                    read_file(kFixtures + "chat_templates/" +
                              QString::fromStdString(field(t, "file").as_string()));
                QVERIFY2(!source.empty(), name.c_str());
                it = parsed.emplace(name, Template(source, fixed_time())).first;
            }
            const Value* tools = conv.as_dict().find("tools");
            const Value vars = Value::dict({
                {Value("messages"), field(conv, "messages")},
                {Value("tools"), tools ? *tools : Value::none()},
                {Value("documents"), Value::none()},
                {Value("add_generation_prompt"), field(c, "add_generation_prompt")},
                {Value("bos_token"), field(t, "bos_token")},
                {Value("eos_token"), field(t, "eos_token")},
            });
            const std::string what = name + " x " + field(c, "conversation").as_string() +
                                     (field(c, "add_generation_prompt").truthy() ? " +gen" : "");
            std::string got, error;
            try {
                got = it->second.render(vars);
            } catch (const TemplateError& e) {
                error = e.what();
            }
            if (const Value* want = c.as_dict().find("output")) {
                QVERIFY2(error.empty(), (what + ": " + error).c_str());
                if (got != want->as_string()) {
                    qWarning("%s\n  jinja2: %s\n  ours:   %s", what.c_str(),
                             string_repr(want->as_string()).c_str(), string_repr(got).c_str());
                }
                QVERIFY2(got == want->as_string(), what.c_str());
                ++rendered;
            } else {
                QVERIFY2(!error.empty(),
                         (what + " renders, but jinja2 raises " + field(c, "error").as_string())
                             .c_str());
                ++raised;
            }
        }
        qInfo("%zu templates: %d renders equal jinja2's byte for byte, %d raise as in jinja2",
              templates.as_dict().items.size(), rendered, raised);
        QVERIFY(rendered >= 300);
    }

    void languageFeaturesMatchJinja2() {
        const std::string text = read_file(kFixtures + "jinja_features.json");
        QVERIFY2(!text.empty(), "tests/fixtures/jinja_features.json is missing");
        const Value fx = from_json(text);
        const Value& vars = field(fx, "variables");
        int n = 0;
        for (const Value& c : field(fx, "cases").as_list().items) {
            const std::string source = field(c, "template").as_string();
            const std::string got = run(source, vars);
            if (const Value* want = c.as_dict().find("output")) {
                if (got != want->as_string()) {
                    qWarning("%s\n  jinja2: %s\n  ours:   %s", string_repr(source).c_str(),
                             string_repr(want->as_string()).c_str(), string_repr(got).c_str());
                }
                QVERIFY2(got == want->as_string(), source.c_str());
            } else {
                QVERIFY2(
                    starts_with(got, "ERROR: "),
                    (source + " gives " + got + "; jinja2 raises " + field(c, "error").as_string())
                        .c_str());
            }
            ++n;
        }
        QVERIFY(n >= 150);
    }

    void syntaxErrorsAreLocated() {
        try {
            Template("Hello\n{% for m in messages %}\n  {{ m.content }\n{% endfor %}");
            QFAIL("no error");
        } catch (const TemplateError& e) {
            QCOMPARE(e.line(), 3);
            QCOMPARE(e.column(), 16);
            QVERIFY(starts_with(e.what(), "line 3, column 16: "));
        }
        try {
            Template("{% if x %}\n  text\n");
            QFAIL("no error");
        } catch (const TemplateError& e) {
            QCOMPARE(e.line(), 2);
            QVERIFY(contains(e.message(), "endif"));
        }
        try {
            Template("ab\n  {{ x | nosuch }}");
            QFAIL("no error");
        } catch (const TemplateError& e) {
            QCOMPARE(e.line(), 2);
            QCOMPARE(e.column(), 10);
            QVERIFY(contains(e.message(), "No filter named 'nosuch'"));
        }
        // Columns count characters, not bytes.
        try {
            Template("\xC3\xA9\xC3\xA9{{ ) }}");
            QFAIL("no error");
        } catch (const TemplateError& e) {
            QCOMPARE(e.column(), 6);
        }
        QCOMPARE(run("{% include 'other.jinja' %}"),
                 std::string("ERROR: line 1, column 4: the 'include' tag is not supported in "
                             "chat templates"));
        QVERIFY(starts_with(run("\xFF{{ 1 }}"),
                            "ERROR: line 1, column 1: the template is not "
                            "valid UTF-8"));
    }

    void runtimeErrorsAreLocated() {
        QCOMPARE(run("{{ 1 }}\n  {{ x.y }}"),
                 std::string("ERROR: line 2, column 7: 'x' is undefined"));
        QCOMPARE(run("{% for m in messages %}{% if m.role == 'system' %}\n"
                     "{{ raise_exception('System role not supported') }}{% endif %}{% endfor %}",
                     from_json(R"({"messages": [{"role": "system", "content": "x"}]})")),
                 std::string("ERROR: line 2, column 19: System role not supported"));
        QCOMPARE(run("{{ 'a' + 1 }}"),
                 std::string("ERROR: line 1, column 4: can only concatenate str (not \"int\") to "
                             "str"));
    }

    void undefinedIsEmptyAndFalsy() {
        QCOMPARE(run("[{{ nothing }}]{% if nothing %}yes{% else %}no{% endif %}"),
                 std::string("[]no"));
        QCOMPARE(
            run("{{ nothing | default('d') }}|{{ nothing is defined }}|{{ nothing | length }}"),
            std::string("d|False|0"));
        QCOMPARE(run("{% for x in nothing %}x{% endfor %}{{ d.missing }}|{{ d.missing is none }}",
                     from_json(R"({"d": {}})")),
                 std::string("|False"));
    }

    void valuesFromJsonKeepTypes() {
        const Value v = from_json(R"({"i": 1, "f": 1.0, "big": 1e400, "s": "\u00e9\ud83d\ude00",
                                      "l": [true, false, null], "n": -0.5e-3})");
        QCOMPARE(
            run("{{ i }} {{ f }} {{ big }} {{ s }} {{ l }} {{ n }} {{ i is integer }}", v),
            std::string("1 1.0 inf \xC3\xA9\xF0\x9F\x98\x80 [True, False, None] -0.0005 True"));
        QCOMPARE(to_json(v), std::string("{\"i\": 1, \"f\": 1.0, \"big\": Infinity, \"s\": "
                                         "\"\xC3\xA9\xF0\x9F\x98\x80\", \"l\": [true, false, "
                                         "null], \"n\": -0.0005}"));
        for (const char* bad : {"{", "[1,]", "{\"a\" 1}", "\"\\x\"", "01", "[1] 2", "nul"}) {
            try {
                from_json(bad);
                QFAIL(bad);
            } catch (const TemplateError& e) {
                QVERIFY(e.line() >= 1);
            }
        }
        QCOMPARE(float_repr(0.1), std::string("0.1"));
        QCOMPARE(float_repr(1e16), std::string("1e+16"));
        QCOMPARE(float_repr(-1.5e-7), std::string("-1.5e-07"));
        QCOMPARE(float_repr(123456789012345678.0), std::string("1.2345678901234568e+17"));
        QCOMPARE(string_repr("it's"), std::string("\"it's\""));
        QCOMPARE(string_repr("a\n\x01'\""), std::string("'a\\n\\x01\\'\"'"));
    }

    void recursionIsBounded() {
        const std::string r = run("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
        QVERIFY2(contains(r, "recurses too deeply"), r.c_str());
        // Nesting in the source: parentheses, blocks, operator chains.
        std::string parens(5000, '(');
        QVERIFY(contains(run("{{ " + parens + "1" + std::string(5000, ')') + " }}"),
                         "nests too deeply"));
        std::string ifs;
        for (int i = 0; i < 1000; ++i) ifs += "{% if true %}";
        QVERIFY(contains(run(ifs), "nests too deeply"));
        std::string sum = "{{ 1";
        for (int i = 0; i < 20000; ++i) sum += " + 1";
        QVERIFY(contains(run(sum + " }}"), "nests too deeply"));
        QVERIFY(contains(run("{{ " + std::string(3000, '-') + "1 }}"), "nests too deeply"));
        QVERIFY(contains(run("{{ " + std::string(3000, '[') + std::string(3000, ']') + " }}"),
                         "nests too deeply"));
        // Values that nest or refer to themselves.
        QVERIFY(contains(run("{% set ns = namespace(x=1) %}{% for i in range(1000) %}"
                             "{% set ns.x = [ns.x] %}{% endfor %}"),
                         "nest too deeply"));
        QVERIFY(contains(run("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
                         "nest too deeply"));
        std::string deep_json(100000, '[');
        try {
            from_json(deep_json);
            QFAIL("no error");
        } catch (const TemplateError& e) {
            QVERIFY(contains(e.message(), "nested too deeply"));
        }
    }

    void loopsAndWorkAreBounded() {
        QElapsedTimer timer;
        timer.start();
        std::string r =
            run("{% for i in range(100000) %}{% for j in range(100000) %}"
                "{% endfor %}{% endfor %}");
        QVERIFY2(contains(r, "too many steps"), r.c_str());
        r = run("{% for i in range(100000) %}{% if i in range(100000) %}{% endif %}{% endfor %}");
        QVERIFY2(contains(r, "too many steps"), r.c_str());
        // Exponentially shared values cost what printing or comparing them costs.
        r =
            run("{% set ns = namespace(x='a') %}{% for i in range(80) %}"
                "{% set ns.x = [ns.x, ns.x] %}{% endfor %}{{ ns.x }}");
        QVERIFY2(contains(r, "too large to print") || contains(r, "too many steps"), r.c_str());
        r =
            run("{% set ns = namespace(a=1, b=1) %}{% for i in range(80) %}"
                "{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}"
                "{{ ns.a == ns.b }}");
        QVERIFY2(contains(r, "too many steps"), r.c_str());
        r = run("{{ range(100001) | list }}");
        QVERIFY2(contains(r, "MAX_RANGE"), r.c_str());
        QVERIFY2(timer.elapsed() < 30000, "the limits took too long to hit");
        // Python's integers do not overflow; ours say so instead of wrapping.
        QVERIFY(contains(run("{{ 2 ** 62 + 2 ** 62 }}"), "integer overflow"));
        QVERIFY(contains(run("{{ 9223372036854775807 * 2 }}"), "integer overflow"));
        QVERIFY(contains(run("{{ 99999999999999999999 }}"), "integer literal too large"));
    }

    void outputAndValueSizesAreBounded() {
        Options small = fixed_time();
        small.limits.max_output = 1000;
        QVERIFY(contains(run("{% for i in range(2000) %}x{% endfor %}", Value::dict({}), small),
                         "the output is over 1000 bytes"));
        QCOMPARE(run("{% for i in range(1000) %}x{% endfor %}", Value::dict({}), small),
                 std::string(1000, 'x'));
        QVERIFY(contains(run("{{ 'x' * 100000000000 }}"), "a string would be over"));
        QVERIFY(contains(run("{{ [1, 2] * 100000000000 }}"), "a list would have over"));
        QVERIFY(contains(run("{% set ns = namespace(s='xy') %}{% for i in range(64) %}"
                             "{% set ns.s = ns.s + ns.s %}{% endfor %}"),
                         "a string would be over"));
        QVERIFY(contains(run("{{ 'a'.center(100000000000) }}"), "a string would be over"));
        QVERIFY(contains(run("{{ 'ab' | replace('', 'x' * 5000000) }}"), "a string would be over"));
    }

    void strftimeNowUsesTheGivenTime() {
        QCOMPARE(run("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A %B %-d, %H:%M') }}"),
                 std::string("15 Jun 2025|Sunday June 15, 10:30"));
        const std::tm t = civil_time(2024, 2, 29, 23, 5, 9);
        QCOMPARE(t.tm_wday, 4);  // a Thursday
        QCOMPARE(t.tm_yday, 59);
        Options now;  // unset: the real clock
        QVERIFY(std::atoi(run("{{ strftime_now('%Y') }}", Value::dict({}), now).c_str()) >= 2025);
    }

    void templatesCanBeCopiedAndRenderedAgain() {
        const Template a(
            "{% set ns = namespace(n=0) %}{% for m in messages %}"
            "{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}");
        const Template b = a;
        const Value vars = from_json(R"({"messages": [1, 2, 3]})");
        QCOMPARE(a.render(vars), std::string("3"));
        QCOMPARE(b.render(vars), std::string("3"));
        QCOMPARE(a.render(vars), std::string("3"));
    }

    void mangledTemplatesOnlyRaiseTemplateError() {
        // Random edits of the real templates: each must render or raise
        // TemplateError (the fuzzer, scripts/fuzz-jinja, does this at scale).
        const Value fx = from_json(read_file(kFixtures + "chat_templates.json"));
        const Value& conv = field(field(fx, "conversations"), "tool_call");
        const Value vars = Value::dict({{Value("messages"), field(conv, "messages")},
                                        {Value("tools"), field(conv, "tools")},
                                        {Value("add_generation_prompt"), Value(true)},
                                        {Value("bos_token"), Value("<s>")},
                                        {Value("eos_token"), Value("</s>")}});
        static const char* kPieces[] = {"{%", "%}", "{{",   "}}",    "{#",       "#}",      "-",
                                        "(",  ")",  "[",    "]",     "'",        "\"",      "|",
                                        ".",  ",",  " if ", " for ", " endfor ", " endif ", "\\",
                                        "\n", "%",  "~",    "*"};
        std::mt19937 rng(1234);
        int renders = 0, errors = 0;
        const auto& files = field(fx, "templates").as_dict().items;
        for (const auto& [name, t] : files) {
            const std::string source =
                read_file(kFixtures + "chat_templates/" +
                          QString::fromStdString(field(t, "file").as_string()));
            for (int k = 0; k < 60; ++k) {
                std::string s = source;
                const int edits = 1 + static_cast<int>(rng() % 4);
                for (int e = 0; e < edits && !s.empty(); ++e) {
                    const size_t pos = rng() % s.size();
                    switch (rng() % 4) {
                        case 0:
                            s.erase(pos, 1 + rng() % 8);
                            break;
                        case 1:
                            s.insert(pos, kPieces[rng() % std::size(kPieces)]);
                            break;
                        case 2:
                            s.insert(pos, s.substr(rng() % s.size(), rng() % 64));
                            break;
                        default:
                            s[pos] = static_cast<char>(rng() % 128);
                    }
                }
                try {
                    Template(s, fixed_time()).render(vars);
                    ++renders;
                } catch (const TemplateError&) {
                    ++errors;
                }
            }
        }
        qInfo("mangled templates: %d rendered, %d raised TemplateError", renders, errors);
        QVERIFY(errors > 0);
    }
};

QTEST_GUILESS_MAIN(TestJinja)
#include "tst_jinja.moc"
