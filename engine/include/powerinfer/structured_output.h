// Checks for structured output (OutputConstraint in powerinfer/engine.h),
// so that a front end can refuse a request before it is queued.
#pragma once

#include <string>

namespace powerinfer {

// "" when the constrained sampler can enforce this JSON Schema (text), else
// a sentence naming the keyword and where it is, or the JSON error.
std::string json_schema_problem(const std::string& schema_json);

}  // namespace powerinfer
