// Python's str operations the Jinja builtins share (jinja_strings.cpp): what
// the str methods and the filters built on them call. Internal header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_internal.h"

namespace powerinfer::jinja::pystr {

using U32 = std::u32string;

// UTF-8 to code points and back.
U32 decode(std::string_view s);
std::string encode(const U32& s);

// A length or count clamped to what a template can ask for (+-2^40).
int64_t clamp_len(int64_t v);
std::string strip(std::string_view s, const Value* chars, bool left, bool right);
std::vector<Value> split(std::string_view s, const Value* sep, int64_t maxsplit, bool from_right);
std::vector<std::string> splitlines(std::string_view s, bool keepends);
void append_upper(U32& out, char32_t c);
// Python's str.isupper (upper) / islower: some code point is cased, and none
// is of the other case (the `upper` / `lower` tests too).
bool all_cased(const U32& u, bool upper);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string py_title(std::string_view s);
std::string capitalize(std::string_view s);
std::string replace(Interpreter& in, std::string_view s, std::string_view old,
                    std::string_view with, int64_t count);
int64_t cp_index(std::string_view s, size_t byte);
bool affix(const std::string& s, const Value& arg, const Value* start, const Value* end,
           bool suffix);
std::string pad(std::string_view s, int64_t width, char32_t fill, int align);
char32_t fill_char(const Value* v);
std::string str_format(Interpreter& in, const std::string& fmt, const CallArgs& a);

}  // namespace powerinfer::jinja::pystr
