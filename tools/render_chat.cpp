// powerinfer-cli --render-chat TEMPLATE_FILE MESSAGES_JSON [--bos TEXT] [--eos TEXT]
//                              [--no-generation-prompt] [--now YYYY-MM-DDTHH:MM:SS]
//
// TEMPLATE_FILE is a Jinja chat template, or a GGUF model (its
// tokenizer.chat_template, and its BOS/EOS texts unless --bos/--eos say
// otherwise). MESSAGES_JSON is a file (or "-" for stdin, or the JSON text
// itself) holding an OpenAI-style {"messages": [...], "tools": [...]};
// other keys (documents, enable_thinking, ...) are passed to the template as
// variables, as apply_chat_template passes its keyword arguments. Prints the
// rendered prompt exactly, without a newline after it.
#include "render_chat.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "powerinfer/chat_render.h"
#include "powerinfer/model_file.h"
#include "powerinfer/utf8_path.h"

namespace powerinfer::cli {
namespace {

const char* kRenderUsage =
    "usage: powerinfer-cli --render-chat TEMPLATE_FILE MESSAGES_JSON [--bos TEXT] [--eos TEXT]\n"
    "                      [--no-generation-prompt] [--now YYYY-MM-DDTHH:MM:SS]\n"
    "  TEMPLATE_FILE   a Jinja chat template, or a .gguf model (its tokenizer.chat_template\n"
    "                  and BOS/EOS texts)\n"
    "  MESSAGES_JSON   a file, \"-\" (stdin) or the JSON text: {\"messages\": [...], \"tools\": "
    "[...]}\n"
    "  --bos, --eos    the bos_token/eos_token texts (default: empty, or the model's)\n"
    "  --no-generation-prompt  add_generation_prompt=false (default true)\n"
    "  --now           the time strftime_now() formats (default: the local time)\n"
    "Prints the prompt as transformers' apply_chat_template renders it, with no newline added.\n";

struct Usage {
    std::string message;
};

bool read_file(const std::string& path, std::string* out) {
    if (path == "-") {
        std::ostringstream s;
        s << std::cin.rdbuf();
        *out = s.str();
        return true;
    }
    std::ifstream f(path_from_utf8(path), std::ios::binary);
    if (!f) return false;
    std::ostringstream s;
    s << f.rdbuf();
    *out = s.str();
    return true;
}

bool is_gguf(const std::string& path) {
    std::ifstream f(path_from_utf8(path), std::ios::binary);
    char magic[4] = {};
    return f.read(magic, 4) && std::string(magic, 4) == "GGUF";
}

std::tm parse_now(const std::string& text) {
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
    const int n = std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &s);
    if ((n != 3 && n != 6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
        throw Usage{"--now expects YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, got '" + text + "'"};
    return chat_calendar_time(y, mo, d, h, mi, s);
}

}  // namespace

bool wants_render_chat(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--render-chat") return true;
    return false;
}

int render_chat(int argc, char** argv) {
    try {
        std::vector<std::string> positional;
        std::optional<std::string> bos, eos;
        ChatRenderRequest request;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw Usage{"option " + a + " needs a value"};
                return argv[++i];
            };
            if (a == "--render-chat") {
                continue;
            } else if (a == "--bos") {
                bos = value();
            } else if (a == "--eos") {
                eos = value();
            } else if (a == "--no-generation-prompt") {
                request.add_generation_prompt = false;
            } else if (a == "--now") {
                request.now = parse_now(value());
            } else if (a == "-h" || a == "--help") {
                std::fputs(kRenderUsage, stdout);
                return 0;
            } else if (a.size() > 1 && a[0] == '-' && a != "-") {
                throw Usage{"unknown option '" + a + "' for --render-chat"};
            } else {
                positional.push_back(a);
            }
        }
        if (positional.size() != 2)
            throw Usage{"--render-chat needs TEMPLATE_FILE and MESSAGES_JSON"};

        std::string& source = request.template_source;
        if (is_gguf(positional[0])) {
            const ModelFileInfo file = inspect_model_file(path_from_utf8(positional[0]));
            if (!file.has_chat_template) {
                std::fprintf(stderr, "error: %s has no tokenizer.chat_template\n",
                             positional[0].c_str());
                return 1;
            }
            source = file.chat_template;
            if (!bos) bos = file.bos_text;
            if (!eos) eos = file.eos_text;
        } else if (!read_file(positional[0], &source)) {
            std::fprintf(stderr, "error: %s: cannot read the template file\n",
                         positional[0].c_str());
            return 1;
        }

        std::string& json_text = request.messages_json;
        const std::string& m = positional[1];
        const size_t first = m.find_first_not_of(" \t\r\n");
        if (first != std::string::npos && m[first] == '{') {
            json_text = m;
        } else if (!read_file(m, &json_text)) {
            std::fprintf(stderr, "error: %s: cannot read the messages file\n", m.c_str());
            return 1;
        }
        request.bos_token = bos.value_or("");
        request.eos_token = eos.value_or("");
        std::string out;
        try {
            out = render_chat_template(request);
        } catch (const ChatMessagesError& e) {
            std::fprintf(stderr, "error: %s: %s\n", m.c_str(), e.what());
            return 1;
        } catch (const ChatTemplateError& e) {
            std::fprintf(stderr, "error: %s: %s\n", positional[0].c_str(), e.what());
            return 1;
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
        return 0;
    } catch (const Usage& u) {
        std::fprintf(stderr, "error: %s\n\n%s", u.message.c_str(), kRenderUsage);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}

}  // namespace powerinfer::cli
