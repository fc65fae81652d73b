// Chat templates: the default model's prompts equal what llama.cpp-based apps
// render from its Jinja template (tests/fixtures/chat.json); the model's own
// template is rendered by the Jinja interpreter (with the recognised family's
// formatter as the fallback, and a located warning when the template cannot
// be used); and every family's formatter formats a reference conversation
// the way its documented format (and llama.cpp's built-in formatter) does.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "chat/chat_template.h"

using namespace powerinfer;

namespace {

// The conversation llama.cpp's test-chat-template uses: note the spaces
// around the second answer, which some templates trim.
const std::vector<ChatMessage> kConversation = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
    {"assistant", "   I am an assistant   "},
    {"user", "Another question"},
};

std::string read_fixture(const QString& name) {
    QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/chat_templates/") + name);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
}

std::string render(const char* name) {
    auto t = ChatTemplate::from_name(name);
    if (!t) return "<no template named " + std::string(name) + ">";
    return t->format(kConversation, true);
}

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

private slots:
    void defaultModelMatchesLlamaCpp() {
        QFile f(QStringLiteral(POWERINFER_SOURCE_DIR "/tests/fixtures/chat.json"));
        QVERIFY2(f.open(QIODevice::ReadOnly), "tests/fixtures/chat.json is missing");
        const QJsonObject fx = QJsonDocument::fromJson(f.readAll()).object();
        const ChatTemplate t = ChatTemplate::detect(fx["chat_template"].toString().toStdString());
        QCOMPARE(t.name, std::string("chatml"));
        QVERIFY(t.warning.empty());
        QVERIFY(t.jinja.has_value());  // rendered by the interpreter
        QCOMPARE(
            t.default_system,
            std::string("You are a helpful AI assistant named SmolLM, trained by Hugging Face"));
        const QJsonArray cases = fx["cases"].toArray();
        QVERIFY(cases.size() >= 3);
        for (const auto& c : cases) {
            const QJsonObject o = c.toObject();
            std::vector<ChatMessage> messages;
            for (const auto& m : o["messages"].toArray()) {
                messages.push_back({m.toObject()["role"].toString().toStdString(),
                                    m.toObject()["content"].toString().toStdString()});
            }
            QCOMPARE(QString::fromStdString(t.format(messages, true)), o["prompt"].toString());
            // The same with the tokenizer's special tokens (SmolLM2 adds no BOS).
            const ChatTemplate with_tokens =
                ChatTemplate::detect(fx["chat_template"].toString().toStdString(),
                                     ChatTokens{"<|im_start|>", "<|im_end|>", false});
            QVERIFY(with_tokens.jinja.has_value());
            QCOMPARE(QString::fromStdString(with_tokens.format(messages, true)),
                     o["prompt"].toString());
        }
    }

    void chatml() {
        QCOMPARE(render("chatml"),
                 std::string("<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
                             "<|im_start|>user\nHello<|im_end|>\n"
                             "<|im_start|>assistant\nHi there<|im_end|>\n"
                             "<|im_start|>user\nWho are you<|im_end|>\n"
                             "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n"
                             "<|im_start|>user\nAnother question<|im_end|>\n"
                             "<|im_start|>assistant\n"));
        auto t = *ChatTemplate::from_name("chatml");
        QCOMPARE(t.format({{"user", "Hi"}}, false),
                 std::string("<|im_start|>user\nHi<|im_end|>\n"));
        QCOMPARE(t.stop_strings, std::vector<std::string>{"<|im_end|>"});
    }

    void llama2Family() {
        QCOMPARE(render("llama2"),
                 std::string("[INST] You are a helpful assistant\nHello [/INST]Hi there</s>"
                             "[INST] Who are you [/INST]   I am an assistant   </s>"
                             "[INST] Another question [/INST]"));
        QCOMPARE(render("llama2-sys-bos"),
                 std::string("[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello "
                             "[/INST]Hi there</s><s>[INST] Who are you [/INST]   I am an "
                             "assistant   </s><s>[INST] Another question [/INST]"));
        QCOMPARE(render("llama2-sys-strip"),
                 std::string("[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello "
                             "[/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>"
                             "[INST] Another question [/INST]"));
    }

    void mistralFamily() {
        QCOMPARE(render("mistral-v1"),
                 std::string(" [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> "
                             "[INST] Who are you [/INST]    I am an assistant   </s> [INST] "
                             "Another question [/INST]"));
        QCOMPARE(render("mistral-v3"),
                 std::string("[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>"
                             "[INST] Who are you[/INST] I am an assistant</s>[INST] Another "
                             "question[/INST]"));
        QCOMPARE(render("mistral-v3-tekken"),
                 std::string("[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>"
                             "[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another "
                             "question[/INST]"));
        QCOMPARE(render("mistral-v7"),
                 std::string("[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT]"
                             "[INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am "
                             "an assistant   </s>[INST] Another question[/INST]"));
    }

    void llama3() {
        QCOMPARE(render("llama3"),
                 std::string("<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful "
                             "assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello"
                             "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there"
                             "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you"
                             "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an "
                             "assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
                             "Another question<|eot_id|><|start_header_id|>assistant"
                             "<|end_header_id|>\n\n"));
        QVERIFY(ChatTemplate::from_name("llama3")->stop_strings.front() == "<|eot_id|>");
    }

    void gemma() {
        // No system role: its text opens the first user turn.
        QCOMPARE(render("gemma"),
                 std::string("<start_of_turn>user\nYou are a helpful assistant\n\nHello"
                             "<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n"
                             "<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\n"
                             "I am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question"
                             "<end_of_turn>\n<start_of_turn>model\n"));
        QCOMPARE(ChatTemplate::from_name("gemma")->stop_strings,
                 std::vector<std::string>{"<end_of_turn>"});
    }

    void phi3AndZephyr() {
        QCOMPARE(render("phi3"),
                 std::string("<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello"
                             "<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you"
                             "<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\n"
                             "Another question<|end|>\n<|assistant|>\n"));
        QCOMPARE(render("zephyr"),
                 std::string("<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\n"
                             "Hello<|endoftext|>\n<|assistant|>\nHi there<|endoftext|>\n<|user|>\n"
                             "Who are you<|endoftext|>\n<|assistant|>\n   I am an assistant   "
                             "<|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n"
                             "<|assistant|>\n"));
    }

    void deepseekAndCommandR() {
        QCOMPARE(render("deepseek3"),
                 std::string("You are a helpful assistant\n\n<｜User｜>Hello<｜Assistant｜>Hi there"
                             "<｜end▁of▁sentence｜><｜User｜>Who are you<｜Assistant｜>   I am an "
                             "assistant   <｜end▁of▁sentence｜><｜User｜>Another question"
                             "<｜Assistant｜>"));
        QCOMPARE(render("command-r"),
                 std::string("<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant"
                             "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello"
                             "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there"
                             "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you"
                             "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an "
                             "assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>"
                             "Another question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|>"
                             "<|CHATBOT_TOKEN|>"));
    }

    void detectsFamiliesFromJinja_data() {
        QTest::addColumn<QString>("jinja");
        QTest::addColumn<QString>("name");
        QTest::newRow("chatml") << "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n' + "
                                   "m['content'] + '<|im_end|>\\n'}}{% endfor %}"
                                << "chatml";
        QTest::newRow("phi4") << "{{'<|im_start|>' + m['role'] + '<|im_sep|>' + m['content']}}"
                              << "phi4";
        QTest::newRow("llama3") << "{{ bos_token }}{% for message in messages %}{{ "
                                   "'<|start_header_id|>' + message['role'] + "
                                   "'<|end_header_id|>\\n\\n' + message['content'] | trim + "
                                   "'<|eot_id|>' }}{% endfor %}"
                                << "llama3";
        QTest::newRow("llama2") << "{% if message['role'] == 'user' %}{{ '[INST] ' + "
                                   "message['content'] + ' [/INST]' }}{% endif %}"
                                << "llama2";
        QTest::newRow("llama2-sys") << "{{ '[INST] <<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' }}"
                                    << "llama2-sys";
        QTest::newRow("llama2-sys-bos") << "{{ bos_token + '[INST] ' + content + ' [/INST]' }}"
                                        << "llama2-sys-bos";
        QTest::newRow("mistral-v7")
            << "{{ '[SYSTEM_PROMPT] ' + s + '[/SYSTEM_PROMPT]' }}{{ '[INST] ' "
               "+ m + '[/INST]' }}"
            << "mistral-v7";
        QTest::newRow("mistral-v7-tekken")
            << "{{ '[SYSTEM_PROMPT]' + s + '[/SYSTEM_PROMPT]' }}{{ '[INST]' + m + '[/INST]' }}"
            << "mistral-v7-tekken";
        QTest::newRow("mistral-v3-tekken")
            << "{{ \"[AVAILABLE_TOOLS]\" }}{{ \"[INST]\" + m + \"[/INST]\" }}"
            << "mistral-v3-tekken";
        QTest::newRow("gemma") << "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim "
                                  "+ '<end_of_turn>\\n' }}"
                               << "gemma";
        QTest::newRow("phi3") << "{{'<|user|>\\n' + message['content'] + "
                                 "'<|end|>\\n<|assistant|>\\n'}}"
                              << "phi3";
        QTest::newRow("zephyr") << "{{ '<|user|>\\n' + message['content'] + '<|endoftext|>' }}"
                                << "zephyr";
        QTest::newRow("deepseek3") << "{{'<｜User｜>' + c}}{{'<｜Assistant｜>' + c + "
                                      "'<｜end▁of▁sentence｜>'}}"
                                   << "deepseek3";
        QTest::newRow("command-r") << "{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + c }}"
                                   << "command-r";
        QTest::newRow("by name") << "llama3"
                                 << "llama3";
    }

    void detectsFamiliesFromJinja() {
        QFETCH(QString, jinja);
        QFETCH(QString, name);
        const ChatTemplate t = ChatTemplate::detect(jinja.toStdString());
        QCOMPARE(QString::fromStdString(t.name), name);
        // These are fragments, not whole templates: most do not render, and
        // then the family's formatter is used, with a warning; those that
        // write bos_token keep the formatter without one (no tokens given).
        const bool tokens = jinja.contains("bos_token") || jinja.contains("eos_token");
        QVERIFY(t.jinja.has_value() || !t.warning.empty() || tokens || jinja == name);
    }

    void defaultSystemPromptFromTemplate() {
        // Qwen2.5: the default is an escaped Jinja literal in the else branch.
        const std::string qwen = read_fixture("Qwen-Qwen2.5-7B-Instruct.jinja");
        QVERIFY(!qwen.empty());
        const ChatTemplate t = ChatTemplate::detect(qwen, ChatTokens{"", "<|im_end|>", false});
        QCOMPARE(t.name, std::string("chatml"));
        QVERIFY(t.jinja.has_value());
        QCOMPARE(
            t.default_system,
            std::string("You are Qwen, created by Alibaba Cloud. You are a helpful assistant."));
        const std::string with_default =
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
            "assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
        QCOMPARE(t.format({{"user", "Hi"}}, true), with_default);
        // An explicit system message replaces the default.
        const std::string explicit_system =
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n";
        QCOMPARE(t.format({{"system", "Be brief."}, {"user", "Hi"}}, false), explicit_system);
        // The family's formatter (the fallback) does the same.
        ChatTemplate fallback = t;
        fallback.jinja.reset();
        QCOMPARE(fallback.format({{"user", "Hi"}}, true), with_default);
        QCOMPARE(fallback.format({{"system", "Be brief."}, {"user", "Hi"}}, false),
                 explicit_system);
    }

    void unknownTemplateRendersThroughJinja() {
        const ChatTemplate t = ChatTemplate::detect("{{ messages | tojson }}{{ eos_token }}",
                                                    ChatTokens{"<s>", "</s>", true});
        QCOMPARE(t.name, std::string("jinja"));
        QVERIFY(t.warning.empty());
        QCOMPARE(t.format({{"user", "Hi"}}, true),
                 std::string("[{\"role\": \"user\", \"content\": \"Hi\"}]</s>"));
        QCOMPARE(t.stop_strings, std::vector<std::string>{"</s>"});
    }

    void brokenTemplateFallsBackWithLocatedWarning() {
        const ChatTemplate unknown =
            ChatTemplate::detect("{% for m in messages %}\n{{ m.content }");
        QCOMPARE(unknown.name, std::string("chatml"));
        QVERIFY(!unknown.jinja.has_value());
        QVERIFY2(unknown.warning.find("line 2, column") != std::string::npos,
                 unknown.warning.c_str());
        QVERIFY(unknown.warning.find("using ChatML") != std::string::npos);
        QCOMPARE(unknown.format({{"user", "Hi"}}, true),
                 std::string("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
        // A recognised family falls back to its own formatter.
        const ChatTemplate llama = ChatTemplate::detect(
            "<|start_header_id|>{{ x.y }}<|end_header_id|>", ChatTokens{"<s>", "</s>", true});
        QCOMPARE(llama.name, std::string("llama3"));
        QVERIFY(!llama.jinja.has_value());
        QVERIFY2(llama.warning.find("line 1, column 24: 'x' is undefined") != std::string::npos,
                 llama.warning.c_str());
        QVERIFY(llama.warning.find("the built-in llama3 format") != std::string::npos);
        const ChatTemplate none = ChatTemplate::detect("");
        QCOMPARE(none.name, std::string("chatml"));
        QVERIFY(none.warning.find("no chat template") != std::string::npos);
        QVERIFY(!ChatTemplate::from_name("no-such-template").has_value());
    }

    void bosIsDroppedWhereTheTokenizerAddsIt() {
        const std::string llama = read_fixture("meta-llama-Llama-3.2-3B-Instruct.jinja");
        QVERIFY(!llama.empty());
        const ChatTemplate adds =
            ChatTemplate::detect(llama, ChatTokens{"<|begin_of_text|>", "<|eot_id|>", true});
        QVERIFY(adds.jinja.has_value());
        QCOMPARE(adds.name, std::string("llama3"));
        const std::string a = adds.format({{"user", "Hi"}}, true);
        QVERIFY2(a.rfind("<|start_header_id|>system<|end_header_id|>\n\n", 0) == 0, a.c_str());
        const ChatTemplate keeps =
            ChatTemplate::detect(llama, ChatTokens{"<|begin_of_text|>", "<|eot_id|>", false});
        QCOMPARE(keeps.format({{"user", "Hi"}}, true), "<|begin_of_text|>" + a);
        // Without the tokens a template that writes them keeps the family's
        // formatter, which knows them.
        const ChatTemplate unknown_tokens = ChatTemplate::detect(llama);
        QVERIFY(!unknown_tokens.jinja.has_value());
        QVERIFY(unknown_tokens.warning.empty());
        QCOMPARE(unknown_tokens.name, std::string("llama3"));
    }

    void templateErrorsFallBackPerConversation() {
        // Gemma 2 refuses a system message; the family's formatter folds it
        // into the first user turn instead.
        const ChatTemplate gemma = ChatTemplate::detect(read_fixture("google-gemma-2-2b-it.jinja"),
                                                        ChatTokens{"<bos>", "<eos>", true});
        QVERIFY(gemma.jinja.has_value());
        QVERIFY(gemma.warning.empty());
        std::string error;
        QCOMPARE(gemma.format({{"user", "Hi"}}, true, &error),
                 std::string("<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"));
        QVERIFY(error.empty());
        QCOMPARE(gemma.format({{"system", "Be brief."}, {"user", "Hi"}}, true, &error),
                 std::string("<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
                             "<start_of_turn>model\n"));
        QVERIFY2(error.find("System role not supported") != std::string::npos, error.c_str());
    }

    void toolCallsRenderThroughTheTemplate() {
        const ChatTemplate qwen = ChatTemplate::detect(
            read_fixture("Qwen-Qwen2.5-7B-Instruct.jinja"), ChatTokens{"", "<|im_end|>", false});
        const jinja::Value messages =
            jinja::from_json(R"([{"role": "user", "content": "Weather?"}])");
        const jinja::Value tools = jinja::from_json(
            R"([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}])");
        const std::string out = qwen.render(messages, tools, true);
        QVERIFY2(out.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": "
                          "\"get_weather\", \"parameters\": {}}}\n</tools>") != std::string::npos,
                 out.c_str());
    }

    void everyNamedTemplateRenders() {
        for (const std::string& name : ChatTemplate::names()) {
            const auto t = ChatTemplate::from_name(name);
            QVERIFY(t.has_value());
            QCOMPARE(t->name, name);
            QVERIFY2(!t->stop_strings.empty(), name.c_str());
            const std::string s = t->format(kConversation, true);
            QVERIFY2(s.find("Another question") != std::string::npos, name.c_str());
            QVERIFY2(s.find("Hi there") != std::string::npos, name.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "tst_chat_template.moc"
