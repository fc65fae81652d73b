// powerinfer/structured_output.h over the schema compiler.
#include "powerinfer/structured_output.h"
#include "runtime/json_grammar.h"

namespace powerinfer {

std::string json_schema_problem(const std::string& schema_json) {
    try {
        runtime::compile_json_schema_text(schema_json);
        return {};
    } catch (const EngineError& e) {
        return e.what();
    }
}

}  // namespace powerinfer
