// config.json round trip, defaults, and errors that name the file and position.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "powerinfer/engine.h"
#include "runtime/json.h"

using namespace powerinfer;

namespace {

void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

QString error_of(const std::filesystem::path& p) {
    try {
        load_tuning(p);
    } catch (const EngineError& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

}  // namespace

class TestTuningConfig : public QObject {
    Q_OBJECT
private slots:
    void missingFileGivesDefaults() {
        QTemporaryDir dir;
        const Tuning t = load_tuning(std::filesystem::path(dir.path().toStdString()) / "none.json");
        QCOMPARE(t.hot_neuron_threshold, 0.85);
        QCOMPARE(t.chunk_size, 256);
        QCOMPARE(t.vram_budget_mb, int64_t(-1));
        QVERIFY(t.sparse);
    }

    void roundTrip() {
        QTemporaryDir dir;
        const auto p = std::filesystem::path(dir.path().toStdString()) / "sub" / "config.json";
        Tuning t;
        t.hot_neuron_threshold = 0.7;
        t.predictor_threshold = 0.35;
        t.cache_window_size = 3;
        t.prefetch_depth = 0;
        t.chunk_size = 64;
        t.force_full_precision_layers = {0, 29};
        t.vram_budget_mb = 2048;
        t.sparse = false;
        save_tuning(p, t);
        const Tuning r = load_tuning(p);
        QCOMPARE(r.hot_neuron_threshold, 0.7);
        QCOMPARE(r.predictor_threshold, 0.35);
        QCOMPARE(r.cache_window_size, 3);
        QCOMPARE(r.prefetch_depth, 0);
        QCOMPARE(r.chunk_size, 64);
        QCOMPARE(r.force_full_precision_layers, (std::vector<int>{0, 29}));
        QCOMPARE(r.vram_budget_mb, int64_t(2048));
        QVERIFY(!r.sparse);
        // "auto" budget is written as a string and read back as -1.
        save_tuning(p, Tuning{});
        QCOMPARE(load_tuning(p).vram_budget_mb, int64_t(-1));
    }

    void partialAndUnknownKeys() {
        QTemporaryDir dir;
        const auto p = std::filesystem::path(dir.path().toStdString()) / "c.json";
        write(p,
              "{\"prefetch_depth\": 5, \"future_knob\": {\"x\": [1, 2]}, \"vram_budget_mb\": "
              "\"auto\"}");
        const Tuning t = load_tuning(p);
        QCOMPARE(t.prefetch_depth, 5);
        QCOMPARE(t.chunk_size, 256);
    }

    void malformed() {
        QTemporaryDir dir;
        const auto p = std::filesystem::path(dir.path().toStdString()) / "bad.json";
        write(p, "{\n  \"chunk_size\": 12,\n  \"sparse\": tru\n}");
        QString err = error_of(p);
        QVERIFY2(err.startsWith(QString::fromStdString(p.string())), qPrintable(err));
        QVERIFY2(err.contains("line 3, column 13"), qPrintable(err));

        write(p, "{\"chunk_size\": 12,}");
        QVERIFY2(error_of(p).contains("expected a quoted key at line 1, column 19"),
                 qPrintable(error_of(p)));
        write(p, "{\"chunk_size\": \"big\"}");
        QVERIFY2(error_of(p).contains("\"chunk_size\" must be an integer"),
                 qPrintable(error_of(p)));
        write(p, "{\"hot_neuron_threshold\": 1.5}");
        QVERIFY(error_of(p).contains("hot_neuron_threshold"));
        write(p, "[1, 2]");
        QVERIFY(error_of(p).contains("expected a JSON object"));
        write(p, "");
        QVERIFY(error_of(p).contains("unexpected end of file"));
    }

    void jsonStrings() {
        using powerinfer::runtime::Json;
        // Escapes, a \u escape and a surrogate pair (no raw string: moc
        // mis-parses them).
        const Json j = Json::parse(
            "{\"s\": \"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\", \"n\": -1.5e2, \"e\": []}");
        QCOMPARE(*j.find("s")->as_string(), std::string("a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80"));
        QCOMPARE(*j.find("n")->as_number(), -150.0);
        const Json back = Json::parse(j.dump());
        QCOMPARE(*back.find("s")->as_string(), *j.find("s")->as_string());
        QCOMPARE(Json(0.1).dump(), std::string("0.1"));
    }
};

QTEST_GUILESS_MAIN(TestTuningConfig)
#include "tst_tuning_config.moc"
