// powerinfer/model_file.h over the GGUF reader.
#include <algorithm>
#include <map>

#include "common/ggml_types.h"
#include "gguf/gguf.h"
#include "powerinfer/model_file.h"

namespace powerinfer {

ModelFileInfo inspect_model_file(const std::filesystem::path& path) {
    const auto file = gguf::GgufFile::open(path);
    ModelFileInfo m;
    m.gguf_version = file->version();
    m.file_bytes = static_cast<int64_t>(file->file_size());
    m.architecture = file->get_string("general.architecture").value_or("");
    m.name = file->get_string("general.name").value_or("");
    m.file_type = file->get_int("general.file_type").value_or(-1);
    std::map<std::string, ModelFileTypeBytes> by_type;
    std::map<std::string, int64_t> matrix_bytes;
    for (const auto& t : file->tensors()) {
        const std::string type(ggml_type_name(t.type));
        ModelFileTypeBytes& b = by_type[type];
        b.type = type;
        ++b.tensors;
        b.bytes += static_cast<int64_t>(t.n_bytes);
        if (t.shape.size() >= 2) matrix_bytes[type] += static_cast<int64_t>(t.n_bytes);
        m.n_params += static_cast<int64_t>(t.n_elements);
        ++m.n_tensors;
    }
    int64_t most = 0;
    for (const auto& [type, bytes] : matrix_bytes)
        if (bytes > most) {
            most = bytes;
            m.quant = type;
        }
    for (auto& [type, b] : by_type) m.types.push_back(b);
    std::stable_sort(m.types.begin(), m.types.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    auto arch_int = [&](const char* key) {
        return file->get_int(m.architecture + "." + key).value_or(0);
    };
    if (!m.architecture.empty()) {
        m.n_layers = arch_int("block_count");
        m.n_embd = arch_int("embedding_length");
        m.n_ff = arch_int("feed_forward_length");
        m.n_head = arch_int("attention.head_count");
        m.n_head_kv = file->get_int(m.architecture + ".attention.head_count_kv").value_or(m.n_head);
        m.n_ctx_train = arch_int("context_length");
    }
    const std::vector<std::string> tokens = file->get_string_array("tokenizer.ggml.tokens");
    m.n_vocab = static_cast<int64_t>(tokens.size());
    auto special = [&](const char* key, int32_t* id, std::string* text) {
        const auto v = file->get_int(key);
        if (!v || *v < 0 || static_cast<size_t>(*v) >= tokens.size()) return;
        *id = static_cast<int32_t>(*v);
        *text = tokens[static_cast<size_t>(*v)];
    };
    special("tokenizer.ggml.bos_token_id", &m.bos_id, &m.bos_text);
    special("tokenizer.ggml.eos_token_id", &m.eos_id, &m.eos_text);
    if (auto tmpl = file->get_string("tokenizer.chat_template")) {
        m.has_chat_template = true;
        m.chat_template = std::move(*tmpl);
    }
    return m;
}

std::string describe_model_file(const std::filesystem::path& path) {
    return gguf::describe(*gguf::GgufFile::open(path));
}

std::string file_type_name(int64_t file_type) { return std::string(llama_ftype_name(file_type)); }

}  // namespace powerinfer
