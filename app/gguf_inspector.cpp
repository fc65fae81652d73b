#include "gguf_inspector.h"

#include <filesystem>
#include <utility>

#include "powerinfer/model_file.h"

namespace powerinfer::app {

QString quantLabel(int64_t fileType, const QString& dominantType) {
    const std::string name = powerinfer::file_type_name(fileType);
    if (!name.empty()) return QString::fromStdString(name);
    return dominantType;
}

ModelFileInfo ggufModelInfo(const QString& path) {
    ModelFileInfo m = basicModelInfo(path);
    if (!m.error.isEmpty()) return m;
    try {
        const powerinfer::ModelFileInfo f =
            powerinfer::inspect_model_file(std::filesystem::path(path.toStdU16String()));
        m.architecture = QString::fromStdString(f.architecture);
        m.generalName = QString::fromStdString(f.name);
        if (!f.name.empty()) m.name = m.generalName;
        m.quant = quantLabel(f.file_type, QString::fromStdString(f.quant));
        m.nParams = f.n_params;
        m.nLayers = int(f.n_layers);
        m.nEmbd = int(f.n_embd);
        m.nHead = int(f.n_head);
        m.nHeadKv = int(f.n_head_kv);
        m.nFf = int(f.n_ff);
        m.nVocab = int(f.n_vocab);
        // An architecture the engine does not run shows as broken, with why.
        if (const std::string why =
                powerinfer::model_file_problem(std::filesystem::path(path.toStdU16String()));
            !why.empty())
            m.error = QString::fromUtf8(why.c_str());
    } catch (const std::exception& e) {
        m.error = QString::fromUtf8(e.what());
    }
    return m;
}

}  // namespace powerinfer::app
