// libFuzzer entry point for the Jinja interpreter: any byte string is a
// template (and, after a NUL byte, the JSON of the variables); it must either
// render or throw TemplateError. Crashes, sanitizer reports, other
// exceptions, leaks, hangs (> 10 s) and more than 2 GB are bugs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/jinja.h"

namespace {

using namespace powerinfer::jinja;

const Value& default_variables() {
    static const Value v = from_json(R"({
      "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello \u00e9 \ud83d\ude00"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call12345", "type": "function",
          "function": {"name": "get_weather", "arguments": {"city": "Paris", "n": 1.5}}}]},
        {"role": "tool", "tool_call_id": "call12345", "content": "{\"t\": 22}"},
        {"role": "user", "content": ["not", "a", "string"]}
      ],
      "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"]}}}],
      "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"
    })");
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const size_t nul = input.find('\0');
    Options options;
    // Smaller limits than the defaults, so that each input runs quickly.
    options.limits.max_steps = 50'000;
    options.limits.max_output = size_t{1} << 20;
    options.limits.max_items = size_t{1} << 16;
    options.now = civil_time(2025, 6, 15, 10, 30, 0);
    try {
        Value variables = default_variables();
        if (nul != std::string_view::npos) {
            try {
                variables = from_json(input.substr(nul + 1));
            } catch (const TemplateError&) {
            }
        }
        const Template t(input.substr(0, nul), options);
        const std::string out = t.render(variables);
        volatile size_t sink = out.size();
        (void)sink;
    } catch (const TemplateError&) {
    }
    return 0;
}
