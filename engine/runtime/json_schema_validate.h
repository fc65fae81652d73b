// An independent check of a JSON document against the JSON Schema subset
// that the constrained sampler enforces (json_grammar.h): the reference the
// structured-output tests judge replies by.
#pragma once

#include <string>

#include "runtime/json.h"

namespace powerinfer::runtime {

// "" if `doc` is valid under `schema`, else the first violation with its
// JSON pointer ("#/items/2: expected an integer").
std::string json_schema_violation(const Json& doc, const Json& schema);

}  // namespace powerinfer::runtime
