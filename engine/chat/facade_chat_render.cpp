// powerinfer/chat_render.h over the Jinja interpreter.
#include <utility>
#include <vector>

#include "chat/jinja.h"
#include "powerinfer/chat_render.h"

namespace powerinfer {

std::string render_chat_template(const ChatRenderRequest& r) {
    using jinja::Value;
    Value input;
    try {
        input = jinja::from_json(r.messages_json);
    } catch (const jinja::TemplateError& e) {
        throw ChatMessagesError(e.what());
    }
    if (!input.is_dict() || !input.as_dict().find("messages"))
        throw ChatMessagesError("expected a JSON object with \"messages\"");

    // The variables apply_chat_template gives the template.
    std::vector<std::pair<Value, Value>> vars;
    for (const auto& [k, v] : input.as_dict().items) vars.emplace_back(k, v);
    auto set_default = [&](const char* key, Value v) {
        if (!input.as_dict().find(key)) vars.emplace_back(Value(key), std::move(v));
    };
    set_default("tools", Value::none());
    set_default("documents", Value::none());
    vars.emplace_back(Value("add_generation_prompt"), Value(r.add_generation_prompt));
    vars.emplace_back(Value("bos_token"), Value(r.bos_token));
    vars.emplace_back(Value("eos_token"), Value(r.eos_token));

    jinja::Options options;
    options.now = r.now;
    try {
        return jinja::Template(r.template_source, options).render(Value::dict(std::move(vars)));
    } catch (const jinja::TemplateError& e) {
        throw ChatTemplateError(e.what());
    }
}

std::tm chat_calendar_time(int year, int month, int day, int hour, int minute, int second) {
    return jinja::civil_time(year, month, day, hour, minute, second);
}

}  // namespace powerinfer
