// Test support (Qt tests): a tiny synthetic model's run against its
// llama.cpp fixture (moe_greedy.json, qwen35_greedy.json: per model the
// preset, the file's size and FNV-1a 64 hash, and per prompt the greedy
// continuation with the top-5 logits of every step), teacher-forced with
// llama.cpp's tokens (tst_moe, tst_qwen35).
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QtGlobal>
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
    int steps = 0, agree = 0;         // greedy steps, and those whose argmax is llama.cpp's
    int compared = 0, bit_equal = 0;  // top-5 logits, and those equal bit for bit
    double worst = 0;                 // largest relative difference of a top-5 logit
};

// Runs every case of the fixture's model entry `mo` through `m`: the prompt
// in one forward() (the model's chunks), then each step's logits against
// llama.cpp's top 5 and the next token llama.cpp's. The first few
// differences are logged.
inline FixtureScore score_greedy_fixture(Model& m, const QJsonObject& mo) {
    FixtureScore r;
    const std::string preset = mo["preset"].toString().toStdString();
    std::vector<float> logits(static_cast<size_t>(m.config().n_vocab));
    for (const auto& cv : mo["cases"].toArray()) {
        const QJsonObject c = cv.toObject();
        std::vector<int32_t> prompt;
        for (const auto& t : c["prompt_ids"].toArray()) prompt.push_back(t.toInt());
        const QJsonArray gen = c["generated_ids"].toArray();
        const QJsonArray top5 = c["top5"].toArray();
        m.forward(prompt.data(), int64_t(prompt.size()), 0, 1, logits.data());
        int64_t pos = int64_t(prompt.size());
        for (int s = 0; s < gen.size(); ++s) {
            for (const auto& pv : top5[s].toArray()) {
                const QJsonArray pair = pv.toArray();
                const float want = static_cast<float>(pair[1].toDouble());
                const float got = logits[static_cast<size_t>(pair[0].toInt())];
                ++r.compared;
                r.worst = std::max(r.worst, std::fabs(double(got) - want) /
                                                std::max(1e-6, std::fabs(double(want))));
                if (got == want) {
                    ++r.bit_equal;
                } else if (r.compared - r.bit_equal <= 3) {
                    qWarning("%s prompt of %d step %d id %d: ours %.9g, llama.cpp %.9g",
                             preset.c_str(), int(prompt.size()), s, pair[0].toInt(), got, want);
                }
            }
            ++r.steps;
            const int32_t want = gen[s].toInt();
            r.agree += argmax(logits) == want;
            m.forward(&want, 1, pos++, 1, logits.data());  // teacher-forced
        }
    }
    return r;
}

}  // namespace powerinfer::model::testing
