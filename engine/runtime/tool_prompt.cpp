#include "runtime/tool_prompt.h"

#include "chat/jinja_value.h"
#include "runtime/json.h"

namespace powerinfer::runtime {
namespace {

const std::string* string_at(const Json& o, std::string_view key) {
    const Json* v = o.find(key);
    return v ? v->as_string() : nullptr;
}

// An assistant tool call as the model writes it.
std::string tool_call_text(const Json& call) {
    const Json* fn = call.find("function");
    const Json& f = fn ? *fn : call;
    const std::string* name = string_at(f, "name");
    std::string args = "{}";
    if (const Json* a = f.find("arguments")) args = a->as_string() ? *a->as_string() : a->dump(0);
    return "<tool_call>\n{\"name\": " + Json(name ? *name : std::string()).dump(0) +
           ", \"arguments\": " + args + "}\n</tool_call>";
}

// The instructions a template without tool support gets.
std::string tools_instructions(const Json::Array& tools) {
    std::string s =
        "You may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
    for (const Json& t : tools) s += "\n" + t.dump(0);
    s += "\n</tools>\n\nFor each function call, return a json object with function name and "
         "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
         "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
    return s;
}

std::string content_text(const Json& m) {
    const Json* c = m.find("content");
    if (!c || c->is_null()) return {};
    if (const std::string* s = c->as_string()) return *s;
    throw EngineError("chat_json: message content must be a string or null");
}

}  // namespace

bool template_writes_tool_calls(std::string_view source) {
    return source.find("<tool_call>") != std::string_view::npos &&
           source.find("tools") != std::string_view::npos;
}

std::string render_tool_conversation(const ChatTemplate& tmpl, bool native,
                                     std::string_view chat_json) {
    const Json input = Json::parse(chat_json, "chat_json");
    const Json* messages = input.find("messages");
    if (!messages || !messages->as_array() || messages->as_array()->empty())
        throw EngineError("chat_json: expected {\"messages\": [...]} with at least one message");
    const Json* tools = input.find("tools");
    const Json::Array no_tools;
    const Json::Array& tool_list = tools && tools->as_array() ? *tools->as_array() : no_tools;

    if (native && tmpl.jinja) {
        // Arguments arrive as JSON text (OpenAI's shape); templates format
        // them with tojson, so they get the object.
        Json::Array out;
        for (const Json& m : *messages->as_array()) {
            Json::Object o = m.as_object() ? *m.as_object() : Json::Object{};
            for (auto& [k, v] : o) {
                // A turn that only calls tools has null content (the
                // client's shape); templates such as Qwen3's split it.
                if (k == "content" && v.is_null()) v = Json(std::string());
                if (k != "tool_calls" || !v.as_array()) continue;
                Json::Array calls = *v.as_array();
                for (Json& call : calls) {
                    if (!call.as_object()) continue;
                    Json::Object c = *call.as_object();
                    for (auto& [ck, cv] : c) {
                        if (ck != "function" || !cv.as_object()) continue;
                        Json::Object f = *cv.as_object();
                        for (auto& [fk, fv] : f)
                            if (fk == "arguments" && fv.as_string()) {
                                try {
                                    fv = Json::parse(*fv.as_string());
                                } catch (const EngineError&) {
                                    // Not JSON: the template gets the text.
                                }
                            }
                        cv = Json(std::move(f));
                    }
                    call = Json(std::move(c));
                }
                v = Json(std::move(calls));
            }
            out.push_back(Json(std::move(o)));
        }
        const jinja::Value msgs = jinja::from_json(Json(std::move(out)).dump(0));
        const jinja::Value tls =
            tool_list.empty() ? jinja::Value::none() : jinja::from_json(Json(tool_list).dump(0));
        try {
            return tmpl.render(msgs, tls, true);
        } catch (const jinja::TemplateError& e) {
            throw EngineError(std::string("the model's chat template cannot render this "
                                          "conversation: ") +
                              e.what());
        }
    }

    std::vector<ChatMessage> chat;
    for (const Json& m : *messages->as_array()) {
        const std::string* role = string_at(m, "role");
        if (!role) throw EngineError("chat_json: every message needs a \"role\"");
        std::string text = content_text(m);
        if (*role == "tool") {
            // Consecutive results share one user turn, as Qwen's template does.
            const std::string block = "<tool_response>\n" + text + "\n</tool_response>";
            if (!chat.empty() && chat.back().role == "user" &&
                chat.back().content.rfind("<tool_response>", 0) == 0)
                chat.back().content += "\n" + block;
            else
                chat.push_back({"user", block});
            continue;
        }
        if (const Json* calls = m.find("tool_calls"); calls && calls->as_array())
            for (const Json& call : *calls->as_array())
                text += (text.empty() ? "" : "\n") + tool_call_text(call);
        chat.push_back({*role, std::move(text)});
    }
    if (!tool_list.empty()) {
        const std::string instructions = tools_instructions(tool_list);
        if (!chat.empty() && chat.front().role == "system")
            chat.front().content += "\n\n" + instructions;
        else
            chat.insert(chat.begin(), {"system", instructions});
    }
    return tmpl.format(chat, true);
}

}  // namespace powerinfer::runtime
