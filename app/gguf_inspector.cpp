#include "gguf_inspector.h"

#include <filesystem>
#include <map>

#include "gguf/gguf.h"

namespace powerinfer::app {

ModelFileInfo ggufModelInfo(const QString& path) {
    ModelFileInfo m = basicModelInfo(path);
    if (!m.error.isEmpty()) return m;
    try {
        const auto file = gguf::GgufFile::open(std::filesystem::path(path.toStdU16String()));
        if (auto arch = file->get_string("general.architecture"))
            m.architecture = QString::fromStdString(*arch);
        if (auto name = file->get_string("general.name"); name && !name->empty())
            m.name = QString::fromStdString(*name);
        // The weight type holding most bytes names the quantization.
        std::map<GgmlType, uint64_t> bytesByType;
        for (const auto& t : file->tensors()) bytesByType[t.type] += t.n_bytes;
        uint64_t best = 0;
        for (const auto& [type, bytes] : bytesByType) {
            if (bytes > best) {
                best = bytes;
                m.quant = QString::fromLatin1(ggml_type_name(type).data(),
                                              qsizetype(ggml_type_name(type).size()));
            }
        }
    } catch (const std::exception& e) {
        m.error = QString::fromUtf8(e.what());
    }
    return m;
}

}  // namespace powerinfer::app
