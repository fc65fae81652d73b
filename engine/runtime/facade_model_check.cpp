// powerinfer/model_file.h's model_file_problem: the header and the model
// configuration, read the way Engine::load reads them first.
#include "gguf/gguf.h"
#include "model/model_config.h"
#include "powerinfer/model_file.h"

namespace powerinfer {

std::string model_file_problem(const std::filesystem::path& path) {
    try {
        const auto file = gguf::GgufFile::open(path);
        model::ModelConfig::from_gguf(*file);
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

}  // namespace powerinfer
