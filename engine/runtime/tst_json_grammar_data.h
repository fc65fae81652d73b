// Test data of tst_json_grammar.cpp (schemas and documents).
#pragma once

#include <vector>

struct UnsupportedCase {
    const char* schema;
    const char* words;  // in the refusal's message
};

extern const char* const kPerson;
std::vector<UnsupportedCase> unsupported_cases();
std::vector<const char*> walk_schemas();
