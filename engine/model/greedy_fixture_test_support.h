// Test support (Qt tests): a tiny synthetic model's run against its
// llama.cpp fixture (moe_greedy.json, qwen35_greedy.json: per model the
// preset, the file's size and FNV-1a 64 hash, and per prompt the greedy
// continuation with the top-5 logits of every step), teacher-forced with
// llama.cpp's tokens (tst_moe, tst_qwen35).
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QtGlobal>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/model.h"
#include "tensor/quant.h"

namespace powerinfer::model::testing {

inline std::string fnv1a64(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint64_t h = 0xCBF29CE484222325ull;
    for (unsigned char b : bytes) {
        h ^= b;
        h *= 0x100000001B3ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

inline int32_t argmax(const std::vector<float>& l) {
    return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
}

struct FixtureScore {
    int cases = 0, cases_equal = 0;   // prompts, and those whose every step is llama.cpp's
    int steps = 0, agree = 0;         // greedy steps, and those whose argmax is llama.cpp's
    int compared = 0, bit_equal = 0;  // top-5 logits, and those equal bit for bit
    double worst = 0;                 // largest relative difference of a top-5 logit
    double max_err = 0, sum_err = 0;  // absolute differences of the top-5 logits
    double worst_tie = 0;  // where our argmax differs: llama.cpp's margin between the two
};

// Runs every case of a fixture entry (`entry["cases"]`, named by
// `entry["preset"]` if it has one) through `m`: the prompt in one forward()
// (the model's chunks), then each step's logits against llama.cpp's top 5
// and the next token llama.cpp's (teacher-forced). The first few logit
// differences and each prompt's first divergence are logged.
inline FixtureScore score_greedy_fixture(Model& m, const QJsonObject& entry) {
    FixtureScore r;
    const std::string preset = entry["preset"].toString().toStdString();
    std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
    for (const auto& cv : entry["cases"].toArray()) {
        const QJsonObject c = cv.toObject();
        std::vector<int32_t> prompt;
        for (const auto& t : c["prompt_ids"].toArray()) prompt.push_back(t.toInt());
        const QJsonArray gen = c["generated_ids"].toArray();
        const QJsonArray top5 = c["top5"].toArray();
        m.forward(prompt.data(), int64_t(prompt.size()), 0, 1, logits.data());
        int64_t pos = int64_t(prompt.size());
        bool equal = true;
        ++r.cases;
        for (int s = 0; s < gen.size(); ++s) {
            double want_ref = 0, got_ref = 1e300;  // llama.cpp's logits of its and our choice
            const int32_t want = gen[s].toInt();
            const int32_t got = argmax(logits);
            for (const auto& pv : top5[s].toArray()) {
                const QJsonArray pair = pv.toArray();
                const int id = pair[0].toInt();
                // The fixture holds llama.cpp's float logits written as doubles.
                const double value = pair[1].toDouble();
                const float ours = logits[static_cast<size_t>(id)];
                const double err = std::fabs(double(ours) - value);
                ++r.compared;
                r.max_err = std::max(r.max_err, err);
                r.sum_err += err;
                r.worst = std::max(r.worst, err / std::max(1e-6, std::fabs(value)));
                if (id == want) want_ref = value;
                if (id == got) got_ref = value;
                if (ours == static_cast<float>(value)) {
                    ++r.bit_equal;
                } else if (r.compared - r.bit_equal <= 3) {
                    qWarning("%s prompt of %d step %d id %d: ours %.9g, llama.cpp %.9g",
                             preset.c_str(), int(prompt.size()), s, id, ours, value);
                }
            }
            ++r.steps;
            if (got == want) {
                ++r.agree;
            } else {
                const double gap = got_ref < 1e300 ? want_ref - got_ref : 1e9;
                r.worst_tie = std::max(r.worst_tie, gap);
                if (equal)
                    qInfo("%s '%s' diverges at step %d: ours %d vs llama.cpp %d; our gap %.4f, "
                          "llama.cpp's gap %.4f",
                          preset.c_str(),
                          qPrintable(c["prompt"].toString().left(30).replace('\n', ' ')), s, got,
                          want, logits[size_t(got)] - logits[size_t(want)], gap);
                equal = false;
            }
            m.forward(&want, 1, pos++, 1, logits.data());  // teacher-forced
        }
        r.cases_equal += equal;
    }
    return r;
}

// A data function's rows: every SIMD level this CPU has but the scalar one.
inline void add_simd_level_rows() {
    QTest::addColumn<QString>("level");
    for (const auto& l : tensor::available_simd_levels())
        if (l != "scalar") QTest::newRow(l.c_str()) << QString::fromStdString(l);
}

// A test slot's body: every model of the fixture file `root` at SIMD level
// `level`, regenerated by `write(preset)` and checked to be the file the
// fixture was made from (size, hash; `generator` says what makes it again),
// then scored with micro-batches of 4 as llama.cpp ran it: every greedy step
// and top-5 logit must be llama.cpp's. QtTest's checks return on a failure.
template <typename Write>
void expect_greedy_fixture(const QJsonObject& root, const QString& level, tensor::ThreadPool& pool,
                           Write write, const char* generator) {
    QVERIFY2(!root.isEmpty(),
             qPrintable(QString("the fixture file is missing: %1 makes it").arg(generator)));
    const std::string before = tensor::simd_level();
    QVERIFY(tensor::force_simd_level(level.toStdString()));
    for (const auto& mv : root["models"].toArray()) {
        const QJsonObject mo = mv.toObject();
        const std::string preset = mo["preset"].toString().toStdString();
        const std::filesystem::path path = write(preset);
        QCOMPARE(static_cast<qint64>(std::filesystem::file_size(path)),
                 static_cast<qint64>(mo["file_bytes"].toInteger()));
        QVERIFY2(fnv1a64(path) == mo["fnv1a64"].toString().toStdString(),
                 qPrintable(QString("the regenerated model is not the file the fixture was made "
                                    "from: rerun %1")
                                .arg(generator)));
        auto file = std::shared_ptr<const gguf::GgufFile>(gguf::GgufFile::open(path));
        Model m(file, pool, 2048, 4);  // llama.cpp's micro-batches of 4
        const FixtureScore r = score_greedy_fixture(m, mo);
        qInfo(
            "%s (%s): %d/%d greedy steps, %d/%d top-5 logits bit-identical (worst relative "
            "difference %.3g)",
            preset.c_str(), level.toUtf8().constData(), r.agree, r.steps, r.bit_equal, r.compared,
            r.worst);
        QCOMPARE(r.bit_equal, r.compared);
        QCOMPARE(r.agree, r.steps);
    }
    QVERIFY(tensor::force_simd_level(before));
}

}  // namespace powerinfer::model::testing
