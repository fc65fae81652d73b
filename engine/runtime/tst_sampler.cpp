// Sampler steps on known distributions, and seed determinism.
#include <QtTest>
#include <cmath>
#include <map>

#include "runtime/sampler.h"

using namespace powerinfer;
using namespace powerinfer::runtime;

namespace {

// Candidates with probabilities p (logits = log p).
std::vector<Candidate> dist(const std::vector<float>& p) {
    std::vector<Candidate> c;
    for (size_t i = 0; i < p.size(); ++i) c.push_back({int32_t(i), std::log(p[i]), 0.0f});
    return c;
}

std::vector<int32_t> ids(const std::vector<Candidate>& c) {
    std::vector<int32_t> out;
    for (const auto& x : c) out.push_back(x.id);
    return out;
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT
private slots:
    void topK() {
        auto c = dist({0.1f, 0.4f, 0.2f, 0.3f});
        Sampler::top_k(c, 2);
        QCOMPARE(ids(c), (std::vector<int32_t>{1, 3}));
        QVERIFY(std::fabs(c[0].p - 0.4f / 0.7f) < 1e-6f);
        auto all = dist({0.1f, 0.4f, 0.2f, 0.3f});
        Sampler::top_k(all, 0);  // off: nothing removed
        QCOMPARE(ids(all), (std::vector<int32_t>{0, 1, 2, 3}));
        QVERIFY(std::fabs(all[1].p - 0.4f) < 1e-6f);
    }

    void topP() {
        // Sorted: 0.4, 0.3, 0.2, 0.1; cumulative 0.4, 0.7, 0.9, 1.0.
        auto c = dist({0.1f, 0.4f, 0.2f, 0.3f});
        Sampler::top_p(c, 0.7f);
        QCOMPARE(ids(c), (std::vector<int32_t>{1, 3}));
        auto d = dist({0.1f, 0.4f, 0.2f, 0.3f});
        Sampler::top_p(d, 0.75f);
        QCOMPARE(ids(d), (std::vector<int32_t>{1, 3, 2}));
        auto e = dist({0.1f, 0.4f, 0.2f, 0.3f});
        Sampler::top_p(e, 0.01f);  // always keeps one
        QCOMPARE(ids(e), (std::vector<int32_t>{1}));
    }

    // A large vocabulary: the partial sorts must find the same nucleus as a
    // full sort would.
    void topPLargeVocabulary() {
        std::vector<float> p(5000, 0.5f / 4900);
        for (int i = 0; i < 100; ++i) p[size_t(i * 50)] = 0.005f;  // mass 0.5 in 100 tokens
        auto c = dist(p);
        Sampler::top_p(c, 0.6f);
        // All 100 heavy tokens (0.5) then light ones up to 0.6: 0.1 / (0.5/4900) = 980.
        QVERIFY2(c.size() >= 1079 && c.size() <= 1081, qPrintable(QString::number(c.size())));
        for (size_t i = 1; i < c.size(); ++i) QVERIFY(c[i - 1].logit >= c[i].logit);
    }

    void minP() {
        // Keep p >= 0.5 * 0.4 = 0.2.
        auto c = dist({0.1f, 0.4f, 0.2f, 0.3f});
        Sampler::min_p(c, 0.5f);
        QCOMPARE(ids(c), (std::vector<int32_t>{1, 3, 2}));
        double sum = 0;
        for (const auto& x : c) sum += x.p;
        QVERIFY(std::fabs(sum - 1.0) < 1e-6);
        auto d = dist({0.1f, 0.4f, 0.2f, 0.3f});
        Sampler::min_p(d, 0.9f);
        QCOMPARE(ids(d), (std::vector<int32_t>{1}));
    }

    void repeatPenalty() {
        std::vector<float> l{2.0f, -2.0f, 1.0f};
        const std::vector<int32_t> hist{0, 1, 0, 0};
        Sampler::apply_repeat_penalty(l.data(), 3, hist, 2.0f);
        QCOMPARE(l, (std::vector<float>{1.0f, -4.0f, 1.0f}));  // each token once
    }

    void greedyIsArgmax() {
        SamplingParams p;
        p.temperature = 0;
        Sampler s(p);
        const std::vector<float> l{0.1f, 3.0f, 2.9f, -1.0f};
        for (int i = 0; i < 10; ++i) QCOMPARE(s.sample(l.data(), 4, {}), 1);
        // The penalty can flip the choice.
        p.repeat_penalty = 1.5f;
        s.reset(p);
        const std::vector<int32_t> hist{1};
        QCOMPARE(s.sample(l.data(), 4, hist), 2);
    }

    void seedDeterminism() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.top_k = 0;
        p.top_p = 1.0f;
        p.min_p = 0.0f;
        p.seed = 1234;
        std::vector<float> l(100);
        for (size_t i = 0; i < l.size(); ++i) l[i] = std::sin(float(i)) * 2.0f;
        auto draw = [&](uint64_t seed) {
            p.seed = seed;
            Sampler s(p);
            std::vector<int32_t> out;
            for (int i = 0; i < 50; ++i) out.push_back(s.sample(l.data(), 100, {}));
            return out;
        };
        QCOMPARE(draw(1234), draw(1234));
        QVERIFY(draw(1234) != draw(4321));
    }

    // Empirical frequencies follow softmax(logit / T) over what the filters keep.
    void samplesFollowDistribution() {
        SamplingParams p;
        p.temperature = 0.5f;
        p.top_k = 3;
        p.top_p = 1.0f;
        p.min_p = 0.0f;
        p.seed = 7;
        Sampler s(p);
        const std::vector<float> l{std::log(0.1f), std::log(0.4f), std::log(0.2f), std::log(0.3f)};
        std::map<int32_t, int> count;
        const int n = 20000;
        for (int i = 0; i < n; ++i) ++count[s.sample(l.data(), 4, {})];
        QCOMPARE(count[0], 0);  // removed by top-k
        // T = 0.5 squares the probabilities: 0.16, 0.09, 0.04 -> / 0.29.
        QVERIFY(std::fabs(count[1] / double(n) - 0.16 / 0.29) < 0.02);
        QVERIFY(std::fabs(count[3] / double(n) - 0.09 / 0.29) < 0.02);
        QVERIFY(std::fabs(count[2] / double(n) - 0.04 / 0.29) < 0.02);
    }
};

QTEST_GUILESS_MAIN(TestSampler)
#include "tst_sampler.moc"
