// Chat templates: the default model's prompts equal what llama.cpp-based apps
// render from its Jinja template (tests/fixtures/chat.json), and every family
// formats a reference conversation the way its documented format (and
// llama.cpp's built-in formatter) does.
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
        QVERIFY(t.warning.empty());
    }

    void defaultSystemPromptFromTemplate() {
        // Qwen2.5 style: the default is an escaped Jinja literal in the else branch.
        const ChatTemplate t = ChatTemplate::detect(
            "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + "
            "messages[0]['content'] + '<|im_end|>\\n' }}{%- else %}{{- '<|im_start|>system\\nYou "
            "are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}"
            "{%- endif %}");
        QCOMPARE(
            t.default_system,
            std::string("You are Qwen, created by Alibaba Cloud. You are a helpful assistant."));
        QCOMPARE(
            t.format({{"user", "Hi"}}, true),
            std::string("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a "
                        "helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                        "<|im_start|>assistant\n"));
        // An explicit system message replaces the default.
        QCOMPARE(t.format({{"system", "Be brief."}, {"user", "Hi"}}, false),
                 std::string("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi"
                             "<|im_end|>\n"));
    }

    void unknownFallsBackToChatMLWithWarning() {
        const ChatTemplate unknown = ChatTemplate::detect("{{ messages | tojson }}");
        QCOMPARE(unknown.name, std::string("chatml"));
        QVERIFY(!unknown.warning.empty());
        QCOMPARE(unknown.format({{"user", "Hi"}}, true),
                 std::string("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
        const ChatTemplate none = ChatTemplate::detect("");
        QCOMPARE(none.name, std::string("chatml"));
        QVERIFY(none.warning.find("no chat template") != std::string::npos);
        QVERIFY(!ChatTemplate::from_name("no-such-template").has_value());
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
