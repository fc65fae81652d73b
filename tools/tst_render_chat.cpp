// powerinfer-cli --render-chat prints exactly what jinja2 renders (the
// committed fixtures from tests/reference/make_chat_fixtures.py), takes the
// template from a GGUF, and reports errors with their location and exit
// status.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "chat/jinja.h"

namespace {

const QString kFixtures = QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/");

struct Result {
    int status = -1;
    QByteArray out, err;
};

Result cli(const QStringList& args, const QByteArray& input = {}) {
    QProcess p;
    p.start(QStringLiteral(POWERINFER_CLI), args);
    p.waitForStarted();
    if (!input.isEmpty()) p.write(input);
    p.closeWriteChannel();
    p.waitForFinished(60000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

QJsonObject load(const QString& name) {
    QFile f(kFixtures + name);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace

class TestRenderChat : public QObject {
    Q_OBJECT

private slots:
    void printsWhatJinja2Renders() {
        // jinja::from_json keeps the key order and int/float distinction that
        // QJsonObject would lose.
        QFile raw(kFixtures + QStringLiteral("chat_templates.json"));
        QVERIFY2(raw.open(QIODevice::ReadOnly), "tests/fixtures/chat_templates.json is missing");
        using powerinfer::jinja::Value;
        const Value fx = powerinfer::jinja::from_json(raw.readAll().toStdString());
        auto field = [](const Value& d, const std::string& k) { return *d.as_dict().find(k); };
        QTemporaryDir dir;
        int checked = 0;
        for (const Value& c : field(fx, "cases").as_list().items) {
            const std::string conv = field(c, "conversation").as_string();
            if (conv != "tool_call" && conv != "multi_turn" && conv != "unicode") continue;
            const Value* want = c.as_dict().find("output");
            if (!want) continue;
            const Value t = field(field(fx, "templates"), field(c, "template").as_string());
            const QString messages = dir.filePath(QString::fromStdString(conv) + ".json");
            if (!QFile::exists(messages)) {
                QFile f(messages);
                QVERIFY(f.open(QIODevice::WriteOnly));
                f.write(QByteArray::fromStdString(
                    powerinfer::jinja::to_json(field(field(fx, "conversations"), conv))));
            }
            QStringList args = {QStringLiteral("--render-chat"),
                                kFixtures + "chat_templates/" +
                                    QString::fromStdString(field(t, "file").as_string()),
                                messages,
                                QStringLiteral("--bos"),
                                QString::fromStdString(field(t, "bos_token").as_string()),
                                QStringLiteral("--eos"),
                                QString::fromStdString(field(t, "eos_token").as_string()),
                                QStringLiteral("--now"),
                                QString::fromStdString(field(fx, "now").as_string())};
            if (!field(c, "add_generation_prompt").truthy())
                args << QStringLiteral("--no-generation-prompt");
            const Result r = cli(args);
            const std::string what = field(c, "template").as_string() + " x " + conv;
            QVERIFY2(r.status == 0, (what + ": " + r.err.toStdString()).c_str());
            QVERIFY2(r.out.toStdString() == want->as_string(), what.c_str());
            ++checked;
        }
        QVERIFY(checked >= 40);
    }

    void messagesFromStdinOrInline() {
        const QString smol =
            kFixtures + QStringLiteral("chat_templates/HuggingFaceTB-SmolLM2-135M-Instruct.jinja");
        const QByteArray json = R"({"messages": [{"role": "user", "content": "Hi"}]})";
        const QByteArray want =
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
            "Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
        Result r = cli({QStringLiteral("--render-chat"), smol, QStringLiteral("-")}, json);
        QCOMPARE(r.status, 0);
        QCOMPARE(r.out, want);  // no newline added
        r = cli({QStringLiteral("--render-chat"), smol, QString::fromUtf8(json),
                 QStringLiteral("--no-generation-prompt")});
        QCOMPARE(r.status, 0);
        QCOMPARE(r.out, want.left(want.size() - int(strlen("<|im_start|>assistant\n"))));
        // Extra keys are template variables, as apply_chat_template's kwargs.
        QTemporaryDir dir;
        QFile t(dir.filePath(QStringLiteral("t.jinja")));
        QVERIFY(t.open(QIODevice::WriteOnly));
        t.write("{{ enable_thinking }}|{{ tools }}|{{ bos_token }}{{ messages|length }}");
        t.close();
        r = cli({QStringLiteral("--render-chat"), t.fileName(),
                 QStringLiteral(R"({"messages": [], "enable_thinking": false})"),
                 QStringLiteral("--bos"), QStringLiteral("<s>")});
        QCOMPARE(r.status, 0);
        QCOMPARE(r.out, QByteArray("False|None|<s>0"));
    }

    void templateFromGguf() {
        const QByteArray model = qgetenv("POWERINFER_MODEL");
        if (model.isEmpty())
            QSKIP("POWERINFER_MODEL is not set: export it to the default model's path");
        // The default model's prompts as llama.cpp's Jinja formatter made them.
        const QJsonObject fx = load(QStringLiteral("chat.json"));
        QVERIFY(!fx.isEmpty());
        for (const auto& cv : fx["cases"].toArray()) {
            const QJsonObject c = cv.toObject();
            QJsonObject input;
            input["messages"] = c["messages"];
            const Result r = cli({QStringLiteral("--render-chat"), QString::fromUtf8(model),
                                  QString::fromUtf8(QJsonDocument(input).toJson())});
            QCOMPARE(r.status, 0);
            QCOMPARE(QString::fromUtf8(r.out), c["prompt"].toString());
        }
    }

    void errorsAreLocated() {
        QTemporaryDir dir;
        QFile t(dir.filePath(QStringLiteral("bad.jinja")));
        QVERIFY(t.open(QIODevice::WriteOnly));
        t.write("{% for m in messages %}\n  {{ m.content | nosuchfilter }}\n{% endfor %}");
        t.close();
        const QString msgs = QStringLiteral(R"({"messages": []})");
        Result r = cli({QStringLiteral("--render-chat"), t.fileName(), msgs});
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("line 2, column 18: No filter named 'nosuchfilter'"), r.err);
        QVERIFY(r.out.isEmpty());
        r = cli(
            {QStringLiteral("--render-chat"), t.fileName(), QStringLiteral("{\"messages\": [")});
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("line 1, column"), r.err);
        r = cli({QStringLiteral("--render-chat"), t.fileName()});
        QCOMPARE(r.status, 2);
        QVERIFY(r.err.contains("usage: powerinfer-cli --render-chat"));
        r = cli(
            {QStringLiteral("--render-chat"), dir.filePath(QStringLiteral("none.jinja")), msgs});
        QCOMPARE(r.status, 1);
        QVERIFY(r.err.contains("cannot read the template file"));
    }
};

QTEST_GUILESS_MAIN(TestRenderChat)
#include "tst_render_chat.moc"
