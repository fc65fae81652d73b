// The model picker's facts from a GGUF header (app/gguf_inspector.cpp), on
// files written with the project's GGUF writer.
#include <QTemporaryDir>
#include <QtTest>

#include "gguf/gguf.h"
#include "gguf_inspector.h"

using namespace powerinfer;
using namespace powerinfer::app;

namespace {

// A file whose matrices are mostly Q8_0 bytes, saying `fileType` (or nothing).
QString writeModel(const QString& dir, const char* name, int64_t fileType) {
    gguf::GgufWriter w;
    w.set("general.architecture", gguf::Value::str("llama"));
    w.set("general.name", gguf::Value::str("Tiny"));
    if (fileType >= 0) w.set("general.file_type", gguf::Value::u32(uint32_t(fileType)));
    // Q8_0: 34 bytes per block of 32.
    w.add_tensor("blk.0.ffn_down.weight", GgmlType::Q8_0, {32, 8}, std::vector<uint8_t>(8 * 34));
    w.add_tensor("output_norm.weight", GgmlType::F32, {32}, std::vector<uint8_t>(32 * 4));
    const QString path = QDir(dir).filePath(name);
    w.write(std::filesystem::path(path.toStdU16String()));
    return path;
}

}  // namespace

class TestGgufInspector : public QObject {
    Q_OBJECT
private slots:
    // Issue 30, item 10: Q4_K_M files (file type 15) showed as "Q5_0" or
    // "Q8_0": the type holding most matrix bytes, not what the file is.
    void theQuantizationIsTheFilesOwnType() {
        QTemporaryDir dir;
        const ModelFileInfo said = ggufModelInfo(writeModel(dir.path(), "said.gguf", 15));
        QCOMPARE(said.quant, QStringLiteral("Q4_K_M"));
        QCOMPARE(ggufModelInfo(writeModel(dir.path(), "q5km.gguf", 17)).quant,
                 QStringLiteral("Q5_K_M"));
        // A file that does not say: the type holding most matrix bytes.
        QCOMPARE(ggufModelInfo(writeModel(dir.path(), "silent.gguf", -1)).quant,
                 QStringLiteral("Q8_0"));
        // A type llama.cpp does not list: the same.
        QCOMPARE(ggufModelInfo(writeModel(dir.path(), "odd.gguf", 999)).quant,
                 QStringLiteral("Q8_0"));
        // The project's Gemma 3 270M download is Q4_K_M (when it is here).
        const QString gemma = qEnvironmentVariable("POWERINFER_GEMMA_MODEL");
        if (!gemma.isEmpty() && QFile::exists(gemma))
            QCOMPARE(ggufModelInfo(gemma).quant, QStringLiteral("Q4_K_M"));
    }
};

QTEST_GUILESS_MAIN(TestGgufInspector)
#include "tst_gguf_inspector.moc"
