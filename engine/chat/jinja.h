// A Jinja interpreter for chat templates: renders a model's
// `tokenizer.chat_template` the way Hugging Face transformers'
// apply_chat_template does, i.e. like Python's jinja2 with
//   ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
//                                 extensions=[loopcontrols, AssistantTracker])
// plus transformers' tojson (json.dumps(..., ensure_ascii=False)),
// raise_exception(msg) and strftime_now(fmt). Undefined variables print as
// "" and are falsy (jinja2's default Undefined); what jinja2 raises on, this
// raises on too (TemplateError, with the line and column).
//
// Supported: {{ }}, {% %}, {# #}, whitespace control (-, +), raw; if/elif/
// else, for (loop.*, else, `if` filter, unpacking), set (names, tuples,
// namespace attributes, blocks), macro, call, filter blocks, break/continue,
// with, generation; all of jinja2's expression syntax; the filters, tests and
// str/dict/list methods templates use (see jinja_builtins.cpp). Not
// supported (a TemplateError): include/import/extends/block, recursive loops.
//
// Where Python differs and chat templates do not care: integers are 64-bit
// (overflow is an error, not a big int); upper/lower/title map ASCII,
// Latin-1, Latin Extended-A, Greek and Cyrillic only; range() is a list;
// Markup (the e/escape filters' result) is a plain string; functions print
// without an address; jinja2's compile-time constant folding is copied only
// for slices of literals in {{ }}; filesizeformat, groupby, random, slice,
// striptags, urlencode, urlize, wordwrap and xmlattr are a TemplateError.
//
// Templates come from downloaded files, so everything is bounded (Limits):
// nesting, evaluation steps, output and value sizes. No input crashes or
// hangs the interpreter; the worst is a TemplateError.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace powerinfer::jinja {

struct Limits {
    // Nesting of the template's constructs while it runs (expressions,
    // statements, macro calls); also bounds recursion.
    int max_depth = 256;
    // Evaluation steps per render; linear work (scanning a list or a long
    // string) counts in proportion. About a second at the default.
    uint64_t max_steps = 20'000'000;
    // Bytes of output, and of any one string.
    size_t max_output = size_t{8} << 20;
    // Elements of any one list (range() is capped at 100000 as in jinja2's sandbox).
    size_t max_items = size_t{1} << 20;
};

struct Options {
    Limits limits;
    // The time strftime_now() formats; unset: the local time when rendering.
    std::optional<std::tm> now;
};

// A calendar time with the weekday and day of the year filled in (for
// Options::now; month 1-12).
std::tm civil_time(int year, int month, int day, int hour = 0, int minute = 0, int second = 0);

struct Program;

class Template {
public:
    // Parses the template; a syntax error throws TemplateError.
    explicit Template(std::string_view source, Options options = {});
    ~Template();
    Template(const Template&);
    Template& operator=(const Template&);
    Template(Template&&) noexcept;
    Template& operator=(Template&&) noexcept;

    // Renders with these variables (a dict, e.g. messages, tools,
    // add_generation_prompt, bos_token, eos_token) on top of the globals.
    // Throws TemplateError.
    std::string render(const Value& variables) const;

    const Options& options() const { return options_; }
    void set_options(const Options& options) { options_ = options; }

private:
    std::shared_ptr<const Program> program_;
    Options options_;
};

}  // namespace powerinfer::jinja
