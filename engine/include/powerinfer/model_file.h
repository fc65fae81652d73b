// What a GGUF model file holds, without loading the model: for a model
// picker, `powerinfer-cli --info` and the render of a model's chat template.
// The file is fully validated first; a corrupt or truncated file throws
// EngineError whose message names the file, the problem and the offset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "powerinfer/error.h"

namespace powerinfer {

struct ModelFileTypeBytes {
    std::string type;  // "Q4_1", "F32", ...
    int64_t tensors = 0;
    int64_t bytes = 0;
};

struct ModelFileInfo {
    uint32_t gguf_version = 0;
    int64_t file_bytes = 0;
    std::string architecture;  // general.architecture ("llama"; "" if missing)
    std::string name;          // general.name ("" if missing)
    // The weight type holding most bytes among the matrices (as
    // ModelInfo::quant of a loaded model).
    std::string quant;
    // general.file_type (llama.cpp's llama_ftype, e.g. 15 = Q4_K_M), what the
    // file says it is; -1 when the file does not say.
    int64_t file_type = -1;
    int64_t n_tensors = 0;
    int64_t n_params = 0;                   // elements of every tensor
    std::vector<ModelFileTypeBytes> types;  // most bytes first
    // From the architecture's metadata; 0 where the file does not say.
    int64_t n_layers = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, n_ctx_train = 0;
    int64_t n_vocab = 0;               // tokenizer.ggml.tokens
    int32_t bos_id = -1, eos_id = -1;  // -1: none
    std::string bos_text, eos_text;    // their token texts ("" if none)
    bool has_chat_template = false;
    std::string chat_template;  // tokenizer.chat_template (Jinja source)
};

ModelFileInfo inspect_model_file(const std::filesystem::path& path);

// Whether the engine runs this file: "" when its architecture and
// configuration are supported, else the message Engine::load would give
// ("unsupported architecture 'gpt2': ..."). Reads the header only.
std::string model_file_problem(const std::filesystem::path& path);

// `powerinfer-cli --info`: the metadata and the tensor table as text.
std::string describe_model_file(const std::filesystem::path& path);

// The quantization a general.file_type names ("Q4_K_M" for 15); empty for a
// value that names none.
std::string file_type_name(int64_t file_type);

}  // namespace powerinfer
