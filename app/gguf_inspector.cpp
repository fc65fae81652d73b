#include "gguf_inspector.h"

#include <filesystem>
#include <utility>

#include "powerinfer/model_file.h"

namespace powerinfer::app {

QString quantLabel(int64_t fileType, const QString& dominantType) {
    // llama_ftype values that name one quantization (llama.cpp's list).
    static constexpr std::pair<int64_t, const char*> kFileTypes[] = {
        {0, "F32"},      {1, "F16"},      {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},
        {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"},
        {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"},
        {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"}, {21, "Q2_K_S"}, {22, "IQ3_XS"},
        {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"}, {26, "IQ3_S"},  {27, "IQ3_M"},
        {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"}, {31, "IQ1_M"},  {32, "BF16"},
        {36, "TQ1_0"},   {37, "TQ2_0"},
    };
    for (const auto& [id, name] : kFileTypes)
        if (id == fileType) return QString::fromLatin1(name);
    return dominantType;
}

ModelFileInfo ggufModelInfo(const QString& path) {
    ModelFileInfo m = basicModelInfo(path);
    if (!m.error.isEmpty()) return m;
    try {
        const powerinfer::ModelFileInfo f =
            powerinfer::inspect_model_file(std::filesystem::path(path.toStdU16String()));
        m.architecture = QString::fromStdString(f.architecture);
        if (!f.name.empty()) m.name = QString::fromStdString(f.name);
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
