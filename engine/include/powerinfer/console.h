// The command-line tools' arguments and console text in UTF-8. On Windows
// main()'s argv and the console use the ANSI/OEM code pages (a prompt in
// Cyrillic arrives as "??????", a path with "é" as one Latin-1 byte); these
// take the arguments from the UTF-16 command line and set the console to
// UTF-8. Elsewhere they pass through what the system gives.
#pragma once

#include <string>
#include <vector>

namespace powerinfer {

// main()'s arguments as UTF-8 strings, with an argc/argv view for code that
// parses argv.
class Utf8Arguments {
public:
    Utf8Arguments(int argc, char** argv);
    Utf8Arguments(const Utf8Arguments&) = delete;
    Utf8Arguments& operator=(const Utf8Arguments&) = delete;

    int argc() const { return static_cast<int>(args_.size()); }
    char** argv() { return pointers_.data(); }

private:
    std::vector<std::string> args_;
    std::vector<char*> pointers_;  // into args_, then a null
};

// Windows: the console's input and output code pages become UTF-8 (restored
// at exit) and stdin/stdout/stderr binary, so that the bytes a tool writes
// (the model's text, "\n" line ends) are what a file or pipe receives, and
// a file on stdin is read as it is, as on Linux. Elsewhere: nothing. Call
// once, first thing in main().
void use_utf8_console();

// One line of standard input, without its line end ("\n" or "\r\n"), in
// UTF-8; false at the end of input. Windows: from a console through the
// UTF-16 API (8-bit console reads in UTF-8 lose non-ASCII characters on many
// Windows versions), from a pipe or a file as the bytes are.
bool read_line_utf8(std::string& line);

}  // namespace powerinfer
